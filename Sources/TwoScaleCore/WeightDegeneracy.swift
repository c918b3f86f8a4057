/// The rule that flags an estimate carried by a few paths: some stage's weights have an effective
/// sample size below `max(2, K/20)`. Then the θ-average `E det(…)` rests on those few paths, its Monte
/// Carlo error is larger than K suggests, and a bootstrap over paths can understate it
/// (docs/ESTIMATORS.md).
public struct WeightDegeneracy: Sendable, Equatable {
    /// The stage (2-based: the first stage with weights is layer 2) with the smallest ESS, that ESS, and K.
    public var stage: Int
    public var ess: Double
    public var paths: Int
    /// smc only: at that stage and ε, the share of the weights' spread that is the islands' own noise.
    public var islandNoiseShare: Double?

    /// The budget to raise for a degenerate stage: the islands (J, sweeps) when at least half of its
    /// weights' spread is their own noise, K otherwise. One rule for every warning that advises (this and
    /// `TailShortfall`).
    public static func islandsFirst(share: Double) -> Bool { share >= 0.5 }

    /// Whether the islands, rather than K, are the budget to raise here (false when the share is unknown).
    public var islandsFirst: Bool { islandNoiseShare.map(Self.islandsFirst) ?? false }

    /// The threshold below which a stage counts as degenerate.
    public static func threshold(paths: Int) -> Double { Swift.max(2, Double(paths) / 20) }

    /// The worst stage when it is degenerate; nil otherwise (or with fewer than 2 paths).
    /// `ess[m]` is the ESS of stage m + 2.
    public static func check(ess: [Double], paths: Int) -> WeightDegeneracy? {
        guard paths >= 2, let worst = ess.min(), worst < threshold(paths: paths),
              let m = ess.firstIndex(of: worst) else { return nil }
        return WeightDegeneracy(stage: m + 2, ess: worst, paths: paths, islandNoiseShare: nil)
    }
}
