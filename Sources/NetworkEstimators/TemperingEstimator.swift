import Estimation
import Foundation
import Fisher
import Networks
import Samplers
import SpectraStore
import TwoScaleCore

/// Joint tempering on a network (docs/ESTIMATORS.md §8, docs/METHOD.md §21): R independent annealed samplers
/// of P particles over the whole θ, from s = 0 to the grid's largest scale, each step's moves a random walk in
/// one neuron's weights (the softmax layer's whole matrix) at a time, accepted with the ratio of the whole
/// `det(I + s F^{1/2})`, so every layer is moved under all the layers after it. There is no staging and no
/// outer weighting, so nothing degenerates across layers; what limits it is how well the moves mix (`Setting.sweeps`),
/// which the replicates' spread does not show. With `Setting.lower`, the lower 2sED's later terms come from tempering
/// each prefix of stages (`TemperedLower`).
/// `Setting.paths` is P, `Setting.inner` is R; ĉ comes from the same uniform draws as the smc estimator's at that seed.
public enum TemperingEstimator: NetworkEstimator {
    public static let kind = EstimatorKind.tempering
    /// smc's trace draws for ĉ (the two share them), and Metropolis sweeps over every unit per tempering step
    /// (by default derived from the network's widest unit, `JointSMC.defaultSweeps(units:)`).
    static let sweepsOption = EstimatorOption(.sweeps, defaultValue: nil)
    public static var options: [EstimatorOption] { [SMCEstimator.traceDrawsOption, sweepsOption] }
    public static var reportsIntervals: Bool { true }
    public static var estimatesLower: Bool { true }
    public static var savesCheckpoints: Bool { true }

    public static func defaultBudget(_ use: EstimatorUse) -> (paths: Int, inner: Int) { (64, 4) }

    /// MH sweeps over every unit per tempering step: as given, else a quarter of the widest unit's weights (a
    /// first-layer neuron's fan-in and bias, or the softmax layer's matrix).
    static func sweeps(_ budget: EstimatorBudget, model: MarkovFisher) -> Int {
        budget.settings.value(sweepsOption, fallback: JointSMC<MarkovFisher>.defaultSweeps(units: model.stageUnits))
    }

    public static func checkBudget(_ budget: EstimatorBudget, layers: Int) throws {
        guard (4...100_000).contains(budget.paths) else {
            throw TwoScaleError.invalid("\(Setting.paths)", "\(budget.paths)", allowed: "tempering: particles per replicate sampler, 4 to 10⁵")
        }
        guard (2...1_000).contains(budget.inner) else {
            throw TwoScaleError.invalid("\(Setting.inner)", "\(budget.inner)", allowed: "tempering: replicate samplers, 2 to 1000 (their spread is the interval)")
        }
        if let sweeps = budget.settings[.sweeps] { try JointSMC<MarkovFisher>.checkSweeps(sweeps) }
        let draws = SMCEstimator.traceDraws(budget, parameters: 0)
        guard TraceEstimate.allowedDraws.contains(draws) else {
            throw TwoScaleError.invalid("\(Setting.traceDraws)", "\(draws)", allowed: "2 to 10⁷")
        }
    }

    public static func encodeSettings(_ budget: EstimatorBudget, into c: inout KeyedEncodingContainer<ResultKey>) throws {
        try c.encode(budget.settings[.traceDraws], forKey: ResultKey("trace_draws"))
        try c.encode(budget.settings[.sweeps], forKey: ResultKey("sweeps"))
    }

    public static func estimate(_ problem: EstimatorProblem, request: MeasurementRequest,
                                progress: @escaping @Sendable (String) -> Void) async throws -> NetworkEstimate {
        try ScaleParameters.checkZeta(request.zeta)
        for e in request.eps { try ScaleParameters.checkEpsilon(e) }
        let model = problem.model, b = problem.budget, d = model.architecture.parameterCount
        try checkBudget(b, layers: model.blockDimensions.count)
        let draws = SMCEstimator.traceDraws(b, parameters: d), sweeps = sweeps(b, model: model)
        // The checkpoint folder first, so that another run's folder is refused before any work.
        let folder = try problem.checkpoint.map { dir -> CheckpointFolder in
            let meta = CheckpointMeta(configuration: problem.configuration, paths: b.paths, inner: b.inner, sweeps: sweeps, traceDraws: draws,
                                      eps: request.eps, zeta: request.zeta, normalization: request.normalization.rawValue)
            progress("checkpoints in \(dir): each sampler's progress is saved, and a rerun of this command continues from it")
            return try CheckpointFolder(path: dir, meta: try meta.encoded())
        }
        // ĉ and the Fisher rank from the smc estimator's uniform draws at this seed (its streams), so both share them.
        progress("trace normalisation from \(draws) uniform draws")
        var smc = try MarkovSMC(model: model, box: problem.box, seed: problem.seed, paths: MarkovSMC.defaultPaths,
                                 inner: MarkovSMC.defaultInner, traceDraws: draws)
        smc.sharing = problem.sharing
        let trace = try await smc.staged.traceEstimate(threads: request.threads)
        let (c, varLogC) = try trace.scale(request.normalization, dimension: d)
        let sOf = request.eps.map { ScaleParameters.t(eps: $0, zeta: request.zeta) * c.squareRoot() }
        let stops = Array(Set(sOf)).sorted()
        progress("joint tempering: \(b.inner) samplers of \(b.paths) particles over \(stops.count) scale(s)")
        var joint = try JointSMC(model: model, box: problem.box, seed: problem.seed, particles: b.paths, replicates: b.inner,
                                 sweeps: sweeps)
        joint.sharing = problem.sharing
        if let folder {
            joint.checkpoints = folder
            joint.progress = progress
        }
        let j = try await joint.run(stops: stops, threads: request.threads)
        // The lower 2sED: each later stage's earlier layers drawn by tempering the stages before it (`TemperedLower`).
        var lower: TemperedLower?
        if request.lower {
            let islands = Swift.max(1, b.paths / b.inner)
            progress("lower 2sED: \(model.stageUnits.count - 1) prefix sampler(s) × \(b.inner) of \(b.paths) particles, \(islands) islands each per scale")
            lower = try await smc.staged.temperedLower(stops: stops, particles: b.paths, replicates: b.inner,
                                                       sweeps: b.settings[.sweeps], islands: islands, checkpoints: folder,
                                                       threads: request.threads, progress: progress)
        }
        var points: [EpsilonEstimate] = []
        for (i, e) in request.eps.enumerated() {
            let t = stops.firstIndex(of: sOf[i])!
            var p = j.point(t, eps: e, zeta: request.zeta, dimension: d, logVarianceOfC: varLogC)
            lower?.setLower(on: &p, stop: t, slope: j.slope[t], logVarianceOfC: varLogC, dimension: d)
            guard p.dZeta.isFinite, (p.standardError ?? 0).isFinite, p.dZetaLower?.isFinite ?? true else {
                throw TwoScaleError.failure("tempering: log E det at ε = \(e) is not finite; the spectra hold infinite values (use a smaller \(Setting.box))")
            }
            points.append(p)
        }
        progress("Fisher rank from \(MarkovSMC.rankDraws) uniform draws, and the generic rank")
        let rank = RankReport(try await smc.rankEstimate(threads: request.threads),
                              generic: try GenericRank(model: model, box: problem.box, seed: problem.seed), zeta: request.zeta, dimension: d)
        progress("certified bracket from \(CertifiedBracket.defaultDraws) uniform draws (and \(CertifiedBracket.traceDraws) of Tr F for c)")
        let bracket = try await model.certifiedBracket(box: problem.box, eps: request.eps, zeta: request.zeta,
                                                       normalization: request.normalization, seed: problem.seed,
                                                       sharing: problem.sharing, threads: request.threads)
        var report = TemperingReport(points: points, dimension: d, layers: model.architecture.blockParameterCounts,
                                             particles: b.paths, replicates: b.inner, sweeps: sweeps, traceDraws: draws,
                                             zeta: request.zeta,
                                             normalization: request.normalization, scale: c, meanTrace: trace.meanTrace, steps: j.steps,
                                             acceptance: j.proposals > 0 ? Double(j.accepted) / Double(j.proposals) : 0, rank: rank)
        (report.lowerStageOneSweeps, report.lowerIndependenceMoves) = (lower?.firstSweeps, lower?.firstIndependenceMoves)
        let check = report.attach(bracket)
        report.settings = problem.configuration
        return NetworkEstimate(kind: kind, points: report.points, paths: b.paths, scale: c, bracket: bracket,
                               diagnostics: .init(bracketCheck: check), report: problem.configuration == nil ? nil : report)
    }
}

/// What a tempering run's checkpoint folder records in meta.json: a rerun continues from it only where all agree.
struct CheckpointMeta: Encodable {
    let estimator = TemperingEstimator.kind.rawValue
    let configuration: NetworkRunConfiguration?
    let paths, inner, sweeps, traceDraws: Int
    let eps: [Double]
    let zeta: Double
    let normalization: String

    enum CodingKeys: String, CodingKey {
        case estimator, configuration, paths, inner, sweeps, eps, zeta, normalization
        case traceDraws = "trace_draws"
    }

    func encoded() throws -> Data {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .prettyPrinted]
        return try e.encode(self)
    }
}

/// The tempering estimator's result in `ed` (JSON keys in docs/COMMANDS.md).
public struct TemperingReport: NetworkEstimateReport {
    /// One ε of the grid (`EpsilonEstimate`) in `ed`'s tempering keys: the estimates and the bracket,
    /// `se_log_det`, `normalization_share` and each replicate sampler's `replicate_log_z`; with the lower 2sED
    /// its reported interval and the diagnostics that interval reads.
    struct PointKeys: Encodable {
        let p: EpsilonEstimate

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: ResultKey.self)
            try p.encodeEstimates(into: &c)
            try c.encode(p.standardError, forKey: ResultKey("se_log_det"))
            try c.encode(p.normalizationShare, forKey: ResultKey("normalization_share"))
            try c.encode(p.replicateLogZ, forKey: ResultKey("replicate_log_z"))
            try c.encode(p.dZetaReverse, forKey: ResultKey("d_zeta_reverse"))
            try c.encode(p.ci95Reverse, forKey: ResultKey("ci95_reverse"))
            try c.encode(p.replicateLogZReverse, forKey: ResultKey("replicate_log_z_reverse"))
            try p.interval?.encode(into: &c, key: "interval")
            if p.lower {
                try p.intervalLower?.encode(into: &c, key: "interval_lower")
                try c.encode(p.normalizationShareLower, forKey: ResultKey("normalization_share_lower"))
                try c.encode(p.islandInner, forKey: ResultKey("stage_island_inner"))
                try c.encode(p.islandNoiseVariance, forKey: ResultKey("stage_island_noise_var"))
                try c.encode(p.islandNoiseVarianceSized, forKey: ResultKey("stage_island_noise_var_sized"))
                try c.encode(p.islandReplicatesCapped, forKey: ResultKey("stage_island_replicates_capped"))
                try c.encode(p.stageOneDecorrelation, forKey: ResultKey("stage1_decorrelation"))
            }
        }
    }

    public var points: [EpsilonEstimate]
    public var dimension: Int
    public var layers: [Int]
    public var particles: Int
    public var replicates: Int
    /// Metropolis sweeps over every unit per tempering step.
    public var sweeps: Int
    public var traceDraws: Int
    public var zeta: Double
    public var normalization: Normalization
    public var scale: Double
    public var meanTrace: Double
    /// Tempering steps summed over the replicates, and the share of proposed unit moves accepted.
    public var steps: Int
    public var acceptance: Double
    /// The Fisher rank over uniform draws and the generic rank, with the ε → 0 limit (`d_zeta_limit`).
    public var rank: RankReport
    public var settings: NetworkRunConfiguration?
    public var bracket: CertifiedBracket?
    public var bracketCheck: BracketCheck?
    public var seconds: Double = 0
    /// With the lower 2sED: stage 1's sweeps per step and whether independence sweeps followed them
    /// (`TemperedLower.firstSweeps`, raised where stage 1 did not decorrelate).
    public var lowerStageOneSweeps: Int?
    public var lowerIndependenceMoves: Bool?

    /// Puts the certified bracket beside every point; returns what lies outside it.
    mutating func attach(_ b: CertifiedBracket) -> BracketCheck? {
        bracket = b
        bracketCheck = EpsilonEstimate.attach(b, to: &points)
        for i in points.indices { points[i].chooseIntervals(paths: particles) }
        return bracketCheck
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ResultKey.self)
        try c.encode(dimension, forKey: ResultKey("dimension"))
        try c.encode(TemperingEstimator.kind, forKey: ResultKey("estimator"))
        try c.encode(points.map(PointKeys.init), forKey: ResultKey("points"))
        try c.encode(seconds, forKey: ResultKey("seconds"))
        try c.encode(layers, forKey: ResultKey("layers"))
        try c.encode(particles, forKey: ResultKey("paths"))
        try c.encode(replicates, forKey: ResultKey("inner"))
        try c.encode(sweeps, forKey: ResultKey("sweeps"))
        try c.encode(traceDraws, forKey: ResultKey("trace_draws"))
        try c.encodeIfPresent(settings, forKey: ResultKey("settings"))
        try c.encode(zeta, forKey: ResultKey("zeta"))
        try c.encode(normalization.rawValue, forKey: ResultKey("normalization"))
        try c.encode(scale, forKey: ResultKey("scale"))
        try c.encode(meanTrace, forKey: ResultKey("mean_trace"))
        try c.encode(steps, forKey: ResultKey("steps"))
        try c.encode(acceptance, forKey: ResultKey("acceptance"))
        try c.encodeIfPresent(lowerStageOneSweeps, forKey: ResultKey("lower_stage1_sweeps"))
        try c.encodeIfPresent(lowerIndependenceMoves, forKey: ResultKey("lower_independence_moves"))
        try c.encodeIfPresent(bracket, forKey: ResultKey("bracket"))
        try c.encodeIfPresent(bracketCheck, forKey: ResultKey("bracket_check"))
        try rank.encode(to: encoder)
    }
}
