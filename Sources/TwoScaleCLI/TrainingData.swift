import Foundation
import Networks
import Training
import TwoScaleCore
import TwoScaleNumerics

/// Data and small parsers shared by `train`, `gap` and `bench-train`.
enum TrainingData {
    static let allowed = "give synthetic:teacher:ARCH (a random teacher network labels N(0, I) inputs)"

    /// Loads a labelled data set for training. Sources: `synthetic:teacher:ARCH[:ACTIVATION]` (needs
    /// `samples`; teacher weights U(−1, 1) and labels from the streams of `TeacherTask` under `seed`).
    static func load(_ spec: String, samples: Int?, standardize: Bool, seed: UInt64, flag: String = "--data") throws -> Dataset {
        if let n = samples, n < 1 {
            throw TwoScaleError.invalid("--samples", "\(n)", allowed: "the number of samples must be ≥ 1")
        }
        let parts = spec.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0] == "synthetic", parts[1] == "teacher" else {
            throw TwoScaleError.invalid(flag, spec, allowed: allowed)
        }
        let rest = parts[2].split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard let n = samples else {
            throw TwoScaleError.invalid("--samples", "(missing)", allowed: "synthetic data needs --samples N (N ≥ 1)")
        }
        let arch = try Architecture(parsing: rest[0], flag: flag)
        let act = rest.count > 1 ? try activation(rest[1], flag: flag) : .relu
        let task = try TeacherTask.random(architecture: arch, activation: act, seed: seed)
        var rng = Xoshiro256(seed: seed, stream: [101])
        var data = task.sample(count: n, rng: &rng)
        data.source = spec
        if standardize { data.inputs = standardized(data.inputs) }
        return data
    }

    /// Each column z-scored with the population sd; constant columns become 0.
    static func standardized(_ x: Matrix) -> Matrix {
        var out = x
        let n = x.rows, d = x.cols
        guard n > 0 else { return out }
        for j in 0..<d {
            var mean = 0.0
            for i in 0..<n { mean += x.data[i * d + j] }
            mean /= Double(n)
            var ss = 0.0
            for i in 0..<n { let t = x.data[i * d + j] - mean; ss += t * t }
            let sd = (ss / Double(n)).squareRoot()
            for i in 0..<n { out.data[i * d + j] = sd > 0 ? (x.data[i * d + j] - mean) / sd : 0 }
        }
        return out
    }

    static func activation(_ text: String, flag: String = "--activation") throws -> Activation {
        guard let a = Activation(rawValue: text) else {
            throw TwoScaleError.invalid(flag, text, allowed: "the activation is one of " + Activation.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return a
    }

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
