import Foundation
import Networks
import TwoScaleCore

/// Network parameters as the JSON weights file read by `twoscale fisher --weights` (INTERFACE.md):
///
///     {"weights": [W_1, …, W_L], "biases": [b_1, …, b_L]}
///
/// each `W_m` a list of `n_m` rows of `n_{m−1}` numbers; `"biases"` is written only for an
/// architecture with biases. Files are written atomically.
public enum WeightsFile {
    public static func json(_ net: MLP) -> JSONValue {
        var kv: [(String, JSONValue)] = [
            ("weights", .array(net.weights.map { w in .array(w.rowArrays.map { JSONValue.numbers($0) }) })),
        ]
        if net.architecture.bias { kv.append(("biases", .array(net.biases.map { JSONValue.numbers($0) }))) }
        return .object(kv)
    }

    /// Writes `net` to `path` atomically.
    public static func write(_ net: MLP, to path: String) throws {
        guard net.parameters.allSatisfy(\.isFinite) else {
            throw TwoScaleError.failure("\(path): the network has non-finite parameters (training diverged; lower --lr)")
        }
        try AtomicFile.write(try json(net).serialized(), to: path)
    }
}
