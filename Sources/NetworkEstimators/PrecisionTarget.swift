import Estimation
import Foundation
import Samplers
import TwoScaleCore

/// `PrecisionTarget`'s rounds with a network estimator, for `ed` (`Setting.targetWidth`): the smc estimator,
/// whose report carries the reported intervals and their diagnostics.
extension PrecisionTarget {
    /// The widest reported interval of an smc estimate, relative to its estimate: (width, ε, source); nil
    /// where the estimate carries no reported intervals (no bracket, or not the smc estimator).
    public static func widest(_ e: NetworkEstimate) -> (width: Double, eps: Double, source: ReportedInterval.Source)? {
        guard let m = e.report as? SMCReport else { return nil }
        return widest(m.points)
    }

    /// Runs `estimator` on `problem` (its budget the first round's) until the target is met.
    public static func run(_ estimator: any NetworkEstimator.Type, problem: EstimatorProblem, request: MeasurementRequest,
                           width target: Double, maxPaths: Int?,
                           progress: @escaping @Sendable (String) -> Void) async throws -> (estimate: NetworkEstimate, target: PrecisionTarget) {
        let start = Budget(paths: problem.budget.paths, inner: problem.budget.inner,
                           stageOneSweeps: problem.budget.settings[.stageOneSweeps] ?? MarkovSMC.defaultStageOneSweeps,
                           independenceMoves: (problem.budget.settings[.independenceMoves] ?? 0) != 0)
        let out = try await run(start: start, width: target, maxPaths: maxPaths, defaultStageOneSweeps: MarkovSMC.defaultStageOneSweeps,
                             maximumStageOneSweeps: MarkovSMC.maximumStageOneSweeps, progress: progress) { b in
            var p = problem
            p.budget.paths = b.paths
            p.budget.inner = b.inner
            // The settings as the earlier code set them: stage 1's sweeps once they differ from the start,
            // independence sweeps once turned on.
            if b.stageOneSweeps != start.stageOneSweeps { p.budget.settings[.stageOneSweeps] = b.stageOneSweeps }
            if b.independenceMoves != start.independenceMoves { p.budget.settings[.independenceMoves] = 1 }
            let estimate = try await estimator.estimate(p, request: request, progress: progress)
            return (estimate, (estimate.report as? SMCReport)?.points ?? [])
        }
        return (out.result, out.target)
    }
}
