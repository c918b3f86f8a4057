import Foundation
import Testing
import TwoScaleFormats

/// Few wide units on an exact case: two stages of 2 units of 100 coordinates at the default coupling, smc at its
/// default budget with the independence sweeps `toy` takes there. An island of two units has 32 particles per
/// replicate, so each independence fit is to 16 of them: proposed whole, a unit was almost never accepted, stage
/// 1's moves stayed below the decorrelation check (about 0.62), the islands' noise variance was 8–10 nats², and
/// the run reported the bracket. Proposed in blocks of half the fit's particles (`IndependenceMoves.blockSize`),
/// the sweeps decorrelate the particles, the islands are quiet, and the sampled interval stands and holds
/// (lab/ESTIMATORS-LOG.md, 6 Dec 2026, seventy-seventh session).
@Suite struct FewWideUnitsTests {
    @Test func blockedSweepsLetTheSampledIntervalStand() async throws {
        let j = try await runJSON(["toy", "--family", "layered", "--units", "2,2", "--unit-size", "100,100", "--eps", "1e-3,0.1",
                                   "--mc", "--seed", "1", "--json"])
        #expect(j["monte_carlo"]?["independence_moves"] == .bool(true))
        let decorrelation = try #require(j["monte_carlo"]?["smc"]?["stage1"]?["min_decorrelation"]?.doubleValue)
        #expect(decorrelation >= 0.85, "stage 1's decorrelation \(decorrelation)")
        for p in try #require(j["points"]?.arrayValue) {
            let exact = try #require(p["d_zeta"]?.doubleValue), estimate = try #require(p["d_zeta_mc"]?.doubleValue)
            let interval = (p["interval_mc"]?.arrayValue ?? []).compactMap { $0.doubleValue }
            let noise = (p["stage_island_noise_var"]?.arrayValue ?? []).compactMap { $0.doubleValue }
            try #require(interval.count == 2 && noise.count == 1)
            #expect(noise[0] < 1, "islands' noise variance \(noise)")
            #expect(p["interval_mc_source"] == .string("sampled"))
            #expect(interval[0] <= exact && exact <= interval[1], "\(interval) against \(exact)")
            #expect(Swift.abs(estimate - exact) <= 0.0005 * exact, "estimate \(estimate), exact \(exact)")
        }
    }
}
