import Foundation
import RandomStreams
@testable import Samplers
@testable import TwoScaleCore
import XCTest

/// The annealed SMC sampler against closed forms.
final class AnnealedSMCTests: XCTestCase {
    /// One coordinate on [0, 1], r(x) = e^{a x}: Z(s) = 1 + s (e^a − 1)/a — for large s·e^a the integrand
    /// is concentrated near x = 1, so plain averaging is poor and the sampler must temper.
    func testPeakedOneDimensionalUnitMatchesClosedForm() throws {
        let a = 20.0
        let unit = SMCUnit(dimension: 1, box: 0...1) { x in [Foundation.exp(a * x[0])] }
        let stops = [1e-6, 1e-3, 1.0, 100.0]
        let est = try AnnealedSMC.run(unit, stops: stops, settings: try SMCSettings(particles: 400, replicates: 4),
                                      seed: 7, stream: [1])
        for (t, s) in stops.enumerated() {
            let exact = Foundation.log(1 + s * (Foundation.exp(a) - 1) / a)
            let c = est.combined(t)
            let e = LogEstimate.corrected(logZ: c.logZ, relVar: c.relVar)
            XCTAssertEqual(e.value, exact, accuracy: 4 * e.variance.squareRoot() + 0.02, "s = \(s)")
        }
        XCTAssertGreaterThan(est.diagnostics.steps, 0, "the peaked target needs intermediate scales")
        // d log Z / d log s = s (e^a − 1)/a / (1 + s (e^a − 1)/a)
        let m = (Foundation.exp(a) - 1) / a
        XCTAssertEqual(est.slope[3], 100 * m / (1 + 100 * m), accuracy: 0.02)
    }

    /// Three coordinates, r(x) = (x_1 + x_2 + x_3)^4 (one root): the exact E is a polynomial integral.
    func testThreeDimensionalUnitMatchesExactPolynomialIntegral() throws {
        // E[1 + s S⁴] with S = x1+x2+x3, x ~ U[0,1]³: E S⁴ = 1/5·… computed by exact enumeration of moments.
        // Moments of U[0,1]: E x^k = 1/(k+1). E S⁴ = Σ multinomial(4; i,j,k) E x^i E x^j E x^k.
        var es4 = 0.0
        for i in 0...4 { for j in 0...(4 - i) {
            let k = 4 - i - j
            let multi = Double(fact(4)) / Double(fact(i) * fact(j) * fact(k))
            es4 += multi / Double((i + 1) * (j + 1) * (k + 1))
        } }
        let unit = SMCUnit(dimension: 3, box: 0...1) { x in [Foundation.pow(x[0] + x[1] + x[2], 4)] }
        let stops = [0.5, 50, 5000]
        let est = try AnnealedSMC.run(unit, stops: stops, settings: try SMCSettings(particles: 300, replicates: 4),
                                      seed: 3, stream: [2])
        for (t, s) in stops.enumerated() {
            let exact = Foundation.log(1 + s * es4)
            let c = est.combined(t)
            XCTAssertEqual(c.logZ + c.relVar / 2, exact, accuracy: 4 * c.relVar.squareRoot() + 0.02, "s = \(s)")
        }
    }

    func fact(_ n: Int) -> Int { n <= 1 ? 1 : n * fact(n - 1) }

    /// The delayed-acceptance moves keep `π_s` invariant whatever the screen: 40 000 exact draws of
    /// `π_s ∝ 1 + s x` on [0, 1] (s = 20; r(x) = x, drawn by inverting the CDF) moved by 10 sweeps
    /// keep their exact mean `(1/2 + s/3)/(1 + s/2)` and second moment `(1/3 + s/4)/(1 + s/2)` with a
    /// screen that tracks ℓ (x), one that tracks it poorly (x³) and one that misleads (sin 12x); the
    /// first skips most eigen-solves. A kernel that forgot the screen's factor in its second stage
    /// would sample `π_s e^{b h}` instead.
    func testScreenedMovesKeepTheTarget() throws {
        let s = 20.0, n = 40_000
        let mean = (0.5 + s / 3) / (1 + s / 2), second = (1.0 / 3 + s / 4) / (1 + s / 2)
        let screens: [(String, @Sendable ([Double]) throws -> Double)] = [
            ("x", { $0[0] }), ("x³", { $0[0] * $0[0] * $0[0] }), ("sin 12x", { Foundation.sin(12 * $0[0]) }),
        ]
        for (name, h) in screens {
            let unit = SMCUnit(dimension: 1, box: 0...1, roots: { [$0[0]] }, screen: h)
            var rng = Xoshiro256(seed: 11, stream: [3])
            var x = (0..<n).map { _ in ((1 + 2 * s * rng.uniform() * (1 + s / 2)).squareRoot() - 1) / s }
            var roots = x.map { [$0] }
            var ell = x.map { Foundation.log1p(s * $0) }
            var hNow = try x.map { try h([$0]) }
            var step = 1.0
            var diag = SMCDiagnostics()
            try RandomWalk.move(unit, s: s, x: &x, roots: &roots, ell: &ell, screen: &hNow, h: &step, sweeps: 10,
                                 rng: &rng, diag: &diag)
            let m1 = x.reduce(0, +) / Double(n), m2 = x.reduce(0) { $0 + $1 * $1 } / Double(n)
            // sd of x under π_s is ≈ 0.26: 5 standard errors of the mean are ≈ 0.0066.
            XCTAssertEqual(m1, mean, accuracy: 0.0066, "screen \(name)")
            XCTAssertEqual(m2, second, accuracy: 0.0066, "screen \(name)")
            XCTAssertEqual(ell, x.map { Foundation.log1p(s * $0) }, "screen \(name): cached ℓ")
            XCTAssertEqual(hNow, try x.map { try h([$0]) }, "screen \(name): cached h")
            XCTAssertGreaterThan(diag.accepted, n, "screen \(name): the particles move")
            if name == "x" { XCTAssertLessThan(diag.evaluatedFraction ?? 1, 0.8, "a screen that tracks ℓ skips eigen-solves") }
        }
    }

    /// The sampler with a screen estimates the same Z: the three-coordinate polynomial unit above with a
    /// screen that tracks ℓ (x₁ + x₂ + x₃) and one that hardly does (x₁ − x₂²).
    func testScreenedSamplerMatchesExactPolynomialIntegral() throws {
        var es4 = 0.0
        for i in 0...4 { for j in 0...(4 - i) {
            let k = 4 - i - j
            es4 += Double(fact(4)) / Double(fact(i) * fact(j) * fact(k)) / Double((i + 1) * (j + 1) * (k + 1))
        } }
        let screens: [@Sendable ([Double]) throws -> Double] = [{ $0[0] + $0[1] + $0[2] }, { $0[0] - $0[1] * $0[1] }]
        for (q, h) in screens.enumerated() {
            let unit = SMCUnit(dimension: 3, box: 0...1, roots: { x in [Foundation.pow(x[0] + x[1] + x[2], 4)] }, screen: h)
            let stops = [0.5, 50, 5000]
            let est = try AnnealedSMC.run(unit, stops: stops, settings: try SMCSettings(particles: 300, replicates: 4),
                                          seed: 3, stream: [2])
            for (t, s) in stops.enumerated() {
                let c = est.combined(t)
                XCTAssertEqual(c.logZ + c.relVar / 2, Foundation.log(1 + s * es4), accuracy: 4 * c.relVar.squareRoot() + 0.02,
                               "screen \(q), s = \(s)")
            }
            XCTAssertLessThan(est.diagnostics.evaluated, est.diagnostics.proposals, "screen \(q)")
        }
    }

    /// The screen's slope is the least-squares slope of ℓ on h, and 0 when h does not vary.
    func testScreenSlope() {
        XCTAssertEqual(RandomWalk.screenSlope(h: [0, 1, 2, 3], ell: [1, 3, 5, 7]), 2, accuracy: 1e-14)
        XCTAssertEqual(RandomWalk.screenSlope(h: [0, 1, 2, 3], ell: [1, 2, 2, 1]), 0, accuracy: 1e-14)
        XCTAssertEqual(RandomWalk.screenSlope(h: [2, 2, 2], ell: [1, 5, 9]), 0)
    }

    /// Same seed and stream, same numbers; another stream, other numbers; a zero spectrum gives Z = 1.
    func testDeterminismAndTrivialUnit() throws {
        let unit = SMCUnit(dimension: 2, box: -1...1) { x in [x[0] * x[0] + 0.5 * x[1] * x[1]] }
        let settings = try SMCSettings(particles: 50)
        let a = try AnnealedSMC.run(unit, stops: [1, 10], settings: settings, seed: 5, stream: [9])
        let b = try AnnealedSMC.run(unit, stops: [1, 10], settings: settings, seed: 5, stream: [9])
        let c = try AnnealedSMC.run(unit, stops: [1, 10], settings: settings, seed: 5, stream: [10])
        XCTAssertEqual(a.logZ, b.logZ)
        XCTAssertNotEqual(a.logZ, c.logZ)
        let zero = SMCUnit(dimension: 3, box: 0...1) { _ in [] }
        let z = try AnnealedSMC.run(zero, stops: [1, 1e6], settings: settings, seed: 1, stream: [])
        XCTAssertEqual(z.logZ, [[0, 0], [0, 0]])
        XCTAssertEqual(z.diagnostics.steps, 0)
    }

    func testReflectionStaysInBoxAndSystematicResamplingCounts() {
        for v in [-7.3, -1.0, 0.2, 1.9, 3.0, 12.25] {
            let r = RandomWalk.reflect(v, -1, 1)
            XCTAssertTrue((-1...1).contains(r), "\(v) → \(r)")
        }
        XCTAssertEqual(RandomWalk.reflect(1.5, 0, 1), 0.5, accuracy: 1e-15)
        XCTAssertEqual(RandomWalk.reflect(-0.25, 0, 1), 0.25, accuracy: 1e-15)
        let idx = Tempering.systematic([0.5, 0.25, 0.0, 0.25], u: 0.3)
        XCTAssertEqual(idx.filter { $0 == 0 }.count, 2)
        XCTAssertEqual(idx.filter { $0 == 1 }.count, 1)
        XCTAssertEqual(idx.filter { $0 == 2 }.count, 0)
        XCTAssertEqual(idx.filter { $0 == 3 }.count, 1)
    }

    /// The replicate combination: log mean e^l and the relative variance of that mean.
    /// A replicate whose ESS threshold τP is at most 1 could never resample (an ESS is ≥ 1): refused.
    func testSettingsThatCannotAdaptAreRefused() throws {
        XCTAssertThrowsError(try SMCSettings(particles: 2, essFraction: 0.5))
        XCTAssertThrowsError(try SMCSettings(particles: 4, essFraction: 0.25))
        XCTAssertNoThrow(try SMCSettings(particles: 4, essFraction: 0.5))
        XCTAssertNoThrow(try SMCSettings(particles: 2, essFraction: 0.8))
    }

    /// Pooling runs of one unit: the replicates are concatenated, the slope is the Ẑ-weighted mean over
    /// all replicates (each part's slope already being its own replicates' Ẑ-weighted mean), and
    /// `times(n)` scales a log-estimate to `Z^n` (value n·v, variance n²·V).
    func testPooledReplicatesAndPowers() {
        func log(_ x: Double) -> Double { Foundation.log(x) }
        let a = SMCUnitEstimate(logZ: [[log(1.0), log(3.0)]], slope: [2], populations: [], diagnostics: SMCDiagnostics())
        let b = SMCUnitEstimate(logZ: [[log(4.0), log(4.0)]], slope: [5], populations: [], diagnostics: SMCDiagnostics())
        let p = SMCUnitEstimate.pooled([a, b])
        for (v, w) in zip(p.logZ[0], [1.0, 3, 4, 4]) { XCTAssertEqual(Foundation.exp(v), w, accuracy: 1e-12) }
        XCTAssertEqual(p.logZ[0].count, 4)
        // Σ Ẑ: 4 for a, 8 for b → slope (4·2 + 8·5) / 12 = 4.
        XCTAssertEqual(p.slope[0], 4, accuracy: 1e-12)
        // mean 3, values relative to it 1/3, 1, 4/3, 4/3: sample variance 2/9 (deviations −2/3, 0, 1/3, 1/3 →
        // (4/9 + 0 + 1/9 + 1/9)/3), over R = 4.
        let c = p.combined(0)
        XCTAssertEqual(c.logZ, log(3.0), accuracy: 1e-12)
        XCTAssertEqual(c.relVar, 2.0 / 9 / 4, accuracy: 1e-12)
        let e = LogEstimate(value: 1.5, variance: 0.25).times(4)
        XCTAssertEqual(e.value, 6)
        XCTAssertEqual(e.variance, 4)
    }
}
