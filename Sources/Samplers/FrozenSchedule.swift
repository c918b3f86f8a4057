import Foundation
import RandomStreams
import TwoScaleCore

/// One Metropolis–Hastings move of the random-walk kernel with every tuning fixed: the proposal's
/// per-coordinate spread, the screen's slope b, and the step h of each sweep.
public struct FrozenMove: Sendable, Equatable {
    public var spread: [Double]
    public var slope: Double
    public var steps: [Double]
    /// The independence kernel's two fits (`IndependenceMoves`; empty: random-walk sweeps only).
    public var proposals: [ProbitGaussian] = []
}

/// One step of an annealed SMC sampler: the scale reached, and the resampling and move made there
/// (nil: the weights were kept).
public struct FrozenStep: Sendable, Equatable {
    public var scale: Double
    public var move: FrozenMove?
}

/// An annealed SMC sampler's whole schedule, taken from an adaptive pilot run and then replayed as a
/// fixed sequence of reweighting, resampling and π_s-invariant kernels (docs/METHOD.md §19).
///
/// The adaptive sampler chooses its scales, resampling times and proposal scales from its own
/// particles, which biases its `Ẑ` slightly. A replay of a fixed schedule is a standard SMC sampler with
/// systematic (unbiased) resampling and Metropolis–Hastings kernels that leave each `π_s` invariant, so
/// its `Ẑ(s)` at every scale of the schedule is an unbiased estimate of `Z(s) = E_U[e^{ℓ_s}]` (Del Moral
/// 2004): a positive unbiased estimate, to which Markov's inequality applies, `P(Ẑ ≥ Z/δ) ≤ δ`.
public struct FrozenSchedule: Sendable, Equatable {
    public var steps: [FrozenStep]

    /// The schedule of one adaptive replicate of `unit` through `stops` (the pilot's own estimate is not used).
    public static func pilot(_ unit: SMCUnit, stops: [Double], settings: SMCSettings, seed: UInt64, stream: [UInt64]) throws -> FrozenSchedule {
        var rng = Xoshiro256(seed: seed, stream: stream)
        let r = try AnnealedSMC.replicate(unit, stops: stops, settings: settings, rng: &rng, keep: false, recordSteps: true)
        return FrozenSchedule(steps: r.frozen)
    }

    /// `log Ẑ(s)` at each of `stops` (each one a scale of the schedule) from a replay with `particles`
    /// particles on the stream given.
    public func replay(_ unit: SMCUnit, stops: [Double], particles n: Int, seed: UInt64, stream: [UInt64]) throws -> [Double] {
        try replayKeeping(unit, stops: stops, particles: n, seed: seed, stream: stream).logZ
    }

    /// `replay`, keeping the weighted population at each stop too: `Ẑ(s)` times its weighted particles is
    /// an unbiased estimate of the unnormalised measure `e^{ℓ_s} U`, so a draw from it carries the
    /// unbiasedness on to a later stage.
    public func replayKeeping(_ unit: SMCUnit, stops: [Double], particles n: Int, seed: UInt64,
                              stream: [UInt64]) throws -> (logZ: [Double], populations: [SMCPopulation]) {
        var rng = Xoshiro256(seed: seed, stream: stream)
        let p = unit.dimension
        let lo = unit.box.lowerBound, hi = unit.box.upperBound
        var x = [Double](repeating: 0, count: n * p)
        for i in x.indices { x[i] = rng.uniform(lo, hi) }
        var roots = try (0..<n).map { i in try unit.roots(Array(x[(i * p)..<((i + 1) * p)])) }
        var hNow = try unit.screen.map { f in try (0..<n).map { i in try f(Array(x[(i * p)..<((i + 1) * p)])) } } ?? []
        var weights = TemperingWeights(count: n)
        var h = 0.0
        var diag = SMCDiagnostics()
        var out: [Double] = []
        var populations: [SMCPopulation] = []
        var next = 0
        for step in steps {
            weights.reweight(to: step.scale) { LogSpace.logDetSqrt(roots: roots[$0], scale: $1) }
            if let move = step.move {
                let idx = weights.resample(u: rng.uniform())
                x = idx.flatMap { x[($0 * p)..<(($0 + 1) * p)] }
                roots = idx.map { roots[$0] }
                if !hNow.isEmpty { hNow = idx.map { hNow[$0] } }
                try RandomWalk.move(unit, s: step.scale, x: &x, roots: &roots, ell: &weights.ell, screen: &hNow, h: &h,
                                    sweeps: move.steps.count, rng: &rng, diag: &diag, frozen: move)
            }
            while next < stops.count, stops[next] == step.scale {
                out.append(weights.stopLogZ)
                populations.append(SMCPopulation(x: x, weights: weights.normalized))
                next += 1
            }
        }
        guard out.count == stops.count else {
            throw TwoScaleError.failure("internal error: the frozen schedule does not pass through every scale asked for")
        }
        return (out, populations)
    }
}
