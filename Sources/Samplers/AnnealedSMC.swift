import Foundation
import RandomStreams
import TwoScaleCore

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
    /// Whether each random-walk sweep is followed by an independence sweep (`IndependenceMoves`), its
    /// proposals fitted to a pilot replicate on a stream of its own.
    public var independenceMoves: Bool

    public init(particles: Int, replicates: Int = 2, essFraction: Double = 0.5, moves: Int = 3,
                independenceMoves: Bool = false) throws {
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
            throw TwoScaleError.failure("SMC: \(particles) particles per replicate at ESS fraction \(essFraction) cannot adapt (τP must exceed 1; give at least \(Int(Swift.min(1e15, (1 / essFraction).rounded(.down))) + 1) particles)")
        }
        guard moves >= 1, moves <= 1000 else {
            throw TwoScaleError.failure("SMC: moves per step must be from 1 to 1000 (got \(moves))")
        }
        self.particles = particles
        self.replicates = replicates
        self.essFraction = essFraction
        self.moves = moves
        self.independenceMoves = independenceMoves
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
    /// Optional `t ↦ f(t)`, set where root j depends on coordinate j alone: `roots(x) == x.map(f)` (the
    /// layered toy). A blocked independence sweep then re-evaluates only the block's roots, not the unit's.
    public var coordinateRoot: (@Sendable (Double) -> Double)?
    public init(dimension: Int, box: ClosedRange<Double>, roots: @escaping @Sendable ([Double]) throws -> [Double],
                screen: (@Sendable ([Double]) throws -> Double)? = nil, coordinateRoot: (@Sendable (Double) -> Double)? = nil) {
        self.dimension = dimension
        self.box = box
        self.roots = roots
        self.screen = screen
        self.coordinateRoot = coordinateRoot
    }

    /// A unit whose root j is `f(x_j)`: `roots(x) = x.map(f)`, with `coordinateRoot` f.
    public init(dimension: Int, box: ClosedRange<Double>, coordinateRoot f: @escaping @Sendable (Double) -> Double) {
        self.init(dimension: dimension, box: box, roots: { $0.map(f) }, coordinateRoot: f)
    }
}

/// The weighted particles of one replicate at one stop: an approximation of `π_s ∝ g_s · U(box)`.
public struct SMCPopulation: Sendable, Codable {
    /// Particle positions, row-major `particles × dimension`.
    public var x: [Double]
    /// Normalised weights.
    public var weights: [Double]
}

/// What a unit's sampler returns at each stop.
public struct SMCUnitEstimate: Sendable, Codable {
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
    public static func combine(_ l: [Double]) -> (logZ: Double, relVar: Double) { LogEstimate.combine(l) }

    /// The parts' replicates, populations and diagnostics, in order (the slope left to the caller).
    private static func concatenated(_ parts: [SMCUnitEstimate]) -> SMCUnitEstimate {
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
        return out
    }

    /// Single-replicate runs of one sampler (`AnnealedSMC.run` over `r..<r+1`, in replicate order) joined
    /// into what one run over all of them returns, to the bit: a lone replicate's slope is its own
    /// numerator (its weight is exactly 1), and the diagnostics merge in the same order.
    public static func joined(_ parts: [SMCUnitEstimate]) -> SMCUnitEstimate {
        precondition(parts.allSatisfy { $0.logZ.allSatisfy { $0.count == 1 } })
        var out = concatenated(parts)
        out.slope = out.logZ.indices.map { t in
            let w = LogSpace.normalizedWeights(logWeights: out.logZ[t])
            return zip(w, parts).reduce(0) { $0 + $1.0 * $1.1.slope[t] }
        }
        return out
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
        var out = concatenated(parts)
        let stops = out.logZ.count
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
        let r = Tempering.pick(w, u: rng.uniform())
        let pop = populations[t][r]
        let i = Tempering.pick(pop.weights, u: rng.uniform())
        let p = pop.x.count / pop.weights.count
        return Array(pop.x[(i * p)..<((i + 1) * p)])
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
    /// `stream` identifies the unit (the replicate index is appended). With `replicates`, only those of
    /// them (`SMCUnitEstimate.joined` puts single ones run apart back together, to the bit).
    public static func run(_ unit: SMCUnit, stops: [Double], settings: SMCSettings, seed: UInt64, stream: [UInt64],
                           keepPopulations: Bool = false, replicates chosen: Range<Int>? = nil) throws -> SMCUnitEstimate {
        precondition(!stops.isEmpty && zip(stops, stops.dropFirst()).allSatisfy { $0 < $1 } && stops[0] >= 0)
        let range = chosen ?? 0..<settings.replicates
        precondition(!range.isEmpty && range.lowerBound >= 0 && range.upperBound <= settings.replicates)
        var logZ = [[Double]](repeating: [], count: stops.count)
        var slopeNum = [[Double]](repeating: [], count: stops.count)
        var pops = [[SMCPopulation]](repeating: [], count: keepPopulations ? stops.count : 0)
        var diag = SMCDiagnostics()
        // The independence kernel's proposals come from a pilot replicate on a stream of its own, so that
        // no replicate's proposal depends on the particles it moves (IndependenceMoves).
        for r in range {
            var pilot: [(scale: Double, fits: [ProbitGaussian])]? = nil
            if settings.independenceMoves && IndependenceMoves.applies(particles: settings.particles) {
                var rng = Xoshiro256(seed: seed, stream: stream + [UInt64(r), UInt64.max])
                let rep = try replicate(unit, stops: stops, settings: settings, rng: &rng, keep: false, recordSteps: true)
                pilot = rep.frozen.compactMap { step in step.move.map { (step.scale, $0.proposals) } }.filter { !$0.fits.isEmpty }
            }
            var rng = Xoshiro256(seed: seed, stream: stream + [UInt64(r)])
            let rep = try replicate(unit, stops: stops, settings: settings, rng: &rng, keep: keepPopulations, pilot: pilot)
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
        /// Its steps, recorded for a frozen replay (`FrozenSchedule`).
        var frozen: [FrozenStep] = []
    }

    /// One replicate: P particles drawn uniformly on the box, tempered through `stops` (`Tempering`) and
    /// moved by the random-walk kernel (`RandomWalk.move`), with `settings.moves` sweeps per step.
    static func replicate(_ unit: SMCUnit, stops: [Double], settings: SMCSettings, rng: inout Xoshiro256,
                          keep: Bool, recordSteps: Bool = false,
                          pilot: [(scale: Double, fits: [ProbitGaussian])]? = nil) throws -> Replicate {
        var system = try UnitParticles(unit, particles: settings.particles, sweeps: settings.moves, rng: &rng,
                                       keep: keep, recordSteps: recordSteps)
        system.independence = settings.independenceMoves
        system.pilot = pilot
        let steps = try Tempering.run(&system, stops: stops, essFraction: settings.essFraction, rng: &rng)
        var out = system.out
        out.diagnostics.steps = steps
        out.diagnostics.maxSteps = steps
        return out
    }
}

/// The particles of one `AnnealedSMC` replicate as `Tempering` sees them: positions, their roots (and
/// screen statistics), the random walk's step, and what is collected at the stops.
struct UnitParticles: TemperedSystem {
    let unit: SMCUnit
    let sweeps: Int
    let keep: Bool
    let recordSteps: Bool
    var x: [Double]
    var roots: [[Double]]
    /// The screening statistic of every particle (empty without a screen).
    var hNow: [Double]
    var h: Double
    var lastMove = FrozenMove(spread: [], slope: 0, steps: [])
    /// Whether independence sweeps follow the random walk's (`SMCSettings.independenceMoves`).
    var independence = false
    /// The pilot's independence proposals by scale (nil: fitted from this replicate's own halves, as a
    /// pilot's are).
    var pilot: [(scale: Double, fits: [ProbitGaussian])]? = nil
    var out: AnnealedSMC.Replicate

    init(_ unit: SMCUnit, particles n: Int, sweeps: Int, rng: inout Xoshiro256, keep: Bool, recordSteps: Bool) throws {
        let p = unit.dimension
        let lo = unit.box.lowerBound, hi = unit.box.upperBound
        var x = [Double](repeating: 0, count: n * p)
        for i in x.indices { x[i] = rng.uniform(lo, hi) }
        var roots = [[Double]]()
        roots.reserveCapacity(n)
        for i in 0..<n { roots.append(try unit.roots(Array(x[(i * p)..<((i + 1) * p)]))) }
        hNow = try unit.screen.map { f in try (0..<n).map { i in try f(Array(x[(i * p)..<((i + 1) * p)])) } } ?? []
        self.unit = unit
        self.sweeps = sweeps
        self.keep = keep
        self.recordSteps = recordSteps
        self.x = x
        self.roots = roots
        h = RandomWalk.initialStep(dimension: p)
        var diag = SMCDiagnostics()
        diag.samplers = 1
        out = AnnealedSMC.Replicate(logZ: [], slope: [], populations: [], diagnostics: diag)
    }

    var count: Int { roots.count }

    func logTarget(_ i: Int, at s: Double) -> Double { LogSpace.logDetSqrt(roots: roots[i], scale: s) }

    mutating func resample(_ idx: [Int]) {
        let p = unit.dimension
        x = idx.flatMap { x[($0 * p)..<(($0 + 1) * p)] }
        roots = idx.map { roots[$0] }
        if !hNow.isEmpty { hNow = idx.map { hNow[$0] } }
    }

    mutating func move(at s: Double, ell: inout [Double], rng: inout Xoshiro256) throws {
        var proposals: [ProbitGaussian]? = nil
        if let pilot {
            proposals = (pilot.last { $0.scale <= s } ?? pilot.first)?.fits ?? []
        }
        try RandomWalk.move(unit, s: s, x: &x, roots: &roots, ell: &ell, screen: &hNow, h: &h, sweeps: sweeps,
                            rng: &rng, diag: &out.diagnostics, proposals: proposals, fitOwn: independence && pilot == nil,
                            used: &lastMove)
    }

    mutating func stepped(at s: Double, moved: Bool) {
        if recordSteps { out.frozen.append(FrozenStep(scale: s, move: moved ? lastMove : nil)) }
    }

    mutating func collect(stop s: Double, logZ: Double, weights: TemperingWeights) {
        out.logZ.append(logZ)
        let w = weights.normalized
        var sl = 0.0
        for i in 0..<count { sl += w[i] * LogSpace.logDetSqrtSlope(roots: roots[i], scale: s) }
        out.slope.append(sl)
        out.diagnostics.minStopESS = Swift.min(out.diagnostics.minStopESS, weights.ess / Double(count))
        if keep { out.populations.append(SMCPopulation(x: x, weights: w)) }
    }
}
