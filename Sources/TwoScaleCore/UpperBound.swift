import Foundation

/// An estimate of an *upper bound* on the 2sED and on the lower 2sED: the layered estimate with the last
/// stage's θ-average replaced by a majorant that needs no sampling.
///
/// With `G_L(θ) ≤ B(θ_{<L})` for every θ_L (networks: the softmax block's determinant is largest where
/// every class is equally likely, docs/METHOD.md §11), the last stage's average satisfies
/// `Z_L(θ_{<L}) = E_{θ_L} G_L ≤ B(θ_{<L})`, so
///
///     log E_θ Π_m G_m ≤ log Z_{<L} + log E_{π_{L−1}} B,      E_{π_{L−1}} log Z_L ≤ E_{π_{L−1}} log B,
///
/// the first for the 2sED, the second for the lower 2sED's last term (`Z_{<L}` and `π_{L−1}` the earlier
/// stages' normalising constant and law). The estimator keeps its earlier stages and the same outer
/// particles `θ^k_{<L} ~ π_{L−1}` and replaces the islands' `Ẑ_L^k` by `B(θ^k_{<L})`: a deterministic
/// function of each particle, so the last term carries no island noise, only the outer particles'
/// spread of `log B` (docs/ESTIMATORS.md, "An upper bound"). What it bounds is the true 2sED; the
/// value reported is itself an estimate, with an interval like the estimate's. The gap between the two,
/// `bound − estimate`, is the most by which the last stage's estimate can be too low (given the shared stages).
public struct UpperBound: Sendable, Equatable {
    public var dZeta: Double
    public var ci95: ClosedRange<Double>
    public var dZetaLower: Double?
    public var ci95Lower: ClosedRange<Double>?
    /// The last stage's bound terms in nats: `log mean_k B(θ^k)` (the 2sED's; bias-corrected, with its
    /// variance) and `mean_k log B(θ^k)` (the lower 2sED's).
    public var stage: LogEstimate
    public var stageLower: LogEstimate
    /// The sample variance of `log B(θ^k)` over the outer particles (nats²; 0 for one stage, where B is
    /// a number).
    public var stageLogVariance: Double
    /// How far `stage`, a log-mean of K values of B with that spread, falls short of `log E B` under the
    /// lognormal model (`LogNormalSpread.shortfall`, nats): the bound's own estimate can be low, as the
    /// estimate's can, and its interval does not include this (the 2sED's shortfall in units of d_ζ is
    /// this over |log ε|).
    public var stageShortfall: Double
    /// The part of the bound's `log E det` variance that is ĉ's (the trace normalisation; 0 otherwise):
    /// `(slope/2)² Var log ĉ` with the bound's own slope in log s (`TraceEstimate.addedVariance`).
    public var normalizationVariance: Double

    /// From the bound's `log E det` (earlier stages + `stage`, with the normalisation's variance) and,
    /// for the lower 2sED, its counterpart.
    public init(eps: Double, zeta: Double, dimension d: Int, estimate: LogEstimate, lower: LogEstimate?,
                stage: LogEstimate, stageLower: LogEstimate, stageLogVariance: Double = 0, stageShortfall: Double = 0,
                normalizationVariance: Double = 0) {
        let j = estimate.dimension(d: d, zeta: zeta, eps: eps)
        dZeta = j.value
        ci95 = j.ci95
        if let l = lower {
            let r = l.dimension(d: d, zeta: zeta, eps: eps)
            dZetaLower = r.value
            ci95Lower = r.ci95
        }
        self.stage = stage
        self.stageLower = stageLower
        self.stageLogVariance = stageLogVariance
        self.stageShortfall = stageShortfall
        self.normalizationVariance = normalizationVariance
    }

    /// `stageShortfall` in units of d_ζ at `eps`: how much higher the bound may lie than printed, under
    /// the lognormal model of its outer particles' spread.
    public func shortfall(eps: Double) -> Double { stageShortfall / Swift.abs(Foundation.log(eps)) }
}

/// The check that an estimate has not come out above its upper bound by more than their intervals
/// allow. The true values are ordered, estimate ≤ bound (`UpperBound`); the two estimates share the
/// earlier stages and the normalisation, so an estimate whose interval lies wholly above its bound's
/// has a last-stage term that is wrong (a failed correction of the islands' logs, or a defect), not
/// merely noisy.
public struct EstimateAboveBound: Sendable, Equatable, IntervalOrderCheck {
    /// Which quantity: `d_zeta` (the 2sED) or `d_zeta_lower`.
    public var quantity: String
    public var eps: Double
    public var estimate: Double
    public var interval: ClosedRange<Double>
    public var bound: Double
    public var boundInterval: ClosedRange<Double>

    public init(quantity: String, eps: Double, estimate: Double, interval: ClosedRange<Double>, bound: Double,
                boundInterval: ClosedRange<Double>) {
        self.quantity = quantity
        self.eps = eps
        self.estimate = estimate
        self.interval = interval
        self.bound = bound
        self.boundInterval = boundInterval
    }

    /// How far the estimate's interval starts above the end of the bound's (≤ 0: consistent).
    public var gap: Double { interval.lowerBound - boundInterval.upperBound }
}

/// JSON (`ed`'s `above_bound`, present only when the check fires): `quantity`, `eps`, `estimate`, `ci95`,
/// `bound`, `ci95_bound`, `gap`.
extension EstimateAboveBound: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ResultKey.self)
        try c.encode(quantity, forKey: ResultKey("quantity"))
        try c.encode(eps, forKey: ResultKey("eps"))
        try c.encode(estimate, forKey: ResultKey("estimate"))
        try c.encode([interval.lowerBound, interval.upperBound], forKey: ResultKey("ci95"))
        try c.encode(bound, forKey: ResultKey("bound"))
        try c.encode([boundInterval.lowerBound, boundInterval.upperBound], forKey: ResultKey("ci95_bound"))
        try c.encode(gap, forKey: ResultKey("gap"))
    }
}
