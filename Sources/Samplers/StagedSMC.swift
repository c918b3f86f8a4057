import Foundation
import RandomStreams
import TwoScaleCore

/// The `smc` estimator of the 2sED and the lower 2sED of any `StagedModel` (docs/ESTIMATORS.md).
///
/// With `G_m = det(I + s F_m^{1/2})` and θ uniform on the box, the 2sED needs `log E_θ Π_m G_m`, the
/// lower 2sED `log Z_1 + Σ_{m≥2} E_{π_{m−1}}[log Z_m(θ_{<m})]`, where `Z_m(θ_{<m}) = E_{θ_m} G_m` and
/// `π_{m−1} ∝ Π_{j<m} G_j`. Given θ_{<m}, G_m is a product over the stage's exchangeable units, so
/// `Z_m = Z_u^{n_m}` exactly.
///
/// * Stage 1: one pooled `AnnealedSMC` sampler for the exchangeable units, with the particles that n_1
///   separate samplers would have, in a few large replicates; one run covers the whole ε grid.
///   `log Ẑ_1 = n_1 · log mean_r Ẑ_r`, bias-corrected.
/// * Stage m ≥ 2, per ε: K outer particles θ_{<m} ~ π_{m−1} (stage 2: one draw per unit from the pooled
///   population, independently; later stages: resampled ∝ Ẑ_m); for each, an *island* (a pooled sampler
///   of the stage's units) estimates `Z_m(θ_{<m})` and supplies a draw of θ_m. 2sED term
///   `log mean_k Ẑ_m^k` (the fully adapted particle filter's normalising constant) less the excess that
///   the n-th power of a pooled estimate carries (`powerBias`), lower term `mean_k log Ẑ_m^k`.
///
/// Intervals: the variance of `log Ẑ_1` is n_1² times the pooled replicates' relative variance; a stage
/// term's is the delta-method variance over the K outer particles, floored by the scatter a lognormal
/// model of the outer log-weights implies (`LogEstimate.logMean`); a lower term's is the sample
/// variance over k, doubled for the population the particles come from (`populationVarianceFactor`); stage
/// 1's and the later stages' variances join at their Cauchy–Schwarz bound (`StageSum.correlated`); the
/// estimated trace normalisation ĉ adds `(slope/2)² Var(log ĉ)`. Random streams: `Xoshiro256(seed:, stream: [SMCN, …])` per task, stop,
/// particle, so results do not depend on the thread count.
public struct StagedSMC<Model: StagedModel>: Sendable {
    public var model: Model
    public var box: ClosedRange<Double>
    public var seed: UInt64
    /// K: particles per stage-1 unit (over the replicates) and outer particles of later stages.
    public var paths: Int
    /// J: particles per island unit (over the replicates).
    public var inner: Int
    public var traceDraws: Int
    public var replicates: Int
    /// MH sweeps per island resample–move step.
    public var islandSweeps: Int
    /// MH sweeps per stage-1 resample–move step (`defaultStageOneSweeps`).
    public var stageOneSweeps: Int
    /// Metropolis–Hastings proposals of θ_{m−1} per particle and tempering step of a stage whose outer
    /// weights degenerate (`moveEarlier`, docs/METHOD.md §22); 0 (the default) leaves earlier stages unmoved.
    public var moveProposals: Int
    /// How the independent items (trace draws, stage-1 samplers, islands) are shared out.
    public var sharing: any WorkSharing = LocalSharing()
    /// Independence sweeps after the random walk's in stage 1 and the islands (`SMCSettings.independenceMoves`;
    /// off by default).
    public var independenceMoves = false
    /// Random-walk proposals of the earlier stages per particle and tempering step where a later stage's
    /// outer weights degenerate and its majorant explains them (`tiltEarlier`, docs/METHOD.md §22); 0 (the
    /// default): off.
    public var tiltProposals = 0
    /// R: independent runs (chains) joined, whose spread is the variance (`StageSum(chains:)`, docs/ESTIMATORS.md
    /// §5); 1, the default: one run, its variance from its own replicates, weights and genealogy.
    public var chains = 1
    /// Random-walk sweeps per coordinate of each unit an island hands to the next stage (`handover`); 0 keeps
    /// the draws as they are.
    public var handoverSweepsPerCoordinate = Self.defaultHandoverSweepsPerCoordinate

    static var stream: UInt64 { 0x534D_434E }  // "SMCN"

    /// The default budget: K = 64 outer particles, J = 32 island particles.
    public static var defaultPaths: Int { 64 }
    public static var defaultInner: Int { 32 }
    /// Stage 1: K·`stageOneParticles` particles per first-stage unit, `defaultStageOneSweeps` sweeps per step.
    public static var stageOneParticles: Int { 2 }
    public static var defaultStageOneSweeps: Int { 20 }
    /// The most stage-1 sweeps per step a run takes.
    public static var maximumStageOneSweeps: Int { 1_000 }
    /// The islands' schedule: resample and move when the ESS would fall below 0.8 P, then
    /// `defaultIslandSweeps` MH sweeps (docs/ESTIMATORS.md §3).
    public static var islandESSFraction: Double { 0.8 }
    public static var defaultIslandSweeps: Int { 4 }
    /// The lower 2sED's later-stage term `mean_k log Ẑ_m^k` averages over outer particles drawn from a
    /// finite population (stage 1's pooled sampler, then the islands'), not from π_{m−1}: that population's
    /// own error adds to the spread over k. Taking a population of 2K particles per unit as worth at least
    /// K independent draws bounds the added variance by the spread's own, so the term's variance is doubled.
    public static var populationVarianceFactor: Double { 2 }

    public init(model: Model, box: ClosedRange<Double>, seed: UInt64, paths: Int, inner: Int,
                traceDraws: Int, replicates: Int = 2, islandSweeps: Int = 4, stageOneSweeps: Int = Self.defaultStageOneSweeps,
                moveProposals: Int = 0) throws {
        try Self.checkBudget(paths: paths, inner: inner, traceDraws: traceDraws, layers: model.stageUnits.count,
                             replicates: replicates, islandSweeps: islandSweeps, stageOneSweeps: stageOneSweeps, moveProposals: moveProposals)
        guard box.lowerBound.isFinite, box.upperBound.isFinite, box.lowerBound < box.upperBound else {
            throw TwoScaleError.invalid("\(Setting.box)", "\(box.lowerBound):\(box.upperBound)", allowed: "the box lo:hi needs finite lo < hi")
        }
        self.model = model
        self.box = box
        self.seed = seed
        self.paths = paths
        self.inner = inner
        self.traceDraws = traceDraws
        self.replicates = replicates
        self.islandSweeps = islandSweeps
        self.stageOneSweeps = stageOneSweeps
        self.moveProposals = moveProposals
    }

    /// The budget the samplers can run with, for a model of `layers` stages: K from 2R to 10⁶, J (islands,
    /// only with later stages) from 4R to 10⁶, trace draws from 2 to 10⁷ (R replicates), island sweeps
    /// and stage-1 sweeps from 1 to 1 000, outer-move proposals (`moveProposals`) from 0 to 1 000.
    public static func checkBudget(paths: Int, inner: Int, traceDraws: Int, layers: Int, replicates: Int = 2,
                                   islandSweeps: Int = 4, stageOneSweeps: Int = Self.defaultStageOneSweeps, moveProposals: Int = 0) throws {
        guard paths >= 2 * replicates, paths <= 1_000_000 else {
            throw TwoScaleError.invalid("\(Setting.paths)", "\(paths)", allowed: "the smc estimator needs K from \(2 * replicates) to 10⁶ (K outer particles; 2K particles per first-layer neuron)")
        }
        // An island replicate of J/R particles adapts its schedule only with at least 4 (ESS fraction 0.5).
        guard layers == 1 || (inner >= 4 * replicates && inner <= 1_000_000) else {
            throw TwoScaleError.invalid("\(Setting.inner)", "\(inner)", allowed: "the smc estimator needs J from \(4 * replicates) to 10⁶ island particles (at least 4 per replicate sampler, or its schedule cannot adapt)")
        }
        guard islandSweeps >= 1, islandSweeps <= 1_000 else {
            throw TwoScaleError.invalid("\(Setting.islandSweeps)", "\(islandSweeps)", allowed: "give from 1 to 1000 Metropolis–Hastings sweeps per island step")
        }
        guard stageOneSweeps >= 1, stageOneSweeps <= maximumStageOneSweeps else {
            throw TwoScaleError.invalid("\(Setting.stageOneSweeps)", "\(stageOneSweeps)", allowed: "give from 1 to \(maximumStageOneSweeps) Metropolis–Hastings sweeps per stage-1 step")
        }
        guard TraceEstimate.allowedDraws.contains(traceDraws) else {
            throw TwoScaleError.invalid("\(Setting.traceDraws)", "\(traceDraws)", allowed: "give from 2 to 10⁷ draws")
        }
        guard (0...1_000).contains(moveProposals) else {
            throw TwoScaleError.invalid("\(Setting.outerMoves)", "\(moveProposals)", allowed: "give from 0 (off) to 1000 proposals per particle and tempering step")
        }
    }

    public struct Result: Sendable {
        public var points: [EpsilonEstimate]
        public var scale: Double
        public var trace: TraceEstimate
        /// Stage 1 and the islands of later stages.
        public var stage1: SMCDiagnostics
        public var islands: SMCDiagnostics
    }

    /// ĉ from `traceDraws` uniform draws of θ (`Tr F` needs no eigenproblem).
    public func traceEstimate(threads: Int) async throws -> TraceEstimate {
        let me = self
        let traces: [Double] = try await sharing.map(traceDraws, threads: threads) { k in
            var rng = Xoshiro256(seed: me.seed, stream: [Self.stream, 3, UInt64(k)])
            let t = try me.model.uniformTrace(box: me.box, rng: &rng)
            guard t.isFinite else { throw TwoScaleError.failure("Tr F(θ) is not finite at trace draw \(k); use a smaller \(Setting.box)") }
            return t
        }
        return TraceEstimate(traces: traces)
    }

    /// The first stage's pooled sampler (`stageOneTasks` runs of `replicates` replicates each): together
    /// they hold `stageOneParticles·K` particles per unit, as separate samplers per unit would, but in a
    /// few large replicates, which lowers the bias of the log; a cautious schedule (ESS kept ≥ 0.8 P) and
    /// `stageOneSweeps` MH sweeps per step (docs/ESTIMATORS.md). It runs once for the whole ε grid.
    public func stageOneSettings(units n: Int) throws -> SMCSettings {
        let total = Self.stageOneParticles * paths * n
        return try SMCSettings(particles: Swift.max(1, total / (Self.stageOneTasks(units: n) * replicates)),
                               replicates: replicates, essFraction: 0.8, moves: stageOneSweeps,
                               independenceMoves: independenceMoves)
    }

    /// Independent runs (tasks) of the first stage's pooled sampler: one per unit up to 4.
    public static func stageOneTasks(units n: Int) -> Int { Swift.min(4, Swift.max(1, n)) }

    /// The islands' sampler settings for stage m ≥ 1: `islandSweeps` sweeps per step.
    public func islandSettings(block m: Int) throws -> SMCSettings {
        try SMCSettings(particles: inner / replicates, replicates: replicates, essFraction: Self.islandESSFraction,
                        moves: islandSweeps, independenceMoves: independenceMoves)
    }

    /// The share of the spread of the outer particles' `log Ẑ_m^k` that is the islands' own noise:
    /// the mean of their replicate noise variances over the sample variance of `log Ẑ_m^k`, capped at 1
    /// (0 when the log Ẑ do not vary).
    public static func noiseShare(noise: [Double], logZ: [Double]) -> Double {
        let spread = LogEstimate.sampleVariance(logZ)  // 0 for one particle
        guard spread > 0 else { return 0 }
        return Swift.min(1, noise.reduce(0, +) / Double(logZ.count) / spread)
    }

    /// The islands' weights `n · log mean_r Ẑ_r` are nearly unbiased for `log Z_m`, not for `Z_m`: the n-th
    /// power of an unbiased `Ẑ_u` has `E Ẑ_u^n ≈ Z_u^n e^{n(n−1)V/2}` (V the relative variance of the mean
    /// over replicates), so a log-mean of the outer weights tends to `log E Z_m + (1 − 1/n) σ²/2` as K grows,
    /// σ² = n²V the island's own noise variance in the log. This is that excess, from the islands' mean
    /// noise (one shift for all outer particles, so the weights' ratios, ESS and resampling do not change),
    /// and the variance of its estimate over the K islands. One unit (n = 1) needs none: a mean of
    /// unbiased replicates is unbiased.
    public static func powerBias(noise: [Double], units n: Int) -> LogEstimate {
        guard n > 1, !noise.isEmpty else { return LogEstimate() }
        let f = (1 - 1 / Double(n)) / 2
        let m = LogEstimate.mean(noise)
        return LogEstimate(value: f * m.value, variance: f * f * m.variance)
    }

    /// A stage of n exchangeable units from its pooled unit estimate at stop t (`Z = Z_u^n`): `n · log Ẑ_u`
    /// as it is (the particle filter's weight, less `powerBias` for the 2sED's term); bias-corrected,
    /// `n (log Ẑ_u + V/2)` with variance `n² V`;
    /// the slope `n · d log Z_u / d log s`; the replicates' own noise in `n · log Ẑ_u`, `n² var_r(l_r)/R`;
    /// and for the lower 2sED `n (mean_r l_r + var_r(l_r)/2)` (`LogEstimate.lognormalReplicates`).
    public static func block(_ est: SMCUnitEstimate, units n: Int, stop t: Int)
        -> (logZ: Double, corrected: LogEstimate, log: LogEstimate, slope: Double, noise: Double) {
        let cmb = est.combined(t)
        let k = Double(n)
        return (k * cmb.logZ, LogEstimate.corrected(logZ: cmb.logZ, relVar: cmb.relVar).times(n),
                LogEstimate.lognormalReplicates(est.logZ[t]).times(n), k * est.slope[t],
                k * k * LogEstimate.mean(est.logZ[t]).variance)
    }

    /// The n exchangeable units of a stage as one pooled sampler over `stops`: R replicates of n·P
    /// particles (P = `settings.particles`), the cost of n samplers of P each (`SMCUnitEstimate.pooled`).
    public func runBlock(_ unit: SMCUnit, units n: Int, stops: [Double], settings: SMCSettings, stream: [UInt64],
                         keep: Bool) throws -> SMCUnitEstimate {
        var pooled = settings
        pooled.particles = settings.particles * n
        return try AnnealedSMC.run(unit, stops: stops, settings: pooled, seed: seed, stream: stream + [0], keepPopulations: keep)
    }

    /// One island's results: its stage factor (`block`), the draws of the stage's units it passes on (before
    /// the last stage), its diagnostics and, at the last stage, the supremum's log and slope.
    struct Island: Codable, Sendable {
        var logZ, lower, noise, slope: Double
        var units: [[Double]]
        var diag: SMCDiagnostics
        var boundLog: Double?
        var boundSlope: Double?
        /// The island's population (at its one stop), kept for `moveEarlier` at the next stage.
        var population: SMCUnitEstimate?
    }

    /// `Σ_i log(1 + s r̄_i)` and its slope in log s for a stage's supremum roots r̄.
    static func supremum(_ roots: [Double], scale s: Double) -> (log: Double, slope: Double) {
        (LogSpace.logDetSqrt(roots: roots, scale: s), LogSpace.logDetSqrtSlope(roots: roots, scale: s))
    }

    /// The island of stage m at θ_{<m} = `state`: a pooled sampler of the stage's units at scale s, its
    /// factor, n draws of the units (before the last stage, unless `draws` is false), and at the last stage
    /// (with `bound`) the supremum.
    func island(_ state: Model.State, stage m: Int, scale s: Double, settings: SMCSettings, stream: [UInt64],
                drawStream: [UInt64], bound withBound: Bool = true, draws: Bool = true) throws -> Island {
        let last = m == model.stageUnits.count - 1
        let n = model.stageUnits[m].count
        let stage = try model.stage(state, m, box: box)
        let est = try runBlock(stage.unit, units: n, stops: [s], settings: settings, stream: stream, keep: !last && draws)
        let b = Self.block(est, units: n, stop: 0)
        var drawn: [[Double]] = []
        if !last && draws {
            var rng = Xoshiro256(seed: seed, stream: drawStream)
            drawn = (0..<n).map { _ in est.draw(stop: 0, rng: &rng) }
            drawn = try Self.handover(drawn, unit: stage.unit, scale: s, sweepsPerCoordinate: handoverSweepsPerCoordinate, rng: &rng)
        }
        // The last stage's supremum at the same outer particle (no random numbers).
        let bound = last && withBound ? try stage.supremumRoots.map { Self.supremum(try $0(), scale: s) } : nil
        return Island(logZ: b.logZ, lower: b.log.value, noise: b.noise, slope: b.slope, units: drawn,
                      diag: est.diagnostics, boundLog: bound?.log, boundSlope: bound?.slope,
                      population: moveProposals > 0 && !last && draws ? est : nil)
    }

    /// The variance of the later stages' terms together, from the genealogy, for three or more stages.
    /// Stage m's particles descend from the resampled few of stage m − 1, so the stages' errors are
    /// correlated and their variances do not simply add (docs/ESTIMATORS.md §5, "Several later stages").
    /// Grouped by each particle's ancestor e among stage 2's K outer particles:
    ///
    /// * the 2sED's `Σ_m log mean_k Ẑ_m^k`: `eveVariance` (Lee & Whiteley 2018) from the last stage's weights;
    /// * the lower 2sED's `Σ_m mean_k log Ẑ_m^k`, an additive functional: `K/(K − 1) Σ_e X_e²`, X_e the sum over
    ///   every stage of e's descendants' terms less their stage's mean, each over K (`lowerByEve`; Chan & Lai
    ///   2013); with one later stage this is the sample variance over k divided by K.
    ///
    /// The run takes each, doubled as each stage's lower term is (`populationVarianceFactor`: the ancestors
    /// are drawn from stage 1's finite population), or the stages' Cauchy–Schwarz bound `(Σ_m √V_m)²` where
    /// that is larger, in place of the stages' summed variances; the estimates themselves are not changed.
    public static func genealogyVariance(logWeights lw: [Double], eve: [Int], lowerByEve: [Double], resamplings: Int)
        -> (nested: Double, lower: Double) {
        let k = Double(lowerByEve.count)
        guard lowerByEve.count >= 2 else { return (0, 0) }
        return (eveVariance(logWeights: lw, eve: eve, resamplings: resamplings), k / (k - 1) * lowerByEve.reduce(0) { $0 + $1 * $1 })
    }
}
