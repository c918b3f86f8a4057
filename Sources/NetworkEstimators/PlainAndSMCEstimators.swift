import Estimation
import Foundation
import SpectraStore
import ToyModels
import TwoScaleCore

/// The plain estimator (docs/METHOD.md §13): K uniform paths θ^k ~ U(box), J inner draws of each later
/// layer per path, the layered estimator over their spectra. Its samples do not depend on ε, so they are
/// what the spectra store holds: `ed` runs it through `SpectraRun` (store, shards, MPI ranks) and
/// `analyze` re-reads them; `estimate` is the in-memory route (`compare`, a program using the library).
public enum PlainEstimator: NetworkEstimator {
    public static let kind = EstimatorKind.plain
    public static var storesSpectra: Bool { true }
    /// The bootstrap over paths gives its intervals.
    public static var commandSettings: [Setting] { [.bootstrap] }
    public static var toy: ToyMonteCarlo.Method? { .plain }

    public static func defaultBudget(_ use: EstimatorUse) -> (paths: Int, inner: Int) {
        switch use {
        case .ed: (100, 100)
        case .compare: (50, 50)
        }
    }

    /// With a configuration: `PlainReport.measure` over the paths' spectra (as `ed` without a store,
    /// and its bootstrap intervals). Without: the layered estimator's points (no bootstrap) and the
    /// certified bracket at their c, stage 1 only.
    public static func estimate(_ problem: EstimatorProblem, request: MeasurementRequest,
                                progress: @escaping @Sendable (String) -> Void) async throws -> NetworkEstimate {
        let model = problem.model, b = problem.budget
        let design = try MonteCarloDesign(paths: b.paths, inner: b.inner, box: problem.box, seed: problem.seed,
                                          activation: model.activation)
        let rows = try await MonteCarlo.run(model: model, design: design, paths: Array(0..<b.paths), threads: request.threads)
        let spectra = try MonteCarlo.layeredSpectra(rows, blockDimensions: model.blockDimensions)
        if let configuration = problem.configuration {
            let layers = model.blockDimensions
            let meta = try StoreMeta(layers: layers, paths: b.paths, inner: layers.count > 1 ? b.inner : 0, configuration: configuration)
            let m = try await PlainReport.measure(spectra: spectra, meta: meta, request: request, model: model)
            return NetworkEstimate(kind: kind, points: m.points, paths: m.paths, scale: m.scale, bracket: m.bracket,
                                   diagnostics: .init(degeneracy: m.degeneracy, bracketCheck: m.bracketCheck), report: m)
        }
        let estimator = try LayeredEstimator(spectra: spectra, normalization: request.normalization)
        let points = try estimator.points(eps: request.eps, zeta: request.zeta).map { p in
            var q = p
            if !request.lower { q.dZetaLower = nil }
            return q
        }
        let bracket = try await model.certifiedBracket(box: problem.box, eps: request.eps, zeta: request.zeta,
                                                       normalization: request.normalization,
                                                       seed: problem.seed, laterStages: false, threads: request.threads)
        return NetworkEstimate(kind: kind, points: points, paths: b.paths, scale: estimator.scale, bracket: bracket)
    }
}

/// The smc estimator (docs/ESTIMATORS.md): annealed SMC samplers over the first layer's neurons, islands of
/// J particles per unit under K outer particles for each later layer, with 95% intervals and diagnostics.
/// Its samples depend on ε, so it runs end to end (no store).
public enum SMCEstimator: NetworkEstimator {
    public static let kind = EstimatorKind.smc
    /// Uniform draws of θ for ĉ (by default d/2, at least 1 000: `traceDraws`), Metropolis–Hastings sweeps per
    /// island step, and redraws of the layer before a degenerate one per particle and step (SMC²; 0: off).
    public static let traceDrawsOption = EstimatorOption(.traceDraws, defaultValue: nil)
    static let islandSweepsOption = EstimatorOption(.islandSweeps, defaultValue: MarkovSMC.defaultIslandSweeps)
    static let outerMovesOption = EstimatorOption(.outerMoves, defaultValue: 0)
    static let stageOneSweepsOption = EstimatorOption(.stageOneSweeps, defaultValue: MarkovSMC.defaultStageOneSweeps)
    /// 1: independence sweeps in stage 1 and the islands (`StagedSMC.independenceMoves`); 0, the default: off.
    static let independenceMovesOption = EstimatorOption(.independenceMoves, defaultValue: 0)
    /// Random-walk proposals of the earlier layers per particle and step under a degenerate layer's majorant
    /// tilt (`StagedSMC.tiltProposals`); 0, the default: off.
    static let tiltMovesOption = EstimatorOption(.tiltMoves, defaultValue: 0)
    /// Independent whole runs joined, their spread the interval (`StagedSMC.chains`); 1, the default: one run.
    static let chainsOption = EstimatorOption(.chains, defaultValue: 1)
    public static var options: [EstimatorOption] {
        [traceDrawsOption, islandSweepsOption, outerMovesOption, stageOneSweepsOption, independenceMovesOption, tiltMovesOption,
         chainsOption]
    }
    public static var reportsIntervals: Bool { true }
    public static var toy: ToyMonteCarlo.Method? { .smc }
    public static var estimatesStagedToys: Bool { true }

    /// The trace draws for ĉ: as given, else d/2 and at least 1 000 for a network of `parameters` (d).
    public static func traceDraws(_ budget: EstimatorBudget, parameters d: Int) -> Int {
        budget.settings.value(traceDrawsOption, fallback: TraceEstimate.defaultDraws(parameters: d))
    }
    static func islandSweeps(_ budget: EstimatorBudget) -> Int { budget.settings.value(islandSweepsOption) }
    static func outerMoves(_ budget: EstimatorBudget) -> Int { budget.settings.value(outerMovesOption) }
    static func stageOneSweeps(_ budget: EstimatorBudget) -> Int { budget.settings.value(stageOneSweepsOption) }
    static func independenceMoves(_ budget: EstimatorBudget) -> Bool { budget.settings.value(independenceMovesOption) != 0 }
    static func tiltMoves(_ budget: EstimatorBudget) -> Int { budget.settings.value(tiltMovesOption) }
    static func chains(_ budget: EstimatorBudget) -> Int { budget.settings.value(chainsOption) }

    public static func defaultBudget(_ use: EstimatorUse) -> (paths: Int, inner: Int) {
        (MarkovSMC.defaultPaths, MarkovSMC.defaultInner)
    }

    public static func checkBudget(_ budget: EstimatorBudget, layers: Int) throws {
        try MarkovSMC.checkBudget(paths: budget.paths, inner: budget.inner, traceDraws: traceDraws(budget, parameters: 0), layers: layers,
                                   islandSweeps: islandSweeps(budget), stageOneSweeps: stageOneSweeps(budget),
                                   moveProposals: outerMoves(budget))
        try MarkovSMC.Staged.checkTilt(proposals: tiltMoves(budget), moveProposals: outerMoves(budget))
        try MarkovSMC.Staged.checkChains(chains(budget))
    }

    public static func encodeSettings(_ budget: EstimatorBudget, into c: inout KeyedEncodingContainer<ResultKey>) throws {
        try c.encode(budget.settings[.traceDraws], forKey: ResultKey("trace_draws"))
        try MarkovSMC.encodeIslandKeys(sweeps: islandSweeps(budget), into: &c)
        if outerMoves(budget) > 0 { try c.encode(outerMoves(budget), forKey: ResultKey("outer_moves")) }
        let sweeps = stageOneSweeps(budget)
        if sweeps != MarkovSMC.defaultStageOneSweeps { try c.encode(sweeps, forKey: ResultKey("stage1_sweeps")) }
        if independenceMoves(budget) { try c.encode(true, forKey: ResultKey("independence_moves")) }
        if tiltMoves(budget) > 0 { try c.encode(tiltMoves(budget), forKey: ResultKey("tilt_moves")) }
        if chains(budget) > 1 { try c.encode(chains(budget), forKey: ResultKey("chains")) }
    }

    public static func estimate(_ problem: EstimatorProblem, request: MeasurementRequest,
                                progress: @escaping @Sendable (String) -> Void) async throws -> NetworkEstimate {
        let b = problem.budget
        var smc = try MarkovSMC(model: problem.model, box: problem.box, seed: problem.seed, paths: b.paths, inner: b.inner,
                                 traceDraws: traceDraws(b, parameters: problem.model.architecture.parameterCount),
                                 islandSweeps: islandSweeps(b), stageOneSweeps: stageOneSweeps(b), moveProposals: outerMoves(b))
        smc.sharing = problem.sharing
        smc.independenceMoves = independenceMoves(b)
        smc.tiltProposals = tiltMoves(b)
        smc.chains = chains(b)
        let r = try await smc.run(eps: request.eps, zeta: request.zeta, normalization: request.normalization, lower: request.lower,
                                  threads: request.threads, progress: progress)
        guard let configuration = problem.configuration else {
            let tail = TailShortfall.check(r.points.map { TailShortfall(point: $0, paths: b.paths) })
            return NetworkEstimate(kind: kind, points: r.points, paths: b.paths, scale: r.scale, bracket: r.bracket,
                                   diagnostics: .init(tailShortfall: tail))
        }
        let m = SMCReport(result: r, architecture: problem.model.architecture, settings: configuration, zeta: request.zeta,
                          normalization: request.normalization, paths: b.paths, inner: b.inner,
                          islandSweeps: islandSweeps(b), outerMoves: outerMoves(b), stageOneSweeps: stageOneSweeps(b),
                          independenceMoves: independenceMoves(b), tiltMoves: tiltMoves(b), chains: chains(b))
        return NetworkEstimate(kind: kind, points: m.points, paths: b.paths, scale: r.scale, bracket: r.bracket,
                               diagnostics: .init(degeneracy: m.degeneracy, lowerAboveNested: m.lowerAboveNested,
                                                  tailShortfall: m.tailShortfall, aboveBound: m.aboveBound,
                                                  boundShortfall: m.boundShortfall, bracketCheck: m.bracketCheck),
                               report: m)
    }
}
