import Foundation
import Testing
@testable import Statistics
@testable import TwoScaleCore

/// Reference values from SciPy 1.17 `scipy.stats.kendalltau` (computed independently).
@Suite struct KendallTauTests {
    @Test func exactPValueWithoutTies() throws {
        let k = try KendallTau([1, 2, 3, 4, 5, 6, 7, 8], [2, 1, 4, 3, 6, 5, 8, 7])
        #expect(abs(k.tau - 0.7142857142857142) < 1e-12)
        #expect(abs(k.pValue - 0.014136904761904762) < 1e-12)
        #expect(k.exact)
        let k2 = try KendallTau([0.3, 1.2, 0.7, 2.5, 1.9, 0.1, 3.3, 2.2, 1.0], [1.1, 2.0, 0.5, 2.4, 3.1, 0.2, 2.9, 1.5, 0.9])
        #expect(abs(k2.tau - 0.6666666666666666) < 1e-12)
        #expect(abs(k2.pValue - 0.012665343915343916) < 1e-12)
    }

    @Test func asymptoticWithTies() throws {
        let k = try KendallTau([1, 2, 2, 3, 4, 5, 5, 6, 7, 8, 9, 10], [3, 1, 2, 2, 5, 4, 7, 6, 9, 8, 10, 10])
        #expect(abs(k.tau - 0.78125) < 1e-12)
        #expect(abs(k.pValue - 0.0005385105570086668) < 1e-9)
        #expect(!k.exact)
    }

    @Test func perfectAndReversedOrders() throws {
        let x: [Double] = [1, 2, 3, 4, 5]
        #expect(try KendallTau(x, x).tau == 1)
        #expect(try KendallTau(x, x.reversed()).tau == -1)
        // exact: P = 2/5! for a perfect order of 5
        #expect(abs(try KendallTau(x, x).pValue - 2.0 / 120) < 1e-15)
        #expect(throws: TwoScaleError.self) { try KendallTau([1, 1, 1], [1, 2, 3]) }
        #expect(throws: TwoScaleError.self) { try KendallTau([1], [1]) }
    }
}
