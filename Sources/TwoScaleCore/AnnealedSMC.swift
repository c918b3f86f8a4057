import Foundation
import Sampling

/// The Markov kernel that moves an annealed sampler's particles after each resampling.
public enum SMCMoveKernel: Sendable, Equatable, Codable {
    /// A reflected random-walk Metropolis–Hastings proposal in all coordinates (screened when the unit
    /// has a screen); a sweep moves every particle once. Its proposal covariance is `h²` times the
    /// `metric` (`MoveMetric`; units without rows use the diagonal one whatever it says).
    case randomWalk(metric: MoveMetric)
    /// Hamiltonian Monte Carlo (Duane et al. 1987; Neal 2011) with `steps` leapfrog steps per trajectory,
    /// reflected at the box faces, for units with a gradient (`SMCUnit.gradient`; others fall back to
    /// the diagonal random walk); a sweep is one trajectory per particle. `metric` is the kinetic energy's
    /// (`MoveMetric`; units without rows use the diagonal one whatever it says).
    case hamiltonian(steps: Int, metric: MoveMetric = .standard)

    /// The default kernel: the random walk with the diagonal metric, on which every recorded check was made.
    public static let standard = SMCMoveKernel.randomWalk(metric: .standard)

    /// Whether the kernel is a random walk (of either metric).
    public var isRandomWalk: Bool {
        if case .randomWalk = self { return true }
        return false
    }

    /// The kernel's metric.
    public var metric: MoveMetric {
        switch self {
        case .randomWalk(let m), .hamiltonian(_, let m): return m
        }
    }
}

/// The metric of the moves at each resample–move step: the random walk's proposal covariance up to its
/// step `h²`, the Hamiltonian trajectories' inverse mass matrix. The diagonal one is estimated from the
/// particles as they enter the move; the Kronecker one from a scout sampler's particles at the same scale
/// (`MetricSchedule`), so that it does not depend on the particles it moves.
public enum MoveMetric: String, Sendable, Equatable, Codable, CaseIterable {
    /// `diag(sd)²`: each coordinate scaled by the particles' spread.
    case diagonal
    /// `D (A ⊗ B) D` with `D = diag(sd)`, `A` the correlation between the rows and `B` that within a
    /// row, for a unit whose coordinates are rows of `SMCUnit.rowLength` (the softmax unit's class rows
    /// over the same inputs), each pooled over the other index and the particles (`KroneckerMetric`);
    /// units without rows use the diagonal metric. A move's flight in it is an exact billiard in the box.
    case kronecker

    /// Both kernels' default: diagonal, on which every recorded check was made. The Kronecker metric
    /// (with its scout, `MetricSchedule`) reaches the diagonal walk's values on 54-16-7 only at 10× the
    /// island particles, and with Hamiltonian trajectories on 784-32-10's islands gives a 2sED within the
    /// noise of the diagonal metric's, at 1.5× the islands' work (docs/lab/ESTIMATORS-LOG.md, "A Kronecker random
    /// walk" and "Hamiltonian islands").
    public static let standard = MoveMetric.diagonal
}

/// Settings of the annealed sequential Monte Carlo sampler (`AnnealedSMC`), see docs/ESTIMATORS.md.
public struct SMCSettings: Sendable, Equatable, Codable {
    /// Particles per replicate sampler.
    public var particles: Int
    /// Independent replicate samplers per unit (≥ 2: their spread is the unit's variance estimate).
    public var replicates: Int
    /// Resample and move when the effective sample size would fall below `essFraction · particles`;
    /// the next scale is the largest that keeps it there.
    public var essFraction: Double
    /// Metropolis–Hastings sweeps after each resampling.
    public var moves: Int
    /// The kernel of the moves.
    public var kernel: SMCMoveKernel

    public init(particles: Int, replicates: Int = 2, essFraction: Double = 0.5, moves: Int = 3,
                kernel: SMCMoveKernel = .standard) throws {
        guard particles >= 2, particles <= 10_000_000 else {
            throw TwoScaleError.failure("SMC: particles per replicate must be from 2 to 10⁷ (got \(particles))")
        }
        guard replicates >= 2, replicates <= 1000 else {
            throw TwoScaleError.failure("SMC: replicates must be from 2 to 1000 (got \(replicates))")
        }
        guard essFraction > 0, essFraction < 1 else {
            throw TwoScaleError.failure("SMC: the ESS fraction must lie in (0, 1) (got \(essFraction))")
        }
        // The next scale keeps the ESS ≥ τP; an ESS is never below 1, so with τP ≤ 1 the schedule would
        // jump to the last scale at once, never resampling or moving: importance sampling from the prior.
        guard essFraction * Double(particles) > 1 else {
            throw TwoScaleError.failure("SMC: \(particles) particles per replicate at ESS fraction \(essFraction) cannot adapt (τP must exceed 1; give at least \(Int((1 / essFraction).rounded(.down)) + 1) particles)")
        }
        guard moves >= 1, moves <= 1000 else {
            throw TwoScaleError.failure("SMC: moves per step must be from 1 to 1000 (got \(moves))")
        }
        if case .hamiltonian(let steps, _) = kernel, !(1...1000).contains(steps) {
            throw TwoScaleError.failure("SMC: leapfrog steps per trajectory must be from 1 to 1000 (got \(steps))")
        }
        self.kernel = kernel
        self.particles = particles
        self.replicates = replicates
        self.essFraction = essFraction
        self.moves = moves
    }
}

/// One factor of a factorised θ-average: parameters `x ∈ [lo, hi]^p`, uniform a priori, and the square
/// roots `r_i(x) = √λ_i(x)` of the nonzero eigenvalues of the Fisher block that `x` owns.
///
/// The sampler estimates, for every scale `s` in a list of stops,
///
///     Z(s) = E_{x ~ U(box)} g_s(x),   g_s(x) = det(I + s F(x)^{1/2}) = Π_i (1 + s r_i(x)).
public struct SMCUnit: Sendable {
    public var dimension: Int
    public var box: ClosedRange<Double>
    /// `x ↦ r(x)`; the expensive call (an eigenproblem). Throws on an invalid spectrum.
    public var roots: @Sendable ([Double]) throws -> [Double]
    /// Optional `x ↦ h(x)`, a cheap statistic that tracks `log g_s(x)` (a network unit's `Tr F`). With
    /// it the Metropolis–Hastings moves are *delayed-acceptance*: a proposal is first screened against
    /// the surrogate `exp(b·h)` (b fitted to the population at each step) and the eigenproblem is solved
    /// only for proposals that pass; the second stage corrects with the exact ratio, so the kernel keeps
    /// `π_s` invariant whatever h is (a poor h only costs efficiency).
    public var screen: (@Sendable ([Double]) throws -> Double)?
    /// Optional `(x, s) ↦ (r(x), ∇_x ℓ_s(x))`, `ℓ_s = Σ_i log(1 + s r_i)`: the roots and the gradient of
    /// the log-target, for the Hamiltonian kernel. Its roots must be `roots(x)` (up to round-off); the
    /// gradient only steers
    /// the trajectories (the acceptance uses the exact ℓ), so an inexact one costs efficiency, not
    /// correctness.
    public var gradient: (@Sendable ([Double], Double) throws -> (roots: [Double], gradient: [Double]))?
    /// Optional: the coordinates are `dimension / rowLength` rows of `rowLength` that enter the unit
    /// alike (the softmax unit's class rows, each a weight vector over the same inputs), so the
    /// correlations between and within rows can be estimated by pooling (`MoveMetric.kronecker`).
    public var rowLength: Int?

    public init(dimension: Int, box: ClosedRange<Double>, roots: @escaping @Sendable ([Double]) throws -> [Double],
                screen: (@Sendable ([Double]) throws -> Double)? = nil,
                gradient: (@Sendable ([Double], Double) throws -> (roots: [Double], gradient: [Double]))? = nil,
                rowLength: Int? = nil) {
        precondition(rowLength.map { $0 >= 1 && dimension % $0 == 0 } ?? true, "rows must tile the unit's coordinates")
        self.dimension = dimension
        self.box = box
        self.roots = roots
        self.screen = screen
        self.gradient = gradient
        self.rowLength = rowLength
    }
}

/// The weighted particles of one replicate at one stop: an approximation of `π_s ∝ g_s · U(box)`.
public struct SMCPopulation: Sendable {
    /// Particle positions, row-major `particles × dimension`.
    public var x: [Double]
    /// Normalised weights.
    public var weights: [Double]
}

/// What a unit's sampler returns at each stop.
public struct SMCUnitEstimate: Sendable {
    /// `logZ[t][r]`: log Ẑ(s_t) of replicate r (each an unbiased estimate of Z on the natural scale).
    public var logZ: [[Double]]
    /// `d log Z / d log s` at each stop, `E_{π_s}[Σ_i s r_i / (1 + s r_i)]` (replicates pooled by Ẑ).
    public var slope: [Double]
    /// Populations per stop and replicate, when kept.
    public var populations: [[SMCPopulation]]
    /// Diagnostics, summed or pooled over replicates.
    public var diagnostics: SMCDiagnostics

    public init(logZ: [[Double]], slope: [Double], populations: [[SMCPopulation]], diagnostics: SMCDiagnostics) {
        self.logZ = logZ
        self.slope = slope
        self.populations = populations
        self.diagnostics = diagnostics
    }

    /// The unit's estimate at stop t: `log mean_r Ẑ_r`, and `V`, the relative variance of that mean
    /// (`Var Ẑ / Z²`, from the spread of the replicates).
    public func combined(_ t: Int) -> (logZ: Double, relVar: Double) {
        SMCUnitEstimate.combine(logZ[t])
    }

    /// `log mean_r e^{l_r}` and the relative variance of the mean, `var_r(e^{l_r}) / (R · mean²)`.
    public static func combine(_ l: [Double]) -> (logZ: Double, relVar: Double) {
        let r = Double(l.count)
        let m = LogSpace.logMeanExp(l)
        guard l.count >= 2, m.isFinite else { return (m, 0) }
        var ss = 0.0
        for v in l { let d = Foundation.exp(v - m) - 1; ss += d * d }
        return (m, ss / (r - 1) / r)
    }

    /// The replicates of several runs of one and the same unit (independent streams) as one estimate.
    ///
    /// Units that are exchangeable (the neurons of one Gaussian layer given its inputs: the same Fisher
    /// block as a function of their own weights, the same prior) have the same `Z_u`, so a block of n
    /// of them has `Z = Z_u^n`. Estimating `log Z_u` once from all n·R replicates and multiplying by n
    /// keeps the variance of the sum of n separate estimates (`n² · V/(nR)` against `n · V/R`) and cuts
    /// the bias of the log n-fold: a log-mean of R replicates is low by about half its relative variance.
    /// The slope is the Ẑ-weighted mean over all replicates; populations and diagnostics are concatenated.
    public static func pooled(_ parts: [SMCUnitEstimate]) -> SMCUnitEstimate {
        precondition(!parts.isEmpty && parts.allSatisfy { $0.logZ.count == parts[0].logZ.count })
        let stops = parts[0].logZ.count
        var out = SMCUnitEstimate(logZ: [[Double]](repeating: [], count: stops), slope: [],
                                  populations: [[SMCPopulation]](repeating: [], count: parts[0].populations.count),
                                  diagnostics: SMCDiagnostics())
        for p in parts {
            for t in 0..<stops { out.logZ[t] += p.logZ[t] }
            for t in out.populations.indices { out.populations[t] += p.populations[t] }
            out.diagnostics.merge(p.diagnostics)
        }
        // Each part's slope is already its replicates' Ẑ-weighted mean; weight the parts by Σ_r Ẑ_r.
        out.slope = (0..<stops).map { t in
            let w = LogSpace.normalizedWeights(logWeights: parts.map { LogSpace.logMeanExp($0.logZ[t]) + Foundation.log(Double($0.logZ[t].count)) })
            return zip(w, parts).reduce(0) { $0 + $1.0 * $1.1.slope[t] }
        }
        return out
    }

    /// A draw from the unit's population at stop t: a replicate chosen with probability ∝ Ẑ_r, then a
    /// particle ∝ its weight. Combined with the Ẑ's this is an unbiased particle measure of Z·π_s.
    public func draw(stop t: Int, rng: inout Xoshiro256) -> [Double] {
        let w = LogSpace.normalizedWeights(logWeights: logZ[t])
        let r = AnnealedSMC.pick(w, u: rng.uniform())
        let pop = populations[t][r]
        let i = AnnealedSMC.pick(pop.weights, u: rng.uniform())
        let p = pop.x.count / pop.weights.count
        return Array(pop.x[(i * p)..<((i + 1) * p)])
    }
}

/// Diagnostics of annealed samplers, pooled over replicates (and units, by `merge`).
public struct SMCDiagnostics: Sendable, Equatable, Codable {
    /// Intermediate scales (resample–move steps) per replicate sampler: largest seen.
    public var maxSteps: Int = 0
    /// Total resample–move steps over all samplers.
    public var steps: Int = 0
    /// Samplers run.
    public var samplers: Int = 0
    /// Metropolis–Hastings proposals and acceptances.
    public var proposals: Int = 0
    public var accepted: Int = 0
    /// Proposals whose spectrum was computed (all of them without a screen; with one, those that passed
    /// the delayed-acceptance screen).
    public var evaluated: Int = 0
    /// Smallest ESS fraction (ESS / particles) seen at a recorded stop.
    public var minStopESS: Double = 1
    /// The Hamiltonian kernel's pilot trajectories (discarded; `evaluated` counts their gradient calls).
    public var pilotTrajectories: Int = 0
    /// Scout samplers run for the Kronecker metric's schedule (`MetricSchedule`; their own diagnostics
    /// are not pooled here).
    public var scouts: Int = 0

    public init() {}

    public var acceptanceRate: Double? { proposals > 0 ? Double(accepted) / Double(proposals) : nil }
    /// The share of proposals whose spectrum was computed (1 without a screen).
    public var evaluatedFraction: Double? { proposals > 0 ? Double(evaluated) / Double(proposals) : nil }
    public var meanSteps: Double { samplers > 0 ? Double(steps) / Double(samplers) : 0 }

    public mutating func merge(_ o: SMCDiagnostics) {
        maxSteps = Swift.max(maxSteps, o.maxSteps)
        steps += o.steps
        samplers += o.samplers
        proposals += o.proposals
        accepted += o.accepted
        evaluated += o.evaluated
        minStopESS = Swift.min(minStopESS, o.minStopESS)
        pilotTrajectories += o.pilotTrajectories
        scouts += o.scouts
    }
}

/// An adaptive sequential Monte Carlo sampler annealed in the scale `s` (Del Moral, Doucet & Jasra
/// 2006; adaptive steps as in Jasra et al. 2011), for `Z(s) = E_{U(box)} Π_i (1 + s r_i(x))`.
///
/// The path of targets is `π_s ∝ g_s(x)·U(x)` from `s = 0` (the uniform prior) to the largest stop; it
/// passes every stop, so one run gives `Z` at all of them (one ε grid). From scale `s` the next is
/// the largest `s' ≤` (next stop) keeping the ESS of the weights `w_i ∝ g_{s'}(x_i)/g_s(x_i)·w_i` at
/// least `τ·P`; then the particles are resampled (systematic) and moved by `moves` sweeps of a
/// Metropolis–Hastings random walk that reflects at the box faces (a symmetric proposal, so the
/// uniform prior cancels), with per-coordinate steps `h·sd_j` (sd_j the particles' spread, h tuned
/// towards acceptance ≈ 0.3). The estimate is `log Ẑ(s) = Σ_steps log mean_i w_i` (unbiased for Z on
/// the natural scale). Each replicate has its own random stream, so results do not depend on threads.
public enum AnnealedSMC {
    /// Runs `settings.replicates` independent samplers of `unit` through the ascending `stops` (s > 0).
    /// `stream` identifies the unit (the replicate index is appended).
    public static func run(_ unit: SMCUnit, stops: [Double], settings: SMCSettings, seed: UInt64, stream: [UInt64],
                           keepPopulations: Bool = false) throws -> SMCUnitEstimate {
        precondition(!stops.isEmpty && zip(stops, stops.dropFirst()).allSatisfy { $0 < $1 } && stops[0] >= 0)
        var logZ = [[Double]](repeating: [], count: stops.count)
        var slopeNum = [[Double]](repeating: [], count: stops.count)
        var pops = [[SMCPopulation]](repeating: [], count: keepPopulations ? stops.count : 0)
        var diag = SMCDiagnostics()
        // The Kronecker metric's schedule, from a scout sampler on a stream of its own (`MetricSchedule`).
        var schedule: MetricSchedule? = nil
        if kroneckerRows(unit, settings) != nil {
            var rng = Xoshiro256(seed: seed, stream: stream + [scoutStream])
            schedule = try replicate(unit, stops: stops, settings: settings, rng: &rng, keep: false, record: true).metrics
            diag.scouts += 1
        }
        for r in 0..<settings.replicates {
            var rng = Xoshiro256(seed: seed, stream: stream + [UInt64(r)])
            let rep = try replicate(unit, stops: stops, settings: settings, rng: &rng, keep: keepPopulations, schedule: schedule)
            for t in stops.indices {
                logZ[t].append(rep.logZ[t])
                slopeNum[t].append(rep.slope[t])
                if keepPopulations { pops[t].append(rep.populations[t]) }
            }
            diag.merge(rep.diagnostics)
        }
        let slope = stops.indices.map { t -> Double in
            let w = LogSpace.normalizedWeights(logWeights: logZ[t])
            return zip(w, slopeNum[t]).reduce(0) { $0 + $1.0 * $1.1 }
        }
        return SMCUnitEstimate(logZ: logZ, slope: slope, populations: pops, diagnostics: diag)
    }

    struct Replicate {
        var logZ: [Double]
        var slope: [Double]
        var populations: [SMCPopulation]
        var diagnostics: SMCDiagnostics
        /// The metrics of its moves, by scale (recorded for a scout).
        var metrics = MetricSchedule()
        /// Its steps, recorded for a frozen replay (`FrozenSchedule`).
        var frozen: [FrozenStep] = []
    }

    /// The stream index (appended to the unit's stream) of a unit's scout sampler; replicates use 0, 1, ….
    static let scoutStream = UInt64.max

    /// The row length of the Kronecker metric where a unit's moves use it (the kernel's metric is
    /// `kronecker`, the unit has rows, and the kernel is the random walk or a Hamiltonian one with a
    /// gradient); nil where they use the diagonal metric.
    static func kroneckerRows(_ unit: SMCUnit, _ settings: SMCSettings) -> Int? {
        guard settings.kernel.metric == .kronecker, let m = unit.rowLength else { return nil }
        return settings.kernel.isRandomWalk || unit.gradient != nil ? m : nil
    }

    /// `Σ_i log1p(s r_i)`.
    @inline(__always)
    static func ell(_ r: [Double], _ s: Double) -> Double { LogSpace.logDetSqrt(roots: r, scale: s) }

    static func ess(_ lw: [Double]) -> Double { LogSpace.effectiveSampleSize(logWeights: lw) }

    static func replicate(_ unit: SMCUnit, stops: [Double], settings: SMCSettings, rng: inout Xoshiro256,
                          keep: Bool, schedule: MetricSchedule? = nil, record: Bool = false, recordSteps: Bool = false) throws -> Replicate {
        let n = settings.particles, p = unit.dimension
        let lo = unit.box.lowerBound, hi = unit.box.upperBound
        var x = [Double](repeating: 0, count: n * p)
        for i in x.indices { x[i] = rng.uniform(lo, hi) }
        var roots = [[Double]]()
        roots.reserveCapacity(n)
        for i in 0..<n { roots.append(try unit.roots(Array(x[(i * p)..<((i + 1) * p)]))) }
        // The Hamiltonian kernel's gradient, when this replicate moves by it (else the random walk).
        let hamiltonian: (steps: Int, gradient: @Sendable ([Double], Double) throws -> (roots: [Double], gradient: [Double]))? = {
            if case .hamiltonian(let steps, _) = settings.kernel, let g = unit.gradient { return (steps, g) }
            return nil
        }()
        // The rows of the Kronecker metric (nil: the diagonal metric). A Hamiltonian kernel's unit without a
        // gradient falls back to the diagonal walk.
        let rows = kroneckerRows(unit, settings)
        // The screening statistic of every particle (empty without a screen, and for Hamiltonian moves,
        // which do not screen).
        var hNow = hamiltonian != nil ? [] : try unit.screen.map { f in try (0..<n).map { i in try f(Array(x[(i * p)..<((i + 1) * p)])) } } ?? []
        var ellNow = [Double](repeating: 0, count: n)  // ℓ_s(x_i) at the current s
        var lw = [Double](repeating: 0, count: n)      // log weights since the last resampling
        var logZacc = 0.0
        var s = 0.0
        var h = 2.38 / Double(p).squareRoot()
        // The Hamiltonian kernel's step in units of the particles' spread (≈ d^{-1/4}, Beskos et al. 2013).
        var step = 1 / Foundation.pow(Double(p), 0.25)
        var lastRate = 0.0  // the Hamiltonian kernel's last sweep's acceptance (0: pilot the first move)
        var diag = SMCDiagnostics()
        diag.samplers = 1
        let threshold = settings.essFraction * Double(n)
        var out = Replicate(logZ: [], slope: [], populations: [], diagnostics: diag)
        var stepsHere = 0
        for target in stops {
            while s < target {
                // ESS of the weights if we jumped to s'.
                func essAt(_ s2: Double) -> Double {
                    var l = lw
                    for i in 0..<n { l[i] += ell(roots[i], s2) - ellNow[i] }
                    return ess(l)
                }
                var next = target
                if essAt(target) < threshold {
                    var a = s, b = target
                    for _ in 0..<40 {
                        let m = 0.5 * (a + b)
                        if essAt(m) >= threshold { a = m } else { b = m }
                        if b - a <= 1e-3 * b { break }
                    }
                    // Always advance: a > s unless even a tiny step collapses the weights.
                    next = a > s ? a : b
                }
                for i in 0..<n {
                    let e = ell(roots[i], next)
                    lw[i] += e - ellNow[i]
                    ellNow[i] = e
                }
                s = next
                if s < target || ess(lw) < threshold {
                    // Resample (systematic) and move at s.
                    logZacc += LogSpace.logMeanExp(lw)
                    let w = LogSpace.normalizedWeights(logWeights: lw)
                    let idx = systematic(w, u: rng.uniform())
                    x = idx.flatMap { x[($0 * p)..<(($0 + 1) * p)] }
                    roots = idx.map { roots[$0] }
                    ellNow = idx.map { ellNow[$0] }
                    if !hNow.isEmpty { hNow = idx.map { hNow[$0] } }
                    lw = [Double](repeating: 0, count: n)
                    // The Kronecker metric: a replicate of `run` takes the scout's schedule (the diagonal
                    // metric where the scout never moved, so the schedule is empty: never its own fit); a
                    // sampler without a schedule (a scout, which records it) fits it to its own particles.
                    var metric: KroneckerMetric? = nil
                    if let m = rows {
                        if let schedule {
                            metric = schedule.metric(at: s)
                        } else {
                            let own = KroneckerMetric(x, particles: n, rowLength: m, spread: spread(x, particles: n, dimension: p, width: hi - lo))
                            if record { out.metrics.append(scale: s, own) }
                            metric = own
                        }
                    }
                    if let hamiltonian {
                        try hamiltonianMove(unit, gradient: hamiltonian.gradient, s: s, x: &x, roots: &roots, ell: &ellNow,
                                            step: &step, lastRate: &lastRate, leapfrog: hamiltonian.steps, metric: metric,
                                            sweeps: settings.moves, rng: &rng, diag: &out.diagnostics)
                    } else {
                        var used = FrozenMove(spread: [], slope: 0, steps: [])
                        try move(unit, s: s, x: &x, roots: &roots, ell: &ellNow, screen: &hNow, h: &h, sweeps: settings.moves,
                                 metric: metric, rng: &rng, diag: &out.diagnostics, used: &used)
                        if recordSteps { out.frozen.append(FrozenStep(scale: s, move: used)) }
                    }
                    stepsHere += 1
                } else if recordSteps {
                    out.frozen.append(FrozenStep(scale: s, move: nil))
                }
            }
            out.logZ.append(logZacc + LogSpace.logMeanExp(lw))
            let w = LogSpace.normalizedWeights(logWeights: lw)
            var sl = 0.0
            for i in 0..<n { sl += w[i] * LogSpace.logDetSqrtSlope(roots: roots[i], scale: s) }
            out.slope.append(sl)
            out.diagnostics.minStopESS = Swift.min(out.diagnostics.minStopESS, ess(lw) / Double(n))
            if keep { out.populations.append(SMCPopulation(x: x, weights: w)) }
        }
        out.diagnostics.steps = stepsHere
        out.diagnostics.maxSteps = stepsHere
        return out
    }

    /// `moves` sweeps of the reflected random-walk Metropolis–Hastings kernel invariant for `π_s`.
    ///
    /// With a screen (`hNow`, the particles' `h`), each proposal y from x is first accepted with
    /// probability `min(1, e^{b(h(y) − h(x))})` and only then evaluated, and accepted with
    /// `min(1, e^{ℓ(y) − ℓ(x) − b(h(y) − h(x))})`: the delayed-acceptance kernel of Christen & Fox (2005)
    /// with the state-independent surrogate `e^{b h}`, reversible for `π_s` (the proposal is symmetric).
    /// b is the least-squares slope of ℓ on h over the particles as they enter the move.
    ///
    /// The proposal is `y = x + h·sd∘ξ`, ξ ~ N(0, I), folded into the box; with `metric` (the Kronecker
    /// walk, `MoveMetric.kronecker`) it is instead the free flight of time h from x at the velocity
    /// `D (L_A ⊗ L_B) ξ` of `metric` (`KroneckerMetric`, from the scout's `MetricSchedule`), reflected
    /// specularly at every face it meets (`KroneckerMetric.drift`): a reversible, volume-preserving map of
    /// (x, ξ) that keeps |ξ|, so the proposal is symmetric and the acceptance is the targets' ratio as
    /// before. Its covariance away from the faces is `h² D (A ⊗ B) D`; with `A = B = I` it is the fold.
    static func move(_ unit: SMCUnit, s: Double, x: inout [Double], roots: inout [[Double]], ell ellNow: inout [Double],
                     screen hNow: inout [Double], h: inout Double, sweeps: Int, metric: KroneckerMetric? = nil, rng: inout Xoshiro256,
                     diag: inout SMCDiagnostics, frozen: FrozenMove? = nil, used: UnsafeMutablePointer<FrozenMove>? = nil) throws {
        let n = roots.count, p = unit.dimension
        let lo = unit.box.lowerBound, hi = unit.box.upperBound, width = hi - lo
        // The diagonal metric's spread (unused with a Kronecker metric, which carries its own).
        let sd = frozen?.spread ?? (metric == nil ? spread(x, particles: n, dimension: p, width: width) : [])
        var v = [Double](repeating: 0, count: metric == nil ? 0 : p), u = v
        let screen = hNow.isEmpty ? nil : unit.screen
        let b = frozen?.slope ?? (screen == nil ? 0 : screenSlope(h: hNow, ell: ellNow))
        used?.pointee = FrozenMove(spread: sd, slope: b, steps: [])
        var y = [Double](repeating: 0, count: p)
        for sweep in 0..<sweeps {
            if let f = frozen { h = f.steps[sweep] }
            used?.pointee.steps.append(h)
            var acc = 0, evaluated = 0
            for i in 0..<n {
                if let metric {
                    // The Kronecker walk: a free flight of time h at the velocity of v ~ N(0, I), reflected
                    // specularly at the faces (a billiard that keeps |v|, so the proposal is symmetric).
                    for j in 0..<p { v[j] = rng.normal(); y[j] = x[i * p + j] }
                    metric.velocity(v, into: &u)
                    guard metric.drift(&y, momentum: &v, velocity: &u, time: h, lo: lo, hi: hi) else { continue }
                } else {
                    for j in 0..<p { y[j] = reflect(x[i * p + j] + h * sd[j] * rng.normal(), lo, hi) }
                }
                var hy = 0.0, first = 0.0
                if let screen {
                    hy = try screen(y)
                    first = b * (hy - hNow[i])
                    if first < 0, Foundation.log(rng.uniform()) >= first { continue }
                }
                evaluated += 1
                let ry = try unit.roots(y)
                let ey = ell(ry, s)
                let logA = ey - ellNow[i] - first
                if logA >= 0 || Foundation.log(rng.uniform()) < logA {
                    for j in 0..<p { x[i * p + j] = y[j] }
                    roots[i] = ry
                    ellNow[i] = ey
                    if screen != nil { hNow[i] = hy }
                    acc += 1
                }
            }
            diag.proposals += n
            diag.accepted += acc
            diag.evaluated += evaluated
            let rate = Double(acc) / Double(n)
            if rate < 0.15 { h *= 0.6 } else if rate > 0.45 { h = Swift.min(h * 1.5, 4) }
        }
    }

    /// The particles' per-coordinate spread, clamped to `[10⁻³, 1]` times the box width: the proposals'
    /// scale per coordinate.
    static func spread(_ x: [Double], particles n: Int, dimension p: Int, width: Double) -> [Double] {
        (0..<p).map { j in
            var m = 0.0, q = 0.0
            for i in 0..<n { m += x[i * p + j] }
            m /= Double(n)
            for i in 0..<n { let d = x[i * p + j] - m; q += d * d }
            return Swift.min(width, Swift.max(1e-3 * width, (q / Double(n)).squareRoot()))
        }
    }

    /// `sweeps` Hamiltonian trajectories per particle, each kernel invariant for `π_s ∝ e^{ℓ_s}·U(box)`.
    ///
    /// In coordinates scaled by the particles' spread `sd_j` (a diagonal mass matrix `diag(sd)⁻²`), the
    /// momentum is `v ~ N(0, I)` and a trajectory is `leapfrog` steps of size `ε` (the adapted `step`,
    /// jittered uniformly by ±20% per trajectory):
    ///
    ///     v ← v + ε/2 · sd∘∇ℓ(x),   x ← x + ε · sd∘v,   v ← v + ε/2 · sd∘∇ℓ(x),
    ///
    /// where a coordinate that leaves the box is folded back (`reflect`) and its momentum negated once
    /// per fold: elastic reflection, which keeps the map volume-preserving and reversible, so the
    /// uniform prior needs no correction. The end point is accepted with probability
    /// `min(1, e^{−ΔH})`, `H = −ℓ_s(x) + |v|²/2`, with the exact ℓ (non-finite: rejected). After each
    /// sweep the step is tuned towards acceptance 0.6–0.9 (between sweeps, so each sweep is one fixed
    /// kernel). Every leapfrog step is one gradient call (`diag.evaluated`; a softmax unit with fewer
    /// samples than inputs solves two eigenproblems in it); a trajectory is one proposal. A particle whose
    /// own gradient is not finite is not moved (a rejection).
    ///
    /// With `metric` (`MoveMetric.kronecker`: a `KroneckerMetric` from the scout's `MetricSchedule`) the
    /// kinetic energy is that metric's and the drift is an exact billiard in the box (`KroneckerMetric.drift`).
    static func hamiltonianMove(_ unit: SMCUnit, gradient: @Sendable ([Double], Double) throws -> (roots: [Double], gradient: [Double]),
                                s: Double, x: inout [Double], roots: inout [[Double]], ell ellNow: inout [Double],
                                step: inout Double, lastRate: inout Double, leapfrog: Int, metric: KroneckerMetric? = nil, sweeps: Int,
                                rng: inout Xoshiro256, diag: inout SMCDiagnostics) throws {
        let n = roots.count, p = unit.dimension
        let lo = unit.box.lowerBound, hi = unit.box.upperBound
        // The diagonal metric's spread (unused with a Kronecker metric, which carries its own).
        let sd = metric == nil ? spread(x, particles: n, dimension: p, width: hi - lo) : []
        // The gradient of every particle at this s (s changed since the last move).
        var grads = [[Double]]()
        grads.reserveCapacity(n)
        for i in 0..<n {
            let (r, g) = try gradient(Array(x[(i * p)..<((i + 1) * p)]), s)
            roots[i] = r
            ellNow[i] = ell(r, s)
            grads.append(g)
        }
        diag.evaluated += n
        var y = [Double](repeating: 0, count: p), v = [Double](repeating: 0, count: p)
        var u = [Double](repeating: 0, count: p)  // the velocity under the Kronecker metric
        // One trajectory of particle i with step eps (drawn by the caller): its end point (in y), roots,
        // gradient and ℓ, and the log acceptance ratio; nil where it is not finite (a rejection).
        func trajectory(_ i: Int, eps: Double) throws -> (roots: [Double], gradient: [Double], ell: Double, logA: Double)? {
            var kinetic0 = 0.0
            for j in 0..<p { v[j] = rng.normal(); kinetic0 += v[j] * v[j] }
            for j in 0..<p { y[j] = x[i * p + j] }
            var g = grads[i]
            var ry: [Double] = []
            for _ in 0..<leapfrog {
                if let metric {
                    metric.kick(&v, gradient: g, by: 0.5 * eps)
                    metric.velocity(v, into: &u)
                    guard metric.drift(&y, momentum: &v, velocity: &u, time: eps, lo: lo, hi: hi) else { return nil }
                } else {
                    for j in 0..<p {
                        v[j] += 0.5 * eps * sd[j] * g[j]
                        let (folded, flips) = reflectCounting(y[j] + eps * sd[j] * v[j], lo, hi)
                        y[j] = folded
                        if flips { v[j] = -v[j] }
                    }
                }
                (ry, g) = try gradient(y, s)
                diag.evaluated += 1
                guard g.allSatisfy(\.isFinite) else { return nil }
                if let metric {
                    metric.kick(&v, gradient: g, by: 0.5 * eps)
                } else {
                    for j in 0..<p { v[j] += 0.5 * eps * sd[j] * g[j] }
                }
            }
            let ey = ell(ry, s)
            var kinetic1 = 0.0
            for j in 0..<p { kinetic1 += v[j] * v[j] }
            let logA = ey - ellNow[i] - 0.5 * (kinetic1 - kinetic0)
            return logA.isFinite ? (ry, g, ey, logA) : nil
        }
        // The pilot: where the last sweep moved fewer than half the particles (and before the first), a
        // few trajectories whose end points are discarded test the step first, which is halved until
        // their mean acceptance probability reaches one half. It depends only on the population as it
        // enters the move, so the sweeps below stay kernels that keep π_s; without it, a step that the
        // between-sweep tuning shrinks too slowly while the target sharpens lets a resampled population
        // stay clones, whose equal weights then let the schedule leap (docs/lab/ESTIMATORS-LOG.md, "Hamiltonian
        // islands").
        if lastRate < HamiltonianPilot.belowRate {
            let k = Swift.min(n, HamiltonianPilot.trajectories)
            let probes = (0..<k).map { $0 * n / k }.filter { grads[$0].allSatisfy(\.isFinite) }
            for _ in 0..<HamiltonianPilot.maxHalvings where !probes.isEmpty {
                var mean = 0.0
                for i in probes {
                    if let t = try trajectory(i, eps: step * rng.uniform(0.8, 1.2)) { mean += Swift.min(1, Foundation.exp(t.logA)) }
                }
                diag.pilotTrajectories += probes.count
                if mean / Double(probes.count) >= 0.5 { break }
                step *= 0.5
            }
        }
        for _ in 0..<sweeps {
            var acc = 0
            for i in 0..<n {
                // A point whose own gradient is not finite cannot start a trajectory: the particle stays
                // (a rejection, which keeps the target).
                guard grads[i].allSatisfy(\.isFinite) else { diag.proposals += 1; continue }
                let eps = step * rng.uniform(0.8, 1.2)
                let t = try trajectory(i, eps: eps)
                diag.proposals += 1
                guard let t else { continue }
                if t.logA >= 0 || Foundation.log(rng.uniform()) < t.logA {
                    for j in 0..<p { x[i * p + j] = y[j] }
                    roots[i] = t.roots
                    ellNow[i] = t.ell
                    grads[i] = t.gradient
                    acc += 1
                }
            }
            diag.accepted += acc
            let rate = Double(acc) / Double(n)
            lastRate = rate
            if rate < 0.6 { step *= 0.7 } else if rate > 0.9 { step = Swift.min(step * 1.25, 2) }
        }
    }

    /// The Hamiltonian moves' pilot (`hamiltonianMove`): run where the last sweep accepted less than
    /// `belowRate`, with `trajectories` particles evenly spaced in the population (all of them if fewer)
    /// per round, at most `maxHalvings` rounds, each but a passing one halving the step.
    enum HamiltonianPilot {
        static let belowRate = 0.5, trajectories = 4, maxHalvings = 12
    }

    /// `reflect(v, lo, hi)` and whether the fold reverses the direction of motion (an odd number of
    /// reflections): the momentum of an elastic reflection.
    @inline(__always)
    static func reflectCounting(_ v: Double, _ lo: Double, _ hi: Double) -> (Double, Bool) {
        if v >= lo && v <= hi { return (v, false) }
        let w = hi - lo
        var u = (v - lo).truncatingRemainder(dividingBy: 2 * w)
        if u < 0 { u += 2 * w }
        return u > w ? (lo + 2 * w - u, true) : (lo + u, false)
    }

    /// The least-squares slope of `ell` on `h` over the particles (0 when h does not vary or the slope
    /// is not finite): the surrogate `e^{b h}` of the delayed-acceptance screen.
    static func screenSlope(h: [Double], ell: [Double]) -> Double {
        let n = Double(h.count)
        guard h.count >= 2 else { return 0 }
        let mh = h.reduce(0, +) / n, ml = ell.reduce(0, +) / n
        var sxy = 0.0, sxx = 0.0
        for (a, c) in zip(h, ell) { sxy += (a - mh) * (c - ml); sxx += (a - mh) * (a - mh) }
        guard sxx > 0 else { return 0 }
        let b = sxy / sxx
        return b.isFinite ? b : 0
    }

    /// Folds `v` into `[lo, hi]` by reflection at the faces (the triangle wave).
    @inline(__always)
    static func reflect(_ v: Double, _ lo: Double, _ hi: Double) -> Double {
        let w = hi - lo
        var u = (v - lo).truncatingRemainder(dividingBy: 2 * w)
        if u < 0 { u += 2 * w }
        if u > w { u = 2 * w - u }
        return lo + u
    }

    /// Systematic resampling: `n` indices from normalised weights with one uniform.
    public static func systematic(_ w: [Double], u: Double) -> [Int] {
        let n = w.count
        var out = [Int](repeating: 0, count: n)
        var c = w[0], j = 0
        for i in 0..<n {
            let t = (Double(i) + u) / Double(n)
            while t > c, j < n - 1 { j += 1; c += w[j] }
            out[i] = j
        }
        return out
    }

    /// The index i with `Σ_{<i} w < u ≤ Σ_{≤i} w` (normalised weights).
    public static func pick(_ w: [Double], u: Double) -> Int {
        var c = 0.0
        for (i, v) in w.enumerated() {
            c += v
            if u < c { return i }
        }
        return w.count - 1
    }
}

extension SMCDiagnostics {
    /// What a report shows of the diagnostics: samplers, mean and largest number of steps, the
    /// Metropolis–Hastings acceptance rate (null without proposals) and the smallest stop ESS fraction.
    public struct Summary: Sendable, Equatable, Encodable {
        public var samplers: Int
        public var meanSteps: Double
        public var maxSteps: Int
        @NullIfNil public var acceptance: Double?
        /// Spectra computed per proposal: the random walk's share of proposals that passed the
        /// delayed-acceptance screen (below 1 with it); the Hamiltonian kernel's gradient calls per
        /// trajectory, its pilot's included.
        @NullIfNil public var evaluated: Double?
        public var minStopEssFraction: Double
        /// The Hamiltonian kernel's pilot trajectories (absent where no pilot ran: the random walk).
        public var pilotTrajectories: Int?
        /// Scout samplers run for the Kronecker metric (absent where none ran: the diagonal metric).
        public var scouts: Int?
    }

    public var summary: Summary {
        Summary(samplers: samplers, meanSteps: meanSteps, maxSteps: maxSteps, acceptance: acceptanceRate,
                evaluated: evaluatedFraction, minStopEssFraction: minStopESS,
                pilotTrajectories: pilotTrajectories > 0 ? pilotTrajectories : nil, scouts: scouts > 0 ? scouts : nil)
    }
}
