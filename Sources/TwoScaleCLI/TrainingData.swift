import Foundation
import Networks
import Training
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// Small parsers shared by `train`, `gap` and `compare` (the data flags: `DataOptions`).
enum TrainingData {
    static func optimizer(_ text: String) throws -> OptimizerKind {
        guard let k = OptimizerKind(rawValue: text) else {
            throw TwoScaleError.invalid("--optimizer", text, allowed: "the optimizer is sgd or adam")
        }
        return k
    }

    /// `glorot` or `box` (with the box `lo:hi`).
    static func initialization(_ text: String, box: String) throws -> Initialization {
        switch text {
        case "glorot": return .glorot
        case "box":
            let (lo, hi) = try Grid.parseInterval(box, flag: "--box")
            return .box(lo: lo, hi: hi)
        default: throw TwoScaleError.invalid("--init", text, allowed: "glorot (uniform Glorot, zero biases) or box (U(--box))")
        }
    }

    /// `Duration` in seconds.
    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
}
