import Estimation
import Foundation
import Samplers
import TwoScaleCore

/// `PrecisionTarget`'s rounds with a network estimator, for `ed` (`Setting.targetWidth`): the smc estimator,
/// whose report carries the reported intervals and their diagnostics.
extension PrecisionTarget {
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
            // A setting is written only once a round changes it, so the problem the user gave runs unchanged.
            if b.stageOneSweeps != start.stageOneSweeps { p.budget.settings[.stageOneSweeps] = b.stageOneSweeps }
            if b.independenceMoves != start.independenceMoves { p.budget.settings[.independenceMoves] = 1 }
            let estimate = try await estimator.estimate(p, request: request, progress: progress)
            return (estimate, (estimate.report as? SMCReport)?.points ?? [])
        }
        return (out.result, out.target)
    }
}
