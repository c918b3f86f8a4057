import Bounds
import Foundation
import TwoScaleCore
import XCTest

/// `TailLimit` against the bound's own log tail: the slope in log n at a fixed d_ζ, by central
/// differences, is (3/8)·d·(1 − 1/log n) − K/γ, so the tail falls exactly where K exceeds `neededK`.
final class TailLimitTests: XCTestCase {
    func testNeededKIsWhereTheSlopeOfTheLogTailChangesSign() throws {
        for (gamma, d, n) in [(1.0, 46.9, 1e6), (0.5, 10.0, 1e3), (0.9, 300.0, 1e9)] {
            let needed = TailLimit.neededK(n: n, dZeta: d, gamma: gamma)
            for k in [needed * 0.9, needed * 1.1] {
                let bound = try GeneralizationBound(gamma: gamma, zeta: 0.7, constants: try BoundConstants(C: 1, H: 1, K: k))
                func logTail(_ logN: Double) throws -> Double {
                    let m = Foundation.exp(logN)
                    let e = try GeneralizationBound.epsilon(n: m, gamma: gamma)
                    return Foundation.log(1.0) - d * Foundation.log(e) - k / gamma * logN
                }
                let h = 1e-4, x = Foundation.log(n)
                let slope = (try logTail(x + h) - logTail(x - h)) / (2 * h)
                XCTAssertEqual(slope, 3.0 / 8.0 * d * (1 - 1 / x) - k / gamma, accuracy: 1e-6 * d)
                XCTAssertEqual(slope > 0, k < needed, "γ \(gamma), d \(d), K \(k)")
                // The bound's own logTail at integer n agrees with the closed form used above.
                let ni = Int(n)
                let e = try bound.epsilon(n: ni)
                XCTAssertEqual(bound.logTail(n: ni, epsN: e, dZeta: d), try logTail(x), accuracy: 1e-9 * d)
                XCTAssertEqual(TailLimit(n: ni, dZetaUsed: d, gamma: gamma, k: k).growing, slope > 0)
            }
        }
    }

    /// The hint's numbers are the limit's.
    func testTheHintNamesTheNumbers() {
        let t = TailLimit(n: 1_000_000, dZetaUsed: 46.8767, gamma: 1, k: 1)
        XCTAssertTrue(t.growing)
        XCTAssertEqual(t.neededK, 3.0 / 8.0 * 46.8767 * (1 - 1 / Foundation.log(1e6)), accuracy: 1e-12)
        XCTAssertTrue(t.hint.contains("needs K > 16.3064"), t.hint)
    }
}

/// Which of the theorem's assumptions a run meets, decided from its settings by hand.
final class TheoremAssumptionsTests: XCTestCase {
    func met(_ list: [TheoremAssumption], _ name: String) -> Bool?? {
        list.first { $0.assumption == name }.map(\.met)
    }

    func testAReluStoreOnGaussianInputsMeetsNeitherSmoothnessNorABoundedLoss() {
        let relu = TheoremAssumptions.check(.network(activation: "relu", boundedInputs: false, markov: true, inputs: 100, noiseDraws: 1), zeta: 0.6667)
        XCTAssertEqual(met(relu, "the model is C^{1,1} in θ"), .some(false))
        XCTAssertEqual(met(relu, "p_θ(y|x) is bounded below, so the loss is Lipschitz in θ uniformly"), .some(false))
        XCTAssertEqual(met(relu, "d_ζ of the population Fisher information"), .some(false))
        XCTAssertEqual(met(relu, "ζ ≥ 2/3"), .some(true), "0.6667 > 2/3 by 3.3e-5: met")
        XCTAssertEqual(met(relu, "n ≥ n₀"), .some(nil))
        XCTAssertTrue(relu.first { $0.assumption == "d_ζ of the population Fisher information" }!.why.contains("N = 100 inputs, 1 noise draw(s)"))
        let tanh = TheoremAssumptions.check(.network(activation: "tanh", boundedInputs: true, markov: false, inputs: 25, noiseDraws: nil), zeta: 0.5)
        XCTAssertEqual(met(tanh, "the model is C^{1,1} in θ"), .some(true))
        XCTAssertEqual(met(tanh, "p_θ(y|x) is bounded below, so the loss is Lipschitz in θ uniformly"), .some(true))
        XCTAssertEqual(met(tanh, "ζ ≥ 2/3"), .some(false))
        let toy = TheoremAssumptions.check(.toy, zeta: 2.0 / 3.0)
        XCTAssertEqual(met(toy, "ζ ≥ 2/3"), .some(true))
        XCTAssertNil(met(toy, "the model is C^{1,1} in θ"), "a toy has no network to judge")
    }
}
