import Foundation
import RandomStreams
import TwoScaleCore

/// The reflected random-walk Metropolis–Hastings kernel and its tuning, written once for every sampler in
/// this module.
///
/// A proposal from x is `y = x + h·sd∘ξ`, ξ ~ N(0, I), folded into the box by reflection at its faces
/// (a symmetric proposal, so the uniform prior cancels in the acceptance ratio). `sd` is the particles'
/// spread per coordinate, clamped to `[10⁻³, 1]` times the box width; the step h starts at `2.38/√p`
/// (Roberts, Gelman & Gilks 1997) and is tuned after each sweep towards an acceptance rate of about 0.3.
enum RandomWalk {
    /// The first step h for p coordinates.
    static func initialStep(dimension p: Int) -> Double { 2.38 / Double(p).squareRoot() }

    /// The step after a sweep that accepted the share `rate` of its proposals: × 0.6 below 0.15, × 1.5
    /// (at most 4) above 0.45, else unchanged.
    static func adapted(_ h: Double, acceptance rate: Double) -> Double {
        if rate < 0.15 { return h * 0.6 }
        if rate > 0.45 { return Swift.min(h * 1.5, 4) }
        return h
    }

    /// A spread clamped to `[10⁻³, 1]` times the box width.
    static func clamped(_ sd: Double, width: Double) -> Double {
        Swift.min(width, Swift.max(1e-3 * width, sd))
    }

    /// The particles' per-coordinate variance (two passes).
    static func variances(_ x: [Double], particles n: Int, dimension p: Int) -> [Double] {
        (0..<p).map { j in
            var m = 0.0, q = 0.0
            for i in 0..<n { m += x[i * p + j] }
            m /= Double(n)
            for i in 0..<n { let d = x[i * p + j] - m; q += d * d }
            return q / Double(n)
        }
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

    /// `sweeps` sweeps of the kernel invariant for `π_s ∝ Π_i (1 + s r_i(x)) U(x)` over the particles of one
    /// `SMCUnit` (positions `x`, row-major; their roots, `ℓ_s` and screen statistics kept up to date).
    ///
    /// With a screen (`hNow`, the particles' `h`), each proposal y from x is first accepted with
    /// probability `min(1, e^{b(h(y) − h(x))})` and only then evaluated, and accepted with
    /// `min(1, e^{ℓ(y) − ℓ(x) − b(h(y) − h(x))})`: the delayed-acceptance kernel of Christen & Fox (2005)
    /// with the state-independent surrogate `e^{b h}`, reversible for `π_s` (the proposal is symmetric).
    /// b is the least-squares slope of ℓ on h over the particles as they enter the move.
    ///
    /// `frozen` replays fixed tuning (`FrozenSchedule`); `used` records the tuning this move used. With
    /// `proposals` (a pilot's fits) or `fitOwn` (a pilot: fits from its own halves), each sweep is followed by
    /// an independence sweep (`IndependenceMoves`; block by block on a unit wider than its `blockSize`).
    static func move(_ unit: SMCUnit, s: Double, x: inout [Double], roots: inout [[Double]], ell ellNow: inout [Double],
                     screen hNow: inout [Double], h: inout Double, sweeps: Int, rng: inout Xoshiro256,
                     diag: inout SMCDiagnostics, frozen: FrozenMove? = nil, proposals: [ProbitGaussian]? = nil, fitOwn: Bool = false,
                     used: UnsafeMutablePointer<FrozenMove>? = nil) throws {
        let n = roots.count, p = unit.dimension
        let lo = unit.box.lowerBound, hi = unit.box.upperBound, width = hi - lo
        // The proposals' scale per coordinate: the particles' spread, clamped.
        let variance = variances(x, particles: n, dimension: p)
        let sd = frozen?.spread ?? variance.map { clamped($0.squareRoot(), width: width) }
        let screen = hNow.isEmpty ? nil : unit.screen
        let b = frozen?.slope ?? (screen == nil ? 0 : screenSlope(h: hNow, ell: ellNow))
        let fits = frozen?.proposals ?? proposals ?? (fitOwn && IndependenceMoves.applies(particles: n)
            ? IndependenceMoves.fits(x, particles: n, dimension: p, lo: lo, hi: hi) : [])
        used?.pointee = FrozenMove(spread: sd, slope: b, steps: [], proposals: fits)
        let start = x
        var y = [Double](repeating: 0, count: p)
        var current = IndependenceMoves.WeightCache(particles: fits.isEmpty ? 0 : n)
        let cheap = IndependenceMoves.perCoordinateRoot(unit, screen: hNow) != nil
        let blocks = IndependenceMoves.blocks(dimension: p, size: IndependenceMoves.blockSize(fitted: fits.first?.count ?? 0,
                                                                                          perCoordinate: cheap))
        for sweep in 0..<sweeps {
            if let f = frozen { h = f.steps[sweep] }
            used?.pointee.steps.append(h)
            var acc = 0, evaluated = 0
            for i in 0..<n {
                for j in 0..<p { y[j] = reflect(x[i * p + j] + h * sd[j] * rng.normal(), lo, hi) }
                let r = try step(unit, s: s, particle: i, to: y, logProposalRatio: 0, screen: screen, slope: b, x: &x,
                                 roots: &roots, ell: &ellNow, screen: &hNow, rng: &rng)
                if r.evaluated { evaluated += 1 }
                if r.accepted {
                    acc += 1
                    if !fits.isEmpty { current.moved(i) }
                }
            }
            diag.proposals += n
            diag.accepted += acc
            diag.evaluated += evaluated
            h = adapted(h, acceptance: Double(acc) / Double(n))
            if !fits.isEmpty, blocks.count > 1 {
                try IndependenceMoves.blockedSweep(unit, s: s, fits: fits, blocks: blocks, slope: b, x: &x, roots: &roots,
                                                   ell: &ellNow, screen: &hNow, rng: &rng, diag: &diag)
            } else if !fits.isEmpty {
                try IndependenceMoves.sweep(unit, s: s, fits: fits, slope: b, x: &x, roots: &roots, ell: &ellNow,
                                            screen: &hNow, cache: &current, rng: &rng, diag: &diag)
            }
        }
        if let d = decorrelation(from: start, to: x, variances: variance, particles: n, dimension: p) {
            diag.minDecorrelation = Swift.min(diag.minDecorrelation ?? d, d)
        }
    }

    /// One Metropolis–Hastings proposal `y` for particle i under `π_s`, with `logProposalRatio`
    /// `log q(x | y) − log q(y | x)` (0 for a symmetric proposal). With a screen, delayed acceptance: first
    /// `min(1, e^{b(h(y) − h(x)) + logProposalRatio})`, and only then the eigenproblem and
    /// `min(1, e^{ℓ(y) − ℓ(x) − b(h(y) − h(x))})`; without, `min(1, e^{ℓ(y) − ℓ(x) + logProposalRatio})`. An
    /// accepted y replaces the particle's position, roots, `ℓ_s` and screen statistic.
    @inline(__always)
    static func step(_ unit: SMCUnit, s: Double, particle i: Int, to y: [Double], logProposalRatio dw: Double,
                     screen: (@Sendable ([Double]) throws -> Double)?, slope b: Double, x: inout [Double],
                     roots: inout [[Double]], ell ellNow: inout [Double], screen hNow: inout [Double],
                     rng: inout Xoshiro256) throws -> (evaluated: Bool, accepted: Bool) {
        var hy = 0.0, dh = 0.0
        if let screen {
            hy = try screen(y)
            dh = b * (hy - hNow[i])
            let first = dh + dw
            if first < 0, Foundation.log(rng.uniform()) >= first { return (false, false) }
        }
        let ry = try unit.roots(y)
        let ey = LogSpace.logDetSqrt(roots: ry, scale: s)
        let logA = screen == nil ? ey - ellNow[i] + dw : ey - ellNow[i] - dh
        guard rng.metropolisAccepts(logRatio: logA) else { return (true, false) }
        let p = y.count
        for j in 0..<p { x[i * p + j] = y[j] }
        roots[i] = ry
        ellNow[i] = ey
        if screen != nil { hNow[i] = hy }
        return (true, true)
    }

    /// How far a move took the particles: their mean squared displacement summed over coordinates, over
    /// twice their variance before the move (`variances` of `start`) summed the same way. Independent draws from
    /// the population's law have `E|x' − x|² = 2 Σ_j var_j`, so it is about 1 where the move forgot where it
    /// started and small where the particles stayed near their starts; nil where the particles did not vary.
    static func decorrelation(from start: [Double], to end: [Double], variances: [Double], particles n: Int, dimension p: Int) -> Double? {
        let spread = Double(n) * variances.reduce(0, +)
        guard spread > 0 else { return nil }
        var moved = 0.0
        for k in 0..<(n * p) { let e = end[k] - start[k]; moved += e * e }
        return moved / (2 * spread)
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
}
