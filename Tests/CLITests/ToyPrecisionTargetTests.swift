import Foundation
import TwoScaleCLI
import TwoScaleCore
import TwoScaleFormats
import XCTest

/// `toy --family layered --mc --target-width W`: the precision target's rounds (`PrecisionTarget`, the code
/// `ed` runs) on the layered toy, whose exact values check what the rounds end on.
final class ToyPrecisionTargetTests: XCTestCase {
    static let toy = ["toy", "--family", "layered", "--units", "3,3", "--unit-size", "100,100", "--eps", "0.1", "--mc", "--seed", "1",
                      "--no-independence-moves"]
    static let base = toy + ["--paths", "16", "--inner", "8"]

    /// The widest reported interval of a toy JSON relative to its estimate, computed here from the points.
    static func widest(_ j: JSONValue) -> Double {
        PrecisionTargetTests.widest(j, keys: [("interval_mc", "d_zeta_mc"), ("interval_lower_mc", "d_zeta_lower_mc")])
    }

    /// 100-coordinate units at K = 16, J = 8, the random walk alone: the bracket is reported at first (stage 1 not decorrelated, the
    /// islands' noise a good part of the weights' spread), so the rounds double stage 1's sweeps once and J
    /// until the sampled interval stands; the last round is a plain run at its budget, number for number.
    func testTheRoundsRaiseWhatKeptTheSampledIntervalOutAndStartAfresh() async throws {
        let j = try await runJSON(Self.base + ["--target-width", "0.01", "--json"])
        let t = try XCTUnwrap(j["precision_target"])
        XCTAssertEqual(t["outcome"]?.stringValue, "reached")
        let rounds = try XCTUnwrap(t["rounds"]?.arrayValue)
        XCTAssertGreaterThanOrEqual(rounds.count, 2)
        XCTAssertEqual(rounds.first?["source"]?.stringValue, "bracket")
        XCTAssertEqual(rounds.last?["source"]?.stringValue, "sampled")
        for (r, round) in rounds.enumerated() {
            XCTAssertEqual(round["paths"]?.doubleValue, 16, "J and stage 1's sweeps are the levers here, not K")
            XCTAssertEqual(round["inner"]?.doubleValue, Double(8 << r))
            XCTAssertEqual(round["stage1_sweeps"]?.doubleValue, r == 0 ? 20 : 40)
            let w = try XCTUnwrap(round["width"]?.doubleValue)
            if r < rounds.count - 1 { XCTAssertGreaterThan(w, 0.01) } else { XCTAssertLessThanOrEqual(w, 0.01) }
        }
        XCTAssertEqual(try XCTUnwrap(rounds.last?["width"]?.doubleValue), Self.widest(j), accuracy: 1e-12)
        // Each round starts afresh from the seed: the last is the run at its budget without the target.
        let last = try XCTUnwrap(rounds.last)
        let plain = try await runJSON(Self.toy + ["--paths", "16", "--inner", "\(Int(last["inner"]?.doubleValue ?? 0))",
                                                   "--stage1-sweeps", "40", "--json"])
        XCTAssertEqual(j["points"], plain["points"])
        XCTAssertEqual(j["monte_carlo"], plain["monte_carlo"])
        XCTAssertNil(plain["precision_target"])
    }

    func testTheBracketAndTheBudgetStopIt() async throws {
        // Coupling 2: stage 2's weights vary over stage 1's draws far beyond the rule, a bracket no round narrows.
        let strong = try await runJSON(["toy", "--family", "layered", "--units", "4,4", "--unit-size", "30,30", "--coupling", "2",
                                        "--eps", "0.1", "--mc", "--paths", "16", "--inner", "8", "--seed", "1", "--target-width", "0.01", "--json"])
        XCTAssertEqual(strong["precision_target"]?["outcome"]?.stringValue, "bracket_limited")
        XCTAssertEqual(strong["precision_target"]?["rounds"]?.arrayValue?.count, 1)
        // A sampled interval over the target: K and J double until K would pass --max-paths.
        let args = ["toy", "--family", "layered", "--units", "3,3,3", "--unit-size", "20,20,20", "--eps", "0.1", "--mc", "--paths", "16",
                    "--inner", "8", "--seed", "1", "--target-width", "0.002", "--max-paths", "64"]
        let capped = try await runJSON(args + ["--json"])
        XCTAssertEqual(capped["precision_target"]?["outcome"]?.stringValue, "budget_spent")
        let rounds = try XCTUnwrap(capped["precision_target"]?["rounds"]?.arrayValue)
        XCTAssertEqual(rounds.map { $0["paths"]?.doubleValue }, [16, 32, 64])
        XCTAssertEqual(rounds.map { $0["inner"]?.doubleValue }, [8, 16, 32])
        XCTAssertTrue(rounds.allSatisfy { $0["source"]?.stringValue == "sampled" })
        let text = await runCLI(args).out
        XCTAssertTrue(text.contains("not reached within K ≤ 64") && text.contains("raise --max-paths"), text)
    }

    func testMisuseIsRefused() async throws {
        let layered = ["toy", "--family", "layered", "--units", "3,3", "--unit-size", "10,10", "--eps", "0.1"]
        for (args, message) in [(layered + ["--target-width", "0.1"], "add --mc"),
                                (layered + ["--mc", "--max-paths", "100"], "--max-paths caps --target-width"),
                                (layered + ["--mc", "--target-width", "0"], "--target-width: '0.0' is not allowed"),
                                (layered + ["--mc", "--target-width", "0.1", "--trials", "2"], "runs one trial"),
                                (layered + ["--mc", "--target-width", "0.1", "--joint"], "drop --joint"),
                                (layered + ["--mc", "--target-width", "0.1", "--max-paths", "10"], "at least the starting K = 64"),
                                (["toy", "--family", "constant", "--lambdas", "1", "--mc", "--target-width", "0.1"],
                                 "--target-width is a setting of --family layered")] {
            let r = await runCLICapturingErrors(args)
            XCTAssertEqual(r.status, 2, "\(args): \(r.err)")
            XCTAssertTrue(r.err.contains(message), "\(args): \(r.err)")
        }
    }
}
