import Foundation
import Networks
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// A risk under the loss `ℓ = 1 − p_θ(y|x)`, with its Monte Carlo standard error and, if asked, its gradient.
public struct ProbabilityRisk: Sendable, Equatable {
    /// `(1/N) Σ_i r_i`.
    public var risk: Double
    /// `sd(r)/√N` of the per-row losses (sd with N − 1; 0 for N = 1): for a population sample the Monte
    /// Carlo error of R, for a training set just the spread of its losses.
    public var standardError: Double
    /// `∂risk/∂θ`, laid out as `Network.parameters` (nil unless asked for).
    public var gradient: [Double]?
}

/// The bounded, Lipschitz loss of the generalisation bound's assumptions:
///
///     ℓ(θ; x, y) = 1 − p_θ(y|x) ∈ [0, 1],      p_θ(·|x) = softmax(f_θ(x)),
///
/// beside `GapLoss` (cross-entropy is unbounded, 0-1 is bounded but not Lipschitz). For a teacher task the
/// label expectation is exact, as in `PopulationSample.risk`: `r(x) = Σ_y p*(y|x) ℓ(θ; x, y) = 1 − ⟨p*(·|x), p_θ(·|x)⟩`,
/// `R(θ) = (1/M) Σ_i r(x_i)`; on a training set `R_n(θ) = (1/n) Σ_i (1 − p_θ(y_i|x_i))`.
///
/// **Lipschitz constants** (proved here, checked in the tests). (i) In the probability vector on the
/// simplex: `|ℓ(p) − ℓ(p')| = |p_y − p'_y| ≤ ‖p − p'‖_∞` (constant 1 in ℓ∞), and since `Σ_c (p_c − p'_c) = 0`
/// the positive and the negative parts of `p − p'` each sum to `½‖p − p'‖₁`, so also `≤ ½‖p − p'‖₁`.
/// (ii) In the logits `z`: `∂p_y/∂z_c = p_y(δ_yc − p_c)` — entries `p_y p_c ≤ ¼` off the diagonal (as
/// `p_y + p_c ≤ 1`) and `p_y(1 − p_y) ≤ ¼` on it — and the whole row has `‖∇_z p_y‖₁ = p_y(1 − p_y) +
/// p_y Σ_{c≠y} p_c = 2p_y(1 − p_y) ≤ ½` for any number of classes; softmax is smooth, so by the mean
/// value theorem on the segment from z to z' and Hölder, `|ℓ(z') − ℓ(z)| ≤ ½‖z' − z‖_∞`. The constant is
/// sharp: at `p_y = ½` the derivative along `sign(∇_z p_y)` is exactly ½. In ℓ₂,
/// `‖∇_z p_y‖₂² = p_y²((1 − p_y)² + Σ_{c≠y} p_c²) ≤ 2p_y²(1 − p_y)² ≤ 1/8`, so `|Δℓ| ≤ (1/(2√2))‖Δz‖₂`
/// (sharp with two classes). (iii) `r(x)`, R and R_n are convex combinations of such losses and keep
/// both constants: `|R(θ) − R(θ')| ≤ ½ sup_x ‖f_θ(x) − f_θ'(x)‖_∞`, likewise R_n.
///
/// **Gradient.** `∇_θ(1 − p_y) = −p_y ∇_θ log p_y = p_y ∇_θ CE_y`. In the logits, for a target distribution
/// q (one-hot for a label, `p*(·|x)` for the population): with `s = ⟨q, p⟩`,
/// `∂(1 − s)/∂z_c = p_c (s − q_c)`; the rest is backpropagation (`Network.backpropagate`).
public enum ProbabilityLoss {
    /// Constant in the probability vector, ℓ∞ norm: `|Δℓ| ≤ 1·‖Δp‖_∞`.
    public static let lipschitzProbabilityMax = 1.0
    /// Constant in the probability vector on the simplex, ℓ₁ norm: `|Δℓ| ≤ ½‖Δp‖₁`.
    public static let lipschitzProbabilityL1 = 0.5
    /// Constant in the logits, ℓ∞ norm: `|Δℓ| ≤ ½‖Δz‖_∞`.
    public static let lipschitzLogitsMax = 0.5
    /// Constant in the logits, ℓ₂ norm: `|Δℓ| ≤ (1/(2√2))‖Δz‖₂`.
    public static let lipschitzLogitsL2 = 1 / (2 * 2.0.squareRoot())

    /// `ℓ = 1 − softmax(z)_y` of one logit vector.
    public static func loss(logits z: [Double], label y: Int) -> Double {
        let p = Softmax.probabilities(Matrix(rows: 1, cols: z.count, data: z))
        return 1 - p.data[y]
    }

    /// R_n(θ) on a labelled set (and its gradient with `gradient`).
    public static func empirical(_ net: Network, on data: Dataset, gradient: Bool = false, chunk: Int = 4096) throws -> ProbabilityRisk {
        let k = net.architecture.classes
        guard data.features == net.architecture.inputSize else {
            throw TwoScaleError.invalid("\(Setting.data)", data.source,
                allowed: "the network takes \(net.architecture.inputSize) inputs, the data have \(data.features) features")
        }
        guard let labels = data.labels, data.count >= 1 else {
            throw TwoScaleError.invalid("\(Setting.data)", data.source, allowed: "the empirical risk needs a non-empty labelled set")
        }
        if let bad = labels.firstIndex(where: { $0 < 0 || $0 >= k }) {
            throw TwoScaleError.invalid("\(Setting.data)", data.source, allowed: "sample \(bad + 1) has label \(labels[bad]); labels must lie in 0..<\(k)")
        }
        return risk(net, inputs: data.inputs, targets: .labels(labels), gradient: gradient, chunk: chunk)
    }

    /// R(θ) on a population sample with the exact label expectation (and its gradient with `gradient`).
    public static func population(_ net: Network, on sample: PopulationSample, gradient: Bool = false, chunk: Int = 4096) throws -> ProbabilityRisk {
        guard sample.inputs.cols == net.architecture.inputSize, sample.labelProbabilities.cols == net.architecture.classes,
              sample.count >= 1 else {
            throw TwoScaleError.invalid("\(Setting.population)", "\(sample.count)×\(sample.inputs.cols)",
                allowed: "a non-empty population sample with the network's \(net.architecture.inputSize) inputs and \(net.architecture.classes) classes")
        }
        return risk(net, inputs: sample.inputs, targets: .distributions(sample.labelProbabilities), gradient: gradient, chunk: chunk)
    }

    enum Targets {
        case labels([Int])
        case distributions(Matrix)
    }

    /// `(1/N) Σ_i (1 − ⟨q_i, softmax(f_θ(x_i))⟩)` in chunks of `chunk` rows (one forward, and with
    /// `gradient` one backward, pass each).
    static func risk(_ net: Network, inputs x: Matrix, targets: Targets, gradient: Bool, chunk: Int) -> ProbabilityRisk {
        let n = x.rows, f = x.cols, k = net.architecture.classes
        let invN = 1 / Double(n)
        var r = [Double](repeating: 0, count: n)
        var grad: [Double]? = gradient ? [Double](repeating: 0, count: net.architecture.parameterCount) : nil
        var start = 0
        while start < n {
            let end = Swift.min(n, start + Swift.max(1, chunk))
            let part = start == 0 && end == n ? x : Matrix(rows: end - start, cols: f, data: Array(x.data[(start * f)..<(end * f)]))
            let fwd = net.forward(part)
            let p = Softmax.probabilities(fwd.logits)
            var G = Matrix(rows: end - start, cols: k)
            for row in 0..<(end - start) {
                let i = start + row
                var s = 0.0
                switch targets {
                case let .labels(y): s = p.data[row * k + y[i]]
                case let .distributions(q): for c in 0..<k { s += q.data[i * k + c] * p.data[row * k + c] }
                }
                r[i] = 1 - s
                guard gradient else { continue }
                for c in 0..<k {
                    let qc: Double
                    switch targets {
                    case let .labels(y): qc = y[i] == c ? 1 : 0
                    case let .distributions(q): qc = q.data[i * k + c]
                    }
                    G.data[row * k + c] = p.data[row * k + c] * (s - qc) * invN
                }
            }
            if gradient, var acc = grad {
                grad = nil  // keep the buffer uniquely referenced while adding
                let g = net.backpropagate(outputGradient: G, forward: fwd)
                for j in acc.indices { acc[j] += g[j] }
                grad = acc
            }
            start = end
        }
        let (mean, error) = PopulationSample.meanAndError(r)
        return ProbabilityRisk(risk: mean, standardError: error, gradient: grad)
    }
}
