import Foundation
@testable import Samplers
import ToyModels
import TwoScaleCore
import XCTest

/// `StagedSMC.chains` on a three-stage layered toy, against the chains run one by one.
final class ChainsOnLayeredToyTests: XCTestCase {
    /// Three chains: each is the one-chain run on its own seed (chain 0 on the run's), so the 2sED and the lower
    /// 2sED are the means of three one-chain runs (d_ζ is affine in log E det), their 95% half-widths Student's
    /// t with 2 degrees of freedom times the runs' standard deviation over √3; the same on one thread and on two.
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
        let t = StudentT.quantile(0.975, degrees: 2)
        for (i, p) in one.enumerated() {
            let lowers = try singles.map { try XCTUnwrap($0[i].dZetaLower) }
            for (value, interval, of) in [(p.dZeta, p.ci95, singles.map { $0[i].dZeta }), (try XCTUnwrap(p.dZetaLower), p.ci95Lower, lowers)] {
                let mean = of.reduce(0, +) / 3
                let sd = (of.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / 2).squareRoot()
                let ci = try XCTUnwrap(interval)
                XCTAssertEqual(value, mean, accuracy: 1e-9, "ε = \(p.eps)")
                XCTAssertEqual((ci.upperBound - ci.lowerBound) / 2, t * sd / 3.0.squareRoot(), accuracy: 1e-9 * (1 + sd), "ε = \(p.eps)")
                XCTAssertGreaterThan(sd, 0, "ε = \(p.eps): the chains differ")
            }
        }
    }
}
