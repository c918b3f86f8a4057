import Foundation
import Networks
import RandomStreams
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// A classification task with a known data distribution (docs/METHOD.md §16):
///
///     x ~ N(0, I_{n_0}),   y | x ~ p*(·|x) = softmax(f_teacher(x) / T)
///
/// with a random teacher MLP (weights, and biases if any, i.i.d. U(−1, 1): `Network.teacher`, Sampling's one
/// teacher generator, the same teacher as `synthetic:teacher:ARCH` for the same seed) and temperature
/// T > 0. Because `p*(y|x)` is known, the population risk of any θ is an average over inputs alone (see
/// `PopulationSample`).
public struct TeacherTask: Sendable {
    public let teacher: Network
    public let temperature: Double

    public init(teacher: Network, temperature: Double = 1) throws {
        guard temperature.isFinite, temperature > 0 else {
            throw TwoScaleError.invalid("\(Setting.temperature)", "\(temperature)", allowed: "the teacher's temperature must be a finite number > 0")
        }
        self.teacher = teacher
        self.temperature = temperature
    }

    /// The random teacher of `seed` (`Network.teacher`: every parameter U(−1, 1) from the stream `(seed, TEAW)`,
    /// the teacher `synthetic:teacher:ARCH` uses for the same seed).
    public static func random(architecture: Architecture, activation: Activation, temperature: Double = 1,
                              seed: UInt64) throws -> TeacherTask {
        try TeacherTask(teacher: Network.teacher(architecture: architecture, activation: activation, seed: seed),
                        temperature: temperature)
    }

    public var inputSize: Int { teacher.architecture.inputSize }
    public var classes: Int { teacher.architecture.classes }

    /// `p*(y|x)` row by row.
    public func labelProbabilities(_ x: Matrix) -> Matrix {
        var z = teacher.forward(x).logits
        let invT = 1 / temperature
        for i in z.data.indices { z.data[i] *= invT }
        return Softmax.probabilities(z)
    }

    /// n inputs `x ~ N(0, I)` (row by row) from `rng`.
    public func inputs(count n: Int, rng: inout Xoshiro256) -> Matrix {
        var x = Matrix(rows: n, cols: inputSize)
        for i in x.data.indices { x.data[i] = rng.normal() }
        return x
    }

    /// A training set of n samples: inputs, then one label per input drawn from `p*(·|x)` by inversion.
    public func sample(count n: Int, rng: inout Xoshiro256) -> Dataset {
        let x = inputs(count: n, rng: &rng)
        let p = labelProbabilities(x)
        let k = classes
        var labels = [Int](repeating: 0, count: n)
        for i in 0..<n {
            labels[i] = Softmax.sampleClass(p, row: i, u: rng.uniform())
        }
        return Dataset(inputs: x, labels: labels, classes: k,
                       source: "teacher \(teacher.architecture.notation) (T = \(temperature))")
    }

    /// M fresh inputs with their exact label distributions, for population risks.
    public func population(count m: Int, rng: inout Xoshiro256) -> PopulationSample {
        let x = inputs(count: m, rng: &rng)
        return PopulationSample(inputs: x, labelProbabilities: labelProbabilities(x))
    }
}

/// A population risk with its Monte Carlo standard error.
public struct RiskEstimate: Sendable, Equatable {
    /// `R(θ)` for the cross-entropy loss.
    public var crossEntropy: Double
    /// `sd/√M` of the per-input cross-entropy risks.
    public var crossEntropyError: Double
    /// `R(θ)` for the 0-1 loss.
    public var zeroOne: Double
    public var zeroOneError: Double
}

/// The population risk `R(θ) = E_x Σ_y p*(y|x)·loss(θ; x, y)` over M fresh inputs, with the label
/// expectation exact:
///
///     cross-entropy:  r(x) = −Σ_y p*(y|x) log softmax(f_θ(x))_y
///     0-1:            r(x) = 1 − p*(argmax_y f_θ(x)_y | x)
///
///     R̂ = (1/M) Σ_i r(x_i),   standard error = sd(r)/√M  (sd with M − 1).
public struct PopulationSample: Sendable {
    public let inputs: Matrix
    /// `p*(y|x_i)` row by row.
    public let labelProbabilities: Matrix

    public var count: Int { inputs.rows }

    /// Inputs (rows) with their label distributions (rows summing to 1, one column per class).
    public init(inputs: Matrix, labelProbabilities: Matrix) {
        precondition(inputs.rows == labelProbabilities.rows, "one label distribution per input")
        self.inputs = inputs
        self.labelProbabilities = labelProbabilities
    }

    public func risk(of net: Network, chunk: Int = 4096) -> RiskEstimate {
        let k = labelProbabilities.cols
        let m = inputs.rows
        var ce = [Double](repeating: 0, count: m)
        var zo = [Double](repeating: 0, count: m)
        var start = 0
        while start < m {
            let end = Swift.min(m, start + chunk)
            let part = start == 0 && end == m ? inputs
                : Matrix(rows: end - start, cols: inputs.cols, data: Array(inputs.data[(start * inputs.cols)..<(end * inputs.cols)]))
            let lp = Softmax.logProbabilities(net.forward(part).logits)
            lp.data.withUnsafeBufferPointer { l in
                labelProbabilities.data.withUnsafeBufferPointer { p in
                    for r in 0..<(end - start) {
                        let i = start + r
                        var c = 0.0
                        var arg = 0
                        for j in 0..<k {
                            let pj = p[i * k + j]
                            if pj > 0 { c -= pj * l[r * k + j] }
                            if l[r * k + j] > l[r * k + arg] { arg = j }
                        }
                        ce[i] = c
                        zo[i] = 1 - p[i * k + arg]
                    }
                }
            }
            start = end
        }
        let (cm, cs) = Self.meanAndError(ce)
        let (zm, zs) = Self.meanAndError(zo)
        return RiskEstimate(crossEntropy: cm, crossEntropyError: cs, zeroOne: zm, zeroOneError: zs)
    }

    /// Mean and `sd/√M` (two-pass, sd with M − 1; error 0 for M = 1).
    static func meanAndError(_ x: [Double]) -> (Double, Double) {
        let n = Double(x.count)
        guard x.count > 0 else { return (0, 0) }
        let mean = x.reduce(0, +) / n
        guard x.count > 1 else { return (mean, 0) }
        var ss = 0.0
        for v in x { ss += (v - mean) * (v - mean) }
        return (mean, (ss / (n - 1)).squareRoot() / n.squareRoot())
    }
}

/// Training risks `R_n(θ)` on a labelled sample: mean cross-entropy and the misclassified fraction.
public enum EmpiricalRisk {
    public static func of(_ net: Network, on data: Dataset) -> (crossEntropy: Double, zeroOne: Double) {
        let e = net.crossEntropy(inputs: data.inputs, labels: data.labels ?? [])
        return (e.loss, 1 - e.accuracy)
    }
}
