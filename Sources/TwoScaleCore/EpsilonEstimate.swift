import Foundation

/// The estimate of a 2sED at one ε: the one per-ε result of every estimator (plain, smc, joint, on networks
/// and on toys), rendered in each command's own keys by the report that prints it. What an estimator does
/// not measure stays empty (nil or `[]`): plain fills the nested, joint and lower 2sEDs with bootstrap
/// intervals and the stage weights' ESS; smc the sampler's standard error and per-stage diagnostics; joint
/// tempering its replicates' `log Ẑ`. The certified bracket and the interval to read are attached to a
/// grid of estimates by index (`attach`), never by comparing ε.
public struct EpsilonEstimate: Sendable, Equatable {
    public var eps: Double
    public var zeta: Double
    /// The 2sED (nested), the joint 2sED (smc and joint tempering estimate one quantity: equal to `dZeta`) and,
    /// where asked for, the lower 2sED.
    public var dZeta: Double
    public var dZetaJoint: Double
    public var dZetaLower: Double?
    /// Their 95% intervals (nil where the estimator gives none, e.g. plain without bootstrap).
    public var ci95: ClosedRange<Double>?
    public var ci95Joint: ClosedRange<Double>?
    public var ci95Lower: ClosedRange<Double>?
    /// The standard error of `log E det` (nats; a sampler's, nil for a bootstrap) and the share of its
    /// variance that comes from the estimated normalisation ĉ.
    public var standardError: Double?
    public var normalizationShare: Double = 0
    /// The same variance's share of the lower 2sED's (0 without one).
    public var normalizationShareLower: Double = 0
    /// Per stage m ≥ 2 (empty for one stage): the ESS of the stage weights (smc: of the outer particles), as a count.
    public var ess: [Double] = []
    /// smc, per stage m ≥ 2: the share of the spread of `log Ẑ_m^k` over the outer particles that is the
    /// islands' own Monte Carlo noise (capped at 1); the rest is the variation of `Z_m(θ_{<m})` over θ_{<m}.
    public var islandNoise: [Double] = []
    /// smc, per stage m ≥ 2: the sample variance of `log Ẑ_m^k` over the outer particles (nats²), the input of
    /// the lognormal model in the stage term's variance (`LogEstimate.logMean`).
    public var logVariance: [Double] = []
    /// smc with two or more later stages, per stage m ≥ 2: the islands' J (`StagedSMC.sizedIslands`); empty
    /// otherwise.
    public var islandInner: [Int] = []
    /// smc without outer moves, and joint tempering's lower 2sED (`TemperedLower`), per stage m ≥ 2: the islands'
    /// mean noise variance σ̄² in the log (nats²), which the reported interval reads
    /// (`ReportedInterval.maximumIslandNoiseVariance`); empty otherwise.
    public var islandNoiseVariance: [Double] = []
    /// Joint tempering's lower 2sED, per stage m ≥ 2: the pilot's σ̄² at the J the islands ran at (mean over replicates;
    /// `islandNoiseVariance` differs where sizing stopped at the cap); empty otherwise.
    public var islandNoiseVarianceSized: [Double] = []
    /// Joint tempering's lower 2sED, per stage m ≥ 2: how many replicates' islands stopped at the sizing's cap above its
    /// target, which the reported interval reads (`ReportedInterval.temperedLower`); empty otherwise.
    public var islandReplicatesCapped: [Int] = []
    /// smc and joint tempering's lower 2sED: the smallest decorrelation of stage 1's moves
    /// (`SMCDiagnostics.minDecorrelation`; nil without a move), one of the diagnostics the reported interval
    /// reads (`ReportedInterval.minimumDecorrelation`).
    public var stageOneDecorrelation: Double? = nil
    /// smc, per stage m ≥ 2: the shortfall a log-mean of K weights with that spread has under the lognormal
    /// model (`LogNormalSpread.shortfall`, nats), a bias the interval does not include (`TailShortfall`).
    public var tailShortfall: [Double] = []
    /// smc, per stage m ≥ 2 with `StagedSMC.moveProposals` > 0: what moving θ_{m−1} did.
    public var moves: [OuterMoveDiagnostics] = []
    /// smc, per stage m ≥ 2 with `StagedSMC.tiltProposals` > 0: what the majorant tilt did.
    public var tilts: [TiltDiagnostics] = []
    /// smc: the 2sED's `log E det` by stage: `log Ẑ_1`, then each later stage's `log mean_k Ẑ_m^k` (nats).
    public var stages: [LogEstimate] = []
    /// smc: the same estimator with the last stage's average replaced by its supremum (`UpperBound`).
    public var bound: UpperBound?
    /// joint tempering: each replicate sampler's `log Ẑ` (nats).
    public var replicateLogZ: [Double] = []
    /// joint tempering's reverse pass (`setReverse`): its 2sED and 95% interval, and each replicate's
    /// `−log Ẑ_rev` (nats), its estimate of `log E det` from the top scale's particles annealed back to 0.
    public var dZetaReverse: Double? = nil
    public var ci95Reverse: ClosedRange<Double>? = nil
    public var replicateLogZReverse: [Double] = []
    /// An estimator's own values at this ε that no field above holds (a plug-in's), in its order; the report
    /// that prints the point writes them under their names.
    public var extras: [Extra] = []
    /// The certified bracket at this ε, where the run computed one (`attach`).
    public var bracket: CertifiedBracket.Point?
    /// The intervals to read (`ReportedInterval`: the sampled 95% interval where the diagnostics let it
    /// stand, else the bracket), where the estimator chooses them (`chooseIntervals`).
    public var interval: ReportedInterval?
    public var intervalLower: ReportedInterval?

    /// One named value of `extras`.
    public struct Extra: Sendable, Equatable {
        public var name: String
        public var value: Double

        public init(name: String, value: Double) {
            self.name = name
            self.value = value
        }
    }

    public init(eps: Double, zeta: Double, dZeta: Double, dZetaJoint: Double, dZetaLower: Double? = nil,
                ci95: ClosedRange<Double>? = nil, ci95Joint: ClosedRange<Double>? = nil, ci95Lower: ClosedRange<Double>? = nil,
                ess: [Double] = []) {
        self.eps = eps
        self.zeta = zeta
        self.dZeta = dZeta
        self.dZetaJoint = dZetaJoint
        self.dZetaLower = dZetaLower
        self.ci95 = ci95
        self.ci95Joint = ci95Joint
        self.ci95Lower = ci95Lower
        self.ess = ess
    }

    /// A sampler's estimate from `log E det` (and the lower 2sED's), with its variance: the 2sED and its
    /// interval (the joint 2sED is the same quantity), `ĉ`'s share of that variance.
    public init(eps: Double, zeta: Double, dimension d: Int, estimate: LogEstimate, lower: LogEstimate? = nil,
                stageESS: [Double] = [], normalizationVariance: Double = 0) {
        let j = estimate.dimension(d: d, zeta: zeta, eps: eps)
        self.init(eps: eps, zeta: zeta, dZeta: j.value, dZetaJoint: j.value, ci95: j.ci95, ci95Joint: j.ci95, ess: stageESS)
        standardError = estimate.variance.squareRoot()
        if let l = lower { setLower(l, dimension: d, normalizationVariance: normalizationVariance) }
        normalizationShare = estimate.variance > 0 ? normalizationVariance / estimate.variance : 0
    }

    /// The lower 2sED and its 95% interval from its estimate of `log E det` (with ĉ's variance
    /// `normalizationVariance` already in it), and ĉ's share of that variance.
    public mutating func setLower(_ l: LogEstimate, dimension d: Int, normalizationVariance: Double) {
        let r = l.dimension(d: d, zeta: zeta, eps: eps)
        (dZetaLower, ci95Lower) = (r.value, r.ci95)
        normalizationShareLower = l.variance > 0 ? normalizationVariance / l.variance : 0
    }

    /// The share of the sampled 95% interval's variance that is ĉ's: `normalizationShare` for the 2sED,
    /// `normalizationShareLower` for the lower 2sED (`lower`).
    public func normalizationShare(lower: Bool) -> Double { lower ? normalizationShareLower : normalizationShare }

    /// The 2sED's 95% interval, or the estimate alone where the estimator gave none (plain without bootstrap).
    public var interval95: ClosedRange<Double> { ci95 ?? dZeta...dZeta }

    /// Whether the lower 2sED was estimated (its keys are written, null intervals included).
    public var lower: Bool { dZetaLower != nil }

    /// A run tilted by the majorant with two or more later stages: its 2sED's sampled interval has not held its
    /// coverage on exact cases (docs/METHOD.md §22), so the 2sED reports the bracket there (`reportedIntervals`).
    public var tiltedOverSeveralStages: Bool { tilts.count >= 2 && tilts.contains { $0.engaged } }

    /// Puts `bracket`'s point i beside estimate i (the same ε grid, in order), lowers a lower 2sED (and its
    /// interval) that lies above the 2sED's bracket to its upper end (Jensen: lower 2sED ≤ 2sED ≤ hi), and
    /// returns what lies outside its bracket (`BracketCheck`), nil when nothing does.
    public static func attach(_ bracket: CertifiedBracket, to points: inout [EpsilonEstimate]) -> BracketCheck? {
        precondition(bracket.points.count == points.count, "a bracket is attached to the estimates of its own ε grid")
        var check = BracketCheck()
        for i in points.indices {
            let b = bracket.points[i]
            points[i].bracket = b
            (points[i].dZetaLower, points[i].ci95Lower) = b.capping(estimate: points[i].dZeta, lower: points[i].dZetaLower,
                                                                    interval: points[i].ci95Lower, recordingIn: &check)
        }
        return check.isEmpty ? nil : check
    }

    /// The intervals to read for the 2sED and, with the lower 2sED, for it (`ReportedInterval.choose`): from the
    /// sampled intervals, the stage diagnostics at K = `paths` outer particles and the bracket `b`.
    public func reportedIntervals(bracket b: CertifiedBracket.Point, paths: Int) -> (ReportedInterval, ReportedInterval?) {
        let ess = ess.map { $0 / Double(paths) }
        let mixed = stageOneDecorrelation
        return (tiltedOverSeveralStages ? ReportedInterval(range: b.dZeta, source: .bracket)
                        : ReportedInterval.choose(sampled: interval95, essFraction: ess, logWeightVariance: logVariance, decorrelation: mixed,
                                                  islandNoiseVariance: islandNoiseVariance, bracket: b.dZeta),
                ci95Lower.map { ReportedInterval.choose(sampled: $0, essFraction: ess, logWeightVariance: logVariance, decorrelation: mixed,
                                                        islandNoiseVariance: islandNoiseVariance, lower: true, bracket: b.dZetaLower) })
    }

    /// Sets `interval` and `intervalLower` from the attached bracket (`reportedIntervals`, or with a reverse
    /// pass `ReportedInterval.bidirectional` and, for joint tempering's lower 2sED, `ReportedInterval.temperedLower`;
    /// nothing without a bracket or a sampled interval).
    public mutating func chooseIntervals(paths: Int) {
        guard let b = bracket, let sampled = ci95 else { return }
        if let reverse = ci95Reverse {
            interval = ReportedInterval.bidirectional(forward: sampled, reverse: reverse, bracket: b.dZeta)
            intervalLower = ci95Lower.map {
                ReportedInterval.temperedLower(sampled: $0, islandNoiseVariance: islandNoiseVariance, cappedReplicates: islandReplicatesCapped,
                                               decorrelation: stageOneDecorrelation, bracket: b.dZetaLower)
            }
            return
        }
        (interval, intervalLower) = reportedIntervals(bracket: b, paths: paths)
    }

    /// Joint tempering: the reverse pass's 2sED and 95% interval from its estimate of `log E det` (with the
    /// same variance terms as the forward one), and its replicates' values.
    public mutating func setReverse(_ estimate: LogEstimate, dimension d: Int, replicates: [Double]) {
        let j = estimate.dimension(d: d, zeta: zeta, eps: eps)
        (dZetaReverse, ci95Reverse, replicateLogZReverse) = (j.value, j.ci95, replicates)
    }

    /// Joint tempering: how far the reverse pass's 2sED lies from the forward one's, and the wider of the two
    /// passes' 95% half-widths with ĉ's share taken out. Both passes are evaluated at the same ĉ, so their gap
    /// holds none of its error: each half-width `h` becomes `√(h² − (1.96 σ_c / |log ε|)²)`, with
    /// `σ_c² = normalizationShare · standardError²` the variance ĉ adds to `log E det` (docs/METHOD.md §21).
    /// Nil without a reverse pass.
    public var passesGap: (gap: Double, halfWidth: Double)? {
        guard let f = ci95, let r = ci95Reverse, let reverse = dZetaReverse else { return nil }
        let se = standardError ?? 0
        let c = 1.959963984540054 * (normalizationShare * se * se).squareRoot() / Swift.abs(Foundation.log(eps))
        func own(_ i: ClosedRange<Double>) -> Double {
            let h = (i.upperBound - i.lowerBound) / 2
            return Swift.max(0, h * h - c * c).squareRoot()
        }
        return (reverse - dZeta, Swift.max(own(f), own(r)))
    }

    /// Whether joint tempering's two passes lie further apart than `passesGap`'s half-width: the sign that the
    /// moves lag behind the targets (docs/METHOD.md §21). False without a reverse pass.
    public var passesApart: Bool { passesGap.map { Swift.abs($0.gap) > $0.halfWidth } ?? false }

    /// The keys every estimator's point starts with: `eps`, `zeta`, `d_zeta`, `d_zeta_joint`, `d_zeta_lower`
    /// (with the lower 2sED), `ci95`, `ci95_joint`, `ci95_lower` (with the lower 2sED; null intervals written
    /// as null); then `d_zeta_bracket` and, with the lower 2sED, `d_zeta_lower_bracket` (absent without a bracket).
    public func encodeEstimates(into c: inout KeyedEncodingContainer<ResultKey>) throws {
        try c.encode(eps, forKey: ResultKey("eps"))
        try c.encode(zeta, forKey: ResultKey("zeta"))
        try c.encode(dZeta, forKey: ResultKey("d_zeta"))
        try c.encode(dZetaJoint, forKey: ResultKey("d_zeta_joint"))
        if lower { try c.encode(dZetaLower, forKey: ResultKey("d_zeta_lower")) }
        try c.encode(ci95, forKey: ResultKey("ci95"))
        try c.encode(ci95Joint, forKey: ResultKey("ci95_joint"))
        if lower { try c.encode(ci95Lower, forKey: ResultKey("ci95_lower")) }
        guard let b = bracket else { return }
        try c.encode([b.dZeta.lowerBound, b.dZeta.upperBound], forKey: ResultKey("d_zeta_bracket"))
        if lower { try c.encode([b.dZetaLower.lowerBound, b.dZetaLower.upperBound], forKey: ResultKey("d_zeta_lower_bracket")) }
    }
}
