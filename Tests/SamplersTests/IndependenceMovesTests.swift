import Foundation
import RandomStreams
@testable import Samplers
import Testing
import TwoScaleCore

/// The independence kernel (`IndependenceMoves`, `SMCSettings.independenceMoves`): its proposal weight against
/// its closed form, its invariance for an exact target, and the annealed sampler with it on the 50-coordinate
/// product unit where the random walk alone is low (`WideUnitShortfallTests`).
@Suite struct IndependenceMovesTests {
    /// `log φ(u) − log q(u)` by hand for a two-coordinate proposal.
    @Test func proposalWeightByHand() {
        let g = ProbitGaussian(mean: [0.5, -1], sd: [2, 0.25])
        let u = [1.5, -0.5]
        let logPhi = -0.5 * (1.5 * 1.5 + 0.5 * 0.5)
        let logQ = -0.5 * (0.25 + 4) - Foundation.log(2) - Foundation.log(0.25)  // the 2π terms cancel
        #expect(Swift.abs(IndependenceMoves.logWeight(u, g, logSd: g.sd.map { Foundation.log($0) }) - (logPhi - logQ)) < 1e-14)
    }

    /// Coordinate j of `π_s ∝ Π_j (1 + s x_j)` on [0, 1]: the inverse of its CDF `(x + s x²/2)/(1 + s/2)`.
    static func exactDraw(_ s: Double, _ u: Double) -> Double {
        let c = u * (1 + s / 2)
        return (-1 + (1 + 2 * s * c).squareRoot()) / s
    }

    /// The product unit of p coordinates (roots x), screened by the roots' sum or not, its roots declared
    /// per coordinate or not.
    static func productUnit(dimension p: Int, screened: Bool, perCoordinate: Bool = false) -> SMCUnit {
        let sum: @Sendable ([Double]) throws -> Double = { $0.reduce(0, +) }
        let root: @Sendable (Double) -> Double = { $0 }
        return SMCUnit(dimension: p, box: 0...1, roots: { $0 }, screen: screened ? sum : nil,
                       coordinateRoot: perCoordinate ? root : nil)
    }

    /// n particles of the product unit drawn exactly from `π_s`: positions, roots, `ℓ_s` and (screened) h.
    static func exactParticles(_ unit: SMCUnit, particles n: Int, s: Double, rng: inout Xoshiro256)
        -> (x: [Double], roots: [[Double]], ell: [Double], h: [Double]) {
        let p = unit.dimension
        let x = (0..<(n * p)).map { _ in exactDraw(s, rng.uniform()) }
        let roots = (0..<n).map { i in Array(x[(i * p)..<((i + 1) * p)]) }
        return (x, roots, roots.map { LogSpace.logDetSqrt(roots: $0, scale: s) }, unit.screen == nil ? [] : roots.map { $0.reduce(0, +) })
    }

    /// Particles drawn exactly from `π_s` (product unit, roots x) stay distributed as `π_s` under independence
    /// sweeps with a proposal far from it, with and without a screen, alone or after each random-walk sweep of
    /// a move (whose accepted steps must drop the particles' cached weights): each coordinate's mean stays at
    /// `E x = (1/2 + s/3)/(1 + s/2)` and its second moment at `(1/3 + s/4)/(1 + s/2)`. Without the proposal's
    /// density ratio, or with a stale one, the particles drift towards the proposal's mean (Φ(1) ≈ 0.84 here).
    @Test(arguments: [(false, false), (true, false), (false, true)])
    func sweepsKeepAnExactTarget(screened: Bool, withRandomWalk: Bool) throws {
        // Enough particles that a stale cached weight (a move not passed on to the independence sweep's cache)
        // fails by a clear margin.
        let p = 3, n = 24_000, s = 4.0
        let unit = Self.productUnit(dimension: p, screened: screened)
        var rng = Xoshiro256(seed: 5, stream: [1])
        var (x, roots, ell, h) = Self.exactParticles(unit, particles: n, s: s, rng: &rng)
        let far = ProbitGaussian(mean: [1, 1, 1], sd: [0.5, 0.5, 0.5])
        var diag = SMCDiagnostics()
        if withRandomWalk {
            var step = 1.0
            try RandomWalk.move(unit, s: s, x: &x, roots: &roots, ell: &ell, screen: &h, h: &step, sweeps: 10, rng: &rng,
                                diag: &diag, proposals: [far, far])
        } else {
            var cache = IndependenceMoves.WeightCache(particles: n)
            for _ in 0..<10 {
                try IndependenceMoves.sweep(unit, s: s, fits: [far, far], slope: screened ? 1.5 : 0, x: &x, roots: &roots, ell: &ell,
                                            screen: &h, cache: &cache, rng: &rng, diag: &diag)
            }
        }
        #expect(diag.accepted > n, "the proposals must be accepted often enough to test anything: \(diag.accepted)")
        Self.expectExactLaw(x, roots: roots, ell: ell, dimension: p, s: s)
    }

    /// Each coordinate's first two moments at their values under `π_s` (`E x = (1/2 + s/3)/(1 + s/2)`,
    /// `E x² = (1/3 + s/4)/(1 + s/2)`), within 5 standard errors of independent draws (the sweeps correlate the
    /// particles a little), and every particle's roots and `ℓ_s` its position's.
    static func expectExactLaw(_ x: [Double], roots: [[Double]], ell: [Double], dimension p: Int, s: Double) {
        let n = roots.count
        let m1 = (0.5 + s / 3) / (1 + s / 2), m2 = (1.0 / 3 + s / 4) / (1 + s / 2)
        let sd1 = (m2 - m1 * m1).squareRoot()
        for j in 0..<p {
            let xs = (0..<n).map { x[$0 * p + j] }
            let mean = xs.reduce(0, +) / Double(n)
            let second = xs.map { $0 * $0 }.reduce(0, +) / Double(n)
            #expect(Swift.abs(mean - m1) < 5 * sd1 / Double(n).squareRoot(), "coordinate \(j): mean \(mean), exact \(m1)")
            #expect(Swift.abs(second - m2) < 5 * 0.3 / Double(n).squareRoot(), "coordinate \(j): E x² \(second), exact \(m2)")
        }
        #expect(zip(roots, ell).allSatisfy { Swift.abs(LogSpace.logDetSqrt(roots: $0.0, scale: s) - $0.1) < 1e-12 })
        #expect((0..<n).allSatisfy { i in roots[i] == Array(x[(i * p)..<((i + 1) * p)]) })
    }

    /// A unit of up to `maxBlock` coordinates is proposed whole; a wider one in ⌈p / maxBlock⌉ consecutive
    /// blocks that cover it once, their sizes differing by at most one.
    @Test(arguments: [1, 99, 100, 101, 119, 785, 1000])
    func blocksCoverTheUnit(p: Int) {
        let blocks = IndependenceMoves.blocks(dimension: p)
        let count = (p + IndependenceMoves.maxBlock - 1) / IndependenceMoves.maxBlock
        #expect(blocks.count == count)
        #expect(blocks.first?.lowerBound == 0 && blocks.last?.upperBound == p)
        #expect(zip(blocks, blocks.dropFirst()).allSatisfy { $0.0.upperBound == $0.1.lowerBound })
        let sizes = blocks.map(\.count)
        #expect(sizes.max()! <= IndependenceMoves.maxBlock && sizes.max()! - sizes.min()! <= 1, "\(sizes)")
    }

    /// Exact draws from `π_s` stay distributed as `π_s` under blocked independence sweeps (blocks of 2 and 3
    /// of 5 coordinates, a proposal far from the target, with and without a screen, with roots evaluated per
    /// coordinate or whole): each coordinate's first two moments stay at their exact values, and each
    /// particle's roots and `ℓ_s` are its position's. Without the block's proposal ratio the particles drift
    /// towards the proposal (each coordinate's mean by about 0.22).
    @Test(arguments: [(false, false), (true, false), (false, true)])
    func blockedSweepsKeepAnExactTarget(screened: Bool, perCoordinate: Bool) throws {
        let p = 5, n = 24_000, s = 4.0
        let unit = Self.productUnit(dimension: p, screened: screened, perCoordinate: perCoordinate)
        var rng = Xoshiro256(seed: 6, stream: [1])
        var (x, roots, ell, h) = Self.exactParticles(unit, particles: n, s: s, rng: &rng)
        let far = ProbitGaussian(mean: [1, 1, 1, 1, 1], sd: [0.5, 0.5, 0.5, 0.5, 0.5])
        var diag = SMCDiagnostics()
        for _ in 0..<10 {
            try IndependenceMoves.blockedSweep(unit, s: s, fits: [far, far], blocks: [0..<2, 2..<5], slope: screened ? 1.5 : 0,
                                               x: &x, roots: &roots, ell: &ell, screen: &h, rng: &rng, diag: &diag)
        }
        #expect(diag.proposals == 10 * 2 * n)
        #expect(diag.accepted > n, "the proposals must be accepted often enough to test anything: \(diag.accepted)")
        Self.expectExactLaw(x, roots: roots, ell: ell, dimension: p, s: s)
    }

    /// A blocked sweep that sums `ℓ(y) − ℓ(x)` over a block's coordinates (`SMCUnit.coordinateRoot`) is the
    /// sweep that evaluates the whole unit, to the bit: the same positions, roots, `ℓ_s` and counts from the
    /// same start and stream (250 coordinates in 3 blocks, roots `c·x` as a layered toy's later stage).
    @Test func perCoordinateRootsAreTheWholeEvaluation() throws {
        let p = 250, n = 64, s = 17.0, c = 1.3
        let whole = SMCUnit(dimension: p, box: 0...1, roots: { $0.map { c * $0 } })
        var fast = whole
        fast.coordinateRoot = { c * $0 }
        var rng = Xoshiro256(seed: 9, stream: [2])
        let x0 = (0..<(n * p)).map { _ in Self.exactDraw(s * c, rng.uniform()) }
        let roots0 = (0..<n).map { i in x0[(i * p)..<((i + 1) * p)].map { c * $0 } }
        let ell0 = roots0.map { LogSpace.logDetSqrt(roots: $0, scale: s) }
        let fit = IndependenceMoves.fits(x0, particles: n, dimension: p, lo: 0, hi: 1)
        let blocks = IndependenceMoves.blocks(dimension: p)
        #expect(blocks.count == 3)
        func run(_ unit: SMCUnit) throws -> (x: [Double], roots: [[Double]], ell: [Double], diag: SMCDiagnostics) {
            var (x, roots, ell, h) = (x0, roots0, ell0, [Double]())
            var r = Xoshiro256(seed: 11, stream: [3])
            var diag = SMCDiagnostics()
            for _ in 0..<4 {
                try IndependenceMoves.blockedSweep(unit, s: s, fits: fit, blocks: blocks, slope: 0, x: &x, roots: &roots,
                                                   ell: &ell, screen: &h, rng: &r, diag: &diag)
            }
            return (x, roots, ell, diag)
        }
        let a = try run(whole), b = try run(fast)
        #expect(a.diag.accepted > n / 2, "the proposals must be accepted often enough to test anything: \(a.diag.accepted)")
        #expect(a.x == b.x && a.roots == b.roots && a.ell == b.ell)
        #expect(a.diag.proposals == b.diag.proposals && a.diag.accepted == b.diag.accepted && a.diag.evaluated == b.diag.evaluated)
    }

    /// A unit of 300 coordinates (`Z = (1 + s/2)^300`, s = 17) at the islands' settings (160 particles per
    /// replicate, 2 replicates, ESS fraction 0.8, 4 sweeps): with blocked independence sweeps the bias-corrected
    /// `log Ẑ` meets the exact value over 3 seeds, where the random walk alone is several nats low.
    @Test func blockedSweepsMeetAWideUnit() throws {
        let p = 300, s = 17.0
        #expect(IndependenceMoves.blocks(dimension: p).count == 3)
        let unit = SMCUnit(dimension: p, box: 0...1, roots: { $0 })
        let exact = Double(p) * Foundation.log1p(s / 2)
        func errors(independence: Bool) throws -> [Double] {
            let settings = try SMCSettings(particles: 160, replicates: 2, essFraction: 0.8, moves: 4, independenceMoves: independence)
            return try (1...3).map { seed in
                let c = try AnnealedSMC.run(unit, stops: [s], settings: settings, seed: UInt64(seed), stream: [8]).combined(0)
                return LogEstimate.corrected(logZ: c.logZ, relVar: c.relVar).value - exact
            }
        }
        let blocked = try errors(independence: true), walk = try errors(independence: false)
        #expect(blocked.allSatisfy { Swift.abs($0) < 1 }, "blocked: log Ẑ − log Z \(blocked)")
        #expect(walk.allSatisfy { $0 < -3 }, "random walk alone: log Ẑ − log Z \(walk)")
    }

    /// The annealed sampler with independence sweeps on the 50-coordinate product unit (`Z = (1 + s/2)^50`,
    /// s = 17; stage 1's 160 particles per replicate and 8 replicates, 10 sweeps): the bias-corrected
    /// `log Ẑ` meets the exact value within two standard errors over 10 seeds, where the random walk alone
    /// is low at twice the sweeps (`WideUnitShortfallTests`), and its moves decorrelate past the check.
    @Test func meetsTheExactProductUnit() throws {
        let p = 50, s = 17.0
        let unit = SMCUnit(dimension: p, box: 0...1, roots: { $0 })
        let exact = Double(p) * Foundation.log1p(s / 2)
        let settings = try SMCSettings(particles: 160, replicates: 8, essFraction: 0.8, moves: 10, independenceMoves: true)
        var errors: [Double] = [], decorrelations: [Double] = []
        for seed in 1...10 {
            let est = try AnnealedSMC.run(unit, stops: [s], settings: settings, seed: UInt64(seed), stream: [7])
            decorrelations.append(try #require(est.diagnostics.minDecorrelation))
            let c = est.combined(0)
            errors.append(LogEstimate.corrected(logZ: c.logZ, relVar: c.relVar).value - exact)
        }
        let mean = errors.reduce(0, +) / 10
        let sd = (errors.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / 9).squareRoot()
        #expect(Swift.abs(mean) < 2 * sd / 10.0.squareRoot() + 0.01, "errors \(errors)")
        #expect(decorrelations.allSatisfy { $0 >= ReportedInterval.minimumDecorrelation }, "\(decorrelations)")
    }

    /// Each replicate's proposals come from a pilot on a stream of its own: replicates run apart and joined
    /// (as stage 1 runs them, one item each) are the run of all of them, to the bit.
    @Test func replicatesRunApartAreTheSameRun() throws {
        let unit = SMCUnit(dimension: 6, box: 0...1, roots: { $0 })
        let settings = try SMCSettings(particles: 40, replicates: 4, essFraction: 0.8, moves: 3, independenceMoves: true)
        let whole = try AnnealedSMC.run(unit, stops: [2, 9], settings: settings, seed: 3, stream: [1, 2])
        let parts = try (0..<4).map { r in
            try AnnealedSMC.run(unit, stops: [2, 9], settings: settings, seed: 3, stream: [1, 2], replicates: r..<(r + 1))
        }
        let joined = SMCUnitEstimate.joined(parts)
        #expect(joined.logZ == whole.logZ)
        #expect(joined.slope == whole.slope)
        let off = try AnnealedSMC.run(unit, stops: [2, 9], settings: try SMCSettings(particles: 40, replicates: 4, essFraction: 0.8, moves: 3),
                                      seed: 3, stream: [1, 2])
        #expect(off.logZ != whole.logZ, "the setting changes the run")
    }

    /// A block's coordinates follow the fit: at most half its particles where blocks are cheap (roots per
    /// coordinate), `maxBlock` otherwise, and the blocks of a sweep split the unit evenly.
    @Test func blockSizeFollowsTheFit() {
        #expect(IndependenceMoves.blockSize(fitted: 16, perCoordinate: true) == 8)
        #expect(IndependenceMoves.blockSize(fitted: 17, perCoordinate: true) == 8)
        #expect(IndependenceMoves.blockSize(fitted: 400, perCoordinate: true) == 100)
        #expect(IndependenceMoves.blockSize(fitted: 3, perCoordinate: true) == 1)
        #expect(IndependenceMoves.blockSize(fitted: 16, perCoordinate: false) == 100)
        #expect(IndependenceMoves.blockSize(fitted: 0, perCoordinate: true) == 100)
        let blocks = IndependenceMoves.blocks(dimension: 100, size: 8)
        #expect(blocks.count == 13 && blocks.first == 0..<8 && blocks.last?.upperBound == 100)
        #expect(blocks.allSatisfy { $0.count == 7 || $0.count == 8 })
        #expect(zip(blocks, blocks.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
        let fits = IndependenceMoves.fits([Double](repeating: 0.5, count: 9 * 2), particles: 9, dimension: 2, lo: 0, hi: 1)
        #expect(fits.map(\.count) == [5, 4])
    }

    /// A product unit of 100 coordinates (`Z = (1 + s/2)^100`, s = 17) at the settings of an island of two
    /// such units (32 particles per replicate, 2 replicates, ESS fraction 0.8, 4 sweeps): each fit is to 16
    /// particles. With roots per coordinate the proposals are blocks of 8 coordinates, and the moves
    /// decorrelate the particles; declared without, the same unit is proposed whole, almost never accepted,
    /// and its estimate and replicates are off by several times as much. Over 6 seeds each.
    @Test func blocksFollowASmallFit() throws {
        let p = 100, s = 17.0
        let exact = Double(p) * Foundation.log1p(s / 2)
        let settings = try SMCSettings(particles: 32, replicates: 2, essFraction: 0.8, moves: 4, independenceMoves: true)
        func run(perCoordinate: Bool) throws -> (error: Double, spread: Double, decorrelation: Double) {
            let unit = Self.productUnit(dimension: p, screened: false, perCoordinate: perCoordinate)
            var error = 0.0, spread = 0.0, decorrelation = 1.0
            for seed in 1...6 {
                let est = try AnnealedSMC.run(unit, stops: [s], settings: settings, seed: UInt64(seed), stream: [9])
                let c = est.combined(0)
                error += Swift.abs(LogEstimate.corrected(logZ: c.logZ, relVar: c.relVar).value - exact) / 6
                spread += Swift.abs(est.logZ[0][0] - est.logZ[0][1]) / 6
                decorrelation = Swift.min(decorrelation, est.diagnostics.minDecorrelation ?? 0)
            }
            return (error, spread, decorrelation)
        }
        let blocked = try run(perCoordinate: true), whole = try run(perCoordinate: false)
        #expect(blocked.error < 0.6 && blocked.spread < 0.75 && blocked.decorrelation > 0.5, "blocks of 8: \(blocked)")
        #expect(whole.error > 2 * blocked.error && whole.spread > 2 * blocked.spread && whole.decorrelation < 0.3, "whole: \(whole)")
    }
}
