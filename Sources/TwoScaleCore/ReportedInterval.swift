import Foundation

/// The interval a user should read for one 2sED (or lower 2sED): the sampler's 95% interval where the
/// sampler's own diagnostics say it can be believed, else the certified bracket (docs/ESTIMATORS.md,
/// "Which interval to read").
///
/// * `sampled`: the run has one later stage (two stages in all), and there the outer weights' ESS is at
///   least `minimumESSFraction` of K as counted, `(Σw)²/Σw²`, and at least `minimumLimitESSFraction` as a
///   lognormal model of their logs' spread s² puts it for K → ∞, `e^{−s²}` (a heavy tail that K draws have
///   not yet reached lifts the first, not the second). Island noise counts through both. With two or more
///   later stages each stage's particles descend from the previous stage's resampled few, their errors are
///   correlated, and no sampled interval has held at the rate it claims (docs/ESTIMATORS.md §5, "Several
///   later stages"). And the first stage's moves must have decorrelated its particles: a random walk that
///   leaves them near their starts makes the stage's term low by more than the replicates' spread shows, so
///   its smallest decorrelation must be at least `minimumDecorrelation`. The interval is the sampler's, cut
///   to the bracket (both hold ⇒ their intersection holds).
/// * `bracket`: otherwise, or where the sampled interval misses the bracket altogether. It holds by
///   construction, with probability ≥ 1 − δ for its lower end, conditional on what the bracket is.
public struct ReportedInterval: Sendable, Equatable, Encodable {
    public enum Source: String, Sendable, Encodable {
        case sampled, bracket
    }

    public var range: ClosedRange<Double>
    public var source: Source

    public init(range: ClosedRange<Double>, source: Source) {
        self.range = range
        self.source = source
    }

    /// The counted outer ESS, as a share of K, below which a sampled interval is not reported.
    public static let minimumESSFraction = 0.1
    /// The lognormal limit ESS fraction `e^{−s²}` below which a sampled interval is not reported.
    public static let minimumLimitESSFraction = 0.02
    /// The first stage's smallest decorrelation of a move (`SMCDiagnostics.minDecorrelation`) below which a
    /// sampled interval is not reported.
    public static let minimumDecorrelation = 0.85

    /// Whether the diagnostics of a run let its sampled interval stand: a model of at most two stages (at
    /// most one entry per array), whose later stage's outer ESS (`essFraction`, a share of K) is at least
    /// `minimumESSFraction` and whose `e^{−s²}` (`logWeightVariance`: s², the sample variance of the outer
    /// log-weights) is at least `minimumLimitESSFraction`, and whose first stage's moves decorrelated its
    /// particles to at least `minimumDecorrelation` (nil: no move was made, or none was measured). A one-stage
    /// model (no entries) passes the first two.
    public static func samplingHolds(essFraction: [Double], logWeightVariance: [Double], decorrelation: Double? = nil) -> Bool {
        essFraction.count <= 1 && logWeightVariance.count <= 1
            && essFraction.allSatisfy { $0 >= minimumESSFraction }
            && logWeightVariance.allSatisfy { Foundation.exp(-$0) >= minimumLimitESSFraction }
            && (decorrelation ?? 1) >= minimumDecorrelation
    }

    /// The interval to report from a sampled 95% interval, the run's diagnostics and its certified bracket
    /// (nil: none computed, and then the sampled interval stands as it is).
    public static func choose(sampled: ClosedRange<Double>, essFraction: [Double], logWeightVariance: [Double],
                              decorrelation: Double? = nil, bracket: ClosedRange<Double>?) -> ReportedInterval {
        guard let bracket else { return ReportedInterval(range: sampled, source: .sampled) }
        guard samplingHolds(essFraction: essFraction, logWeightVariance: logWeightVariance, decorrelation: decorrelation),
              sampled.overlaps(bracket) else {
            return ReportedInterval(range: bracket, source: .bracket)
        }
        return ReportedInterval(range: sampled.clamped(to: bracket), source: .sampled)
    }

    /// JSON: `[lo, hi]` under `key` and the source under `key_source`.
    public func encode(into c: inout KeyedEncodingContainer<ResultKey>, key: String) throws {
        try c.encode([range.lowerBound, range.upperBound], forKey: ResultKey(key))
        try c.encode(source, forKey: ResultKey(key + "_source"))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ResultKey.self)
        try encode(into: &c, key: "interval")
    }
}
