/// The check that an estimate of the lower 2sED has not come out above the 2sED by more than their
/// intervals allow. The true values are ordered, lower ≤ 2sED (Jensen: `E log X ≤ log E X` for each later
/// layer's average). An estimator that corrects the two terms separately (smc: the islands' logs under a
/// lognormal replicate model for the lower term, the log of their mean less the pooled power's excess for
/// the 2sED term;
/// docs/ESTIMATORS.md §3, §5) can break that order by noise; when the lower interval lies wholly above the
/// 2sED's, a correction has failed (docs/ESTIMATORS.md, Limits: island replicates that disagree by many
/// nats), and the lower 2sED at that ε is not to be trusted.
public struct LowerAboveNested: Sendable, Equatable {
    /// The grid point where the lower interval's bottom lies furthest above the 2sED interval's top.
    public var eps: Double
    public var nested: Double
    public var nestedInterval: ClosedRange<Double>
    public var lower: Double
    public var lowerInterval: ClosedRange<Double>

    /// By how much the lower estimate exceeds the 2sED estimate there.
    public var excess: Double { lower - nested }

    public init(eps: Double, nested: Double, nestedInterval: ClosedRange<Double>, lower: Double, lowerInterval: ClosedRange<Double>) {
        self.eps = eps
        self.nested = nested
        self.nestedInterval = nestedInterval
        self.lower = lower
        self.lowerInterval = lowerInterval
    }

    /// How far the lower interval starts above the end of the 2sED interval (≤ 0 when they overlap or are
    /// in the expected order).
    public var gap: Double { lowerInterval.lowerBound - nestedInterval.upperBound }

}

extension LowerAboveNested: IntervalOrderCheck {}

/// A check that an estimate's interval lies wholly above an interval it cannot exceed (`LowerAboveNested`,
/// `EstimateAboveBound`): `gap` is how far above it starts, ≤ 0 when the two overlap or are in order.
public protocol IntervalOrderCheck {
    var gap: Double { get }
}

extension IntervalOrderCheck {
    /// The case with the largest positive gap; nil when there is none (overlapping or correctly ordered
    /// intervals are noise the intervals already allow for).
    public static func check(_ cases: [Self]) -> Self? {
        cases.filter { $0.gap > 0 }.max { $0.gap < $1.gap }
    }
}

/// JSON (`ed`'s `lower_above_nested`, present when the check fires): `eps`, `d_zeta` and `ci95` (the 2sED),
/// `d_zeta_lower` and `ci95_lower`, `excess` (lower − 2sED) and `gap` (the lower interval's start above the
/// 2sED interval's end, > 0).
extension LowerAboveNested: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ResultKey.self)
        try c.encode(eps, forKey: ResultKey("eps"))
        try c.encode(nested, forKey: ResultKey("d_zeta"))
        try c.encode([nestedInterval.lowerBound, nestedInterval.upperBound], forKey: ResultKey("ci95"))
        try c.encode(lower, forKey: ResultKey("d_zeta_lower"))
        try c.encode([lowerInterval.lowerBound, lowerInterval.upperBound], forKey: ResultKey("ci95_lower"))
        try c.encode(excess, forKey: ResultKey("excess"))
        try c.encode(gap, forKey: ResultKey("gap"))
    }
}
