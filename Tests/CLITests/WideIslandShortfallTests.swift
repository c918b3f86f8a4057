import Foundation
import Testing
import TwoScaleFormats

/// The precision issue's item 3 on an exact case: a point estimate below the certified bracket while the exact
/// value lies inside it must fail a test. Two stages of 10 units of 200 coordinates at the default coupling, smc
/// at its default budget, ε = 10⁻³: the bracket (0.65% wide) holds the exact 2sED and is the interval the run
/// reports. With the random walk alone the point estimate is about 0.5% low, at or below the bracket's lower end,
/// nearly all of it stage 2's term (about 140 nats): 4 random-walk sweeps per step barely move units of 200
/// coordinates, so the islands' noise (about 300 nats²) swamps the outer weights (lab/ESTIMATORS-LOG.md, 6 Dec
/// 2026). Units this wide take independence sweeps by default, and the default run must meet the issue's
/// expectation (within 0.25% of the exact value, inside the bracket). The random walk alone stays a known issue,
/// so the test also fails once the random walk is fixed, when the default could be reconsidered.
@Suite struct WideIslandShortfallTests {
    struct Run {
        var exact: Double, estimate: Double, bracket: [Double], source: JSONValue?, stageErrors: [Double]
    }

    func run(_ extra: [String]) async throws -> Run {
        let j = try await runJSON(["toy", "--family", "layered", "--units", "10,10", "--unit-size", "200,200", "--eps", "1e-3",
                                   "--mc", "--seed", "7", "--json"] + extra)
        let p = try #require(j["points"]?.arrayValue?.first)
        let bracket = (p["d_zeta_bracket"]?.arrayValue ?? []).compactMap { $0.doubleValue }
        try #require(bracket.count == 2)
        return Run(exact: try #require(p["d_zeta"]?.doubleValue), estimate: try #require(p["d_zeta_mc"]?.doubleValue),
                   bracket: bracket, source: p["interval_mc_source"],
                   stageErrors: (p["stage_error_mc"]?.arrayValue ?? []).compactMap { $0.doubleValue })
    }

    /// The certified statement is right, and it is what the run reports.
    func checkBracket(_ r: Run) {
        #expect(r.bracket[0] <= r.exact && r.exact <= r.bracket[1], "\(r.bracket) against \(r.exact)")
        #expect((r.bracket[1] - r.bracket[0]) / r.exact < 0.01, "\(r.bracket)")
        #expect(r.source == .string("bracket"))
    }

    @Test func theDefaultEstimateIsInsideItsBracketOnWideLaterUnits() async throws {
        let r = try await run([])
        checkBracket(r)
        #expect(r.estimate >= r.bracket[0] && Swift.abs(r.estimate - r.exact) <= 0.0025 * r.exact,
                "estimate \(r.estimate), exact \(r.exact), bracket \(r.bracket)")
        #expect(r.stageErrors.count == 2 && r.stageErrors.allSatisfy { Swift.abs($0) < 10 }, "\(r.stageErrors)")
    }

    @Test func theRandomWalkAloneFallsBelowItsBracket() async throws {
        let r = try await run(["--no-independence-moves"])
        checkBracket(r)
        // Stage 2 carries the shortfall: its term is low by far more than stage 1's.
        #expect(r.stageErrors.count == 2 && r.stageErrors[1] < -50 && Swift.abs(r.stageErrors[0]) < Swift.abs(r.stageErrors[1]) / 4,
                "\(r.stageErrors)")
        withKnownIssue("stage 2's random-walk islands on 200-coordinate units leave the 2sED about 0.5% low, at its bracket's lower end") {
            #expect(r.estimate >= r.bracket[0] && Swift.abs(r.estimate - r.exact) <= 0.0025 * r.exact,
                    "estimate \(r.estimate), exact \(r.exact), bracket \(r.bracket)")
        }
    }
}
