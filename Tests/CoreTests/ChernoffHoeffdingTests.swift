import Foundation
import RandomStreams
import TwoScaleCore
import XCTest

/// The Chernoff–Hoeffding upper bound on a mean in [0, R] (`ChernoffHoeffding`, docs/METHOD.md §19, "The first
/// block, sampled"): its closed form with every draw 0, the root it solves, its coverage on a Bernoulli law
/// and on a continuous one, and that a quarter of its exponent does not cover.
final class ChernoffHoeffdingTests: XCTestCase {
    func kl(_ a: Double, _ b: Double) -> Double {
        (a == 0 ? 0 : a * Foundation.log(a / b)) + (1 - a) * Foundation.log((1 - a) / (1 - b))
    }

    /// With every draw 0 the bound is `R(1 − δ^{1/n})`, below the empirical Bernstein bound's `7R ln(2/δ)/(3(n − 1))`;
    /// elsewhere it is the root of `kl(x̄, b) = ln(1/δ)/n` above x̄, to rounding; at x̄ = 1 it is the range;
    /// a draw outside the range is an error.
    func testRootAndClosedForm() throws {
        for (n, delta, range) in [(20_000, 6.25e-4, 1.0), (300, 0.05, 3.0), (7, 0.2, 0.5)] {
            let zero = try ChernoffHoeffding.upperMean([Double](repeating: 0, count: n), range: range, delta: delta)
            XCTAssertEqual(zero, range * (1 - Foundation.pow(delta, 1 / Double(n))), accuracy: 1e-12 * range)
            let bernstein = EmpiricalBernstein.upperMean(mean: 0, variance: 0, count: n, range: range, delta: delta)
            XCTAssertLessThan(zero, bernstein / 2)
        }
        for (mean, n, delta) in [(0.3, 50, 0.05), (1e-6, 20_000, 1e-3), (0.97, 10, 0.1)] {
            let b = ChernoffHoeffding.upperMean(mean: mean, count: n, range: 1, delta: delta)
            let level = Foundation.log(1 / delta) / Double(n)
            XCTAssertGreaterThan(b, mean)
            XCTAssertEqual(kl(mean, b), level, accuracy: 1e-6 * level, "mean \(mean)")
            XCTAssertLessThan(kl(mean, b * (1 - 1e-6) + mean * 1e-6), level, "mean \(mean): the least such b")
        }
        XCTAssertEqual(ChernoffHoeffding.upperMean(mean: 2, count: 5, range: 2, delta: 0.1), 2)
        XCTAssertThrowsError(try ChernoffHoeffding.upperMean([0.5, 1.2], range: 1, delta: 0.05))
    }

    /// Over 4 000 trials at δ = 0.05 it holds in at least 1 − δ of them (less 3 binomial standard deviations)
    /// on Bernoulli(0.01) draws (n = 300, where most samples are all 0) and on `U^8` (mean 1/9, n = 40); at a
    /// quarter of its exponent (δ^{1/4} in place of δ) it fails in more than δ of the Bernoulli trials.
    func testCoverageAndAWrongExponent() throws {
        var rng = Xoshiro256(seed: 11, stream: [4])
        let trials = 4000, delta = 0.05
        let allowed = Int(Double(trials) * delta + 3 * (Double(trials) * delta * (1 - delta)).squareRoot())
        var failures = 0, wrong = 0, smooth = 0
        for _ in 0..<trials {
            let draws = (0..<300).map { _ in rng.uniform() < 0.01 ? 1.0 : 0 }
            if try ChernoffHoeffding.upperMean(draws, range: 1, delta: delta) < 0.01 { failures += 1 }
            if try ChernoffHoeffding.upperMean(draws, range: 1, delta: Foundation.pow(delta, 0.25)) < 0.01 { wrong += 1 }
            let u = (0..<40).map { _ in Foundation.pow(rng.uniform(), 8) }
            if try ChernoffHoeffding.upperMean(u, range: 1, delta: delta) < 1.0 / 9 { smooth += 1 }
        }
        XCTAssertLessThanOrEqual(failures, allowed)
        XCTAssertLessThanOrEqual(smooth, allowed)
        XCTAssertGreaterThan(wrong, allowed, "a quarter of the exponent should not cover")
    }
}
