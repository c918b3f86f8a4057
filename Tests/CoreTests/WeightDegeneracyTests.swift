import Testing
@testable import TwoScaleCore

@Suite struct WeightDegeneracyTests {
    @Test func thresholdAndWorstStage() {
        #expect(WeightDegeneracy.threshold(paths: 100) == 5)
        #expect(WeightDegeneracy.threshold(paths: 10) == 2)
        #expect(WeightDegeneracy.check(ess: [6, 4.9, 5.5], paths: 100) == WeightDegeneracy(stage: 3, ess: 4.9, paths: 100))
        #expect(WeightDegeneracy.check(ess: [5, 7], paths: 100) == nil)   // not below the threshold
        #expect(WeightDegeneracy.check(ess: [2], paths: 10) == nil)
        #expect(WeightDegeneracy.check(ess: [1.9], paths: 10)?.stage == 2)
        #expect(WeightDegeneracy.check(ess: [], paths: 100) == nil)       // one layer: no stages
        #expect(WeightDegeneracy.check(ess: [1], paths: 1) == nil)
    }

    /// Which budget to raise: the islands from a half of the spread on, K below; unknown share: K.
    @Test func islandsFirstFromHalfTheSpread() {
        #expect(WeightDegeneracy.islandsFirst(share: 0.5) && WeightDegeneracy.islandsFirst(share: 1))
        #expect(!WeightDegeneracy.islandsFirst(share: 0.49))
        var d = WeightDegeneracy(stage: 2, ess: 1.1, paths: 64)
        #expect(!d.islandsFirst)
        d.islandNoiseShare = 0.71
        #expect(d.islandsFirst)
        #expect(TailShortfall(eps: 0.1, shortfall: 2, halfWidth: 1, logVariance: 30, paths: 64, islandNoiseShare: 0.5).islandsFirst)
    }
}
