import Foundation
@testable import Samplers
import TestSupport
import ToyModels
import TwoScaleCore
import XCTest

/// `StagedSMC.chains` on a three-stage layered toy, against the chains run one by one.
final class ChainsOnLayeredToyTests: XCTestCase {
    /// Three chains: each is the one-chain run on its own seed (chain 0 on the run's), so the joined points are
    /// those runs' joined (`assertJoinedChains`); the same on one thread and on two.
    func testChainsAreIndependentWholeRuns() async throws {
        let m = try LayeredToy(units: [2, 2, 2], unitSize: [3, 3, 3], coupling: 2)
        let eps = [1e-3, 0.1]
        var smc = try StagedSMC(model: m, box: m.box, seed: 3, paths: 16, inner: 8, traceDraws: 200)
        smc.chains = 3
        let one = try await smc.run(eps: eps, zeta: 2.0 / 3, normalization: .trace, lower: true, threads: 1).points
        let two = try await smc.run(eps: eps, zeta: 2.0 / 3, normalization: .trace, lower: true, threads: 2).points
        XCTAssertEqual(one.map(\.dZeta), two.map(\.dZeta))
        XCTAssertEqual(one.map(\.ci95), two.map(\.ci95))
        XCTAssertEqual(one.map(\.ci95Lower), two.map(\.ci95Lower))
        var singles: [[EpsilonEstimate]] = []
        for c in 0..<3 {
            var s = smc.chain(c)
            s.chains = 1
            singles.append(try await s.run(eps: eps, zeta: 2.0 / 3, normalization: .trace, lower: true, threads: 2).points)
        }
        try assertJoinedChains(one, singles: singles)
    }
}
