import Foundation
import RandomStreams
@testable import TwoScaleCore
import XCTest

/// The normalisation constant's interval (`ScaleRange`, docs/METHOD.md §19 "c inside"): its arithmetic by
/// hand, its coverage on laws whose mean is known (a wrong constant in the range term fails it), and the
/// share of δ it takes from a bracket.
final class ScaleRangeTests: XCTestCase {
    /// The upper value is the lower one of R − X, written out; the lower value is the best truncated one.
    func testArithmeticByHand() throws {
        let x = [1.0, 2, 4, 5]  // mean 3, unbiased variance 10/3
        let l = Foundation.log(2 / 0.1)
        XCTAssertEqual(EmpiricalBernstein.upperMean(mean: 3, variance: 10.0 / 3, count: 4, range: 6, delta: 0.1),
                       3 + (2 * (10.0 / 3) * l / 4).squareRoot() + 7 * 6 * l / 9, accuracy: 1e-12)
        XCTAssertEqual(try EmpiricalBernstein.lowerMean(x, range: 6, delta: 0.1),
                       EmpiricalBernstein.lowerMean(mean: 3, variance: 10.0 / 3, count: 4, range: 6, delta: 0.1))
        // Many draws of one value: the truncated level at or just above it gives nearly the value.
        let flat = [Double](repeating: 3, count: 100_000)
        let r = try ScaleRange.estimated(traces: flat, dimension: 12, ceiling: 1024, meanBound: nil, delta: 0.01)
        // The levels 1024·2^-j: 4 is the smallest at or above 3, with range term 7·4·ln(2·48·2/δ)/(3(n−1)).
        let lvl = Foundation.log(2 / (0.01 / 2 / Double(ScaleRange.levels)))
        let lower = 3 - 7 * 4 * lvl / (3 * 99_999)
        let upper = 3 + 7 * 1024 * Foundation.log(2 / 0.005) / (3 * 99_999)
        let t = try XCTUnwrap(r.trace)
        XCTAssertEqual(t.mean.lowerBound, lower, accuracy: 1e-9)
        XCTAssertEqual(t.mean.upperBound, upper, accuracy: 1e-9)
        XCTAssertEqual(r.estimate, 4)
        XCTAssertEqual(r.range.lowerBound, 12 / upper, accuracy: 1e-12)
        XCTAssertEqual(r.range.upperBound, 12 / lower, accuracy: 1e-12)
        // A deterministic bound below the sampled upper value takes its place.
        let b = try ScaleRange.estimated(traces: flat, dimension: 12, ceiling: 1024, meanBound: 3.001, delta: 0.01)
        XCTAssertEqual(try XCTUnwrap(b.trace).mean.upperBound, 3.001)
        XCTAssertEqual(ScaleRange.exact(2).range, 2...2)
        XCTAssertEqual(ScaleRange.exact(2).delta, 0)
        XCTAssertThrowsError(try ScaleRange.estimated(traces: [1, 2000], dimension: 2, ceiling: 1024, meanBound: nil, delta: 0.01))
        XCTAssertThrowsError(try ScaleRange.estimated(traces: [1], dimension: 2, ceiling: 1024, meanBound: nil, delta: 0.01))
        // F ≡ 0 (every draw and the ceiling 0): c plays no part, and is 0 by the normalisation's convention.
        XCTAssertEqual(try ScaleRange.estimated(traces: [0, 0, 0], dimension: 2, ceiling: 0, meanBound: nil, delta: 0.01).range, 0...0)
    }

    /// A law with a rare large value, `X = R` with probability p = 0.002 and 0 otherwise (μ = pR), at n = 300:
    /// all draws are 0 in about 55% of the seeds. The interval holds μ in every one of 2 000 seeds at δ_c =
    /// 0.05. Without the range term (a wrong constant 0 in place of 7/3) the upper value is 0 whenever every
    /// draw is, and fails in about half of them; the test counts that too, so it sees the term matter.
    func testRareLargeValuesNeedTheRangeTerm() throws {
        var rng = Xoshiro256(seed: 11, stream: [1])
        let ceiling = 500.0, p = 0.002, mu = p * ceiling, n = 300
        var held = 0, naiveFailed = 0
        for _ in 0..<2000 {
            let x = (0..<n).map { _ in rng.uniform() < p ? ceiling : 0 }
            let r = try ScaleRange.estimated(traces: x, dimension: 1, ceiling: ceiling, meanBound: nil, delta: 0.05)
            if try XCTUnwrap(r.trace).mean.contains(mu) { held += 1 }
            let mean = x.reduce(0, +) / Double(n)
            let v = x.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(n - 1)
            let naive = mean + (2 * v * Foundation.log(2 / 0.025) / Double(n)).squareRoot()
            if naive < mu { naiveFailed += 1 }
        }
        XCTAssertEqual(held, 2000)
        XCTAssertGreaterThan(naiveFailed, 900)
    }

    /// A skewed law on [0, 10] with known mean (min(10, Exp(1))): the interval holds in at least 1 − δ_c of
    /// 500 seeds at δ_c = 0.1 (it holds more often: the inequality is conservative), and it is not vacuous:
    /// its mean width at n = 2 000 is below 0.3 of μ.
    func testCoverageAndWidthOnASkewedLaw() throws {
        var rng = Xoshiro256(seed: 5, stream: [3])
        let mu = 1 - Foundation.exp(-10.0)
        var held = 0, width = 0.0
        for _ in 0..<500 {
            let x = (0..<2000).map { _ in Swift.min(10, -Foundation.log(1 - rng.uniform())) }
            let t = try XCTUnwrap(try ScaleRange.estimated(traces: x, dimension: 1, ceiling: 10, meanBound: nil, delta: 0.1).trace)
            if t.mean.contains(mu) { held += 1 }
            width += (t.mean.upperBound - t.mean.lowerBound) / mu / 500
        }
        XCTAssertGreaterThanOrEqual(held, 450)
        XCTAssertLessThan(width, 0.3)
    }

    /// δ's shares: an estimated c takes a quarter, Jensen's ends half the rest over L·E, Markov's a quarter
    /// of the rest each over E; with an exact c the shares are those of the whole δ.
    func testDeltaShares() {
        let s = CertifiedBracket.shares(delta: 0.01, estimatedScale: true, stages: 3, points: 2)
        XCTAssertEqual(s.scale, 0.0025, accuracy: 1e-18)
        XCTAssertEqual(s.jensen, 0.0075 / 2 / 6, accuracy: 1e-18)
        XCTAssertEqual(s.markov, 0.0075 / 4 / 2, accuracy: 1e-18)
        XCTAssertEqual(s.scale + 6 * 2 * s.jensen / 2 + 2 * 2 * s.markov, 0.01, accuracy: 1e-15,
                       "c's two sides, Jensen's over L·E, Markov's two over E: all of δ")
        let e = CertifiedBracket.shares(delta: 0.01, estimatedScale: false, stages: 3, points: 2)
        XCTAssertEqual(e.scale, 0)
        XCTAssertEqual(e.jensen, 0.01 / 2 / 6)
        XCTAssertEqual(e.markov, 0.01 / 4 / 2)
    }
}
