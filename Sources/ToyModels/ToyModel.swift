import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// A separable toy model: `F(θ) = diag(λ_1(θ_1), …, λ_d(θ_d))` on the box `[lo, hi]^d`, θ ~ U(box).
///
/// The 2sED is exact (docs/METHOD.md §8):
///
///     E_θ det(I + t F̂^{1/2}) = Π_i (1 + t·√c·⟨√λ_i⟩),   c = d / Σ_i ⟨λ_i⟩ (trace) or 1 (none),
///
/// with `⟨f⟩ = (hi − lo)⁻¹ ∫_lo^hi f`, evaluated by GSL QAGS for the non-constant families.
public struct ToyModel: Sendable {
    public let family: Family
    public let dimension: Int
    /// The largest d a repeated λ of the constant family is stored for (2 GiB of λ).
    public static let maxRepeatedDimension = 1 << 28
    public let lo: Double
    public let hi: Double
    /// Per-axis λ for `constant` (count d).
    public let lambdas: [Double]

    /// `⟨√λ_i⟩` per axis (a single shared value for non-constant families).
    public let meanSqrtLambda: [Double]
    /// `⟨λ_i⟩` per axis (shared for non-constant families); `nil` when the integral diverges.
    public let meanLambda: [Double]?
    /// QAGS error estimates of the two averages (zero for constant).
    public let quadratureError: (sqrt: Double, lambda: Double)

    public var length: Double { hi - lo }
    var sharedAxes: Bool { family != .constant }

    public init(family: Family, lambdas: [Double] = [], dimension: Int? = nil,
                box: (Double, Double) = (0, 1)) throws {
        self.family = family
        (lo, hi) = box
        guard lo.isFinite, hi.isFinite, lo < hi else {
            throw TwoScaleError.invalid("\(Setting.box)", "\(lo):\(hi)", allowed: "the box lo:hi needs finite lo < hi")
        }
        guard let axis = family.axisFamily else {
            guard !lambdas.isEmpty else {
                throw TwoScaleError.invalid("\(Setting.lambdas)", "", allowed: "the constant family needs a non-empty list of λ ≥ 0")
            }
            for l in lambdas where !(l.isFinite && l >= 0) {
                throw TwoScaleError.invalid("\(Setting.lambdas)", "\(l)", allowed: "every λ must be a finite number ≥ 0")
            }
            var ls = lambdas
            if let d = dimension, d != ls.count {
                guard d >= 1, d <= Self.maxRepeatedDimension else {
                    throw TwoScaleError.invalid("\(Setting.dimension)", "\(d)", allowed: "the dimension must be from 1 to 2²⁸ (one λ is stored per axis)")
                }
                guard ls.count == 1 else {
                    throw TwoScaleError.invalid("\(Setting.dimension)", "\(d)",
                        allowed: "\(Setting.dimension) must equal the number of \(Setting.lambdas) (\(ls.count)), or give one λ to repeat")
                }
                ls = [Double](repeating: ls[0], count: d)
            }
            self.lambdas = ls
            self.dimension = ls.count
            meanSqrtLambda = ls.map { $0.squareRoot() }
            meanLambda = ls
            quadratureError = (0, 0)
            return
        }
        guard lambdas.isEmpty else {
            throw TwoScaleError.invalid("\(Setting.lambdas)", lambdas.map { "\($0)" }.joined(separator: ","),
                                        allowed: "\(Setting.lambdas) goes with \(Setting.family) constant only")
        }
        guard let d = dimension else {
            throw TwoScaleError.missing("\(Setting.dimension)", "\(Setting.family) \(family.name) needs \(Setting.dimension) d with d ≥ 1")
        }
        guard d >= 1 else {
            throw TwoScaleError.invalid("\(Setting.dimension)", "\(d)", allowed: "\(Setting.family) \(family.name) needs \(Setting.dimension) d with d ≥ 1")
        }
        let dom = axis.domain
        guard lo >= dom.lo, hi <= dom.hi else {
            throw TwoScaleError.invalid("\(Setting.box)", "\(lo):\(hi)",
                allowed: "\(Setting.family) \(family.name) is defined on [\(dom.lo), \(dom.hi == .infinity ? "∞" : "\(dom.hi)")); choose a box inside it")
        }
        self.lambdas = []
        self.dimension = d
        guard axis.integrable(power: 0.5, lo: lo, hi: hi) else {
            throw TwoScaleError.invalid("\(Setting.box)", "\(lo):\(hi)",
                allowed: "E_θ √λ diverges for \(Setting.family) \(family.name) on a box touching \(axis.singularPoints.map { "\($0)" }.joined(separator: " or ")); use a box away from it, e.g. \(Setting.box) 0.01:\(hi)")
        }
        let rs = try Quadrature.integrate({ axis.sqrtLambda($0) }, from: lo, to: hi)
        meanSqrtLambda = [rs.value / (hi - lo)]
        if axis.integrable(power: 1, lo: lo, hi: hi) {
            let rl = try Quadrature.integrate({ axis.lambda($0) }, from: lo, to: hi)
            meanLambda = [rl.value / (hi - lo)]
            quadratureError = (rs.errorEstimate / (hi - lo), rl.errorEstimate / (hi - lo))
        } else {
            meanLambda = nil
            quadratureError = (rs.errorEstimate / (hi - lo), .infinity)
        }
    }

    /// `Σ_i ⟨λ_i⟩ = E_θ Tr F`, or nil when it diverges.
    public var meanTrace: Double? {
        guard let ml = meanLambda else { return nil }
        return sharedAxes ? Double(dimension) * ml[0] : ml.reduce(0, +)
    }

    /// The normalisation constant `c`; refuses the trace normalisation when `E Tr F = ∞`.
    public func scale(_ normalization: Normalization) throws -> Double {
        if normalization == .none { return 1 }
        guard let tr = meanTrace else {
            // Only an axis family's ⟨λ⟩ can diverge; the suggested box keeps 0.01 from its singular ends.
            let singular = family.axisFamily?.singularPoints ?? []
            let top = family.axisFamily.map { $0.domain.hi.isFinite ? Swift.min(hi, $0.domain.hi - 0.01) : hi } ?? hi
            throw TwoScaleError.invalid("\(Setting.box)", "\(lo):\(hi)",
                allowed: "E_θ Tr F is infinite for \(Setting.family) \(family.name) on a box touching \(singular.map { "\($0)" }.joined(separator: " or ")), so the trace normalisation is undefined; use a smaller box such as \(Setting.box) \(Swift.max(lo, 0.01)):\(top), or \(Setting.normalize) none")
        }
        return try normalization.constant(dimension: dimension, meanTrace: tr)
    }

    /// `log E_θ det(I + s·F^{1/2}) = Σ_i log1p(s ⟨√λ_i⟩)` (raw F; pass `s = t√c` for F̂).
    public func logMeanDet(scale s: Double) -> Double {
        if sharedAxes { return Double(dimension) * LogSpace.log1pProduct(s, meanSqrtLambda[0]) }
        return LogSpace.logDetSqrt(roots: meanSqrtLambda, scale: s)
    }

    /// Exact `d_ζ(ε)` (docs/METHOD.md §4, §8).
    public func twoScaleDimension(eps: Double, zeta: Double, normalization: Normalization) throws -> Double {
        try ScaleParameters.checkEpsilon(eps)
        try ScaleParameters.checkZeta(zeta)
        let s = ScaleParameters.t(eps: eps, zeta: zeta) * (try scale(normalization)).squareRoot()
        return TwoScale.dimension(logMeanDet: logMeanDet(scale: s), dimension: dimension, zeta: zeta, eps: eps)
    }
}
