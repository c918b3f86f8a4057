import Foundation
import RandomStreams
import TwoScaleCore

/// A diagonal Gaussian in probit coordinates `u_j = Φ⁻¹((x_j − lo)/(hi − lo))`, where the uniform prior on
/// the box is the standard normal: the proposal of the independence kernel (`IndependenceMoves`).
public struct ProbitGaussian: Sendable, Equatable {
    public var mean: [Double]
    public var sd: [Double]
    /// How many particles it was fitted to (0: not recorded).
    public var count: Int = 0
}

/// The independence Metropolis–Hastings sweep that follows each random-walk sweep when
/// `SMCSettings.independenceMoves` is on (`Setting.independenceMoves`; docs/ESTIMATORS.md §2).
///
/// Particle i proposes `v ~ N(m, diag σ²)` in probit coordinates, a Gaussian fitted to one half of a pilot
/// replicate's particles at its step (`AnnealedSMC.run`; even particles the odd half's, odd the even's), and
/// accepts `y = lo + (hi − lo)·Φ(v)` with `min(1, e^{ℓ(y) − ℓ(x)} · w(v)/w(u))`, `w = φ/q` (the target in
/// probit coordinates is `e^ℓ·φ`). With a screen the first stage uses `e^{b h}·φ`, the second
/// `e^{ℓ − b h}`, as in the random walk (Christen & Fox 2005). A proposal that does not depend on the
/// particle it moves leaves `π_s` invariant; a frozen replay reuses the pilot's fits.
///
/// A unit of more than `maxBlock` coordinates is proposed block by block (`blocks`): each particle draws one
/// block's coordinates from the fit and keeps the others, and the acceptance ratio carries that block's
/// `w(v)/w(u)` only. Each block's move leaves `π_s` invariant (a Metropolis-within-Gibbs step), so the sweep
/// does too; the fit's mismatch, which adds up over the coordinates of a proposal, then stops at a block's.
/// A Gaussian fitted to m draws misses by about 1/m nats per coordinate, so on a unit whose roots are each one
/// coordinate's (a block's evaluation costs its coordinates alone) a block is also at most m/2 coordinates.
enum IndependenceMoves {
    /// Whether a move of n particles can fit its two halves (at least 2 particles each).
    static func applies(particles n: Int) -> Bool { n >= 4 }

    /// The most coordinates one proposal redraws.
    static let maxBlock = 100

    /// The most coordinates one proposal from a fit to m particles redraws: `maxBlock`, and where blocks
    /// are cheap (`perCoordinate`: a unit whose roots are each one coordinate's) at most m/2, at least 1.
    static func blockSize(fitted m: Int, perCoordinate: Bool) -> Int {
        perCoordinate && m > 0 ? Swift.max(1, Swift.min(maxBlock, m / 2)) : maxBlock
    }

    /// The root of one coordinate where a block's evaluation may sum over the block alone: the unit's
    /// `coordinateRoot`, unless a screen is in use (`hNow` not empty).
    static func perCoordinateRoot(_ unit: SMCUnit, screen hNow: [Double]) -> (@Sendable (Double) -> Double)? {
        hNow.isEmpty || unit.screen == nil ? unit.coordinateRoot : nil
    }

    /// The blocks of a sweep over p coordinates, proposals of at most b coordinates (`blockSize`): the whole
    /// vector up to b, else ⌈p / b⌉ consecutive blocks whose sizes differ by at most one.
    static func blocks(dimension p: Int, size b: Int = maxBlock) -> [Range<Int>] {
        let count = (p + b - 1) / b
        guard count > 1 else { return [0..<p] }
        let base = p / count, extra = p % count
        var out: [Range<Int>] = [], start = 0
        for k in 0..<count {
            let end = start + base + (k < extra ? 1 : 0)
            out.append(start..<end)
            start = end
        }
        return out
    }

    /// The two fits: index 0 from the even particles, 1 from the odd ones.
    static func fits(_ x: [Double], particles n: Int, dimension p: Int, lo: Double, hi: Double) -> [ProbitGaussian] {
        (0..<2).map { half in
            var mean = [Double](repeating: 0, count: p), sq = [Double](repeating: 0, count: p)
            var count = 0
            var i = half
            while i < n {
                for j in 0..<p {
                    let u = probit(x[i * p + j], lo, hi)
                    mean[j] += u
                    sq[j] += u * u
                }
                count += 1
                i += 2
            }
            let c = Double(count)
            var sd = [Double](repeating: 1, count: p)
            for j in 0..<p {
                mean[j] /= c
                let v = Swift.max(0, sq[j] / c - mean[j] * mean[j])
                sd[j] = Swift.max(0.05, v.squareRoot())
            }
            return ProbitGaussian(mean: mean, sd: sd, count: count)
        }
    }

    /// `Φ⁻¹((x − lo)/(hi − lo))`, the cell kept off the faces.
    @inline(__always)
    static func probit(_ x: Double, _ lo: Double, _ hi: Double) -> Double {
        let t = Swift.min(1 - 1e-15, Swift.max(1e-15, (x - lo) / (hi - lo)))
        return StandardNormal.quantile(t)
    }

    /// `log φ(u) − log q(u)` for the proposal g, summed over coordinates (`logSd`: `log σ_j` of g).
    @inline(__always)
    static func logWeight(_ u: [Double], _ g: ProbitGaussian, logSd: [Double]) -> Double {
        var s = 0.0
        for j in u.indices {
            let z = (u[j] - g.mean[j]) / g.sd[j]
            s += -0.5 * u[j] * u[j] + 0.5 * z * z + logSd[j]
        }
        return s
    }

    /// `log w(u_i)` of each particle's current position under its proposal, kept across the sweeps of one move
    /// (the proposals are fixed there): computed when a sweep needs it and dropped when the particle moves, so
    /// an unmoved particle costs no quantiles.
    struct WeightCache {
        private var weights: [Double]
        private var known: [Bool]

        init(particles n: Int) {
            weights = [Double](repeating: 0, count: n)
            known = [Bool](repeating: false, count: n)
        }

        /// Particle i has moved.
        @inline(__always)
        mutating func moved(_ i: Int) { known[i] = false }

        /// `log w(u_i)`, `u_ij = probit(x_ij)`, under g (`u`: scratch of p coordinates).
        mutating func logWeight(_ i: Int, x: [Double], lo: Double, hi: Double, _ g: ProbitGaussian, logSd: [Double],
                                scratch u: inout [Double]) -> Double {
            if !known[i] {
                let p = u.count
                for j in 0..<p { u[j] = probit(x[i * p + j], lo, hi) }
                weights[i] = IndependenceMoves.logWeight(u, g, logSd: logSd)
                known[i] = true
            }
            return weights[i]
        }
    }

    /// One independence sweep of a wide unit: each particle proposes, block after block, a fresh draw of that
    /// block's coordinates from its half's fit, the others kept, and accepts with
    /// `min(1, e^{ℓ(y) − ℓ(x)} Π_{j ∈ block} w_j(v_j)/w_j(u_j))` (screened as in `sweep`). On a unit with a
    /// `coordinateRoot` and no screen, `ℓ(y) − ℓ(x)` is summed over the block's coordinates alone, and a
    /// particle's `ℓ_s` is recomputed from its roots once, after its blocks.
    static func blockedSweep(_ unit: SMCUnit, s: Double, fits: [ProbitGaussian], blocks: [Range<Int>], slope b: Double,
                             x: inout [Double], roots: inout [[Double]], ell ellNow: inout [Double],
                             screen hNow: inout [Double], rng: inout Xoshiro256, diag: inout SMCDiagnostics) throws {
        let n = roots.count, p = unit.dimension
        let lo = unit.box.lowerBound, hi = unit.box.upperBound, width = hi - lo
        let screen = hNow.isEmpty ? nil : unit.screen
        let perCoordinate = perCoordinateRoot(unit, screen: hNow)
        var y = [Double](repeating: 0, count: p)
        var acc = 0, evaluated = 0
        for i in 0..<n {
            let g = fits[1 - i % 2]
            for j in 0..<p { y[j] = x[i * p + j] }
            var moved = false
            for block in blocks {
                // log w(v) − log w(u) over the block, w = φ/q; the fit's log σ_j cancels.
                var dw = 0.0
                for j in block {
                    let v = g.mean[j] + g.sd[j] * rng.normal()
                    y[j] = Swift.min(hi, Swift.max(lo, lo + width * StandardNormal.cdf(v)))
                    let u = probit(x[i * p + j], lo, hi)
                    let zv = (v - g.mean[j]) / g.sd[j], zu = (u - g.mean[j]) / g.sd[j]
                    dw += 0.5 * (zv * zv - v * v) - 0.5 * (zu * zu - u * u)
                }
                if let f = perCoordinate {
                    evaluated += 1
                    var logA = dw
                    for j in block {
                        logA += LogSpace.log1pProduct(s, f(y[j])) - LogSpace.log1pProduct(s, roots[i][j])
                    }
                    if rng.metropolisAccepts(logRatio: logA) {
                        acc += 1
                        moved = true
                        for j in block {
                            x[i * p + j] = y[j]
                            roots[i][j] = f(y[j])
                        }
                    } else {
                        for j in block { y[j] = x[i * p + j] }
                    }
                    continue
                }
                let r = try RandomWalk.step(unit, s: s, particle: i, to: y, logProposalRatio: dw, screen: screen, slope: b,
                                            x: &x, roots: &roots, ell: &ellNow, screen: &hNow, rng: &rng)
                if r.evaluated { evaluated += 1 }
                if r.accepted { acc += 1 } else { for j in block { y[j] = x[i * p + j] } }
            }
            if moved { ellNow[i] = LogSpace.logDetSqrt(roots: roots[i], scale: s) }
        }
        diag.proposals += n * blocks.count
        diag.accepted += acc
        diag.evaluated += evaluated
    }

    /// One independence sweep over the particles (positions, roots, `ℓ_s`, screen statistics kept up to date;
    /// `cache` holds their current weights under `fits` and is told which particles moved).
    static func sweep(_ unit: SMCUnit, s: Double, fits: [ProbitGaussian], slope b: Double, x: inout [Double],
                      roots: inout [[Double]], ell ellNow: inout [Double], screen hNow: inout [Double],
                      cache: inout WeightCache, rng: inout Xoshiro256, diag: inout SMCDiagnostics) throws {
        let n = roots.count, p = unit.dimension
        let lo = unit.box.lowerBound, hi = unit.box.upperBound, width = hi - lo
        let screen = hNow.isEmpty ? nil : unit.screen
        let logSd = fits.map { $0.sd.map { Foundation.log($0) } }
        var y = [Double](repeating: 0, count: p), v = [Double](repeating: 0, count: p), u = [Double](repeating: 0, count: p)
        var acc = 0, evaluated = 0
        for i in 0..<n {
            let half = 1 - i % 2, g = fits[half]
            for j in 0..<p {
                v[j] = g.mean[j] + g.sd[j] * rng.normal()
                y[j] = Swift.min(hi, Swift.max(lo, lo + width * StandardNormal.cdf(v[j])))
            }
            let wu = cache.logWeight(i, x: x, lo: lo, hi: hi, g, logSd: logSd[half], scratch: &u)
            // In probit coordinates the target is e^ℓ·φ and the proposal q: the ratio w(v)/w(u), w = φ/q.
            let r = try RandomWalk.step(unit, s: s, particle: i, to: y, logProposalRatio: logWeight(v, g, logSd: logSd[half]) - wu,
                                        screen: screen, slope: b, x: &x, roots: &roots, ell: &ellNow, screen: &hNow, rng: &rng)
            if r.evaluated { evaluated += 1 }
            if r.accepted { acc += 1; cache.moved(i) }
        }
        diag.proposals += n
        diag.accepted += acc
        diag.evaluated += evaluated
    }
}
