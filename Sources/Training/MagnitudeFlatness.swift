import Foundation
import Networks
import RandomStreams
import TwoScaleCore
import TwoScaleNumerics

/// Jiang et al.'s magnitude-aware PAC-Bayes flatness ("pacbayes.mag.flatness", ICLR 2020, Appendix C):
///
///     μ = 1 / α'²,   α' the largest α with  E_u[L̂(θ + u)] − L̂(θ) ≤ threshold,
///     u_i ~ N(0, α² θ_i² + ε²)   (independent, every parameter i, biases included),
///
/// L̂ the training criterion: the 0-1 error by default with threshold 0.1 (Jiang's: a drop of the
/// training accuracy by 0.1), or the cross-entropy. The expectation is a Monte Carlo mean over `draws`
/// perturbations u_j = √(α² θ² + ε²) ⊙ z_j with the *same* z_j ~ N(0, I) for every α (draw j from the
/// stream (seed, "PBMF", j)), so the search is over one fixed function of α. α' is found by doubling
/// from `start` until the criterion fails (at most `maxAlpha`), then bisection (`iterations` halvings);
/// the reported α' is the largest α where the criterion held.
public struct MagnitudeFlatness: Sendable {
    public enum Criterion: String, Sendable { case error, crossEntropy }

    public var criterion: Criterion
    public var threshold: Double
    public var epsilon: Double
    public var draws: Int
    public var iterations: Int
    public var start: Double
    public var maxAlpha: Double
    public var seed: UInt64

    static let stream: UInt64 = 0x5042_4D46  // "PBMF"

    public init(criterion: Criterion = .error, threshold: Double = 0.1, epsilon: Double = 1e-3, draws: Int = 20,
                iterations: Int = 20, start: Double = 0.5, maxAlpha: Double = 1024, seed: UInt64) throws {
        guard threshold > 0, threshold.isFinite else { throw TwoScaleError.invalid("threshold", "\(threshold)", allowed: "a finite threshold > 0") }
        guard epsilon >= 0, epsilon.isFinite else { throw TwoScaleError.invalid("epsilon", "\(epsilon)", allowed: "a finite ε ≥ 0") }
        guard draws >= 1, iterations >= 1 else { throw TwoScaleError.usage("magnitude flatness needs at least one draw and one bisection step") }
        guard start > 0, maxAlpha >= start, maxAlpha.isFinite else {
            throw TwoScaleError.usage("magnitude flatness needs 0 < start ≤ maxAlpha < ∞ (got \(start), \(maxAlpha))")
        }
        self.criterion = criterion
        self.threshold = threshold
        self.epsilon = epsilon
        self.draws = draws
        self.iterations = iterations
        self.start = start
        self.maxAlpha = maxAlpha
        self.seed = seed
    }

    /// α', the measure 1/α'², and whether the search stopped at `maxAlpha` with the criterion still
    /// holding (α' is then only a lower bound; α' = 0, μ = +∞, when ε alone breaks the criterion).
    public struct Result: Sendable, Equatable {
        public let alpha: Double
        public let saturated: Bool
        public var measure: Double { 1 / (alpha * alpha) }
    }

    func criterionValue(_ net: Network, _ x: Matrix, _ y: [Int]) -> Double {
        let e = net.crossEntropy(inputs: x, labels: y)
        return criterion == .error ? 1 - e.accuracy : e.loss
    }

    /// The Monte Carlo `E_u[L̂(θ + u)] − L̂(θ)` at α.
    public func expectedIncrease(_ net: Network, inputs x: Matrix, labels y: [Int], alpha: Double) -> Double {
        let theta = net.parameters
        let base = criterionValue(net, x, y)
        var total = 0.0
        for j in 0..<draws {
            var rng = Xoshiro256(seed: seed, stream: [Self.stream, UInt64(j)])
            var p = net
            p.setParameters(theta.map { $0 + (alpha * alpha * $0 * $0 + epsilon * epsilon).squareRoot() * rng.normal() })
            total += criterionValue(p, x, y)
        }
        return total / Double(draws) - base
    }

    public func measure(_ net: Network, inputs x: Matrix, labels y: [Int]) throws -> Result {
        guard x.rows >= 1, y.count == x.rows, x.cols == net.architecture.inputSize,
              y.allSatisfy({ (0..<net.architecture.classes).contains($0) }), x.data.allSatisfy(\.isFinite) else {
            throw TwoScaleError.usage("magnitude flatness needs finite inputs of the network's size and one valid label per row")
        }
        let holds = { (a: Double) in expectedIncrease(net, inputs: x, labels: y, alpha: a) <= threshold }
        guard holds(0) else { return Result(alpha: 0, saturated: false) }
        var lo = 0.0, hi = start
        while holds(hi) {
            lo = hi
            if hi >= maxAlpha { return Result(alpha: hi, saturated: true) }
            hi = Swift.min(maxAlpha, 2 * hi)
        }
        for _ in 0..<iterations {
            let mid = (lo + hi) / 2
            if holds(mid) { lo = mid } else { hi = mid }
        }
        return Result(alpha: lo, saturated: false)
    }
}
