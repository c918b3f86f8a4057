import Foundation
import Sampling
import TwoScaleCore
import TwoScaleNumerics

/// The `smc` estimator of a network's 2sED and lower 2sED under the Markov FIM (docs/ESTIMATORS.md).
///
/// With `G_m = det(I + s F_m^{1/2})` and θ uniform on the box, the 2sED needs
/// `log E_θ Π_m G_m`, the lower 2sED `log Z_1 + Σ_{m≥2} E_{π_{m−1}}[log Z_m(θ_{<m})]`, where
/// `Z_m(θ_{<m}) = E_{θ_m} G_m` and `π_{m−1} ∝ Π_{j<m} G_j`. Given θ_{<m}, a Gaussian layer's G_m is a
/// product over neurons of factors that each depend on one neuron's weights through the same function,
/// and the neurons' weights are i.i.d. under the prior, so `Z_m = Z_u^{n_m}` exactly (the neurons are
/// exchangeable); the softmax layer is a single unit.
///
/// * Stage 1 (the first layer, data only): one pooled `AnnealedSMC` sampler for the exchangeable
///   neurons, with the particles that n_1 separate samplers would have, in a few large replicates; one
///   run covers the whole ε grid. `log Ẑ_1 = n_1 · log mean_r Ẑ_r`, bias-corrected.
/// * Stage m ≥ 2, per ε: K outer particles θ_{<m} ~ π_{m−1} (stage 2: one draw per neuron from the
///   pooled population, independently; later stages: resampled ∝ Ẑ_m); for each, an *island* (a pooled
///   sampler of the layer's exchangeable units, `runBlock`) estimates `Z_m(θ_{<m})` and supplies a draw
///   of θ_m. Then 2sED term `log mean_k Ẑ_m^k` (the fully adapted particle filter's normalising
///   constant), lower term `mean_k log Ẑ_m^k`.
///
/// Intervals: the variance of `log Ẑ_1` is n_1² times the pooled replicates' relative variance; a stage
/// term's is the delta-method variance over the K outer particles (each island independent given stage
/// 1), floored by the scatter a lognormal model of the outer log-weights implies (`LogEstimate.logMean`);
/// the estimated trace normalisation ĉ adds `(slope/2)² Var(log ĉ)`. Logs are bias-corrected by half
/// their relative variance. Random streams: `Xoshiro256(seed:, stream: [SMCN, …])` per task, stop, particle.
public struct NetworkSMC: Sendable {
    public var model: MarkovFisher
    public var box: ClosedRange<Double>
    public var seed: UInt64
    /// K: particles per stage-1 unit (over the replicates) and outer particles of later stages.
    public var paths: Int
    /// J: particles per island unit (over the replicates).
    public var inner: Int
    public var traceDraws: Int
    public var replicates: Int
    /// MH sweeps per island resample–move step (`--island-sweeps`; `defaultIslandSweeps` unless given).
    public var islandSweeps: Int
    /// Screen Metropolis–Hastings proposals by the unit's trace before solving its eigenproblem
    /// (delayed acceptance; exact either way). On by default; off reproduces the unscreened kernel.
    public var screen = true
    /// The islands' move kernel (`--island-kernel`, `--island-metric`): the screened random walk (default;
    /// diagonal, or Kronecker for the softmax unit) or Hamiltonian moves for the units with an analytic
    /// gradient (the softmax unit; the others keep the diagonal random walk). Stage 1 always walks diagonally.
    public var islandKernel: SMCMoveKernel = .standard

    static let stream: UInt64 = 0x534D_434E  // "SMCN"

    /// The default budget (`ed --estimator smc`): K = 64 outer particles, J = 32 island particles.
    public static let defaultPaths = 64, defaultInner = 32

    public init(model: MarkovFisher, box: ClosedRange<Double>, seed: UInt64, paths: Int, inner: Int,
                traceDraws: Int, replicates: Int = 2, islandSweeps: Int = NetworkSMC.defaultIslandSweeps) throws {
        try Self.checkBudget(paths: paths, inner: inner, traceDraws: traceDraws, layers: model.blockDimensions.count,
                             replicates: replicates, islandSweeps: islandSweeps)
        try MonteCarloDesign.checkBox(box)
        self.model = model
        self.box = box
        self.seed = seed
        self.paths = paths
        self.inner = inner
        self.traceDraws = traceDraws
        self.replicates = replicates
        self.islandSweeps = islandSweeps
    }

    /// The budget the samplers can run with, for a network of `layers` Fisher blocks: K from 2R to 10⁶, J
    /// (islands, only with later layers) from 4R to 10⁶, trace draws from 2 to 10⁷ (R replicates), island
    /// sweeps from 1 to 1 000.
    public static func checkBudget(paths: Int, inner: Int, traceDraws: Int, layers: Int, replicates: Int = 2,
                                   islandSweeps: Int = NetworkSMC.defaultIslandSweeps) throws {
        guard paths >= 2 * replicates, paths <= 1_000_000 else {
            throw TwoScaleError.invalid("--paths", "\(paths)", allowed: "the smc estimator needs K from \(2 * replicates) to 10⁶ (K outer particles; 2K particles per first-layer neuron)")
        }
        // An island replicate of J/R particles adapts its schedule only with at least 4 (ESS fraction 0.5).
        guard layers == 1 || (inner >= 4 * replicates && inner <= 1_000_000) else {
            throw TwoScaleError.invalid("--inner", "\(inner)", allowed: "the smc estimator needs J from \(4 * replicates) to 10⁶ island particles (at least 4 per replicate sampler, or its schedule cannot adapt)")
        }
        guard islandSweeps >= 1, islandSweeps <= 1_000 else {
            throw TwoScaleError.invalid("--island-sweeps", "\(islandSweeps)", allowed: "give from 1 to 1000 Metropolis–Hastings sweeps per island step")
        }
        guard traceDraws >= 2, traceDraws <= 10_000_000 else {
            throw TwoScaleError.invalid("--trace-draws", "\(traceDraws)", allowed: "give from 2 to 10⁷ draws")
        }
    }

    public struct Result: Sendable {
        public var points: [SMCPoint]
        public var scale: Double
        public var trace: TraceEstimate
        /// Stage 1 (first-layer units) and the islands of later stages.
        public var stage1: SMCDiagnostics
        public var islands: SMCDiagnostics
        /// The Fisher rank per layer over `rankDraws` uniform draws.
        public var rank: FisherRank
        /// The generic rank (closed-form bound and witness): the ε → 0 limit's r when proved.
        public var generic: GenericRank
        /// The certified bracket at every ε, at this run's ĉ (`CertifiedBracket`).
        public var bracket: CertifiedBracket
    }

    /// Uniform parameter draws whose full Markov spectra give the Fisher rank.
    public static let rankDraws = 32

    /// The Fisher rank per layer from `rankDraws` uniform networks (full block spectra, stream 8).
    public func rankEstimate(threads: Int) async throws -> FisherRank {
        let me = self
        let perDraw: [[Spectrum]] = try await Parallel.map(Self.rankDraws, threads: threads) { k in
            var rng = Xoshiro256(seed: me.seed, stream: [Self.stream, 8, UInt64(k)])
            let net = Network.uniform(architecture: me.model.architecture, activation: me.model.activation, box: me.box, rng: &rng)
            let raw = try (0..<me.model.blockDimensions.count).map { m in
                try me.model.blockEigenvalues(net, block: m, inputs: try me.model.blockInputs(net, block: m))
            }
            let scale = Spectrum.largestMagnitude(raw)
            return try raw.map { try Spectrum(eigenvalues: $0, scale: scale) }
        }
        return try FisherRank(perDraw: perDraw, parameters: model.blockDimensions,
                              layers: Array(1...model.blockDimensions.count))
    }

    /// ĉ from `traceDraws` uniform networks (`Tr F` needs no eigenproblem).
    public func traceEstimate(threads: Int) async throws -> TraceEstimate {
        let me = self
        let traces: [Double] = try await Parallel.map(traceDraws, threads: threads) { k in
            var rng = Xoshiro256(seed: me.seed, stream: [Self.stream, 3, UInt64(k)])
            let net = Network.uniform(architecture: me.model.architecture, activation: me.model.activation, box: me.box, rng: &rng)
            var t = 0.0
            for m in 0..<me.model.blockDimensions.count {
                t += try me.model.blockTrace(net, block: m, inputs: try me.model.blockInputs(net, block: m))
            }
            guard t.isFinite else { throw TwoScaleError.failure("Tr F(θ) is not finite at trace draw \(k); use a smaller --box") }
            return t
        }
        return TraceEstimate(traces: traces)
    }

    /// The first layer's pooled sampler (`stageOneTasks` runs of `replicates` replicates each): together they
    /// hold `stageOneParticles·K` particles per neuron, as separate samplers per neuron would, but in a few
    /// large replicates, which is what lowers the bias (an SMC sampler with few particles misses the
    /// scarce high-g region, and the spread of its replicates does not show it; docs/ESTIMATORS.md). A
    /// cautious schedule (ESS kept ≥ 0.8 P) and `stageOneSweeps` MH sweeps per step: at a fixed number of
    /// particle moves, fewer particles moved longer give a third of the spread (measured, docs/lab/ESTIMATORS-LOG.md,
    /// "Particles against sweeps"). It runs once for the whole ε grid.
    func stageOneSettings(units n: Int) throws -> SMCSettings {
        let total = Self.stageOneParticles * paths * n
        return try SMCSettings(particles: Swift.max(1, total / (Self.stageOneTasks(units: n) * replicates)),
                               replicates: replicates, essFraction: 0.8, moves: Self.stageOneSweeps)
    }

    /// Independent runs (tasks) of the first layer's pooled sampler: one per neuron up to 4.
    static func stageOneTasks(units n: Int) -> Int { Swift.min(4, Swift.max(1, n)) }

    /// Stage 1: K·`stageOneParticles` particles per first-layer neuron, `stageOneSweeps` sweeps per step
    /// (2K since proposals are screened by the trace, which halved the cost of a sweep).
    public static let stageOneParticles = 2, stageOneSweeps = 20

    /// The islands' schedule: resample and move when the ESS would fall below 0.8 P, then
    /// `defaultIslandSweeps` MH sweeps (`islandSweeps` when set). With 0.5 and 3 (the first design) an
    /// island's replicates of 16 particles differed by up to 13 nats at ε = 10⁻³ on 54-16-7, and the outer
    /// log-weights' variance was 5–7 nats², most of it the islands' own noise; 0.8 and 4 roughly halve that variance for about twice the island
    /// time (docs/lab/ESTIMATORS-LOG.md §3, "The islands' schedule").
    /// A sweep moves every particle once with a proposal in all of the unit's coordinates, and a random
    /// walk needs about as many such moves as the unit has coordinates to cross its target: 4 suffice for
    /// 54-16-7's softmax unit (112 weights) but not for 784-32-10's (320). There, at equal cost, 16 sweeps
    /// raised the islands' mean log by 20 nats and J = 128 (4 sweeps) by 14, and 64 sweeps by 63 against
    /// 32 for J = 512, still rising (docs/lab/ESTIMATORS-LOG.md, "Larger islands"); hence `--island-sweeps`.
    public static let islandESSFraction = 0.8, defaultIslandSweeps = 4

    /// The islands' sampler settings for block m ≥ 1: with the Hamiltonian kernel, a unit with a gradient
    /// (the softmax unit) makes `islandSweeps` trajectories per particle and step, and the other island
    /// units (Gaussian layers of deeper networks) keep `defaultIslandSweeps` random-walk sweeps; with the
    /// random walk every island unit makes `islandSweeps` sweeps.
    func islandSettings(block m: Int) throws -> SMCSettings {
        // The unit moves by the chosen kernel unless that is Hamiltonian and it has no gradient.
        let chosen = islandKernel.isRandomWalk || movesByTrajectories(block: m)
        return try SMCSettings(particles: inner / replicates, replicates: replicates, essFraction: Self.islandESSFraction,
                               moves: chosen ? islandSweeps : Self.defaultIslandSweeps, kernel: chosen ? islandKernel : .standard)
    }

    /// Whether block m's island units move by Hamiltonian trajectories: with that kernel, the units of a
    /// later block (m ≥ 1; stage 1 always walks) that have an analytic gradient (the softmax unit).
    func movesByTrajectories(block m: Int) -> Bool {
        !islandKernel.isRandomWalk && m > 0 && model.hasUnitGradient(block: m)
    }

    /// The share of the spread of the outer particles' `log Ẑ_m^k` that is the islands' own noise:
    /// the mean of their replicate noise variances over the sample variance of `log Ẑ_m^k`, capped at 1
    /// (0 when the log Ẑ do not vary).
    static func noiseShare(noise: [Double], logZ: [Double]) -> Double {
        let spread = LogEstimate.sampleVariance(logZ)  // 0 for one particle
        guard spread > 0 else { return 0 }
        return Swift.min(1, noise.reduce(0, +) / Double(logZ.count) / spread)
    }

    /// The unit of block `inputs.block` as the sampler sees it: its roots, and (with `screen`) its
    /// trace as the delayed-acceptance screen (docs/lab/ESTIMATORS-LOG.md, "Screening proposals").
    func unit(inputs: UnitInputs) -> SMCUnit {
        let model = self.model
        let hamiltonian = movesByTrajectories(block: inputs.block)
        return SMCUnit(dimension: model.units(block: inputs.block).dimension, box: box,
                       roots: { w in try model.unitRoots(w, inputs: inputs) },
                       screen: screen ? { @Sendable w in model.unitTrace(w, inputs: inputs) } : nil,
                       gradient: hamiltonian ? { @Sendable w, s in try model.unitLogDetGradient(w, inputs: inputs, scale: s) } : nil,
                       rowLength: model.hasUnitGradient(block: inputs.block) ? inputs.patches.cols : nil)
    }

    /// The softmax block's supremum `B = g_s(0)` given its input samples `x` (`softmaxSupremumRoots`): the
    /// bound's log `Σ_i log(1 + s r_i)` and its slope in log s, `Σ_i s r_i / (1 + s r_i)` (for ĉ's variance).
    func softmaxBound(inputs x: Matrix, scale s: Double) throws -> (log: Double, slope: Double) {
        let last = model.blockDimensions.count - 1
        let roots = try model.softmaxSupremumRoots(inputs: model.unitInputs(x, block: last))
        return (LogSpace.logDetSqrt(roots: roots, scale: s), LogSpace.logDetSqrtSlope(roots: roots, scale: s))
    }

    /// A block of n exchangeable units from its pooled unit estimate at stop t (`Z = Z_u^n`): `n · log Ẑ_u`
    /// as it is (the particle filter's weight); bias-corrected, `n (log Ẑ_u + V/2)` with variance `n² V`
    /// (each of the n logs is low by V/2, and they are one estimate, so their errors add coherently); the
    /// slope `n · d log Z_u / d log s`; and the replicates' own noise in `n · log Ẑ_u`, `n² var_r(l_r)/R`.
    /// For the lower 2sED, whose stage terms average logs: `n (mean_r l_r + var_r(l_r)/2)`, the log under the
    /// lognormal replicate model (`LogEstimate.lognormalReplicates`).
    static func block(_ est: SMCUnitEstimate, units n: Int, stop t: Int)
        -> (logZ: Double, corrected: LogEstimate, log: LogEstimate, slope: Double, noise: Double) {
        let cmb = est.combined(t)
        let k = Double(n)
        return (k * cmb.logZ, LogEstimate.corrected(logZ: cmb.logZ, relVar: cmb.relVar).times(n),
                LogEstimate.lognormalReplicates(est.logZ[t]).times(n), k * est.slope[t],
                k * k * LogEstimate.mean(est.logZ[t]).variance)
    }

    /// The n exchangeable units of block m given its inputs, as one pooled sampler over `stops`: R
    /// replicates of n·P particles (P = `settings.particles`), the cost of n samplers of P each
    /// (`SMCUnitEstimate.pooled`); `log Z_m = n · log Z_u`.
    func runBlock(_ m: Int, inputs x: Matrix, stops: [Double], settings: SMCSettings, stream: [UInt64],
                  keep: Bool) throws -> (units: Int, estimate: SMCUnitEstimate) {
        let n = model.units(block: m).count
        var pooled = settings
        pooled.particles = settings.particles * n
        let u = unit(inputs: model.unitInputs(x, block: m))
        return (n, try AnnealedSMC.run(u, stops: stops, settings: pooled, seed: seed, stream: stream + [0], keepPopulations: keep))
    }

    public func run(eps: [Double], zeta: Double, normalization: Normalization, lower: Bool, threads: Int,
                    progress: @escaping @Sendable (String) -> Void = { _ in }) async throws -> Result {
        try ScaleParameters.checkZeta(zeta)
        for e in eps { try ScaleParameters.checkEpsilon(e) }
        let a = model.architecture
        let d = a.parameterCount
        let L = model.blockDimensions.count
        progress("trace normalisation from \(traceDraws) uniform draws")
        let trace = try await traceEstimate(threads: threads)
        let (c, varLogC) = try trace.scale(normalization, dimension: d)
        let sOf = eps.map { ScaleParameters.t(eps: $0, zeta: zeta) * c.squareRoot() }
        let stops = Array(Set(sOf)).sorted()
        // Stage 1: the first layer's units are exchangeable (one block function of their own weights, one
        // prior), so Z_1 = Z_{1,1}^{n1}; one pooled sampler estimates log Z_{1,1} over every stop at once.
        let n1 = model.units(block: 0).count
        let unitSettings = try stageOneSettings(units: n1)
        let tasks = Self.stageOneTasks(units: n1)
        progress("stage 1: \(n1) exchangeable unit(s), \(tasks * replicates) samplers of \(unitSettings.particles) particles over \(stops.count) scale(s)")
        let me = self
        let firstUnit = unit(inputs: model.unitInputs(model.data, block: 0))
        let stage1: [SMCUnitEstimate] = try await Parallel.map(tasks, threads: threads) { k in
            try AnnealedSMC.run(firstUnit, stops: stops, settings: unitSettings, seed: me.seed,
                                       stream: [Self.stream, 1, UInt64(k)], keepPopulations: L > 1)
        }
        let first = SMCUnitEstimate.pooled(stage1)
        let diag1 = first.diagnostics
        var islandsDiag = SMCDiagnostics()
        var points: [SMCPoint] = []
        let settingsPerBlock = try (0..<L).map { m in m == 0 ? unitSettings : try self.islandSettings(block: m) }
        for (ei, e) in eps.enumerated() {
            let t = stops.firstIndex(of: sOf[ei])!
            let firstBlock = Self.block(first, units: n1, stop: t)
            var joint = firstBlock.corrected
            var slope = firstBlock.slope
            var low = joint
            var stageTerms = [joint]
            var stageESS: [Double] = []
            var stageNoise: [Double] = []
            var stageLogVariance: [Double] = []
            var stageShortfall: [Double] = []
            // The upper bound (`UpperBound`): the earlier stages' terms, then the last stage's supremum.
            var boundJoint = LogEstimate(), boundLow = LogEstimate(), boundSlope = 0.0
            var boundStage = LogEstimate(), boundStageLower = LogEstimate(), boundLogVariance = 0.0, boundShortfall = 0.0
            if L == 1 {
                // One stage, the softmax unit on the data: its supremum is a number, not an estimate.
                let b = try softmaxBound(inputs: model.data, scale: stops[t])
                boundStage = LogEstimate(value: b.log)
                boundStageLower = boundStage
                (boundJoint, boundLow, boundSlope) = (boundStage, boundStage, b.slope)
            }
            if L > 1 {
                progress("ε = \(e): \(L - 1) later stage(s), \(paths) islands each")
                // Outer particles θ_{<2}: one draw from every first-layer unit.
                var particles: [Network] = (0..<paths).map { k in
                    var rng = Xoshiro256(seed: seed, stream: [Self.stream, 4, UInt64(t), UInt64(k)])
                    var net = model.zeroNetwork()
                    for u in 0..<n1 {
                        model.setUnit(&net, block: 0, unit: u, parameters: first.draw(stop: t, rng: &rng))
                    }
                    return net
                }
                let s = stops[t]
                for m in 1..<L {
                    let last = m == L - 1
                    let current = particles
                    let islands: [(logZ: Double, lower: Double, noise: Double, slope: Double, net: Network, diag: SMCDiagnostics,
                                   bound: (log: Double, slope: Double))] =
                        try await Parallel.map(paths, threads: threads) { k in
                            var net = current[k]
                            let x = try me.model.blockInputs(net, block: m)
                            let (n, est) = try me.runBlock(m, inputs: x, stops: [s], settings: settingsPerBlock[m],
                                                           stream: [Self.stream, 5, UInt64(t), UInt64(m), UInt64(k)], keep: !last)
                            let b = Self.block(est, units: n, stop: 0)
                            if !last {
                                var rng = Xoshiro256(seed: me.seed, stream: [Self.stream, 6, UInt64(t), UInt64(m), UInt64(k)])
                                for u in 0..<n { me.model.setUnit(&net, block: m, unit: u, parameters: est.draw(stop: 0, rng: &rng)) }
                            }
                            // The last stage's supremum at the same outer particle (no random numbers).
                            let bound = last ? try me.softmaxBound(inputs: x, scale: s) : (log: 0, slope: 0)
                            return (b.logZ, b.log.value, b.noise, b.slope, net, est.diagnostics, bound)
                        }
                    if last {
                        let lb = islands.map(\.bound.log)
                        (boundStage, boundShortfall) = LogEstimate.logMeanAndShortfall(lb)
                        boundLogVariance = LogEstimate.sampleVariance(lb)
                        boundStageLower = LogEstimate.mean(lb)
                        let wb = LogSpace.normalizedWeights(logWeights: lb)
                        boundSlope = slope + zip(wb, islands).reduce(0) { $0 + $1.0 * $1.1.bound.slope }
                        boundJoint = joint + boundStage
                        boundLow = low + boundStageLower
                    }
                    let lz = islands.map(\.logZ)
                    for i in islands { islandsDiag.merge(i.diag) }
                    let term = LogEstimate.logMeanAndShortfall(lz)
                    stageTerms.append(term.estimate)
                    stageShortfall.append(term.shortfall)
                    joint = joint + stageTerms[stageTerms.count - 1]
                    low = low + LogEstimate.mean(islands.map(\.lower))
                    let w = LogSpace.normalizedWeights(logWeights: lz)
                    slope += zip(w, islands).reduce(0) { $0 + $1.0 * $1.1.slope }
                    stageESS.append(LogSpace.effectiveSampleSize(logWeights: lz))
                    stageNoise.append(Self.noiseShare(noise: islands.map(\.noise), logZ: lz))
                    stageLogVariance.append(LogEstimate.sampleVariance(lz))
                    if !last {
                        var rng = Xoshiro256(seed: seed, stream: [Self.stream, 7, UInt64(t), UInt64(m)])
                        let idx = AnnealedSMC.systematic(w, u: rng.uniform())
                        particles = idx.map { islands[$0].net }
                    }
                }
            }
            let cv = TraceEstimate.addedVariance(slope: slope, logVarianceOfC: varLogC)
            joint.variance += cv
            low.variance += cv
            let boundCV = TraceEstimate.addedVariance(slope: boundSlope, logVarianceOfC: varLogC)
            boundJoint.variance += boundCV
            boundLow.variance += boundCV
            guard joint.value.isFinite, low.value.isFinite else {
                throw TwoScaleError.failure("smc: log E det at ε = \(e) is not finite; the spectra hold infinite values (use a smaller --box)")
            }
            var point = SMCPoint(eps: e, zeta: zeta, dimension: d, estimate: joint, lower: lower ? low : nil,
                                 stageESS: stageESS, normalizationVariance: cv)
            point.stages = stageTerms
            point.stageIslandNoise = stageNoise
            point.stageLogVariance = stageLogVariance
            point.stageTailShortfall = stageShortfall
            if boundJoint.value.isFinite, boundLow.value.isFinite {
                point.bound = UpperBound(eps: e, zeta: zeta, dimension: d, estimate: boundJoint, lower: lower ? boundLow : nil,
                                         stage: boundStage, stageLower: boundStageLower, stageLogVariance: boundLogVariance,
                                         stageShortfall: boundShortfall, normalizationVariance: boundCV)
            }
            points.append(point)
        }
        progress("Fisher rank from \(Self.rankDraws) uniform draws")
        let rank = try await rankEstimate(threads: threads)
        progress("generic Fisher rank: closed-form bound and witness")
        let generic = try GenericRank(model: model, box: box, seed: seed)
        progress("certified bracket from \(CertifiedBracket.defaultDraws) uniform draws")
        let bracket = try await model.certifiedBracket(box: box, eps: eps, zeta: zeta, scale: c, seed: seed, threads: threads)
        return Result(points: points, scale: c, trace: trace, stage1: diag1, islands: islandsDiag, rank: rank, generic: generic,
                      bracket: bracket)
    }
}
