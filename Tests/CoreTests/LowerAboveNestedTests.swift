import Testing
@testable import TwoScaleCore

@Suite struct LowerAboveNestedTests {
    static func point(_ eps: Double, nested: ClosedRange<Double>, lower: ClosedRange<Double>) -> LowerAboveNested {
        LowerAboveNested(eps: eps, nested: (nested.lowerBound + nested.upperBound) / 2, nestedInterval: nested,
                         lower: (lower.lowerBound + lower.upperBound) / 2, lowerInterval: lower)
    }

    @Test func flagsOnlyDisjointIntervalsInTheImpossibleOrder() {
        // 784-32-10, seed 1, default budget (lab/ESTIMATORS-LOG.md, Limits): lower [18 170.82, 18 181.90] above
        // the 2sED's [18 162.41, 18 167.24] at ε = 10⁻³; at ε = 0.1 the two overlap.
        let a = Self.point(0.001, nested: 18162.41...18167.24, lower: 18170.82...18181.90)
        let b = Self.point(0.1, nested: 18797.43...18806.35, lower: 18800.83...18811.20)
        let flagged = LowerAboveNested.check([a, b])
        #expect(flagged == a)
        #expect(abs(flagged!.excess - 11.535) < 1e-9)
        #expect(LowerAboveNested.check([b]) == nil)
        // Lower below the 2sED, even far below, is the expected order.
        #expect(LowerAboveNested.check([Self.point(0.5, nested: 10...11, lower: 1...2)]) == nil)
        // Touching intervals are not disjoint.
        #expect(LowerAboveNested.check([Self.point(0.5, nested: 10...11, lower: 11...12)]) == nil)
        #expect(LowerAboveNested.check([]) == nil)
    }

    @Test func picksTheWidestGap() {
        let small = Self.point(0.01, nested: 10...11, lower: 11.5...12)      // gap 0.5
        let large = Self.point(0.1, nested: 20...21, lower: 23...30)         // gap 2
        let mid = Self.point(0.3, nested: 30...31, lower: 32...33)           // gap 1
        #expect(LowerAboveNested.check([small, large, mid])?.eps == 0.1)
        #expect([small.gap, large.gap, mid.gap] == [0.5, 2, 1])
    }
}
