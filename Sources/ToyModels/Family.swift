import Foundation
import TwoScaleCore

/// A per-axis Fisher information family `λ(t)`.
public enum Family: String, Sendable, CaseIterable {
    /// `λ(t) = λ` (given per axis).
    case constant
    /// `λ(t) = 1/(t(1−t))` on (0, 1): a Bernoulli(t) observation.
    case bernoulli
    /// `λ(t) = 1/t` on (0, ∞): a Poisson(t) observation.
    case poisson
    /// `λ(t) = 1/t²` on (0, ∞): an exponential observation with mean t.
    case exponential

    /// `λ(t)` for a non-constant family.
    @inlinable
    public func lambda(_ t: Double) -> Double {
        switch self {
        case .constant: preconditionFailure("constant family has no λ(t)")
        case .bernoulli: return 1 / (t * (1 - t))
        case .poisson: return 1 / t
        case .exponential: return 1 / (t * t)
        }
    }

    /// `√λ(t)`.
    @inlinable
    public func sqrtLambda(_ t: Double) -> Double {
        switch self {
        case .constant: preconditionFailure("constant family has no λ(t)")
        case .bernoulli: return 1 / (t * (1 - t)).squareRoot()
        case .poisson: return 1 / t.squareRoot()
        case .exponential: return 1 / t
        }
    }

    /// The parameter domain as a closed interval whose end points may be singular.
    var domain: (lo: Double, hi: Double) {
        switch self {
        case .constant: return (-.infinity, .infinity)
        case .bernoulli: return (0, 1)
        case .poisson, .exponential: return (0, .infinity)
        }
    }

    /// Points where λ is infinite (the only singularities of these families).
    var singularPoints: [Double] {
        switch self {
        case .constant: return []
        case .bernoulli: return [0, 1]
        case .poisson, .exponential: return [0]
        }
    }

    /// The power p with `λ(t) ~ |t − t₀|^(−p)` at a singular point: `∫ λ^q` converges iff `q·p < 1`.
    var singularPower: Double {
        switch self {
        case .constant: return 0
        case .bernoulli, .poisson: return 1
        case .exponential: return 2
        }
    }

    /// Whether `∫ λ(t)^q dt` over `[lo, hi]` is finite.
    func integrable(power q: Double, lo: Double, hi: Double) -> Bool {
        let touches = singularPoints.contains { $0 == lo || $0 == hi }
        return !touches || q * singularPower < 1
    }

    /// The maximum of λ on `[lo, hi]`: every family here is monotone or convex with its maximum at
    /// an end point (Bernoulli decreases on (0, ½] and increases on [½, 1)).
    func maxSqrtLambda(lo: Double, hi: Double) -> Double {
        Swift.max(sqrtLambda(lo), sqrtLambda(hi))
    }
}
