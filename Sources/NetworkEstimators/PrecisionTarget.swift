import Estimation
import Foundation
import TwoScaleCore

/// Runs the smc estimator until every interval `ed` reports is at most `width` of its estimate wide, or a
/// budget is spent, and says which happened. Each round doubles the outer particles K and the islands' J
/// and starts afresh (same seed). Where the widest interval is the certified bracket only because stage 1's
/// moves did not decorrelate its particles (`ReportedInterval.minimumDecorrelation`; the outer weights would
/// let the sampled interval stand), the next round doubles stage 1's sweeps instead. It stops early where a
/// reported interval over the target is the bracket for any other reason: the bracket's upper end is a
/// worst case over the box, which no budget narrows.
public struct PrecisionTarget: Sendable, Encodable {
    public enum Outcome: String, Sendable, Encodable {
        /// Every reported interval is at most the target wide.
        case reached
        /// An interval over the target is the certified bracket, which more particles do not narrow.
        case bracketLimited = "bracket_limited"
        /// The next round would exceed the largest K allowed.
        case budgetSpent = "budget_spent"
    }

    public struct Round: Sendable, Encodable {
        public var paths: Int
        public var inner: Int
        /// Stage 1's Metropolis–Hastings sweeps per step.
        public var stage1Sweeps: Int
        /// The widest reported interval, (hi − lo) / estimate, over ε, 2sED and lower 2sED; its ε and source.
        public var width: Double
        public var eps: Double
        public var source: String
        public var seconds: Double
        enum CodingKeys: String, CodingKey { case paths, inner, stage1Sweeps = "stage1_sweeps", width, eps, source, seconds }
    }

    public var target: Double
    public var maxPaths: Int
    public var outcome: Outcome
    public var rounds: [Round]

    enum CodingKeys: String, CodingKey { case target, maxPaths = "max_paths", outcome, rounds }

    /// The widest reported interval of an smc estimate, relative to its estimate: (width, ε, source); nil
    /// where the estimate carries no reported intervals (no bracket, or not the smc estimator).
    public static func widest(_ e: NetworkEstimate) -> (width: Double, eps: Double, source: ReportedInterval.Source)? {
        guard let m = e.report as? SMCReport else { return nil }
        var best: (Double, Double, ReportedInterval.Source)?
        for p in m.points {
            for (interval, value) in [(p.interval, p.dZeta), (p.intervalLower, p.dZetaLower ?? p.dZeta)] {
                guard let i = interval, value > 0 else { continue }
                let w = (i.range.upperBound - i.range.lowerBound) / value
                if best == nil || w > best!.0 { best = (w, p.eps, i.source) }
            }
        }
        return best
    }

    /// Whether the smc estimate's interval at `eps` is the bracket only for stage 1's decorrelation: the
    /// outer weights' diagnostics let the sampled interval stand, stage 1's smallest decorrelation does not.
    public static func limitedByStageOne(_ e: NetworkEstimate, eps: Double) -> Bool {
        guard let m = e.report as? SMCReport, let p = m.points.first(where: { $0.eps == eps }),
              p.ci95 != nil, p.bracket != nil else { return false }
        let ess = p.ess.map { $0 / Double(m.paths) }
        // Islands are sized only once stage 1 decorrelates (`StagedSMC.sizesIslands`), so their noise here is
        // taken as the sizing would leave it.
        let sized = p.islandNoiseVariance.map { Swift.min($0, ReportedInterval.maximumIslandNoiseVariance) }
        return ReportedInterval.samplingHolds(essFraction: ess, logWeightVariance: p.logVariance, islandNoiseVariance: sized)
            && !ReportedInterval.samplingHolds(essFraction: ess, logWeightVariance: p.logVariance, decorrelation: p.stageOneDecorrelation,
                                               islandNoiseVariance: p.islandNoiseVariance)
    }

    /// Runs `estimator` on `problem` (its budget the first round's) until the target is met.
    public static func run(_ estimator: any NetworkEstimator.Type, problem: EstimatorProblem, request: MeasurementRequest,
                           width target: Double, maxPaths: Int?,
                           progress: @escaping @Sendable (String) -> Void) async throws -> (estimate: NetworkEstimate, target: PrecisionTarget) {
        guard target.isFinite, target > 0, target < 10 else {
            throw TwoScaleError.invalid("\(Setting.targetWidth)", "\(target)", allowed: "a relative width (hi − lo)/estimate in (0, 10), e.g. 0.02 for 2%")
        }
        let cap = maxPaths ?? 8 * problem.budget.paths
        guard cap >= problem.budget.paths else {
            throw TwoScaleError.invalid("\(Setting.maxPaths)", "\(cap)", allowed: "at least the starting K = \(problem.budget.paths)")
        }
        var p = problem
        var rounds: [Round] = []
        while true {
            let clock = ContinuousClock(), t0 = clock.now
            progress("precision target: round \(rounds.count + 1), K = \(p.budget.paths), J = \(p.budget.inner)")
            let estimate = try await estimator.estimate(p, request: request, progress: progress)
            guard let w = widest(estimate) else {
                throw TwoScaleError.usage("\(Setting.targetWidth) needs the smc estimator's reported intervals (the Markov FIM with its certified bracket)")
            }
            let sweeps = p.budget.settings[.stageOneSweeps] ?? MarkovSMC.defaultStageOneSweeps
            rounds.append(Round(paths: p.budget.paths, inner: p.budget.inner, stage1Sweeps: sweeps, width: w.width, eps: w.eps,
                                source: w.source.rawValue, seconds: (clock.now - t0) / .seconds(1)))
            let mixing = w.width > target && w.source == .bracket && limitedByStageOne(estimate, eps: w.eps)
            let outcome: Outcome? = w.width <= target ? .reached
                : mixing ? (2 * sweeps > MarkovSMC.maximumStageOneSweeps ? .budgetSpent : nil)
                : w.source == .bracket ? .bracketLimited
                : 2 * p.budget.paths > cap ? .budgetSpent : nil
            if let outcome {
                return (estimate, PrecisionTarget(target: target, maxPaths: cap, outcome: outcome, rounds: rounds))
            }
            if mixing {
                p.budget.settings[.stageOneSweeps] = 2 * sweeps
                continue
            }
            p.budget.paths *= 2
            p.budget.inner *= 2
        }
    }

    /// The report's line: what happened, and why.
    public var summary: String {
        let last = rounds.last
        let widths = rounds.map { "K = \($0.paths)\($0.stage1Sweeps == MarkovSMC.defaultStageOneSweeps ? "" : ", \($0.stage1Sweeps) stage-1 sweeps"): \(String(format: "%.3g", 100 * $0.width))%" }
            .joined(separator: ", ")
        switch outcome {
        case .reached:
            return "target width \(String(format: "%.3g", 100 * target))% reached (\(widths))"
        case .bracketLimited:
            return "target width \(String(format: "%.3g", 100 * target))% not reached: the widest reported interval (\(String(format: "%.3g", 100 * (last?.width ?? 0)))% at ε = \(last.map { String(format: "%g", $0.eps) } ?? "?")) is the certified bracket, whose upper end is a worst case over the box that no budget narrows (\(widths))"
        case .budgetSpent where (last?.source ?? "") == ReportedInterval.Source.bracket.rawValue:
            return "target width \(String(format: "%.3g", 100 * target))% not reached: stage 1's moves did not decorrelate its particles at \(last?.stage1Sweeps ?? 0) sweeps, and the next round would pass \(MarkovSMC.maximumStageOneSweeps) (\(widths))"
        case .budgetSpent:
            return "target width \(String(format: "%.3g", 100 * target))% not reached within K ≤ \(maxPaths) (\(widths)); raise \(Setting.maxPaths)"
        }
    }
}
