import Foundation
import Testing
import TwoScaleFormats

/// A known defect, pinned end to end on an exact case (the precision issue's item 3: a point estimate below the
/// certified bracket while the exact value lies inside it must fail a test). Two stages of 10 units of 200
/// coordinates at the default coupling, smc at its default budget, ε = 10⁻³: the bracket (0.65% wide) holds the
/// exact 2sED and is the interval the run reports, but the point estimate is about 0.5% low, at or below the
/// bracket's lower end, nearly all of it stage 2's term (about 140 nats low). The cause is the islands: 4
/// random-walk sweeps per step barely move units of 200 coordinates, so their noise variance (about 300 nats²)
/// swamps the outer weights, which the majorant tilt cannot explain either (lab/ESTIMATORS-LOG.md, 6 Dec 2026).
/// The expectation inside is the precision issue's (within 0.25% of the exact value, inside the bracket); while
/// the defect stands it is a known issue, and the test fails once the islands are fixed, so the fix removes
/// `withKnownIssue`.
@Suite struct WideIslandShortfallTests {
    @Test func estimateFallsBelowItsBracketOnWideLaterUnits() async throws {
        let j = try await runJSON(["toy", "--family", "layered", "--units", "10,10", "--unit-size", "200,200", "--eps", "1e-3",
                                   "--mc", "--seed", "7", "--json"])
        let p = try #require(j["points"]?.arrayValue?.first)
        let exact = try #require(p["d_zeta"]?.doubleValue), estimate = try #require(p["d_zeta_mc"]?.doubleValue)
        let bracket = (p["d_zeta_bracket"]?.arrayValue ?? []).compactMap { $0.doubleValue }
        try #require(bracket.count == 2)
        // The certified statement is right, and it is what the run reports.
        #expect(bracket[0] <= exact && exact <= bracket[1], "\(bracket) against \(exact)")
        #expect((bracket[1] - bracket[0]) / exact < 0.01, "\(bracket)")
        #expect(p["interval_mc_source"] == .string("bracket"))
        // Stage 2 carries the shortfall: its term is low by far more than stage 1's.
        let stageErrors = (p["stage_error_mc"]?.arrayValue ?? []).compactMap { $0.doubleValue }
        #expect(stageErrors.count == 2 && stageErrors[1] < -50 && Swift.abs(stageErrors[0]) < Swift.abs(stageErrors[1]) / 4, "\(stageErrors)")
        withKnownIssue("stage 2's islands on 200-coordinate units leave the 2sED about 0.5% low, at its bracket's lower end") {
            #expect(estimate >= bracket[0] && Swift.abs(estimate - exact) <= 0.0025 * exact,
                    "estimate \(estimate), exact \(exact), bracket \(bracket)")
        }
    }
}
