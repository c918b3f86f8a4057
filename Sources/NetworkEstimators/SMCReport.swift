import Estimation
import Foundation
import Networks
import Samplers
import SpectraStore
import TwoScaleCore

/// The 2sED of a network by the smc estimator: `ed`'s result with the smc estimator (docs/ESTIMATORS.md). For
/// smc the nested and joint 2sED are one quantity and one estimate, so `d_zeta_joint` repeats `d_zeta`.
public struct SMCReport: Sendable, Encodable, NetworkRunReport, NetworkEstimateReport {
    /// One ε of the grid (`EpsilonEstimate`) in `ed`'s smc keys: the estimates and the bracket, the intervals
    /// to read, `se_log_det`, `normalization_share`, the per-stage diagnostics and the upper bound's keys.
    struct PointKeys: Encodable {
        let p: EpsilonEstimate

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: ResultKey.self)
            try p.encodeEstimates(into: &c)
            try p.interval?.encode(into: &c, key: "interval")
            try p.intervalLower?.encode(into: &c, key: "interval_lower")
            try c.encode(p.standardError, forKey: ResultKey("se_log_det"))
            try c.encode(p.normalizationShare, forKey: ResultKey("normalization_share"))
            try c.encode(p.ess, forKey: ResultKey("stage_ess"))
            try c.encode(p.ess.min(), forKey: ResultKey("ess_min"))
            try c.encode(p.islandNoise, forKey: ResultKey("stage_island_noise"))
            try c.encode(p.logVariance, forKey: ResultKey("stage_log_var"))
            if !p.islandInner.isEmpty { try c.encode(p.islandInner, forKey: ResultKey("stage_island_inner")) }
            if !p.islandNoiseVariance.isEmpty { try c.encode(p.islandNoiseVariance, forKey: ResultKey("stage_island_noise_var")) }
            try c.encode(p.stages.map(\.value), forKey: ResultKey("stage_log_z"))
            try c.encode(p.stages.map { $0.variance.squareRoot() }, forKey: ResultKey("stage_se"))
            if !p.moves.isEmpty { try c.encode(p.moves, forKey: ResultKey("stage_moves")) }
            if !p.tilts.isEmpty { try c.encode(p.tilts, forKey: ResultKey("stage_tilt")) }
            if let u = p.bound {
                // The upper bound's keys beside the estimate's (flat, so tables and plots read them).
                try c.encode(u.dZeta, forKey: ResultKey("d_zeta_upper"))
                try c.encode([u.ci95.lowerBound, u.ci95.upperBound], forKey: ResultKey("ci95_upper"))
                // How far the estimate can be low at most (the two share every stage but the last).
                try c.encode(u.dZeta - p.dZeta, forKey: ResultKey("gap_upper"))
                if p.lower, let l = u.dZetaLower, let li = u.ci95Lower {
                    try c.encode(l, forKey: ResultKey("d_zeta_lower_upper"))
                    try c.encode([li.lowerBound, li.upperBound], forKey: ResultKey("ci95_lower_upper"))
                }
                try c.encode(u.stage.value, forKey: ResultKey("last_log_z_upper"))
                try c.encode(u.stage.variance.squareRoot(), forKey: ResultKey("last_se_upper"))
                try c.encode(u.stageLower.value, forKey: ResultKey("last_log_z_lower_upper"))
                // The bound's own Monte Carlo: its outer particles' spread of log B, and the shortfall a
                // log-mean of K such values has under the lognormal model (d_ζ units; not in ci95_upper).
                try c.encode(u.stageLogVariance, forKey: ResultKey("last_log_var_upper"))
                try c.encode(u.shortfall(eps: p.eps), forKey: ResultKey("shortfall_upper"))
            }
        }
    }

    public struct Diagnostics: Sendable, Equatable, Encodable {
        public var stage1: SMCDiagnostics.Summary
        public var islands: SMCDiagnostics.Summary
    }

    public var dimension: Int
    public let estimator = "smc"
    public var points: [EpsilonEstimate]
    /// Per stage m ≥ 2: the smallest outer ESS over the grid.
    public var ess: [Double]
    public var seconds: Double = 0
    public var layers: [Int]
    public var paths: Int
    /// J (0 for a one-layer network).
    public var inner: Int
    /// MH sweeps per island step (0 for a one-layer network, which has no islands).
    public var islandSweeps: Int
    /// `Setting.outerMoves`: redraws of the previous layer per particle and tempering step (0: off, not written).
    public var outerMoves: Int
    /// MH sweeps per stage-1 step (written only where not the default, `stage1_sweeps`).
    public var stageOneSweeps: Int
    /// Independence sweeps in stage 1 and the islands (written only when on, `independence_moves`).
    public var independenceMoves: Bool
    /// Majorant-tilt proposals per particle and step (`tilt_moves`; 0: off, not written).
    public var tiltMoves: Int
    /// Independent whole runs joined (`chains`; 1: one run, not written).
    public var chains: Int
    public var traceDraws: Int
    public var settings: NetworkRunConfiguration
    public var zeta: Double
    public var normalization: Normalization
    public var scale: Double
    public var meanTrace: Double
    public var rank: RankReport
    /// The samplers' diagnostics: stage 1 and the islands (JSON: their summaries under `smc`).
    public var stage1: SMCDiagnostics
    public var islands: SMCDiagnostics
    public var degeneracy: WeightDegeneracy?
    /// With `Setting.lower`: the grid point where the lower 2sED's interval lies wholly above the 2sED's, if any
    /// (`LowerAboveNested`: an order the true values cannot have, so a failed correction).
    public var lowerAboveNested: LowerAboveNested?
    /// The grid point where the later stages' expected shortfall under a lognormal model of their outer
    /// log-weights exceeds the 2sED interval's half-width, if any (`TailShortfall`).
    public var tailShortfall: TailShortfall?
    /// The grid point where the 2sED's (or the lower 2sED's) interval lies wholly above its upper bound's,
    /// if any (`EstimateAboveBound`: an order the true values cannot have).
    public var aboveBound: EstimateAboveBound?
    /// The certified bracket (`ed` computes it for the Markov FIM) and what its check found.
    public var bracket: CertifiedBracket?
    public var bracketCheck: BracketCheck?

    /// The grid point where the bound's own expected shortfall (`UpperBound.stageShortfall`, in d_ζ)
    /// exceeds its interval's half-width most, if any: there the printed bound may lie below the bound
    /// it estimates by more than its interval says.
    public var boundShortfall: EpsilonEstimate? { Self.boundShortfall(points) }

    /// `boundShortfall` of any points.
    public static func boundShortfall(_ points: [EpsilonEstimate]) -> EpsilonEstimate? {
        points.compactMap { p -> (point: EpsilonEstimate, shortfall: Double)? in
            guard let u = p.bound else { return nil }
            let shortfall = u.shortfall(eps: p.eps)
            return shortfall > (u.ci95.upperBound - u.ci95.lowerBound) / 2 ? (p, shortfall) : nil
        }.max { $0.shortfall < $1.shortfall }?.point
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ResultKey.self)
        try c.encode(dimension, forKey: ResultKey("dimension"))
        try c.encode(estimator, forKey: ResultKey("estimator"))
        try c.encode(points.map(PointKeys.init), forKey: ResultKey("points"))
        try encodeDesign(&c)
        try MarkovSMC.encodeIslandKeys(sweeps: islandSweeps, into: &c)
        if outerMoves > 0 { try c.encode(outerMoves, forKey: ResultKey("outer_moves")) }
        if stageOneSweeps != MarkovSMC.defaultStageOneSweeps { try c.encode(stageOneSweeps, forKey: ResultKey("stage1_sweeps")) }
        if independenceMoves { try c.encode(true, forKey: ResultKey("independence_moves")) }
        if tiltMoves > 0 { try c.encode(tiltMoves, forKey: ResultKey("tilt_moves")) }
        if chains > 1 { try c.encode(chains, forKey: ResultKey("chains")) }
        try c.encode(traceDraws, forKey: ResultKey("trace_draws"))
        try encodeScale(&c)
        try c.encode(Diagnostics(stage1: stage1.summary, islands: islands.summary), forKey: ResultKey("smc"))
        // The two checks whose warnings `ed` prints, when they fire (absent otherwise).
        try c.encodeIfPresent(lowerAboveNested, forKey: ResultKey("lower_above_nested"))
        try c.encodeIfPresent(tailShortfall, forKey: ResultKey("tail_shortfall"))
        try c.encodeIfPresent(aboveBound, forKey: ResultKey("above_bound"))
        try c.encodeIfPresent(bracket, forKey: ResultKey("bracket"))
        try c.encodeIfPresent(bracketCheck, forKey: ResultKey("bracket_check"))
        try rank.encode(to: encoder)
    }

    public init(result r: MarkovSMC.Result, architecture: Architecture, settings: NetworkRunConfiguration, zeta: Double,
                normalization: Normalization, paths: Int, inner: Int,
                islandSweeps: Int = MarkovSMC.defaultIslandSweeps, outerMoves: Int = 0,
                stageOneSweeps: Int = MarkovSMC.defaultStageOneSweeps, independenceMoves: Bool = false, tiltMoves: Int = 0,
                chains: Int = 1) {
        points = r.points
        let stages = Swift.max(0, architecture.blockParameterCounts.count - 1)
        ess = (0..<stages).map { m in r.points.map { $0.ess[m] }.min() ?? 0 }
        dimension = architecture.parameterCount
        layers = architecture.blockParameterCounts
        self.paths = paths
        self.inner = architecture.blockParameterCounts.count > 1 ? inner : 0
        self.islandSweeps = architecture.blockParameterCounts.count > 1 ? islandSweeps : 0
        self.outerMoves = outerMoves
        self.stageOneSweeps = stageOneSweeps
        self.independenceMoves = independenceMoves
        self.tiltMoves = tiltMoves
        self.chains = chains
        traceDraws = r.trace.draws
        self.settings = settings
        self.zeta = zeta
        self.normalization = normalization
        scale = r.scale
        meanTrace = r.trace.meanTrace
        rank = RankReport(r.rank, generic: r.generic, zeta: zeta, dimension: architecture.parameterCount)
        stage1 = r.stage1
        islands = r.islands
        degeneracy = WeightDegeneracy.check(ess: ess, paths: paths)
        lowerAboveNested = LowerAboveNested.check(points.compactMap { p in
            guard let low = p.dZetaLower, let lowCI = p.ci95Lower, let ci = p.ci95 else { return nil }
            return LowerAboveNested(eps: p.eps, nested: p.dZeta, nestedInterval: ci, lower: low, lowerInterval: lowCI)
        })
        tailShortfall = TailShortfall.check(r.points.map { TailShortfall(point: $0, paths: paths) })
        aboveBound = EstimateAboveBound.check(points.flatMap { p -> [EstimateAboveBound] in
            guard let u = p.bound, let ci = p.ci95 else { return [] }
            // The bound's last term keeps the plain weighting; a last stage moved by `Setting.outerMoves` or
            // tilted can rise above that (low) estimate of it, so the 2sED is not checked there (docs/METHOD.md §22).
            let lastMoved = (p.moves.last?.steps ?? 0) > 0 || p.tilts.last?.engaged == true
            var cases = lastMoved ? [] : [EstimateAboveBound(quantity: "d_zeta", eps: p.eps, estimate: p.dZeta, interval: ci,
                                                              bound: u.dZeta, boundInterval: u.ci95)]
            if let low = p.dZetaLower, let lowCI = p.ci95Lower, let ub = u.dZetaLower, let ubCI = u.ci95Lower {
                cases.append(EstimateAboveBound(quantity: "d_zeta_lower", eps: p.eps, estimate: low, interval: lowCI,
                                                bound: ub, boundInterval: ubCI))
            }
            return cases
        })
        attach(r.bracket)
        if let d = degeneracy, let worst = r.points.min(by: { $0.ess[d.stage - 2] < $1.ess[d.stage - 2] }) {
            degeneracy?.islandNoiseShare = worst.islandNoise[d.stage - 2]
        }
    }
}

extension SMCReport {
    /// Puts the certified bracket beside every point (`EpsilonEstimate.attach`) and chooses the intervals to read.
    public mutating func attach(_ b: CertifiedBracket) {
        bracket = b
        bracketCheck = EpsilonEstimate.attach(b, to: &points)
        for i in points.indices { points[i].chooseIntervals(paths: paths) }
    }
}

extension MarkovSMC {
    /// The islands' JSON keys (`ed` and `compare` with smc): `island_sweeps`, and the kernel they use,
    /// `island_kernel` (always `random-walk`) with `island_leapfrog` 0 (kept so that outputs stay comparable
    /// with versions that offered Hamiltonian islands).
    public static func encodeIslandKeys(sweeps: Int, into c: inout KeyedEncodingContainer<ResultKey>) throws {
        let key = ResultKey.init(_:)
        try c.encode(sweeps, forKey: key("island_sweeps"))
        try c.encode("random-walk", forKey: key("island_kernel"))
        try c.encode(0, forKey: key("island_leapfrog"))
    }
}
