import Foundation
import Testing
@testable import Statistics
import TwoScaleCore

/// Jiang's granulated τ on a hand-made grid.
@Suite struct GranulatedKendallTests {
    /// A 2×2×2 grid (a, b, c) with, for models 000…111, measure 1…8 and target (1, 3, 5, 4, 6, 8, 7, 7).
    /// Every group is a pair, τ = sign(Δμ)·sign(Δg):
    ///   a: (000,100) +, (001,101) +, (010,110) +, (011,111) +           ψ_a = 1
    ///   b: (000,010) +, (001,011) +, (100,110) +, (101,111) Δg = −1 −   ψ_b = 1/2
    ///   c: (000,001) +, (010,011) Δg = −1 −, (100,101) +, (110,111) tie   ψ_c = 1/3 (3 groups defined)
    /// Ψ = (1 + 1/2 + 1/3)/3 = 11/18. The row order does not matter.
    @Test func granulatedTauByHand() throws {
        let grid = (0..<8).map { [$0 >> 2 & 1, $0 >> 1 & 1, $0 & 1] }
        let measure: [Double] = [1, 2, 3, 4, 5, 6, 7, 8], target: [Double] = [1, 3, 5, 4, 6, 8, 7, 7]
        let g = try GranulatedKendall(hyperparameters: grid, measure: measure, target: target)
        #expect(g.perHyperparameter == [1, 0.5, 1.0 / 3])
        #expect(g.definedGroups == [4, 4, 3])
        #expect(g.groups == [4, 4, 4])
        #expect(abs(try #require(g.psi) - 11.0 / 18) < 1e-15)
        let order = [5, 2, 7, 0, 3, 6, 1, 4]
        let shuffled = try GranulatedKendall(hyperparameters: order.map { grid[$0] }, measure: order.map { measure[$0] },
                                             target: order.map { target[$0] })
        #expect(shuffled.perHyperparameter == g.perHyperparameter && shuffled.psi == g.psi)
        #expect(throws: TwoScaleError.self) { try GranulatedKendall(hyperparameters: [[0], [1]], measure: [1, 2], target: [1, 2]) }
        #expect(throws: TwoScaleError.self) { try GranulatedKendall(hyperparameters: grid, measure: measure, target: Array(target.dropLast())) }
        #expect(throws: TwoScaleError.self) { try GranulatedKendall(hyperparameters: grid, measure: measure.map { $0 == 3 ? .nan : $0 }, target: target) }
        #expect(throws: TwoScaleError.self) { try GranulatedKendall(hyperparameters: [[0, 1], [1], [0, 0]], measure: [1, 2, 3], target: [1, 2, 3]) }
    }
}
