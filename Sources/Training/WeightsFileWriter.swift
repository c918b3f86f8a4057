import Foundation
import Networks
import TwoScaleCore
import TwoScaleFormats

extension WeightsFile {
    /// Writes `net` atomically as the weights file that `fisher` reads (`Setting.weights`)
    /// (`{"weights": [W_1, …, W_L]}`, plus `"biases"` for an architecture with biases).
    public static func write(_ net: Network, to path: String) throws {
        guard net.parameters.allSatisfy(\.isFinite) else {
            throw TwoScaleError.failure("\(path): the network has non-finite parameters (training diverged; lower \(Setting.learningRate))")
        }
        try AtomicFile.write(try json(net).serialized(), to: path)
    }
}
