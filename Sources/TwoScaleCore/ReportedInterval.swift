import Foundation

/// The interval a user should read for one 2sED (or lower 2sED): the sampler's 95% interval where the
/// sampler's own diagnostics say it can be believed, else the certified bracket (docs/ESTIMATORS.md,
/// "Which interval to read").
///
/// * `sampled`: every later stage's outer weights have an ESS of at least `minimumESSFraction` of K as
///   counted, `(Σw)²/Σw²`, and at least `minimumLimitESSFraction` as a lognormal model of their logs' spread
///   s² puts it for K → ∞, `e^{−s²}` (a heavy tail that K draws have not yet reached lifts the first, not the
///   second); island noise counts through both. With two or more later stages each stage's errors carry
///   into the next through the resampled outer particles, so each stage must also have quiet islands, their
///   mean noise variance σ̄² at most `maximumIslandNoiseVariance` (noisier islands leave the pooled power's
///   excess under-corrected, docs/ESTIMATORS.md §3), and outer weights that vary little over θ_{<m}: their
///   spread beyond the islands' noise, s² − σ̄², at most `maximumLaterLogVariance` (where it is larger, K
///   draws fall short of the weights' tail at one stage after another, and the intervals held less often
///   than they claim). And the first stage's moves must have decorrelated its particles: a random
///   walk that leaves them near their starts makes the stage's term low by more than the replicates'
///   spread shows, so its smallest decorrelation must be at least `minimumDecorrelation`. The interval is
///   the sampler's, cut to the bracket (both hold ⇒ their intersection holds).
/// * For the lower 2sED with one later stage (one hidden layer) it also stands where stage 1 decorrelated
///   and the islands are quiet (σ̄² at most `maximumIslandNoiseVariance`), whatever the outer weights: its
///   later term is the mean over the outer particles, drawn from stage 1's population, of their islands'
///   logs, and no outer weight enters it (`lowerSamplingHolds`).
/// * For joint tempering (`bidirectional`) there is no diagnostic to pass: the sampled interval is the hull
///   of the forward pass's 95% interval, low where the moves lag, and the reverse pass's, high where they
///   lag (docs/METHOD.md §21), cut to the bracket.
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
    /// The islands' mean noise variance σ̄² (nats², per stage) above which a sampled interval is not reported
    /// with two or more later stages, nor the lower 2sED's by `lowerSamplingHolds`; also the target of
    /// `StagedSMC.sizedIslands`.
    public static let maximumIslandNoiseVariance = 1.0
    /// With two or more later stages, the outer log-weights' spread beyond the islands' noise, s² − σ̄² (nats²,
    /// per stage), above which a sampled interval is not reported.
    public static let maximumLaterLogVariance = 1.0

    /// Whether the diagnostics of a run let its sampled interval stand: each later stage's outer ESS
    /// (`essFraction`, a share of K) is at least `minimumESSFraction` and its `e^{−s²}` (`logWeightVariance`:
    /// s², the sample variance of the outer log-weights) at least `minimumLimitESSFraction`; with two or more
    /// later stages each one's islands' mean noise variance (`islandNoiseVariance`, one per stage) is at most
    /// `maximumIslandNoiseVariance` and its s² − σ̄² at most `maximumLaterLogVariance`; and the first stage's moves
    /// decorrelated its particles to at least `minimumDecorrelation` (nil: no move was made, or none was
    /// measured). A one-stage model (no entries) passes the first two.
    public static func samplingHolds(essFraction: [Double], logWeightVariance: [Double], decorrelation: Double? = nil,
                                     islandNoiseVariance: [Double] = []) -> Bool {
        let laterStagesQuiet = essFraction.count <= 1 && logWeightVariance.count <= 1
            || (logWeightVariance.count == essFraction.count && islandNoiseVariance.count == essFraction.count
                && zip(logWeightVariance, islandNoiseVariance).allSatisfy(laterStageQuiet))
        return laterStagesQuiet
            && essFraction.allSatisfy { $0 >= minimumESSFraction }
            && logWeightVariance.allSatisfy { Foundation.exp(-$0) >= minimumLimitESSFraction }
            && (decorrelation ?? 1) >= minimumDecorrelation
    }

    /// With two or more later stages, whether one later stage passes every check the rule makes of it alone: its
    /// outer ESS (`essFraction`, a share of K) at least `minimumESSFraction`, `e^{−s²}` at least
    /// `minimumLimitESSFraction`, and `laterStageQuiet`. Where one fails, the sampled interval cannot stand, whatever
    /// the stages after it do (`StagedSMC.sizesStage`).
    public static func laterStagePasses(essFraction: Double, logWeightVariance s2: Double, islandNoiseVariance noise: Double) -> Bool {
        essFraction >= minimumESSFraction && Foundation.exp(-s2) >= minimumLimitESSFraction
            && laterStageQuiet(logWeightVariance: s2, islandNoiseVariance: noise)
    }

    /// The first later stage (an index into the arrays) that fails `laterStagePasses`, or that a variance array does
    /// not reach; nil where every one passes.
    public static func firstFailingLaterStage(essFraction ess: [Double], logWeightVariance s2: [Double],
                                              islandNoiseVariance noise: [Double]) -> Int? {
        ess.indices.first { j in
            j >= s2.count || j >= noise.count
                || !laterStagePasses(essFraction: ess[j], logWeightVariance: s2[j], islandNoiseVariance: noise[j])
        }
    }

    /// With two or more later stages, whether one of them lets the sampled interval stand on its islands'
    /// mean noise variance σ̄² (at most `maximumIslandNoiseVariance`) and its outer log-weights' spread beyond
    /// it, s² − σ̄² (at most `maximumLaterLogVariance`).
    public static func laterStageQuiet(logWeightVariance s2: Double, islandNoiseVariance noise: Double) -> Bool {
        noise <= maximumIslandNoiseVariance && s2 - noise <= maximumLaterLogVariance
    }

    /// Whether the diagnostics let the lower 2sED's sampled interval stand: where the 2sED's may
    /// (`samplingHolds`), and with one later stage also where stage 1 decorrelated (`minimumDecorrelation`;
    /// nil: unmeasured) and that stage's islands' mean noise variance σ̄² (`islandNoiseVariance`, measured) is at
    /// most `maximumIslandNoiseVariance`: the lower 2sED's later term averages the islands' logs over outer
    /// particles drawn from stage 1's population, unweighted, so the outer weights' ESS and spread do not
    /// enter it; the islands' noise does, through the lognormal correction of each island's log.
    public static func lowerSamplingHolds(essFraction: [Double], logWeightVariance: [Double], decorrelation: Double? = nil,
                                          islandNoiseVariance: [Double] = []) -> Bool {
        if samplingHolds(essFraction: essFraction, logWeightVariance: logWeightVariance, decorrelation: decorrelation,
                         islandNoiseVariance: islandNoiseVariance) { return true }
        return essFraction.count == 1 && islandNoiseVariance.count == 1
            && islandNoiseVariance[0] <= maximumIslandNoiseVariance
            && (decorrelation ?? 1) >= minimumDecorrelation
    }

    /// The interval to report from a sampled 95% interval, the run's diagnostics and its certified bracket
    /// (nil: none computed, and then the sampled interval stands as it is); `lower`: the lower 2sED's
    /// (`lowerSamplingHolds`), else the 2sED's (`samplingHolds`).
    public static func choose(sampled: ClosedRange<Double>, essFraction: [Double], logWeightVariance: [Double],
                              decorrelation: Double? = nil, islandNoiseVariance: [Double] = [], lower: Bool = false,
                              bracket: ClosedRange<Double>?) -> ReportedInterval {
        guard let bracket else { return ReportedInterval(range: sampled, source: .sampled) }
        let holds = lower ? lowerSamplingHolds : samplingHolds
        guard holds(essFraction, logWeightVariance, decorrelation, islandNoiseVariance),
              sampled.overlaps(bracket) else {
            return ReportedInterval(range: bracket, source: .bracket)
        }
        return ReportedInterval(range: sampled.clamped(to: bracket), source: .sampled)
    }

    /// Joint tempering's interval to report: the hull of the forward and reverse passes' 95% intervals, cut
    /// to the bracket (nil: none computed); the bracket where the hull misses it.
    public static func bidirectional(forward: ClosedRange<Double>, reverse: ClosedRange<Double>,
                                     bracket: ClosedRange<Double>?) -> ReportedInterval {
        cut(Swift.min(forward.lowerBound, reverse.lowerBound)...Swift.max(forward.upperBound, reverse.upperBound), to: bracket)
    }

    /// Joint tempering's lower 2sED (`TemperedLower`): its sampled interval, cut to the bracket, where stage 1's
    /// moves decorrelated its particles (`minimumDecorrelation`; nil: unmeasured) and every later stage's
    /// islands are quiet (`islandNoiseVariance`, σ̄² per later stage, a pilot's at the chosen J where sizing reached
    /// its target, else at the starting J, each at most `maximumIslandNoiseVariance`) and none of their replicates
    /// stopped at the sizing's cap above its target (`cappedReplicates`, per later stage): each island's log is
    /// corrected under a lognormal model of its noise, and islands left above the target fall short by more than the
    /// replicates' spread shows, a regime no run has validated (docs/ESTIMATORS.md §8). Else the bracket.
    public static func temperedLower(sampled: ClosedRange<Double>, islandNoiseVariance: [Double], cappedReplicates: [Int] = [],
                                     decorrelation: Double?, bracket: ClosedRange<Double>?) -> ReportedInterval {
        let quiet = islandNoiseVariance.allSatisfy { $0 <= maximumIslandNoiseVariance } && cappedReplicates.allSatisfy { $0 == 0 }
            && (decorrelation ?? 1) >= minimumDecorrelation
        guard let bracket, !quiet else { return cut(sampled, to: bracket) }
        return ReportedInterval(range: bracket, source: .bracket)
    }

    /// A sampled interval that no diagnostic gates, cut to the bracket (nil: none computed); the bracket where
    /// it misses it.
    public static func cut(_ sampled: ClosedRange<Double>, to bracket: ClosedRange<Double>?) -> ReportedInterval {
        guard let bracket else { return ReportedInterval(range: sampled, source: .sampled) }
        guard sampled.overlaps(bracket) else { return ReportedInterval(range: bracket, source: .bracket) }
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
