import Foundation
import TwoScaleCore

/// Runs the smc estimator until every reported interval is at most `width` of its estimate wide, or a budget
/// is spent, and says which happened; for any staged model (`ed` on networks, `toy` on the layered toy, whose
/// exact values check it). Each round starts afresh (same seed). Where the widest interval is sampled, the
/// next round doubles the outer particles K and the islands' J, or quadruples the trace draws where at least
/// `traceDrawsShare` of its variance is ĉ's, which K and J do not narrow. Where it is the certified bracket, the next
/// round changes what kept the sampled interval from standing (`Levers`): stage 1's moves that did not
/// decorrelate its particles (`ReportedInterval.minimumDecorrelation`) get twice the sweeps, and where that
/// did not do it independence sweeps, then doublings again; outer weights whose spread is in good part the
/// islands' own noise (`islandLeverShare` at every stage that fails) get twice the J. It stops early where
/// neither applies: the weights then vary over the earlier layers, and the bracket's upper end is a worst
/// case over the box, which no budget narrows. A round whose intervals meet the target is not done while an
/// estimate lies outside its own reported interval (`strayEstimate`): the same levers are pulled for that point,
/// and where none applies the target stops and says so.
public struct PrecisionTarget: Sendable, Encodable {
    public enum Outcome: String, Sendable, Encodable {
        /// Every reported interval is at most the target wide.
        case reached
        /// An interval over the target is the certified bracket, which more particles do not narrow.
        case bracketLimited = "bracket_limited"
        /// The next round would exceed the largest K allowed.
        case budgetSpent = "budget_spent"
        /// Every reported interval meets the target, but an estimate lies outside its certified bracket and no
        /// lever applies to its point.
        case estimateOutside = "estimate_outside"
    }

    /// What one round runs with.
    public struct Budget: Sendable, Equatable {
        public var paths: Int
        public var inner: Int
        /// Stage 1's Metropolis–Hastings sweeps per step, and whether independence sweeps follow them.
        public var stageOneSweeps: Int
        public var independenceMoves: Bool
        /// The uniform draws of Tr F behind ĉ.
        public var traceDraws: Int

        public init(paths: Int, inner: Int, stageOneSweeps: Int, independenceMoves: Bool, traceDraws: Int) {
            (self.paths, self.inner, self.stageOneSweeps, self.independenceMoves) = (paths, inner, stageOneSweeps, independenceMoves)
            self.traceDraws = traceDraws
        }
    }

    /// One round: K and J (joint tempering: P particles and R replicates), what else it ran with, and its widest interval.
    public struct Round: Sendable, Encodable {
        public var paths: Int
        public var inner: Int
        /// smc: stage 1's Metropolis–Hastings sweeps per step, and whether independence sweeps follow them.
        public var stage1Sweeps: Int?
        public var independenceMoves: Bool?
        /// Joint tempering: Metropolis sweeps per tempering step.
        public var sweeps: Int?
        /// The uniform draws of Tr F behind ĉ.
        public var traceDraws: Int
        /// The widest reported interval, (hi − lo) / estimate, over ε, 2sED and lower 2sED; its ε and source.
        public var width: Double
        public var eps: Double
        public var source: String
        public var seconds: Double
        enum CodingKeys: String, CodingKey {
            case paths, inner, stage1Sweeps = "stage1_sweeps", independenceMoves = "independence_moves", sweeps, traceDraws = "trace_draws"
            case width, eps, source, seconds
        }

        /// An smc round.
        public init(paths: Int, inner: Int, stage1Sweeps: Int, independenceMoves: Bool, traceDraws: Int, width: Double, eps: Double,
                    source: String, seconds: Double) {
            (self.paths, self.inner, self.stage1Sweeps, self.independenceMoves) = (paths, inner, stage1Sweeps, independenceMoves)
            self.traceDraws = traceDraws
            (self.width, self.eps, self.source, self.seconds) = (width, eps, source, seconds)
        }

        /// A joint tempering round.
        public init(paths: Int, inner: Int, sweeps: Int, traceDraws: Int, width: Double, eps: Double, source: String, seconds: Double) {
            (self.paths, self.inner, self.sweeps, self.traceDraws) = (paths, inner, sweeps, traceDraws)
            (self.width, self.eps, self.source, self.seconds) = (width, eps, source, seconds)
        }
    }

    public var target: Double
    public var maxPaths: Int
    public var outcome: Outcome
    public var rounds: [Round]
    /// smc: stage 1's sweeps where none were asked for (the summary names only other counts), and the most a run takes.
    public var defaultStageOneSweeps: Int
    public var maximumStageOneSweeps: Int
    /// Joint tempering: the most sweeps a round takes (nil for smc), and whether the budget ran out on them.
    public var maximumSweeps: Int?
    public var sweepsSpent = false
    /// The most trace draws a round takes, and whether the budget ran out on them.
    public var maximumTraceDraws: Int?
    public var traceDrawsSpent = false
    /// The ε whose estimate lay outside its reported interval in the last round, where that kept the target from
    /// being reached (`strayEstimate`); nil otherwise.
    public var estimateOutsideEps: Double?

    enum CodingKeys: String, CodingKey { case target, maxPaths = "max_paths", outcome, rounds, estimateOutsideEps = "estimate_outside_eps" }

    public init(target: Double, maxPaths: Int, outcome: Outcome, rounds: [Round], defaultStageOneSweeps: Int, maximumStageOneSweeps: Int,
                maximumTraceDraws: Int? = nil, traceDrawsSpent: Bool = false) {
        (self.target, self.maxPaths, self.outcome, self.rounds) = (target, maxPaths, outcome, rounds)
        (self.defaultStageOneSweeps, self.maximumStageOneSweeps) = (defaultStageOneSweeps, maximumStageOneSweeps)
        (self.maximumTraceDraws, self.traceDrawsSpent) = (maximumTraceDraws, traceDrawsSpent)
    }

    /// Joint tempering's rounds, at most `maximumSweeps` sweeps and `maximumTraceDraws` trace draws; `sweepsSpent`,
    /// `traceDrawsSpent`: the next round would have passed them.
    public init(target: Double, maxPaths: Int, outcome: Outcome, rounds: [Round], maximumSweeps: Int, maximumTraceDraws: Int,
                sweepsSpent: Bool, traceDrawsSpent: Bool) {
        self.init(target: target, maxPaths: maxPaths, outcome: outcome, rounds: rounds, defaultStageOneSweeps: 0, maximumStageOneSweeps: 0,
                  maximumTraceDraws: maximumTraceDraws, traceDrawsSpent: traceDrawsSpent)
        (self.maximumSweeps, self.sweepsSpent) = (maximumSweeps, sweepsSpent)
    }

    /// The widest reported interval of a run's points (`interval`, `intervalLower` set), relative to its
    /// estimate: (width, ε, source, the share of its variance that is ĉ's where it is sampled, else 0, and
    /// whether it is the lower 2sED's); nil where no point carries a reported interval.
    public static func widest(_ points: [EpsilonEstimate])
        -> (width: Double, eps: Double, source: ReportedInterval.Source, normalizationShare: Double, lower: Bool)? {
        var best: (Double, Double, ReportedInterval.Source, Double, Bool)?
        for p in points {
            for (interval, value, lower) in reported(p) {
                guard let i = interval, value > 0 else { continue }
                let w = (i.range.upperBound - i.range.lowerBound) / value
                let share = i.source == .sampled ? p.normalizationShare(lower: lower) : 0
                if best == nil || w > best!.0 { best = (w, p.eps, i.source, share, lower) }
            }
        }
        return best
    }

    /// A point's reported intervals with the estimates they belong to: the 2sED's, then the lower 2sED's (`lower`).
    static func reported(_ p: EpsilonEstimate) -> [(interval: ReportedInterval?, value: Double, lower: Bool)] {
        [(p.interval, p.dZeta, false), (p.intervalLower, p.dZetaLower ?? p.dZeta, true)]
    }

    /// The first point whose estimate lies outside its own reported interval (the certified bracket, or a sampled
    /// interval cut to it), 2sED first: its ε and whether it is the lower 2sED's; nil where every estimate lies
    /// inside. The bracket holds with probability ≥ 1 − δ, so such an estimate is biased beyond its interval,
    /// however narrow that interval is.
    public static func strayEstimate(_ points: [EpsilonEstimate]) -> (eps: Double, lower: Bool)? {
        for p in points {
            for (interval, value, lower) in reported(p) {
                if let i = interval, !i.range.contains(value) { return (p.eps, lower) }
            }
        }
        return nil
    }

    /// Stage 1's next sweeps and independence sweeps where it did not decorrelate: twice the sweeps first; where
    /// one doubling from `start` did not decorrelate the units (wide ones: a random walk needs about a sweep per
    /// coordinate), independence sweeps, then doublings; nil where the doubling would pass `cap`.
    public static func raisedStageOne(sweeps: Int, independence: Bool, start: Int, cap: Int) -> (sweeps: Int, independence: Bool)? {
        guard independence || sweeps == start else { return (sweeps, true) }
        return 2 * sweeps <= cap ? (2 * sweeps, independence) : nil
    }

    /// The least share of a sampled interval's variance that is ĉ's from which the next round quadruples the
    /// trace draws (which halve ĉ's part of the half-width) rather than doubling the particles, which leave it.
    public static var traceDrawsShare: Double { 0.5 }

    /// The largest trace draws the rounds reach, as a multiple of the starting draws (and at most
    /// `TraceEstimate.allowedDraws`' end, 10⁷): three quadruplings.
    public static var maximumTraceDrawsFactor: Int { 64 }

    /// The cap on the trace draws from `start`.
    static func traceDrawsCap(start: Int) -> Int {
        Swift.max(start, Swift.min(TraceEstimate.allowedDraws.upperBound, maximumTraceDrawsFactor * start))
    }

    /// What kept the sampled interval at one ε from standing, as the budget that may lift it: `islands`, the
    /// outer weights' checks fail and every later stage where they do has noisy islands (σ̄² above the target,
    /// or at least `islandLeverShare` of the spread); `stageOne`, stage 1's moves did not decorrelate its
    /// particles, where the weights pass or the islands' lever applies. Neither: the weights vary over the
    /// earlier layers (or nothing was measured), and no round narrows the bracket.
    public struct Levers: Sendable, Equatable {
        public var stageOne: Bool
        public var islands: Bool
        public var any: Bool { stageOne || islands }

        /// From one point's diagnostics: outer ESS as shares of K, the log-weights' spread s², the islands'
        /// shares of it and their mean noise σ̄² per later stage, and stage 1's smallest decorrelation.
        public init(essFraction ess: [Double], logWeightVariance s2: [Double], islandNoiseShare share: [Double],
                    islandNoiseVariance noise: [Double], decorrelation: Double?) {
            let decorrelated = (decorrelation ?? 1) >= ReportedInterval.minimumDecorrelation
            let target = ReportedInterval.maximumIslandNoiseVariance
            // Islands are sized only once stage 1 decorrelates (`StagedSMC.sizesIslands`); before that their
            // noise is taken as the sizing would leave it.
            var asSized = decorrelated ? noise : noise.map { Swift.min($0, target) }
            // Nor after a later stage that failed the rule (`StagedSMC.sizesStage`): there the sizing would take
            // the noise above the target out of the stage's spread as well.
            var s2 = s2
            if decorrelated, let f = ReportedInterval.firstFailingLaterStage(essFraction: ess, logWeightVariance: s2,
                                                                             islandNoiseVariance: noise) {
                for m in noise.indices where m > f && m < s2.count {
                    s2[m] -= Swift.max(0, noise[m] - target)
                    asSized[m] = Swift.min(noise[m], target)
                }
            }
            let weightsHold = ReportedInterval.samplingHolds(essFraction: ess, logWeightVariance: s2, islandNoiseVariance: asSized)
            let several = ess.count > 1
            // The later stages whose own checks fail; the islands' lever where each is noisy islands: σ̄² above
            // the target though sized (a larger starting J raises the sizing's cap), or a good part of the spread.
            let failing = ess.indices.filter { m in
                guard m < s2.count else { return true }
                if !ReportedInterval.samplingHolds(essFraction: [ess[m]], logWeightVariance: [s2[m]]) { return true }
                guard several else { return false }
                return m >= asSized.count || !ReportedInterval.laterStageQuiet(logWeightVariance: s2[m], islandNoiseVariance: asSized[m])
            }
            islands = !weightsHold && !failing.isEmpty && failing.allSatisfy { m in
                (several && m < asSized.count && asSized[m] > ReportedInterval.maximumIslandNoiseVariance)
                    || (m < share.count && share[m] >= PrecisionTarget.islandLeverShare)
            }
            // More sweeps only where the weights would then let the sampled interval stand, or the islands'
            // lever may make them.
            stageOne = !decorrelated && (weightsHold || islands)
        }

        /// The levers of a run's point at K = `paths` for its 2sED's interval (`lower`: the lower 2sED's); none where it
        /// has no sampled interval or bracket, nor for the 2sED of a run tilted over several later stages, which
        /// reports its bracket whatever the budget (`EpsilonEstimate.tiltedOverSeveralStages`).
        public init(_ p: EpsilonEstimate, paths: Int, lower: Bool = false) {
            guard p.ci95 != nil, p.bracket != nil, lower || !p.tiltedOverSeveralStages else {
                self.init(stageOne: false, islands: false)
                return
            }
            self.init(essFraction: p.ess.map { $0 / Double(paths) }, logWeightVariance: p.logVariance, islandNoiseShare: p.islandNoise,
                      islandNoiseVariance: p.islandNoiseVariance, decorrelation: p.stageOneDecorrelation)
        }

        public init(stageOne: Bool, islands: Bool) {
            self.stageOne = stageOne
            self.islands = islands
        }
    }

    /// The islands' share of a stage's outer log-weight spread from which the islands' lever doubles J. Lower
    /// than `WeightDegeneracy.islandsFirst`'s half: the share, read from two replicates per island,
    /// understates heavy-tailed island noise, and where the weights vary over the earlier layers it is near 0
    /// (docs/ESTIMATORS.md §5, "A precision target").
    public static var islandLeverShare: Double { 0.25 }

    /// The largest J the rounds reach, as a multiple of the starting J.
    public static var maximumInnerFactor: Int { 8 }

    /// Checks the target width (in (0, 10)) and returns the cap on the outer particles (`particles`, K or P):
    /// `maxPaths`, at least the starting `start`, or 8 × `start` when not given.
    static func checkedCap(width target: Double, maxPaths: Int?, start: Int, particles: String) throws -> Int {
        guard target.isFinite, target > 0, target < 10 else {
            throw TwoScaleError.invalid("\(Setting.targetWidth)", "\(target)", allowed: "a relative width (hi − lo)/estimate in (0, 10), e.g. 0.02 for 2%")
        }
        let cap = maxPaths ?? 8 * start
        guard cap >= start else {
            throw TwoScaleError.invalid("\(Setting.maxPaths)", "\(cap)", allowed: "at least the starting \(particles) = \(start)")
        }
        return cap
    }

    /// Runs `round` from the budget `start` until the target is met. `round` runs the estimator at a budget
    /// and returns its result with the points whose reported intervals (and brackets) decide.
    public static func run<R: Sendable>(start: Budget, width target: Double, maxPaths: Int?,
                                        defaultStageOneSweeps: Int, maximumStageOneSweeps: Int,
                                        progress: @escaping @Sendable (String) -> Void,
                                        round: (Budget) async throws -> (result: R, points: [EpsilonEstimate])) async throws
        -> (result: R, target: PrecisionTarget) {
        let cap = try checkedCap(width: target, maxPaths: maxPaths, start: start.paths, particles: "K")
        let innerCap = maximumInnerFactor * start.inner, drawsCap = traceDrawsCap(start: start.traceDraws)
        var b = start
        var rounds: [Round] = []
        while true {
            let clock = ContinuousClock(), t0 = clock.now
            progress("precision target: round \(rounds.count + 1), K = \(b.paths), J = \(b.inner)")
            let (result, points) = try await round(b)
            guard let w = widest(points) else {
                throw TwoScaleError.usage("\(Setting.targetWidth) needs the smc estimator's reported intervals (the Markov FIM with its certified bracket)")
            }
            rounds.append(Round(paths: b.paths, inner: b.inner, stage1Sweeps: b.stageOneSweeps, independenceMoves: b.independenceMoves,
                                traceDraws: b.traceDraws, width: w.width, eps: w.eps, source: w.source.rawValue, seconds: (clock.now - t0) / .seconds(1)))
            // Narrow enough, but an estimate outside its interval: that point's levers decide.
            let stray = w.width <= target ? strayEstimate(points) : nil
            let decisive: (eps: Double, lower: Bool)? = stray ?? (w.width > target && w.source == .bracket ? (w.eps, w.lower) : nil)
            let levers = decisive.flatMap { d in points.first(where: { $0.eps == d.eps }).map { Levers($0, paths: b.paths, lower: d.lower) } }
                ?? Levers(stageOne: false, islands: false)
            // A sampled interval that is mostly ĉ's: more trace draws, not more particles.
            let wantsDraws = w.width > target && w.source == .sampled && w.normalizationShare >= traceDrawsShare
            let raised = raisedStageOne(sweeps: b.stageOneSweeps, independence: b.independenceMoves, start: start.stageOneSweeps,
                                        cap: maximumStageOneSweeps)
            let spent = (levers.stageOne && raised == nil) || (levers.islands && 2 * b.inner > innerCap)
            let outcome: Outcome? = w.width <= target && stray == nil ? .reached
                : levers.any ? (spent ? .budgetSpent : nil)
                : stray != nil ? .estimateOutside
                : w.source == .bracket ? .bracketLimited
                : wantsDraws ? (4 * b.traceDraws > drawsCap ? .budgetSpent : nil)
                : 2 * b.paths > cap ? .budgetSpent : nil
            if let outcome {
                var t = PrecisionTarget(target: target, maxPaths: cap, outcome: outcome, rounds: rounds,
                                        defaultStageOneSweeps: defaultStageOneSweeps, maximumStageOneSweeps: maximumStageOneSweeps,
                                        maximumTraceDraws: drawsCap, traceDrawsSpent: outcome == .budgetSpent && wantsDraws)
                t.estimateOutsideEps = stray?.eps
                return (result, t)
            }
            if wantsDraws {
                b.traceDraws *= 4
                continue
            }
            if levers.any {
                if levers.stageOne, let raised { (b.stageOneSweeps, b.independenceMoves) = raised }
                if levers.islands { b.inner *= 2 }
                continue
            }
            b.paths *= 2
            b.inner *= 2
        }
    }

    /// The report's line: what happened, and why.
    public var summary: String {
        let last = rounds.last
        let strayAt = estimateOutsideEps.map { String(format: "%g", $0) } ?? "?"
        let widths = rounds.map { r -> String in
            let budget = r.sweeps.map { "P = \(r.paths), \($0) sweeps, \(r.traceDraws) trace draws" }
                ?? "K = \(r.paths), J = \(r.inner)\((r.stage1Sweeps ?? defaultStageOneSweeps) == defaultStageOneSweeps ? "" : ", \(r.stage1Sweeps ?? 0) stage-1 sweeps")"
                + "\(r.independenceMoves == true ? ", independence moves" : "")"
                + "\(r.traceDraws == rounds.first?.traceDraws ? "" : ", \(r.traceDraws) trace draws")"
            return budget + ": \(String(format: "%.3g", 100 * r.width))%"
        }.joined(separator: "; ")
        switch outcome {
        case .reached:
            return "target width \(String(format: "%.3g", 100 * target))% reached (\(widths))"
        case .estimateOutside:
            return "target width \(String(format: "%.3g", 100 * target))% not reached: every reported interval is that narrow, but the estimate at ε = \(strayAt) lies outside its certified bracket (the sampler is biased there beyond its interval), and no round's lever applies to it (\(widths))"
        case .budgetSpent where estimateOutsideEps != nil:
            return "target width \(String(format: "%.3g", 100 * target))% not reached: the estimate at ε = \(strayAt) lies outside its certified bracket, and the next round would pass \(maximumSweeps.map { "\($0) sweeps" } ?? "\(maximumStageOneSweeps) stage-1 sweeps or \(Self.maximumInnerFactor) × the starting J") (\(widths))"
        case .bracketLimited:
            return "target width \(String(format: "%.3g", 100 * target))% not reached: the widest reported interval (\(String(format: "%.3g", 100 * (last?.width ?? 0)))% at ε = \(last.map { String(format: "%g", $0.eps) } ?? "?")) is the certified bracket, whose upper end is a worst case over the box that no budget narrows (\(widths))"
        case .budgetSpent where sweepsSpent:
            return "target width \(String(format: "%.3g", 100 * target))% not reached: the two passes lie apart (the moves lag), and the next round would pass \(maximumSweeps ?? 0) sweeps (\(widths))"
        case .budgetSpent where traceDrawsSpent:
            return "target width \(String(format: "%.3g", 100 * target))% not reached: most of the interval is the trace normalisation ĉ's, and the next round would pass \(maximumTraceDraws ?? 0) trace draws (\(widths))"
        case .budgetSpent where (last?.source ?? "") == ReportedInterval.Source.bracket.rawValue:
            return "target width \(String(format: "%.3g", 100 * target))% not reached: the sampled interval did not stand, and the next round would pass \(maximumStageOneSweeps) stage-1 sweeps or \(Self.maximumInnerFactor) × the starting J (\(widths))"
        case .budgetSpent:
            return "target width \(String(format: "%.3g", 100 * target))% not reached within \(maximumSweeps == nil ? "K" : "P") ≤ \(maxPaths) (\(widths)); raise \(Setting.maxPaths)"
        }
    }
}
