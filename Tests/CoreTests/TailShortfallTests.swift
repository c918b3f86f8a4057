import Foundation
import Testing
@testable import TwoScaleCore

@Suite struct TailShortfallTests {
    /// K = 2 in closed form: the statistic's mean is `E g(d)` (`logNormalPairMoments`, a one-dimensional
    /// quadrature), so the shortfall is `s²/2 − E g(d)`.
    @Test(arguments: [0.5, 5.0, 30.0])
    func shortfallAtTwoAgainstQuadrature(s2: Double) {
        let exact = s2 / 2 - logNormalPairMoments(logVariance: s2).mean
        let simulated = LogNormalSpread.shortfall(logVariance: s2, count: 2)
        // 2 000 simulated statistics: their mean is good to about 3 standard deviations / √2000.
        let tolerance = 3 * LogNormalSpread.standardDeviation(logVariance: s2, count: 2) / 2000.0.squareRoot()
        #expect(Swift.abs(simulated - exact) < tolerance, "s² = \(s2): \(simulated) against \(exact)")
    }

    /// Small spread: the bias-corrected log-mean is unbiased to O(s⁴). Large spread: the shortfall is
    /// positive, shrinks with K, and lies below s²/2 (a log-mean is at least the mean of the logs, whose
    /// expectation is 0) and above s²/2 minus about the largest of K normal logs (s√(2 log K) ≈ 37 for
    /// s² = 168, K = 64).
    @Test func limitsAndMonotonicity() {
        // (within the simulation's own error: 2 000 statistics of spread s/√K)
        let noise = 3 * LogNormalSpread.standardDeviation(logVariance: 1e-4, count: 64) / 2000.0.squareRoot()
        #expect(Swift.abs(LogNormalSpread.shortfall(logVariance: 1e-4, count: 64)) < noise)
        let a = LogNormalSpread.shortfall(logVariance: 30, count: 64)
        let b = LogNormalSpread.shortfall(logVariance: 30, count: 512)
        let c = LogNormalSpread.shortfall(logVariance: 168, count: 64)
        #expect(a > b && b > 0)
        #expect(c > 40 && c < 84)  // s²/2 = 84; the max of 64 normals of sd 13 is about 2.4 sd above 0
        #expect(LogNormalSpread.shortfall(logVariance: 0, count: 64) == 0)
        #expect(LogNormalSpread.shortfall(logVariance: 3, count: 1) == 0)
        #expect(LogNormalSpread.shortfall(logVariance: 3, count: 64) == LogNormalSpread.shortfall(logVariance: 3, count: 64))
    }

    /// The check from a point: the stages' shortfalls summed and divided by |log ε|, against the 2sED
    /// interval's half-width; the largest shortfall beyond its half-width is reported.
    @Test func flagsOnlyShortfallsBeyondTheInterval() {
        var p = EpsilonEstimate(eps: 0.001, zeta: 2.0 / 3, dimension: 100, estimate: LogEstimate(value: 50, variance: 4))
        p.tailShortfall = [20, 4]
        p.logVariance = [60, 10]
        let t = TailShortfall(point: p, paths: 64)
        #expect(Swift.abs(t.shortfall - 24 / Foundation.log(1000.0)) < 1e-12)
        #expect(Swift.abs(t.halfWidth - 1.959963984540054 * 2 / Foundation.log(1000.0)) < 1e-9)
        #expect(t.logVariance == 60 && t.paths == 64)
        #expect(t.islandNoiseShare == nil && !t.islandsFirst)  // no island-noise shares recorded
        // The share is the widest stage's (stage 3 here, the second later stage), not the first one's.
        var q = p
        q.logVariance = [10, 60]
        q.islandNoise = [0.9, 0.2]
        let u = TailShortfall(point: q, paths: 64)
        #expect(u.logVariance == 60 && u.islandNoiseShare == 0.2 && !u.islandsFirst)
        q.islandNoise = [0.1, 0.5]
        #expect(TailShortfall(point: q, paths: 64).islandsFirst)
        let small = TailShortfall(eps: 0.1, shortfall: 0.2, halfWidth: 0.3, logVariance: 3, paths: 64)
        let mid = TailShortfall(eps: 0.01, shortfall: 1.0, halfWidth: 0.5, logVariance: 20, paths: 64)
        #expect(TailShortfall.check([small, t, mid]) == t)
        #expect(TailShortfall.check([small]) == nil)
        #expect(TailShortfall.check([]) == nil)
        // One stage: no later stage, no shortfall.
        #expect(TailShortfall(point: EpsilonEstimate(eps: 0.1, zeta: 0.5, dimension: 3, estimate: LogEstimate(value: 1, variance: 1)),
                              paths: 8).shortfall == 0)
    }
}
