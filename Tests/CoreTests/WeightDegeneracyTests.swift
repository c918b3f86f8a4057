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
}
