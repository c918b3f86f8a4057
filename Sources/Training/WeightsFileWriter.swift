import Foundation
import Networks
import TwoScaleCore
import TwoScaleFormats

extension WeightsFile {
    /// Writes `net` atomically as the weights file that `twoscale fisher --weights` reads
    /// (`{"weights": [W_1, …, W_L]}`, plus `"biases"` for an architecture with biases).
    public static func write(_ net: Network, to path: String) throws {
        guard net.parameters.allSatisfy(\.isFinite) else {
            throw TwoScaleError.failure("\(path): the network has non-finite parameters (training diverged; lower --lr)")
        }
        try AtomicFile.write(try json(net).serialized(), to: path)
    }
}
