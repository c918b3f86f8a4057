import Foundation
import NetworkEstimators
import Samplers
import TwoScaleCLI
import TwoScaleCore
import TwoScaleFormats
import XCTest

/// `ed --target-width W`: rounds that raise K and J (or, where the bracket is reported, what kept the sampled
/// interval out) until the widest reported interval is at most W of its estimate, stopping where the bracket
/// is what no budget narrows or the budget ends, and saying which.
final class PrecisionTargetTests: XCTestCase {
    static let base = ["ed", "--arch", "8-4-3", "--samples", "20", "--eps", "0.1", "--lower"]

    /// The widest reported interval of an ed JSON (or, with `keys`, the interval and estimate keys of another
    /// command's points), relative to its estimate, computed here from the points.
    static func widest(_ j: JSONValue, keys: [(interval: String, estimate: String)] = [("interval", "d_zeta"), ("interval_lower", "d_zeta_lower")]) -> Double {
        var w = 0.0
        for p in j["points"]?.arrayValue ?? [] {
            for (key, value) in keys {
                guard let i = p[key]?.arrayValue?.compactMap(\.doubleValue), i.count == 2, let v = p[value]?.doubleValue else { continue }
                w = Swift.max(w, (i[1] - i[0]) / v)
            }
        }
        return w
    }

    func testRoundsDoubleUntilTheTargetIsReached() async throws {
        let j = try await runJSON(Self.base + ["--target-width", "0.004", "--json"])
        let t = try XCTUnwrap(j["precision_target"])
        XCTAssertEqual(t["outcome"]?.stringValue, "reached")
        let rounds = try XCTUnwrap(t["rounds"]?.arrayValue)
        XCTAssertGreaterThanOrEqual(rounds.count, 2, "the default budget's interval is wider than 0.4% here")
        for (r, round) in rounds.enumerated() {
            XCTAssertEqual(round["paths"]?.doubleValue, Double(64 << r))
            XCTAssertEqual(round["inner"]?.doubleValue, Double(32 << r))
            let w = try XCTUnwrap(round["width"]?.doubleValue)
            if r < rounds.count - 1 { XCTAssertGreaterThan(w, 0.004) } else { XCTAssertLessThanOrEqual(w, 0.004) }
        }
        // The last round is the estimate printed: its width, recomputed from its own points.
        XCTAssertEqual(try XCTUnwrap(rounds.last?["width"]?.doubleValue), Self.widest(j), accuracy: 1e-12)
        XCTAssertEqual(j["paths"]?.doubleValue, rounds.last?["paths"]?.doubleValue)
    }

    func testTheBracketAndTheBudgetStopIt() async throws {
        // Two hidden layers whose second layer's outer log-weights spread over 2 nats² (above
        // `ReportedInterval.maximumLaterLogVariance`): the bracket is reported, and no budget narrows it: one round.
        let deep = try await runJSON(["ed", "--arch", "8-4-3-3", "--samples", "20", "--eps", "0.001", "--target-width", "0.02", "--json"])
        XCTAssertEqual(deep["precision_target"]?["outcome"]?.stringValue, "bracket_limited")
        XCTAssertEqual(deep["precision_target"]?["rounds"]?.arrayValue?.count, 1)
        XCTAssertEqual(deep["precision_target"]?["rounds"]?.arrayValue?.first?["source"]?.stringValue, "bracket")
        // A target beyond reach within K ≤ 128: two rounds, then the budget.
        let capped = try await runJSON(Self.base + ["--target-width", "0.0001", "--max-paths", "128", "--json"])
        XCTAssertEqual(capped["precision_target"]?["outcome"]?.stringValue, "budget_spent")
        XCTAssertEqual(capped["precision_target"]?["rounds"]?.arrayValue?.count, 2)
        let text = await runCLI(Self.base + ["--target-width", "0.0001", "--max-paths", "128"]).out
        XCTAssertTrue(text.contains("not reached within K ≤ 128") && text.contains("raise --max-paths"), text)
    }

    /// Where the bracket is reported only because stage 1's moves did not decorrelate (24 inputs per
    /// first-layer unit at the default 20 sweeps, an outer ESS the rule accepts), the next round doubles
    /// stage 1's sweeps, K and J unchanged, until the sampled interval stands.
    /// The same with two hidden layers (24-3-3-2), whose islands are sized only once stage 1 decorrelates.
    func testStageOneSweepsDoubleWhereOnlyTheirDecorrelationFails() async throws {
        for arch in ["24-3-2", "24-3-3-2"] {
            try await stageOneSweepsDouble(arch)
        }
    }

    func stageOneSweepsDouble(_ arch: String) async throws {
        let wide = ["ed", "--arch", arch, "--samples", "20", "--eps", "0.1", "--paths", "16", "--inner", "8", "--seed", "1"]
        let j = try await runJSON(wide + ["--target-width", "0.05", "--json"])
        let t = try XCTUnwrap(j["precision_target"])
        XCTAssertEqual(t["outcome"]?.stringValue, "reached")
        let rounds = try XCTUnwrap(t["rounds"]?.arrayValue)
        XCTAssertGreaterThanOrEqual(rounds.count, 2)
        for (r, round) in rounds.enumerated() {
            XCTAssertEqual(round["paths"]?.doubleValue, 16)
            XCTAssertEqual(round["inner"]?.doubleValue, 8)
            XCTAssertEqual(round["independence_moves"], .bool(false), "one doubling of the sweeps did it")
            XCTAssertEqual(round["stage1_sweeps"]?.doubleValue, Double(20 << r))
            XCTAssertEqual(round["source"]?.stringValue, r < rounds.count - 1 ? "bracket" : "sampled", arch)
        }
        XCTAssertEqual(j["stage1_sweeps"]?.doubleValue, rounds.last?["stage1_sweeps"]?.doubleValue)
        let mixed = try XCTUnwrap(j["smc"]?["stage1"]?["min_decorrelation"]?.doubleValue)
        XCTAssertGreaterThanOrEqual(mixed, ReportedInterval.minimumDecorrelation)
    }

    /// `PrecisionTarget.Levers`, what the next round changes where the bracket is reported: stage 1's sweeps
    /// where it did not decorrelate; the islands' J where the outer weights fail and the islands' own noise is
    /// a good part of their spread at every stage that fails; neither where the weights vary over the earlier layers.
    func testLeversFollowWhatKeptTheSampledIntervalOut() {
        typealias L = PrecisionTarget.Levers
        let mixed = ReportedInterval.minimumDecorrelation
        // One later stage, weights that pass: only stage 1 (or nothing).
        XCTAssertEqual(L(essFraction: [0.5], logWeightVariance: [0.3], islandNoiseShare: [0.9], islandNoiseVariance: [0.2],
                         decorrelation: mixed * 0.9), L(stageOne: true, islands: false))
        XCTAssertFalse(L(essFraction: [0.5], logWeightVariance: [0.3], islandNoiseShare: [0.9], islandNoiseVariance: [0.2],
                         decorrelation: mixed).any)
        // An ESS below 10% of K: the islands where they are most of the spread (P1 at ε = 10⁻³, J = 32: ESS 4.8 of
        // 64, s² 3.39, share 0.69) or a quarter of it (P1, seed 2, J = 128: ESS 5.95 of 64, s² 3.13, share 0.274,
        // stage 1 decorrelated), nothing where the weights vary over θ_1 (share 0.15).
        XCTAssertEqual(L(essFraction: [4.8 / 64], logWeightVariance: [3.39], islandNoiseShare: [0.69], islandNoiseVariance: [2.3],
                         decorrelation: mixed * 0.7), L(stageOne: true, islands: true))
        XCTAssertEqual(L(essFraction: [5.95 / 64], logWeightVariance: [3.13], islandNoiseShare: [0.274], islandNoiseVariance: [0.857],
                         decorrelation: 0.891), L(stageOne: false, islands: true))
        XCTAssertEqual(L(essFraction: [5.95 / 64], logWeightVariance: [3.13], islandNoiseShare: [PrecisionTarget.islandLeverShare * 0.99],
                         islandNoiseVariance: [0.857], decorrelation: 0.891), L(stageOne: false, islands: false))
        XCTAssertEqual(L(essFraction: [4.8 / 64], logWeightVariance: [3.39], islandNoiseShare: [0.15], islandNoiseVariance: [1.0],
                         decorrelation: mixed), L(stageOne: false, islands: false))
        // Two later stages: the failing one decides; quiet islands with weights that spread (8-4-3-3) stop it.
        XCTAssertEqual(L(essFraction: [0.6, 0.05], logWeightVariance: [0.5, 3.0], islandNoiseShare: [0.1, 0.8],
                         islandNoiseVariance: [0.05, 2.4], decorrelation: nil), L(stageOne: false, islands: true))
        XCTAssertFalse(L(essFraction: [0.26, 0.8], logWeightVariance: [2.06, 0.28], islandNoiseShare: [0.02, 0.05],
                         islandNoiseVariance: [0.05, 0.01], decorrelation: nil).any)
        XCTAssertFalse(L(essFraction: [0.05, 0.05], logWeightVariance: [3.0, 3.0], islandNoiseShare: [0.8, 0.2],
                         islandNoiseVariance: [2.4, 0.6], decorrelation: nil).islands, "one failing stage is not island noise")
        // Weights that vary over θ_1 (share 0.15): no more stage-1 sweeps either, decorrelated or not.
        XCTAssertFalse(L(essFraction: [4.8 / 64], logWeightVariance: [3.39], islandNoiseShare: [0.15], islandNoiseVariance: [1.0],
                         decorrelation: mixed * 0.5).any)
        // Islands sized to their cap and still noisy (σ̄² 1.5, a small share of a wide spread): a larger J.
        XCTAssertEqual(L(essFraction: [0.6, 0.6], logWeightVariance: [0.5, 7.5], islandNoiseShare: [0.1, 0.2],
                         islandNoiseVariance: [0.05, 1.5], decorrelation: mixed), L(stageOne: false, islands: true))
        // After a later stage that failed, the next one's islands are not sized (`StagedSMC.sizesStage`): its noise
        // above the target is read as the sizing would leave it, out of its spread too. Stage 2 noisy though sized:
        // a larger J, where stage 3's spread is its noise; not where stage 3's weights spread beyond it.
        XCTAssertEqual(L(essFraction: [0.05, 0.5], logWeightVariance: [3.0, 3.5], islandNoiseShare: [0.5, 0.05],
                         islandNoiseVariance: [1.5, 3.0], decorrelation: mixed), L(stageOne: false, islands: true))
        XCTAssertEqual(L(essFraction: [0.05, 0.5], logWeightVariance: [3.0, 4.0], islandNoiseShare: [0.5, 0.05],
                         islandNoiseVariance: [1.5, 1.5], decorrelation: mixed), L(stageOne: false, islands: false))
        // Before stage 1 decorrelates, noise is read as the sizing would leave it: only stage 1's lever.
        XCTAssertEqual(L(essFraction: [0.6, 0.6], logWeightVariance: [0.5, 1.6], islandNoiseShare: [0.1, 0.9],
                         islandNoiseVariance: [0.05, 1.5], decorrelation: mixed * 0.5), L(stageOne: true, islands: false))
        // Mismatched diagnostics do not trap.
        XCTAssertFalse(L(essFraction: [0.05, 0.05], logWeightVariance: [3.0], islandNoiseShare: [], islandNoiseVariance: [],
                         decorrelation: nil).any)
    }

    /// Joint tempering's rounds (`PrecisionTarget.runTempering`) on 8-4-3 from P = 16: its two passes agree
    /// within their spread here, so P doubles, the sweeps stay at the default 5, until the hull is at most 0.5%;
    /// the estimate printed is the last round's. A cap on P stops it, and says so in P.
    func testTemperingRoundsDoubleTheParticles() async throws {
        let net = ["ed", "--estimator", "tempering", "--arch", "8-4-3", "--samples", "20", "--paths", "16"]
        let j = try await runJSON(net + ["--eps", "0.001,0.1", "--target-width", "0.005", "--json"])
        let t = try XCTUnwrap(j["precision_target"])
        XCTAssertEqual(t["outcome"]?.stringValue, "reached")
        let rounds = try XCTUnwrap(t["rounds"]?.arrayValue)
        XCTAssertGreaterThanOrEqual(rounds.count, 2, "P = 16's hull is wider than 0.5% here")
        for (r, round) in rounds.enumerated() {
            XCTAssertEqual(round["paths"]?.doubleValue, Double(16 << r))
            XCTAssertEqual(round["inner"]?.doubleValue, 4)
            XCTAssertEqual(round["sweeps"]?.doubleValue, 5)
            XCTAssertNil(round["stage1_sweeps"])
            let w = try XCTUnwrap(round["width"]?.doubleValue)
            if r < rounds.count - 1 { XCTAssertGreaterThan(w, 0.005) } else { XCTAssertLessThanOrEqual(w, 0.005) }
        }
        XCTAssertEqual(try XCTUnwrap(rounds.last?["width"]?.doubleValue), Self.widest(j, keys: [("interval", "d_zeta")]), accuracy: 1e-12)
        XCTAssertEqual(j["paths"]?.doubleValue, rounds.last?["paths"]?.doubleValue)
        let text = await runCLI(net + ["--eps", "0.1", "--target-width", "0.0001", "--max-paths", "32"]).out
        XCTAssertTrue(text.contains("not reached within P ≤ 32") && text.contains("P = 16, 5 sweeps"), text)
        let r = await runCLICapturingErrors(net + ["--target-width", "0.1", "--max-paths", "8"])
        XCTAssertEqual(r.status, 2, r.err)
        XCTAssertTrue(r.err.contains("at least the starting P = 16"), r.err)
    }

    /// smc's rounds where ĉ's error is most of the widest sampled interval (8-4-3 from 10 trace draws): the next
    /// round quadruples the trace draws, not K and J; once it is less than half, K and J double. Each round is
    /// rerun alone at its budget: it gives the round's width, and ĉ's share of that interval's variance, computed
    /// here from `normalization_share`, `se_log_det` and the interval's half-width, decides the next round.
    func testSMCRoundsRaiseTheTraceDrawsWhereTheNormalizationDominates() async throws {
        let j = try await runJSON(Self.base + ["--trace-draws", "10", "--target-width", "0.006", "--json"])
        let t = try XCTUnwrap(j["precision_target"])
        XCTAssertEqual(t["outcome"]?.stringValue, "reached")
        let rounds = try XCTUnwrap(t["rounds"]?.arrayValue)
        var sawDraws = false, sawPaths = false
        for (r, round) in rounds.enumerated().dropLast() {
            let (k, jj, d) = (try XCTUnwrap(round["paths"]?.doubleValue), try XCTUnwrap(round["inner"]?.doubleValue),
                              try XCTUnwrap(round["trace_draws"]?.doubleValue))
            let alone = try await runJSON(Self.base + ["--paths", "\(Int(k))", "--inner", "\(Int(jj))", "--trace-draws", "\(Int(d))", "--json"])
            let w = try XCTUnwrap(round["width"]?.doubleValue)
            XCTAssertEqual(w, Self.widest(alone), accuracy: 1e-12)
            let p = try XCTUnwrap(alone["points"]?.arrayValue?.first)
            XCTAssertEqual(p["interval_source"]?.stringValue, "sampled")
            // ĉ's variance in nats² against the widest interval's own (the 2sED's or the lower 2sED's).
            let se = try XCTUnwrap(p["se_log_det"]?.doubleValue), cv = try XCTUnwrap(p["normalization_share"]?.doubleValue) * se * se
            var shareOfWidest = 0.0
            for (key, value) in [("interval", "d_zeta"), ("interval_lower", "d_zeta_lower")] {
                let i = try XCTUnwrap(p[key]?.arrayValue?.compactMap(\.doubleValue)), v = try XCTUnwrap(p[value]?.doubleValue)
                let own = pow((i[1] - i[0]) / 2 * Foundation.log(10.0) / 1.959963984540054, 2)
                if abs((i[1] - i[0]) / v - w) < 1e-12 { shareOfWidest = cv / own }
            }
            XCTAssertGreaterThan(shareOfWidest, 0)
            let raised = Self.checkNextRound(rounds[r + 1], share: shareOfWidest, paths: k, traceDraws: d)
            if raised { sawDraws = true } else { sawPaths = true }
            if !raised { XCTAssertEqual(rounds[r + 1]["inner"]?.doubleValue, 2 * jj) }
        }
        XCTAssertTrue(sawDraws && sawPaths, "10 trace draws leave ĉ most of the width here, 160 do not")
        XCTAssertEqual(j["trace_draws"]?.doubleValue, rounds.last?["trace_draws"]?.doubleValue)
        // The toy's rounds take the same lever, and the last is the plain run at its budget, trace draws included.
        let toy = ["toy", "--family", "layered", "--units", "2,2", "--unit-size", "5,5", "--eps", "0.1", "--mc", "--seed", "1"]
        let tj = try await runJSON(toy + ["--trace-draws", "4", "--target-width", "0.012", "--json"])
        let last = try XCTUnwrap(tj["precision_target"]?["rounds"]?.arrayValue?.last)
        let draws = try XCTUnwrap(last["trace_draws"]?.doubleValue)
        XCTAssertGreaterThan(draws, 4)
        let plain = try await runJSON(toy + ["--paths", "\(Int(last["paths"]?.doubleValue ?? 0))", "--inner", "\(Int(last["inner"]?.doubleValue ?? 0))",
                                             "--trace-draws", "\(Int(draws))", "--json"])
        XCTAssertEqual(plain["points"]?.arrayValue?.first?["d_zeta_mc"]?.doubleValue, tj["points"]?.arrayValue?.first?["d_zeta_mc"]?.doubleValue)
        XCTAssertEqual(plain["monte_carlo"]?["trace_draws"]?.doubleValue, draws)
    }

    /// Where ĉ's error is most of the widest interval (8-4-3 from 10 trace draws), the next round quadruples the
    /// trace draws, not P; once it is less than half, P doubles. Each round is rerun here alone at its budget:
    /// it gives the round's width, and its widest point's `normalization_share` decides the next round.
    func testTemperingRoundsRaiseTheTraceDrawsWhereTheNormalizationDominates() async throws {
        let net = ["ed", "--estimator", "tempering", "--arch", "8-4-3", "--samples", "20", "--eps", "0.001,0.1"]
        let j = try await runJSON(net + ["--paths", "16", "--trace-draws", "10", "--target-width", "0.012", "--json"])
        let t = try XCTUnwrap(j["precision_target"])
        XCTAssertEqual(t["outcome"]?.stringValue, "reached")
        let rounds = try XCTUnwrap(t["rounds"]?.arrayValue)
        XCTAssertGreaterThanOrEqual(rounds.count, 2)
        var sawDraws = false, sawPaths = false
        for (r, round) in rounds.enumerated().dropLast() {
            let (p, d) = (try XCTUnwrap(round["paths"]?.doubleValue), try XCTUnwrap(round["trace_draws"]?.doubleValue))
            let alone = try await runJSON(net + ["--paths", "\(Int(p))", "--trace-draws", "\(Int(d))", "--json"])
            XCTAssertEqual(try XCTUnwrap(round["width"]?.doubleValue), Self.widest(alone, keys: [("interval", "d_zeta")]), accuracy: 1e-12)
            let eps = try XCTUnwrap(round["eps"]?.doubleValue)
            let share = try XCTUnwrap(alone["points"]?.arrayValue?.first { $0["eps"]?.doubleValue == eps }?["normalization_share"]?.doubleValue)
            if Self.checkNextRound(rounds[r + 1], share: share, paths: p, traceDraws: d) { sawDraws = true } else { sawPaths = true }
            XCTAssertEqual(rounds[r + 1]["sweeps"]?.doubleValue, round["sweeps"]?.doubleValue)
        }
        XCTAssertTrue(sawDraws && sawPaths, "10 trace draws leave ĉ most of the width here, 40 do not")
        XCTAssertEqual(j["trace_draws"]?.doubleValue, rounds.last?["trace_draws"]?.doubleValue)
        XCTAssertEqual(j["paths"]?.doubleValue, rounds.last?["paths"]?.doubleValue)
    }

    /// Checks the round after one at `paths` and `traceDraws` whose widest interval is `share` ĉ's: four times the
    /// draws at the same particles from half on, else twice the particles at the same draws. Returns which.
    static func checkNextRound(_ next: JSONValue, share: Double, paths: Double, traceDraws: Double,
                               file: StaticString = #filePath, line: UInt = #line) -> Bool {
        let raised = share >= 0.5
        XCTAssertEqual(next["trace_draws"]?.doubleValue, raised ? 4 * traceDraws : traceDraws, file: file, line: line)
        XCTAssertEqual(next["paths"]?.doubleValue, raised ? paths : 2 * paths, file: file, line: line)
        return raised
    }

    /// Where `ed`'s table reports the bracket, a line under it says what narrows it: `--target-width` always, joint
    /// tempering only with two or more hidden layers; where every interval is sampled, or after `--target-width`
    /// (whose own summary says what stopped it), no such line.
    func testTheSummarySaysWhatNarrowsTheBracket() async throws {
        let line = "to narrow it: --target-width W"
        func summary(_ arch: [String]) async throws -> String {
            let r = await runCLICapturingErrors(["ed", "--arch"] + arch + ["--eps", "0.1", "--seed", "5", "--threads", "1", "--quiet"])
            XCTAssertEqual(r.status, 0, r.err)
            return r.out
        }
        let deep = try await summary(["4-3-3-2", "--samples", "6", "--paths", "8", "--inner", "8", "--trace-draws", "100"])
        XCTAssert(deep.contains("] bracket"), deep)
        XCTAssert(deep.contains(line) && deep.contains("--estimator tempering"), deep)
        // One hidden layer whose stage 1 barely moves (one sweep a step): the bracket, and no word of tempering.
        let shallow = try await summary(["8-4-3", "--samples", "20", "--stage1-sweeps", "1"])
        XCTAssert(shallow.contains("] bracket"), shallow)
        XCTAssert(shallow.contains(line) && !shallow.contains("--estimator tempering"), shallow)
        let sampled = try await summary(["8-4-3", "--samples", "20"])
        XCTAssertFalse(sampled.contains("] bracket") || sampled.contains(line), sampled)
        // The deep case of `testTheBracketAndTheBudgetStopIt`, whose target stops at the bracket.
        let targeted = await runCLICapturingErrors(["ed", "--arch", "8-4-3-3", "--samples", "20", "--eps", "0.001", "--target-width", "0.02",
                                                    "--quiet"])
        XCTAssertEqual(targeted.status, 0, targeted.err)
        XCTAssert(targeted.out.contains("] bracket") && !targeted.out.contains(line), targeted.out)
    }

    func testMisuseIsRefused() async throws {
        for (args, message) in [(["--max-paths", "100"], "--max-paths caps --target-width"),
                                (["--target-width", "0"], "--target-width: '0.0' is not allowed"),
                                (["--target-width", "0.1", "--estimator", "plain"], "not with plain"),
                                (["--target-width", "0.1", "--max-paths", "10"], "at least the starting K = 64")] {
            let r = await runCLICapturingErrors(Self.base + args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.err)")
            XCTAssertTrue(r.err.contains(message), "\(args): \(r.err)")
        }
    }
}
