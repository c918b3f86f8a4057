import Foundation
@testable import Samplers
import Testing
import TwoScaleCore

/// `StagedSMC.chains`: R independent whole runs joined (`StageSum(chains:)`).
@Suite struct ChainsTests {
    /// Three chains by hand: each estimate is the chains' mean, its variance their sample variance divided by R and
    /// widened to Student's t with 2 degrees of freedom, with nothing added for stage 1 or ĉ; each stage's term is
    /// the mean with the variance of that mean; the diagnostics are the chains' means.
    @Test func joinedByHand() throws {
        func chain(_ t1: Double, _ t2: Double, _ t3: Double, lower: Double, ess: Double) -> StageSum {
            let first = LogEstimate(value: t1, variance: 0.5)
            var s = StageSum(first: (logZ: t1, corrected: first, log: first, slope: 1, noise: 0), replicates: 2)
            s.add(term: (LogEstimate(value: t2, variance: 0.01), 0), lower: LogEstimate(value: lower, variance: 0.02))
            s.add(term: (LogEstimate(value: t3, variance: 0.01), 0), lower: LogEstimate(value: 0, variance: 0.02))
            s.stageESS = [ess, 2 * ess]
            return s
        }
        let joined = StageSum(chains: [chain(10, 1, 2, lower: 0.5, ess: 10), chain(11, 2, 4, lower: 1.5, ess: 20),
                                       chain(9, 3, 3, lower: 1, ess: 30)])
        // Joint 13, 17, 15: mean 15, sample variance 4; lower 10.5, 12.5, 10: mean 11, sample variance 1.75.
        let t = StudentT.quantile(0.975, degrees: 2) / 1.959963984540054
        #expect(Swift.abs(joined.joint.value - 15) < 1e-12)
        #expect(Swift.abs(joined.joint.variance - 4.0 / 3 * t * t) < 1e-12)
        #expect(Swift.abs(joined.low.value - 11) < 1e-12)
        #expect(Swift.abs(joined.low.variance - 1.75 / 3 * t * t) < 1e-12)
        #expect(Swift.abs(joined.stageTerms[0].value - 10) < 1e-12 && Swift.abs(joined.stageTerms[0].variance - 1.0 / 3) < 1e-12)
        #expect(Swift.abs(joined.stageTerms[1].value - 2) < 1e-12 && Swift.abs(joined.stageTerms[1].variance - 1.0 / 3) < 1e-12)
        #expect(Swift.abs(joined.stageTerms[2].value - 3) < 1e-12 && Swift.abs(joined.stageTerms[2].variance - 1.0 / 3) < 1e-12)
        #expect(joined.stageESS == [20, 40])
        // The point adds nothing to that variance: no stage-1 widening, no correlation bound, no ĉ term.
        let p = try joined.point(eps: 0.1, zeta: 0.5, dimension: 4, lower: true, logVarianceOfC: 0.3)
        let se = try #require(p.standardError)
        #expect(Swift.abs(se * se - joined.joint.variance) < 1e-12)
    }

    /// Chain 0 runs on the run's own seed, every other on a seed of its own; R out of range is refused.
    @Test func chainSeeds() throws {
        typealias S = StagedSMC<MajorantTiltTests.TwoCoordinates>
        let smc = try S(model: MajorantTiltTests.TwoCoordinates(), box: 0...1, seed: 3, paths: 8, inner: 8, traceDraws: 2)
        #expect(smc.chain(0).seed == 3)
        #expect(Set((0..<8).map { smc.chain($0).seed }).count == 8)
        #expect(throws: TwoScaleError.self) { try S.checkChains(0) }
        #expect(throws: TwoScaleError.self) { try S.checkChains(S.maximumChains + 1) }
        try S.checkChains(1)
        try S.checkChains(S.maximumChains)
    }
}
