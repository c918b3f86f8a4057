import Foundation
import Sampling
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

    public init(particles: Int, replicates: Int = 2, essFraction: Double = 0.5, moves: Int = 3) throws {
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
    public init(dimension: Int, box: ClosedRange<Double>, roots: @escaping @Sendable ([Double]) throws -> [Double],
                screen: (@Sendable ([Double]) throws -> Double)? = nil) {
        self.dimension = dimension
        self.box = box
        self.roots = roots
        self.screen = screen
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
        for r in 0..<settings.replicates {
            var rng = Xoshiro256(seed: seed, stream: stream + [UInt64(r)])
            let rep = try replicate(unit, stops: stops, settings: settings, rng: &rng, keep: keepPopulations)
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

    /// The next scale of an adaptive schedule from `s` towards `target`: `target` if the weights' ESS
    /// there stays ≥ `threshold`, else the largest scale that keeps it so (bisection to 0.1%), always past s.
    static func nextScale(from s: Double, to target: Double, threshold: Double, ess essAt: (Double) -> Double) -> Double {
        guard essAt(target) < threshold else { return target }
        var a = s, b = target
        for _ in 0..<40 {
            let m = 0.5 * (a + b)
            if essAt(m) >= threshold { a = m } else { b = m }
            if b - a <= 1e-3 * b { break }
        }
        // Always advance: a > s unless even a tiny step collapses the weights.
        return a > s ? a : b
    }

    /// `Σ_i log1p(s r_i)`.
    @inline(__always)
    static func ell(_ r: [Double], _ s: Double) -> Double { LogSpace.logDetSqrt(roots: r, scale: s) }

    static func ess(_ lw: [Double]) -> Double { LogSpace.effectiveSampleSize(logWeights: lw) }

    static func replicate(_ unit: SMCUnit, stops: [Double], settings: SMCSettings, rng: inout Xoshiro256,
                          keep: Bool, recordSteps: Bool = false) throws -> Replicate {
        let n = settings.particles, p = unit.dimension
        let lo = unit.box.lowerBound, hi = unit.box.upperBound
        var x = [Double](repeating: 0, count: n * p)
        for i in x.indices { x[i] = rng.uniform(lo, hi) }
        var roots = [[Double]]()
        roots.reserveCapacity(n)
        for i in 0..<n { roots.append(try unit.roots(Array(x[(i * p)..<((i + 1) * p)]))) }
        // The screening statistic of every particle (empty without a screen).
        var hNow = try unit.screen.map { f in try (0..<n).map { i in try f(Array(x[(i * p)..<((i + 1) * p)])) } } ?? []
        var ellNow = [Double](repeating: 0, count: n)  // ℓ_s(x_i) at the current s
        var lw = [Double](repeating: 0, count: n)      // log weights since the last resampling
        var logZacc = 0.0
        var s = 0.0
        var h = 2.38 / Double(p).squareRoot()
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
                let next = nextScale(from: s, to: target, threshold: threshold, ess: essAt)
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
                    var used = FrozenMove(spread: [], slope: 0, steps: [])
                    try move(unit, s: s, x: &x, roots: &roots, ell: &ellNow, screen: &hNow, h: &h, sweeps: settings.moves,
                             rng: &rng, diag: &out.diagnostics, used: &used)
                    if recordSteps { out.frozen.append(FrozenStep(scale: s, move: used)) }
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
    /// The proposal is `y = x + h·sd∘ξ`, ξ ~ N(0, I), folded into the box (a symmetric proposal).
    static func move(_ unit: SMCUnit, s: Double, x: inout [Double], roots: inout [[Double]], ell ellNow: inout [Double],
                     screen hNow: inout [Double], h: inout Double, sweeps: Int, rng: inout Xoshiro256,
                     diag: inout SMCDiagnostics, frozen: FrozenMove? = nil, used: UnsafeMutablePointer<FrozenMove>? = nil) throws {
        let n = roots.count, p = unit.dimension
        let lo = unit.box.lowerBound, hi = unit.box.upperBound, width = hi - lo
        let sd = frozen?.spread ?? spread(x, particles: n, dimension: p, width: width)
        let screen = hNow.isEmpty ? nil : unit.screen
        let b = frozen?.slope ?? (screen == nil ? 0 : screenSlope(h: hNow, ell: ellNow))
        used?.pointee = FrozenMove(spread: sd, slope: b, steps: [])
        var y = [Double](repeating: 0, count: p)
        for sweep in 0..<sweeps {
            if let f = frozen { h = f.steps[sweep] }
            used?.pointee.steps.append(h)
            var acc = 0, evaluated = 0
            for i in 0..<n {
                for j in 0..<p { y[j] = reflect(x[i * p + j] + h * sd[j] * rng.normal(), lo, hi) }
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
        /// Spectra computed per proposal: the share of proposals that passed the delayed-acceptance
        /// screen (below 1 with it).
        @NullIfNil public var evaluated: Double?
        public var minStopEssFraction: Double
    }

    public var summary: Summary {
        Summary(samplers: samplers, meanSteps: meanSteps, maxSteps: maxSteps, acceptance: acceptanceRate,
                evaluated: evaluatedFraction, minStopEssFraction: minStopESS)
    }
}
