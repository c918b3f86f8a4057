import Foundation
import RandomStreams
import TwoScaleCore

/// A particle system that a tempering run anneals: n particles whose target at scale s is
/// `π_s(x) ∝ e^{ℓ_s(x)} U(x)`, U the uniform prior on the box (`ℓ_0 = 0`).
///
/// The run (`Tempering.run`) owns the weights and the schedule; the system owns its particles, how they
/// are reordered after resampling, the `π_s`-invariant kernel that moves them, and what is collected at
/// each stop.
protocol TemperedSystem {
    /// n, the number of particles.
    var count: Int { get }
    /// `ℓ_s(x_i)`: the log of particle i's unnormalised target at scale s, relative to the prior.
    func logTarget(_ i: Int, at s: Double) -> Double
    /// Reorders the particles after resampling: the new particle i is the old particle `idx[i]`.
    mutating func resample(_ idx: [Int])
    /// Moves the particles by a kernel that leaves `π_s` invariant; `ell[i]` holds `ℓ_s(x_i)` on entry and
    /// must hold it for the moved particle on return.
    mutating func move(at s: Double, ell: inout [Double], rng: inout Xoshiro256) throws
    /// Collects what the system reports at a stop: the stop's `log Ẑ(s)` and the weights there.
    mutating func collect(stop s: Double, logZ: Double, weights: TemperingWeights)
    /// Called after each adaptive step, moved or not (for a frozen record of the schedule).
    mutating func stepped(at s: Double, moved: Bool)
    /// Called on reaching a stop, before `collect`: may move the weighted particles further by kernels that leave
    /// `π_s` invariant (their weights stay as they are), keeping `ell` as in `move`.
    mutating func settle(at s: Double, ell: inout [Double], rng: inout Xoshiro256) throws
}

extension TemperedSystem {
    mutating func stepped(at s: Double, moved: Bool) {}
    mutating func settle(at s: Double, ell: inout [Double], rng: inout Xoshiro256) throws {}
}

/// The weights of a tempered particle system between resamplings, and `log Ẑ` so far.
///
/// Reweighting from s to s' multiplies particle i's weight by `e^{ℓ_{s'}(x_i) − ℓ_s(x_i)}`; resampling
/// adds `log mean_i w_i` to `log Ẑ` and resets the weights (Del Moral, Doucet & Jasra 2006). At a scale
/// the weights stand at, `log Ẑ(s) = logZ + log mean_i w_i`.
struct TemperingWeights {
    /// Log weights since the last resampling.
    var logWeights: [Double]
    /// `ℓ_s(x_i)` at the current scale.
    var ell: [Double]
    /// `log Ẑ` up to the last resampling.
    var logZ = 0.0
    /// The current scale.
    var scale = 0.0

    init(count n: Int) {
        logWeights = [Double](repeating: 0, count: n)
        ell = logWeights
    }

    /// The weights' effective sample size if they were moved on to scale `s2`.
    func ess(at s2: Double, _ logTarget: (Int, Double) -> Double) -> Double {
        var l = logWeights
        for i in l.indices { l[i] += logTarget(i, s2) - ell[i] }
        return LogSpace.effectiveSampleSize(logWeights: l)
    }

    /// Moves the weights on to scale `s`.
    mutating func reweight(to s: Double, _ logTarget: (Int, Double) -> Double) {
        for i in logWeights.indices {
            let e = logTarget(i, s)
            logWeights[i] += e - ell[i]
            ell[i] = e
        }
        scale = s
    }

    /// Systematic resampling with one uniform: returns the ancestors, reorders `ell`, adds the step's
    /// `log mean w` to `logZ` and resets the weights.
    mutating func resample(u: Double) -> [Int] {
        logZ += LogSpace.logMeanExp(logWeights)
        let idx = Tempering.systematic(normalized, u: u)
        ell = idx.map { ell[$0] }
        logWeights = [Double](repeating: 0, count: logWeights.count)
        return idx
    }

    /// `log Ẑ` at the current scale.
    var stopLogZ: Double { logZ + LogSpace.logMeanExp(logWeights) }
    var normalized: [Double] { LogSpace.normalizedWeights(logWeights: logWeights) }
    var ess: Double { LogSpace.effectiveSampleSize(logWeights: logWeights) }
}

/// Where a tempering pass stands after a resample–move step: with the system and the generator, enough to
/// continue it (`Tempering.run`'s and `Tempering.reverse`'s `from`) to the same bytes.
struct TemperingCursor {
    /// The forward pass: the index of the stop it is heading for; the reverse pass: the ladder's scales done.
    var index: Int
    var weights: TemperingWeights
    /// The forward pass's resample–move steps so far.
    var steps: Int
    /// The reverse pass's `log Ẑ` at the stops passed so far.
    var out: [Double]

    func write(to w: inout SnapshotWriter) {
        w.int(index)
        w.int(steps)
        w.doubles(out)
        w.doubles(weights.logWeights)
        w.doubles(weights.ell)
        w.double(weights.logZ)
        w.double(weights.scale)
    }
}

extension TemperingCursor {
    init(from r: inout SnapshotReader, count n: Int) throws {
        (index, steps, out) = (try r.int(), try r.int(), try r.doubles())
        weights = TemperingWeights(count: n)
        (weights.logWeights, weights.ell) = (try r.doubles(), try r.doubles())
        (weights.logZ, weights.scale) = (try r.double(), try r.double())
        guard index >= 0, steps >= 0, weights.logWeights.count == n, weights.ell.count == n else { throw SnapshotReader.damaged(r.name) }
    }
}

/// Adaptive tempering, written once for every annealed sampler in this module (Del Moral, Doucet & Jasra
/// 2006; adaptive steps as in Jasra et al. 2011).
///
/// From scale s the next is the largest `s' ≤` (next stop) that keeps the ESS of the reweighted particles
/// at least `τ·n`; where the weights would fall below it (or the stop is not reached) the particles are
/// resampled (systematic) and moved at s'. Every stop is passed exactly, so one run gives `Ẑ` at all of
/// them.
enum Tempering {
    /// Runs `system` from s = 0 through the ascending `stops` with ESS fraction `essFraction`; returns the
    /// number of resample–move steps.
    /// With `cursor` (and `system` and `rng` as they were when `saved` was handed it), continues that run instead;
    /// `saved` is handed the cursor, the system and the generator after every resample–move step, and `settled`
    /// after each stop's `settle` and `collect` (a cursor heading for the next stop; past the last, the run is done).
    static func run<S: TemperedSystem>(_ system: inout S, stops: [Double], essFraction: Double,
                                       rng: inout Xoshiro256, from cursor: TemperingCursor? = nil,
                                       saved: ((TemperingCursor, S, Xoshiro256) throws -> Void)? = nil,
                                       settled: ((TemperingCursor, S, Xoshiro256) throws -> Void)? = nil) throws -> Int {
        let threshold = essFraction * Double(system.count)
        var weights = cursor?.weights ?? TemperingWeights(count: system.count)
        var steps = cursor?.steps ?? 0
        for (t, target) in stops.enumerated() where t >= cursor?.index ?? 0 {
            while weights.scale < target {
                let next = nextScale(from: weights.scale, to: target, threshold: threshold) { s2 in
                    weights.ess(at: s2) { system.logTarget($0, at: $1) }
                }
                weights.reweight(to: next) { system.logTarget($0, at: $1) }
                if next < target || weights.ess < threshold {
                    system.resample(weights.resample(u: rng.uniform()))
                    try system.move(at: next, ell: &weights.ell, rng: &rng)
                    system.stepped(at: next, moved: true)
                    steps += 1
                    try saved?(TemperingCursor(index: t, weights: weights, steps: steps, out: []), system, rng)
                } else {
                    system.stepped(at: next, moved: false)
                }
            }
            try system.settle(at: target, ell: &weights.ell, rng: &rng)
            system.collect(stop: target, logZ: weights.stopLogZ, weights: weights)
            try settled?(TemperingCursor(index: t + 1, weights: weights, steps: steps, out: []), system, rng)
        }
        return steps
    }

    /// The reverse pass of bidirectional Monte Carlo (Grosse, Ghahramani & Adams 2015): `system`'s particles,
    /// taken as draws of `π_top`, are annealed back down the descending scales of `schedule` (a forward run's,
    /// reversed) and `stops` (each below `top`), reweighted by `e^{ℓ_{s'} − ℓ_s}` and then resampled and moved at
    /// every scale above 0. Returns at each stop `log Ẑ` of `Z(stop)/Z(top)`, in the order of `stops`: with the
    /// schedule fixed, the product of the mean weights is unbiased for it where the particles at `top` are
    /// draws of `π_top`; a stop at 0 (`Z(0) = 1`) estimates `1/Z(top)`. (An adaptive schedule, chosen from the
    /// same particles, is not: where they sit in the narrow target's bulk the weights look even and the steps
    /// come out long.)
    /// `cursor` and `saved` as in `run`.
    static func reverse<S: TemperedSystem>(_ system: inout S, from top: Double, schedule: [Double], stops: [Double],
                                           rng: inout Xoshiro256, cursor: TemperingCursor? = nil,
                                           saved: ((TemperingCursor, S, Xoshiro256) throws -> Void)? = nil) throws -> [Double] {
        precondition(zip([top] + stops, stops).allSatisfy { $0 > $1 } && (stops.last ?? 0) >= 0)
        let ladder = reverseLadder(from: top, schedule: schedule, stops: stops)
        var weights = TemperingWeights(count: system.count)
        weights.scale = top
        var out: [Double] = []
        if let cursor {
            (weights, out) = (cursor.weights, cursor.out)
        } else {
            weights.ell = (0..<system.count).map { system.logTarget($0, at: top) }
        }
        for (k, s) in ladder.enumerated() where k >= cursor?.index ?? 0 {
            weights.reweight(to: s) { system.logTarget($0, at: $1) }
            if stops.contains(s) { out.append(weights.stopLogZ) }
            guard s > 0 else { continue }
            system.resample(weights.resample(u: rng.uniform()))
            try system.move(at: s, ell: &weights.ell, rng: &rng)
            try saved?(TemperingCursor(index: k + 1, weights: weights, steps: 0, out: out), system, rng)
        }
        return out
    }

    /// The descending scales `reverse` visits below `top`: the schedule's and the stops'.
    static func reverseLadder(from top: Double, schedule: [Double], stops: [Double]) -> [Double] {
        Set(schedule.filter { $0 >= 0 && $0 < top } + stops).sorted(by: >)
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

    /// Systematic resampling: `count` indices (by default as many as the weights) from normalised weights
    /// with one uniform.
    static func systematic(_ w: [Double], u: Double, count: Int? = nil) -> [Int] {
        let n = count ?? w.count
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
    static func pick(_ w: [Double], u: Double) -> Int {
        var c = 0.0
        for (i, v) in w.enumerated() {
            c += v
            if u < c { return i }
        }
        return w.count - 1
    }
}
