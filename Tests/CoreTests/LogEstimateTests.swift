import Foundation
import RandomStreams
@testable import TwoScaleCore
import XCTest

/// The log-space estimates every sampler returns: combining replicates, the lognormal model of a log-mean's
/// spread (against a quadrature at K = 2), and the variance rules built on them.
final class LogEstimateTests: XCTestCase {
    func testCombineAndLogEstimate() {
        let c = LogEstimate.combine([Foundation.log(1.0), Foundation.log(3.0)])
        XCTAssertEqual(c.logZ, Foundation.log(2.0), accuracy: 1e-14)
        // values 0.5, 1.5 relative to the mean: sample variance 0.5, / (R = 2) → 0.25
        XCTAssertEqual(c.relVar, 0.25, accuracy: 1e-14)
        let m = LogEstimate.mean([1, 2, 3, 4])
        XCTAssertEqual(m.value, 2.5)
        XCTAssertEqual(m.variance, (5.0 / 3) / 4, accuracy: 1e-14)
        let t = TraceEstimate(traces: [1, 3])
        XCTAssertEqual(t.meanTrace, 2)
        XCTAssertEqual(t.logVariance, 2.0 / 2 / 4, accuracy: 1e-14)
        XCTAssertEqual(TraceEstimate.addedVariance(slope: 4, logVarianceOfC: 0.5), 2, accuracy: 1e-14)
    }

    /// `LogNormalSpread` against independent values: at K = 2 the statistic's variance `s²/2 + Var g(d)`
    /// in closed form up to a one-dimensional quadrature (`logNormalPairMoments`). For small `s²` the
    /// statistic is the mean of the l to first order: standard deviation `s/√K`.
    func testLogNormalSpreadAgainstQuadratureAndSmallVarianceLimit() {
        for s2 in [0.5, 5.0, 12.0] {
            let exact = (s2 / 2 + logNormalPairMoments(logVariance: s2).variance).squareRoot()
            let simulated = LogNormalSpread.standardDeviation(logVariance: s2, count: 2)
            XCTAssertEqual(simulated, exact, accuracy: 0.04 * exact, "s² = \(s2)")
        }
        for k in [10, 64] {
            let s2 = 1e-4
            XCTAssertEqual(LogNormalSpread.standardDeviation(logVariance: s2, count: k), (s2 / Double(k)).squareRoot(),
                           accuracy: 0.04 * (s2 / Double(k)).squareRoot())
        }
        // a deterministic function of (s², K): the same value twice, nothing for no spread or one value
        XCTAssertEqual(LogNormalSpread.standardDeviation(logVariance: 3, count: 64),
                       LogNormalSpread.standardDeviation(logVariance: 3, count: 64))
        XCTAssertEqual(LogNormalSpread.standardDeviation(logVariance: 0, count: 64), 0)
        XCTAssertEqual(LogNormalSpread.standardDeviation(logVariance: 3, count: 1), 0)
    }

    /// The stage term `logMean`: the delta method's value, and the larger of its variance and the
    /// lognormal model's. For 64 logs spread like a normal sample of variance 6 (ESS of a few) the model
    /// wins and is far wider; for logs with a small spread the two agree; one far outlier among equal
    /// logs has a log-variance the model reads as small, and there the delta method's variance stays.
    func testLogMeanVarianceIsTheLargerOfDeltaAndLognormalModel() {
        func inverseNormal(_ p: Double) -> Double {  // bisection on erfc: independent of the sampler's normals
            var lo = -10.0, hi = 10.0
            for _ in 0..<200 { let m = (lo + hi) / 2; if 0.5 * Foundation.erfc(-m / 2.0.squareRoot()) < p { lo = m } else { hi = m } }
            return (lo + hi) / 2
        }
        let k = 64
        let quantiles = (0..<k).map { inverseNormal((Double($0) + 0.5) / Double(k)) }
        for (s2, modelWins) in [(6.0, true), (0.05, false)] {
            let l = quantiles.map { $0 * s2.squareRoot() }
            let c = LogEstimate.combine(l)
            let e = LogEstimate.logMean(l)
            XCTAssertEqual(e.value, c.logZ + c.relVar / 2, accuracy: 1e-12)
            let sampleVar = LogEstimate.mean(l).variance * Double(k)
            let model = LogNormalSpread.standardDeviation(logVariance: sampleVar, count: k)
            XCTAssertEqual(e.variance, Swift.max(c.relVar, model * model), accuracy: 1e-12)
            if modelWins {
                XCTAssertGreaterThan(e.variance, 2 * c.relVar)
            } else {
                XCTAssertEqual(e.variance, c.relVar, accuracy: 0.15 * c.relVar)
            }
        }
        let outlier = [Double](repeating: 0, count: k - 1) + [6]
        let c = LogEstimate.combine(outlier)
        XCTAssertEqual(LogEstimate.logMean(outlier).variance, c.relVar, accuracy: 1e-12)
        XCTAssertGreaterThan(c.relVar, 0.5)
    }

    /// The delta method's `log mean_k Ẑ_k + V/2` (`corrected`), by hand, and where the method holds (K = 8
    /// replicates of small spread, `l_k ~ N(log Z − v/2, v)`, v = 0.2, unbiased Ẑ_k): over 40 000 sets it is
    /// unbiased for log Z within 0.004 nats (5 standard errors), while `log mean_k Ẑ_k` alone is low by about
    /// `(e^v − 1)/(2K)` ≈ 0.014, the bias the correction takes off (twice the correction is as far high).
    func testDeltaCorrectionTakesOffTheLogMeansBias() {
        let e = LogEstimate.corrected(logZ: 2, relVar: 0.3)
        XCTAssertEqual(e.value, 2.15, accuracy: 1e-15)
        XCTAssertEqual(e.variance, 0.3, accuracy: 1e-15)
        var rng = Xoshiro256(seed: 17, stream: [5])
        let v = 0.2, logZ = 1.0, k = 8, trials = 40_000
        var plain = 0.0, corrected = 0.0
        for _ in 0..<trials {
            let c = LogEstimate.combine((0..<k).map { _ in logZ - v / 2 + v.squareRoot() * rng.normal() })
            plain += c.logZ
            corrected += LogEstimate.corrected(logZ: c.logZ, relVar: c.relVar).value
        }
        let bias = (Foundation.exp(v) - 1) / (2 * Double(k))
        XCTAssertEqual(plain / Double(trials), logZ - bias, accuracy: 0.004)
        XCTAssertEqual(corrected / Double(trials), logZ, accuracy: 0.004)
    }

    /// The log of Z from replicate log-estimates under the lognormal model: `mean + var/2` with the model's
    /// variance, by hand for [1, 3]; and on 20 000 simulated pairs of replicates with `l_r ~ N(log Z − v/2,
    /// v)` (unbiased Ẑ_r), v = 6 nats², it is unbiased for log Z, while the delta method's
    /// `log mean_r Ẑ_r + V/2` is low by more than 1.5 nats (its correction is at most half a nat at R = 2).
    func testLognormalReplicateLog() {
        let e = LogEstimate.lognormalReplicates([1, 3])
        XCTAssertEqual(e.value, 2 + 2.0 / 2, accuracy: 1e-14)          // sample variance 2
        XCTAssertEqual(e.variance, 2.0 / 2 + 4.0 / 2, accuracy: 1e-14)  // v/R + v²/(2(R−1))
        XCTAssertEqual(LogEstimate.lognormalReplicates([5]).value, 5)
        var rng = Xoshiro256(seed: 11, stream: [3])
        let v = 6.0, logZ = 10.0, trials = 20_000
        var lognormal = 0.0, delta = 0.0
        for _ in 0..<trials {
            let l = (0..<2).map { _ in logZ - v / 2 + v.squareRoot() * rng.normal() }
            lognormal += LogEstimate.lognormalReplicates(l).value
            let c = LogEstimate.combine(l)
            delta += LogEstimate.corrected(logZ: c.logZ, relVar: c.relVar).value
        }
        // sd of one lognormal-corrected value: √(v/2 + v²/2) ≈ 4.6, so the mean of 20 000 is good to ±0.1 (3 se)
        XCTAssertEqual(lognormal / Double(trials), logZ, accuracy: 0.1)
        XCTAssertLessThan(delta / Double(trials), logZ - 1.5)
    }
}
