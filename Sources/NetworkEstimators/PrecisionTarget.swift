import Estimation
import Foundation
import Samplers
import TwoScaleCore

/// `PrecisionTarget`'s rounds with a network estimator, for `ed` (`Setting.targetWidth`): the smc estimator,
/// whose report carries the reported intervals and their diagnostics, or joint tempering (`runTempering`).
extension PrecisionTarget {
    /// Runs `estimator` on `problem` (its budget the first round's) until the target is met.
    public static func run(_ estimator: any NetworkEstimator.Type, problem: EstimatorProblem, request: MeasurementRequest,
                           width target: Double, maxPaths: Int?,
                           progress: @escaping @Sendable (String) -> Void) async throws -> (estimate: NetworkEstimate, target: PrecisionTarget) {
        if estimator.kind == TemperingEstimator.kind {
            return try await runTempering(problem: problem, request: request, width: target, maxPaths: maxPaths, progress: progress)
        }
        let start = Budget(paths: problem.budget.paths, inner: problem.budget.inner,
                           stageOneSweeps: problem.budget.settings[.stageOneSweeps] ?? MarkovSMC.defaultStageOneSweeps,
                           independenceMoves: (problem.budget.settings[.independenceMoves] ?? 0) != 0,
                           traceDraws: SMCEstimator.traceDraws(problem.budget, parameters: problem.model.architecture.parameterCount))
        let out = try await run(start: start, width: target, maxPaths: maxPaths, defaultStageOneSweeps: MarkovSMC.defaultStageOneSweeps,
                             maximumStageOneSweeps: MarkovSMC.maximumStageOneSweeps, progress: progress) { b in
            var p = problem
            p.budget.paths = b.paths
            p.budget.inner = b.inner
            // A setting is written only once a round changes it, so the problem the user gave runs unchanged.
            if b.stageOneSweeps != start.stageOneSweeps { p.budget.settings[.stageOneSweeps] = b.stageOneSweeps }
            if b.independenceMoves != start.independenceMoves { p.budget.settings[.independenceMoves] = 1 }
            if b.traceDraws != start.traceDraws { p.budget.settings[.traceDraws] = b.traceDraws }
            let estimate = try await estimator.estimate(p, request: request, progress: progress)
            return (estimate, (estimate.report as? SMCReport)?.points ?? [])
        }
        return (out.result, out.target)
    }

    /// Joint tempering's rounds: P (`Setting.paths`) or the sweeps doubled, or the trace draws quadrupled, as
    /// `PrecisionTarget.runTempering` decides.
    static func runTempering(problem: EstimatorProblem, request: MeasurementRequest, width target: Double, maxPaths: Int?,
                             progress: @escaping @Sendable (String) -> Void) async throws -> (estimate: NetworkEstimate, target: PrecisionTarget) {
        let startSweeps = TemperingEstimator.sweeps(problem.budget, model: problem.model)
        let startDraws = SMCEstimator.traceDraws(problem.budget, parameters: problem.model.architecture.parameterCount)
        let out = try await runTempering(paths: problem.budget.paths, replicates: problem.budget.inner, sweeps: startSweeps,
                                         traceDraws: startDraws, width: target, maxPaths: maxPaths, progress: progress) { paths, sweeps, draws in
            var p = problem
            p.budget.paths = paths
            // Written only once a round changes them, so the problem the user gave runs unchanged.
            if sweeps != startSweeps { p.budget.settings[.sweeps] = sweeps }
            if draws != startDraws { p.budget.settings[.traceDraws] = draws }
            let estimate = try await TemperingEstimator.estimate(p, request: request, progress: progress)
            return (estimate, estimate.points)
        }
        return (out.result, out.target)
    }
}
