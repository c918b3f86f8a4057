import Foundation
import Networks
@testable import TwoScaleCLI
import TwoScaleCore
import TwoScaleFormats
import XCTest

/// `toy --mc` and `ed/analyze --estimator` end to end.
final class EstimatorCommandTests: XCTestCase {
    func run(_ args: [String]) async -> (Int32, String, String) {
        let r = await runCLICapturingErrors(args)
        return (r.status, r.out, r.err)
    }

    func testToyMonteCarloJSON() async throws {
        let (s, out, err) = await run(["toy", "--family", "bernoulli", "--dim", "200", "--box", "0.05:0.95",
                                       "--eps", "0.001,0.1", "--mc", "--paths", "40", "--trials", "3", "--json"])
        XCTAssertEqual(s, 0, err)
        let j = try JSONValue.parse(Data(out.utf8), source: "stdout")
        XCTAssertEqual(j["estimator"], .string("smc"))
        let points = try XCTUnwrap(j["points"]?.arrayValue)
        XCTAssertEqual(points.count, 2)
        for p in points {
            let exact = try XCTUnwrap(p["d_zeta"]?.doubleValue), mc = try XCTUnwrap(p["d_zeta_mc"]?.doubleValue)
            let ci = try XCTUnwrap(p["ci95_mc"]?.arrayValue).compactMap(\.doubleValue)
            XCTAssertEqual(ci.count, 2)
            XCTAssertLessThan(ci[0], mc)
            XCTAssertGreaterThan(ci[1], mc)
            XCTAssertEqual(try XCTUnwrap(p["error_mc"]?.doubleValue), mc - exact, accuracy: 1e-9)
            XCTAssertEqual(p["trials"], .int(3))
            let covered = try XCTUnwrap(p["covered"]?.doubleValue)
            XCTAssertEqual(try XCTUnwrap(p["coverage"]?.doubleValue), covered / 3, accuracy: 1e-12)
        }
        // The exact columns are unchanged by --mc.
        let (_, plainOut, _) = await run(["toy", "--family", "bernoulli", "--dim", "200", "--box", "0.05:0.95",
                                          "--eps", "0.001,0.1", "--json"])
        let base = try JSONValue.parse(Data(plainOut.utf8), source: "stdout")
        XCTAssertEqual(base["points"]?.arrayValue?.first?["d_zeta"], points.first?["d_zeta"])
    }

    func testEdSMCReportAndRefusals() async throws {
        let base = ["ed", "--arch", "3-4-3", "--data", "synthetic:gaussian", "--samples", "5", "--sigma2", "0.5",
                    "--eps", "0.01,0.2", "--estimator", "smc", "--paths", "8", "--inner", "8", "--seed", "2"]
        let (s, out, err) = await run(base + ["--lower", "--json"])
        XCTAssertEqual(s, 0, err)
        let j = try JSONValue.parse(Data(out.utf8), source: "stdout")
        XCTAssertEqual(j["estimator"], .string("smc"))
        XCTAssertEqual(j["dimension"], .int(24))
        for p in try XCTUnwrap(j["points"]?.arrayValue) {
            let dz = try XCTUnwrap(p["d_zeta"]?.doubleValue)
            XCTAssertEqual(p["d_zeta_joint"]?.doubleValue, dz)
            XCTAssertNotNil(p["d_zeta_lower"]?.doubleValue)
            let ci = try XCTUnwrap(p["ci95"]?.arrayValue).compactMap(\.doubleValue)
            XCTAssertTrue(ci[0] <= dz && dz <= ci[1])
            XCTAssertEqual(try XCTUnwrap(p["stage_log_z"]?.arrayValue).count, 2)
            XCTAssertEqual(try XCTUnwrap(p["stage_ess"]?.arrayValue).count, 1)
            XCTAssertGreaterThanOrEqual(dz, 0.6667 * 24 - 1e-9)
            // The upper bound shares stage 1 with the estimate: the two differ by their last terms only.
            let eps = try XCTUnwrap(p["eps"]?.doubleValue)
            let stages = try XCTUnwrap(p["stage_log_z"]?.arrayValue).compactMap(\.doubleValue)
            let ub = try XCTUnwrap(p["d_zeta_upper"]?.doubleValue), term = try XCTUnwrap(p["last_log_z_upper"]?.doubleValue)
            XCTAssertEqual(ub - dz, (term - stages[1]) / Foundation.log(1 / eps), accuracy: 1e-9)
            XCTAssertEqual(try XCTUnwrap(p["gap_upper"]?.doubleValue), ub - dz, accuracy: 1e-12)
            XCTAssertGreaterThan(ub, dz)
            XCTAssertEqual(try XCTUnwrap(p["ci95_upper"]?.arrayValue).count, 2)
            XCTAssertNotNil(p["d_zeta_lower_upper"]?.doubleValue)
            XCTAssertEqual(try XCTUnwrap(p["ci95_lower_upper"]?.arrayValue).count, 2)
            XCTAssertGreaterThan(try XCTUnwrap(p["last_se_upper"]?.doubleValue), 0)
            XCTAssertLessThanOrEqual(try XCTUnwrap(p["last_log_z_lower_upper"]?.doubleValue), term + 1e-12, "mean log ≤ log mean")
            // The bound's own spread over the 8 outer particles, and its lognormal shortfall in d_ζ.
            let spread = try XCTUnwrap(p["last_log_var_upper"]?.doubleValue)
            XCTAssertGreaterThan(spread, 0)
            XCTAssertEqual(try XCTUnwrap(p["shortfall_upper"]?.doubleValue),
                           LogNormalSpread.shortfall(logVariance: spread, count: 8) / Foundation.log(1 / eps), accuracy: 1e-12)
        }
        XCTAssertNil(j["above_bound"], "estimates below their bounds")
        let (_, text, _) = await run(base + ["--lower"])
        XCTAssertTrue(text.contains("2sED ≤") && text.contains("lower ≤"), text)
        let (_, noLower, _) = await run(base + ["--json"])
        let q = try JSONValue.parse(Data(noLower.utf8), source: "stdout")
        let first = try XCTUnwrap(q["points"]?.arrayValue?.first)
        XCTAssertNotNil(first["d_zeta_upper"])
        XCTAssertNil(first["d_zeta_lower_upper"], "no lower keys without --lower")
        for extra in [["--store", "/tmp/never-written-\(UUID().uuidString)"], ["--fisher", "output"], ["--abbas-n", "1000"]] {
            let (s2, out2, err2) = await run(base + extra)
            XCTAssertEqual(s2, 2, "\(extra): \(err2)")
            XCTAssertTrue(out2.isEmpty)
            XCTAssertTrue(err2.contains("--estimator plain"), err2)
        }
        let (s3, _, err3) = await run(["analyze", "/nonexistent", "--estimator", "smc"])
        XCTAssertEqual(s3, 2)
        XCTAssertTrue(err3.contains("new run"), err3)
    }

    /// Without --estimator, ed runs smc — the same bytes as asking for it — unless the run needs
    /// uniform-path spectra: then plain, with one note on stderr naming the flags, and the same bytes as
    /// --estimator plain (and no note when the estimator is given).
    /// `ed --estimator tempering` (joint tempering): the same ĉ and Fisher rank as smc at the seed, a 95% interval per ε with the
    /// bracket beside it, the readable table, the lower 2sED with `--lower`; smc's own flags and a bad budget refused.
    func testEdTemperingReportAndRefusals() async throws {
        let net = ["--arch", "4-3-3", "--data", "synthetic:gaussian", "--samples", "20", "--sigma2", "0.1", "--seed", "1", "--eps", "0.01,0.1"]
        let (s, out, err) = await run(["ed", "--estimator", "tempering"] + net + ["--paths", "16", "--inner", "3", "--json"])
        XCTAssertEqual(s, 0, err)
        let j = try JSONValue.parse(Data(out.utf8), source: "stdout")
        XCTAssertEqual(j["estimator"], .string("tempering"))
        XCTAssertEqual(j["paths"], .int(16))
        XCTAssertEqual(j["inner"], .int(3))
        XCTAssertEqual(j["sweeps"], .int(5))
        let (_, smcOut, _) = await run(["ed"] + net + ["--paths", "8", "--inner", "8", "--json"])
        let smc = try JSONValue.parse(Data(smcOut.utf8), source: "stdout")
        XCTAssertEqual(j["scale"], smc["scale"], "the same ĉ")
        XCTAssertEqual(j["rank_generic"], smc["rank_generic"])
        for p in try XCTUnwrap(j["points"]?.arrayValue) {
            let d = try XCTUnwrap(p["d_zeta"]?.doubleValue)
            let ci = try XCTUnwrap(p["ci95"]?.arrayValue).compactMap(\.doubleValue)
            XCTAssertTrue(ci[0] < d && d < ci[1])
            XCTAssertEqual(try XCTUnwrap(p["replicate_log_z"]?.arrayValue).count, 3)
            XCTAssertEqual(try XCTUnwrap(p["replicate_log_z_reverse"]?.arrayValue).count, 3)
            XCTAssertEqual(try XCTUnwrap(p["d_zeta_bracket"]?.arrayValue).count, 2)
            // The interval to read: the hull of the two passes' intervals, cut to the bracket.
            let rev = try XCTUnwrap(p["ci95_reverse"]?.arrayValue).compactMap(\.doubleValue)
            let bracket = try XCTUnwrap(p["d_zeta_bracket"]?.arrayValue).compactMap(\.doubleValue)
            let read = try XCTUnwrap(p["interval"]?.arrayValue).compactMap(\.doubleValue)
            XCTAssertEqual(p["interval_source"], .string("sampled"))
            XCTAssertEqual(read, [max(min(ci[0], rev[0]), bracket[0]), min(max(ci[1], rev[1]), bracket[1])])
            XCTAssertNil(p["d_zeta_lower"])
        }
        // --lower: the lower 2sED from tempering each prefix of layers, its interval cut to the lower bracket; the
        // 2sED's numbers as without it.
        let (sl, outLower, errLower) = await run(["ed", "--estimator", "tempering"] + net + ["--paths", "16", "--inner", "3", "--lower", "--json"])
        XCTAssertEqual(sl, 0, errLower)
        let jl = try JSONValue.parse(Data(outLower.utf8), source: "stdout")
        for (p, q) in zip(try XCTUnwrap(jl["points"]?.arrayValue), try XCTUnwrap(j["points"]?.arrayValue)) {
            XCTAssertEqual(p["d_zeta"], q["d_zeta"])
            XCTAssertEqual(p["interval"], q["interval"])
            let low = try XCTUnwrap(p["d_zeta_lower"]?.doubleValue)
            let ci = try XCTUnwrap(p["ci95_lower"]?.arrayValue).compactMap(\.doubleValue)
            let bracket = try XCTUnwrap(p["d_zeta_lower_bracket"]?.arrayValue).compactMap(\.doubleValue)
            XCTAssertTrue(ci[0] < low && low < ci[1])
            XCTAssertEqual(p["interval_lower_source"], .string("sampled"))
            XCTAssertEqual(try XCTUnwrap(p["interval_lower"]?.arrayValue).compactMap(\.doubleValue), [max(ci[0], bracket[0]), min(ci[1], bracket[1])])
            let share = try XCTUnwrap(p["normalization_share_lower"]?.doubleValue)
            XCTAssertTrue(share >= 0 && share <= 1)
        }
        let (lt, lowerText, _) = await run(["ed", "--estimator", "tempering"] + net + ["--paths", "16", "--inner", "3", "--lower"])
        XCTAssertEqual(lt, 0)
        XCTAssertTrue(lowerText.contains("interval lower") && lowerText.contains("bracket lower"), lowerText)
        let (st, text, _) = await run(["ed", "--estimator", "tempering"] + net + ["--paths", "16", "--inner", "3"])
        XCTAssertEqual(st, 0)
        XCTAssertTrue(text.contains("tempering estimator") && text.contains("certified bracket") && text.contains("5 sweeps per step")
                      && text.contains("reverse ci95"), text)
        // --sweeps is tempering's: it reaches the sampler (other numbers), and any other estimator refuses it.
        let (s2, out2, err2) = await run(["ed", "--estimator", "tempering"] + net + ["--paths", "16", "--inner", "3", "--sweeps", "2", "--json"])
        XCTAssertEqual(s2, 0, err2)
        let j2 = try JSONValue.parse(Data(out2.utf8), source: "stdout")
        XCTAssertEqual(j2["sweeps"], .int(2))
        XCTAssertNotEqual(j2["points"]?.arrayValue?.first?["d_zeta"], j["points"]?.arrayValue?.first?["d_zeta"])
        XCTAssertEqual(j2["scale"], j["scale"])
        for (extra, says) in [([String](), "and this run uses smc (the default): drop --sweeps, or add --estimator tempering"),
                              (["--estimator", "plain"], "and this run uses plain: drop --sweeps")] {
            let (code, o, e) = await run(["ed"] + net + extra + ["--sweeps", "3"])
            XCTAssertEqual(code, 2)
            XCTAssertTrue(e.contains("--sweeps is a setting of the tempering estimator") && e.contains(says), e)
            XCTAssertTrue(o.isEmpty)
        }
        for (args, says) in [(["--island-sweeps", "2"], "--island-sweeps"), (["--inner", "1"], "--inner"),
                             (["--paths", "2"], "--paths"), (["--sweeps", "0"], "--sweeps")] {
            let (code, o, e) = await run(["ed", "--estimator", "tempering"] + net + args)
            XCTAssertEqual(code, 2, "\(args)")
            XCTAssertTrue(e.contains(says), "\(args): \(e)")
            XCTAssertTrue(o.isEmpty)
        }
        // The former name still runs, the same bytes, with a note that says what it is now.
        let oldOut = OutputCapture(), oldErr = OutputCapture()
        let sOld = await Console.$capture.withValue(oldOut) {
            await Console.$errorCapture.withValue(oldErr) {
                await Console.$quiet.withValue(false) {
                    await TwoScaleMain.execute(["ed", "--estimator", "joint"] + net + ["--paths", "16", "--inner", "3", "--json"])
                }
            }
        }
        let (outOld, errOld) = (oldOut.text, oldErr.text)
        XCTAssertEqual(sOld, 0, errOld)
        XCTAssertEqual(withoutTimingKeys(try JSONValue.parse(Data(outOld.utf8), source: "stdout")), withoutTimingKeys(j))
        XCTAssertTrue(errOld.contains("--estimator joint is now --estimator tempering"), errOld)
        // compare ranks by the lower 2sED, which tempering now estimates.
        XCTAssertNoThrow(try CompareCommand.parse(["--archs", "4-3-3,4-2-3", "--data", "synthetic:teacher:4-3-3",
                                                   "--estimator", "tempering"]).validate())
    }

    /// `ed --estimator tempering --checkpoint DIR`: the same numbers as without it, meta.json and one snapshot per
    /// sampler in DIR, and the same bytes again when rerun on the finished folder; with `--lower` in the same folder,
    /// the joint samplers' snapshots are read, the lower 2sED's parts saved, and its numbers are those of a run without
    /// checkpoints; another run's folder, and --checkpoint with smc or --target-width, are refused. (Runs stopped
    /// mid-way: JointCheckpointTests, TemperedLowerCheckpointTests.)
    func testEdTemperingCheckpoint() async throws {
        let dir = NSTemporaryDirectory() + "twoscale-checkpoint-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let net = ["ed", "--estimator", "tempering", "--arch", "4-3-3", "--samples", "20", "--eps", "0.01,0.1", "--paths", "16", "--inner", "3", "--json"]
        let (s0, plain, e0) = await run(net)
        XCTAssertEqual(s0, 0, e0)
        let (s1, first, e1) = await run(net + ["--checkpoint", dir])
        XCTAssertEqual(s1, 0, e1)
        let parsed = { (t: String) in withoutTimingKeys(try JSONValue.parse(Data(t.utf8), source: "stdout")) }
        XCTAssertEqual(try parsed(first), try parsed(plain))
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: dir)),
                       ["meta.json", "joint-0.snapshot", "joint-1.snapshot", "joint-2.snapshot"])
        let (s2, again, e2) = await run(net + ["--checkpoint", dir, "--threads", "1"])
        XCTAssertEqual(s2, 0, e2)
        XCTAssertEqual(try parsed(again), try parsed(plain))
        let (s3, _, e3) = await run(net.map { $0 == "0.01,0.1" ? "0.01,0.2" : $0 } + ["--checkpoint", dir])
        XCTAssertEqual(s3, 2)
        XCTAssertTrue(e3.contains("another run"), e3)
        let (s4, lower, e4) = await run(net + ["--lower"])
        XCTAssertEqual(s4, 0, e4)
        // Snapshots read and not written again keep their modification dates.
        func dates() throws -> [String: Date] {
            try Dictionary(uniqueKeysWithValues: FileManager.default.contentsOfDirectory(atPath: dir).map { name in
                (name, try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: dir + "/" + name)[.modificationDate] as? Date))
            })
        }
        var before = try dates()
        for threads in ["2", "1"] {
            let (s5, saved, e5) = await run(net + ["--lower", "--checkpoint", dir, "--threads", threads])
            XCTAssertEqual(s5, 0, e5)
            XCTAssertEqual(try parsed(saved), try parsed(lower))
            let after = try dates()
            XCTAssertEqual(after.filter { before[$0.key] != nil }, before, "the finished samplers' snapshots are read, not written again")
            before = after
        }
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: dir)),
                       Set(["meta.json", "lower-stage1.snapshot"] + (0..<3).flatMap { r in ["joint-\(r)", "lower-1-\(r)"].map { $0 + ".snapshot" } }))
        for (extra, says) in [(["--estimator", "smc"], "does not save checkpoints"), (["--target-width", "0.05"], "drop one of them")] {
            var args = net + ["--checkpoint", dir] + extra
            if extra.contains("smc") { args.removeSubrange(1...2) }
            let (s, _, e) = await run(args)
            XCTAssertEqual(s, 2, "\(extra)")
            XCTAssertTrue(e.contains(says), e)
        }
    }

    func testEdDefaultEstimator() async throws {
        let common = ["ed", "--arch", "3-4-3", "--data", "synthetic:gaussian", "--samples", "5", "--sigma2", "0.5",
                      "--eps", "0.01,0.2", "--paths", "8", "--inner", "8", "--seed", "2", "--json"]
        let base = common + ["--trace-draws", "200"]  // smc only (an error with plain)
        // Not quiet (notes are silenced in notebooks); the store's path is dropped before comparing.
        func result(_ args: [String]) async throws -> (JSONValue, String) {
            let err = OutputCapture(), out = OutputCapture()
            let s = await Console.$capture.withValue(out) {
                await Console.$errorCapture.withValue(err) { await TwoScaleMain.execute(args) }
            }
            XCTAssertEqual(s, 0, "\(args): \(err.text)")
            guard case let .object(kv) = withoutTimingKeys(try JSONValue.parse(Data(out.text.utf8), source: "stdout")) else {
                XCTFail("not a JSON object: \(out.text.prefix(200))"); return (.null, err.text)
            }
            return (.object(kv.filter { $0.0 != "store" }), err.text)
        }
        let (implicit, quiet) = try await result(base)
        XCTAssertEqual(implicit["estimator"], .string("smc"))
        XCTAssertFalse(quiet.contains("note:"), quiet)
        let (explicit, _) = try await result(base + ["--estimator", "smc"])
        XCTAssertEqual(try implicit.serialized(), try explicit.serialized())
        // --island-sweeps: the default is 4 and recorded; another count is recorded and changes the islands
        // (the first layer, which does not use it, stays byte for byte).
        XCTAssertEqual(implicit["island_sweeps"], .int(4))
        let (four, _) = try await result(base + ["--island-sweeps", "4"])
        XCTAssertEqual(try implicit.serialized(), try four.serialized())
        let (nine, _) = try await result(base + ["--island-sweeps", "9"])
        XCTAssertEqual(nine["island_sweeps"], .int(9))
        guard case let .array(p4)? = implicit["points"], case let .array(p9)? = nine["points"],
              case let .array(z4)? = p4.first?["stage_log_z"], case let .array(z9)? = p9.first?["stage_log_z"] else {
            return XCTFail("no stage_log_z")
        }
        XCTAssertEqual(z4.first, z9.first)
        XCTAssertNotEqual(z4.last, z9.last)
        // --stage1-sweeps: the default (20) is not written and gives the same bytes; another count is recorded,
        // changes stage 1's term and moves its particles further (a larger smallest decorrelation).
        XCTAssertNil(implicit["stage1_sweeps"])
        let (twenty, _) = try await result(base + ["--stage1-sweeps", "20"])
        XCTAssertEqual(try implicit.serialized(), try twenty.serialized())
        let (sixty, _) = try await result(base + ["--stage1-sweeps", "60"])
        XCTAssertEqual(sixty["stage1_sweeps"], .int(60))
        guard case let .array(p60)? = sixty["points"], case let .array(z60)? = p60.first?["stage_log_z"] else { return XCTFail("no stage_log_z") }
        XCTAssertNotEqual(z4.first, z60.first)
        let d20 = try XCTUnwrap(implicit["smc"]?["stage1"]?["min_decorrelation"]?.doubleValue)
        let d60 = try XCTUnwrap(sixty["smc"]?["stage1"]?["min_decorrelation"]?.doubleValue)
        XCTAssertGreaterThan(d60, d20)
        // The islands' kernel is recorded (the random walk; no leapfrog steps).
        XCTAssertEqual(implicit["island_kernel"], .string("random-walk"))
        XCTAssertEqual(implicit["island_leapfrog"], .int(0))

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("twoscale-default-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (stored, note) = try await result(common + ["--store", dir + "/a", "--abbas-n", "1000"])
        XCTAssertEqual(note.split(separator: "\n").filter { $0.hasPrefix("note:") }.count, 1, note)
        XCTAssertTrue(note.contains("--store, --abbas-n") && note.contains("--estimator plain"), note)
        XCTAssertNotEqual(stored["estimator"], .string("smc"))
        let (plain, silent) = try await result(common + ["--store", dir + "/b", "--abbas-n", "1000", "--estimator", "plain"])
        XCTAssertFalse(silent.contains("note:"), silent)
        XCTAssertEqual(try stored.serialized(), try plain.serialized())
    }

    /// ĉ's draws by default: one per two parameters, at least 1000 (ed: the network's d; compare: the
    /// largest architecture's), as the JSON reports them; a given --trace-draws is kept.
    func testTraceDrawsDefault() async throws {
        XCTAssertEqual(TraceEstimate.defaultDraws(parameters: 976), 1000)
        XCTAssertEqual(TraceEstimate.defaultDraws(parameters: 2000), 1000)
        XCTAssertEqual(TraceEstimate.defaultDraws(parameters: 2001), 1001)
        XCTAssertEqual(TraceEstimate.defaultDraws(parameters: 25_408), 12_704)
        let base = ["ed", "--data", "synthetic:gaussian", "--samples", "5", "--sigma2", "0.5", "--eps", "0.1",
                    "--estimator", "smc", "--paths", "4", "--inner", "8", "--seed", "1", "--json"]
        for (arch, given, expected) in [("3-4-3", nil, 1000), ("60-40-3", nil, 1260), ("60-40-3", 77, 77)] as [(String, Int?, Int)] {
            let (s, out, err) = await run(base + ["--arch", arch] + (given.map { ["--trace-draws", "\($0)"] } ?? []))
            XCTAssertEqual(s, 0, err)
            let j = try JSONValue.parse(Data(out.utf8), source: "stdout")
            XCTAssertEqual(j["estimator"], .string("smc"))
            XCTAssertEqual(j["trace_draws"], .int(expected), "\(arch) \(String(describing: given))")
        }
        let compare = try CompareCommand.parse(["--archs", "54-16-7,54-40-7", "--data", "synthetic:teacher:54-16-7",
                                                "--samples", "100", "--estimator", "smc"])
        let list = try compare.architectures()
        XCTAssertEqual(compare.traceDraws(list), TraceEstimate.defaultDraws(parameters: 54 * 40 + 40 * 7))
        XCTAssertEqual(try CompareCommand.parse(["--archs", "54-16-7,54-40-7", "--data", "synthetic:teacher:54-16-7",
                                                 "--estimator", "smc", "--trace-draws", "300"]).traceDraws(list), 300)
        // toy --mc follows the same rule with the number of axes; a given --trace-draws is kept.
        let toy = ["toy", "--family", "bernoulli", "--box", "0.05:0.95", "--eps", "0.1", "--mc", "--paths", "4", "--json"]
        for (dim, given, expected) in [(3, nil, 1000), (2_001, nil, 1001), (4_000, nil, 2000), (4_000, 50, 50)] as [(Int, Int?, Int)] {
            let (s, out, err) = await run(toy + ["--dim", "\(dim)"] + (given.map { ["--trace-draws", "\($0)"] } ?? []))
            XCTAssertEqual(s, 0, err)
            let j = try JSONValue.parse(Data(out.utf8), source: "stdout")
            XCTAssertEqual(j["trace_draws"], .int(expected), "toy d = \(dim) \(String(describing: given))")
        }
        XCTAssertEqual(TraceEstimate.defaultDraws(parameters: 100_000), 50_000)
    }

    /// Bad Monte Carlo settings: one message naming the flag, exit status 2 (1 for an overflowing box), no output.
    func testBadMonteCarloInput() async {
        let toy = ["toy", "--family", "bernoulli", "--dim", "10", "--box", "0.1:0.9", "--mc"]
        let ed = ["ed", "--arch", "4-3-2", "--samples", "5", "--estimator", "smc", "--eps", "0.1"]
        let compare = ["compare", "--archs", "4-4-3,4-2-2-3", "--data", "synthetic:teacher:4-3-3", "--samples", "30"]
        let cases: [([String], Int32, String)] = [
            (toy + ["--paths", "1"], 2, "--paths"), (toy + ["--trace-draws", "0"], 2, "--trace-draws"),
            (toy + ["--trials", "0"], 2, "--trials"), (toy + ["--estimator", "foo"], 2, "--estimator"),
            (toy + ["--seed", "-1"], 2, "--seed"), (toy + ["--threads", "0"], 2, "--threads"),
            (ed + ["--paths", "3"], 2, "--paths"), (ed + ["--inner", "2"], 2, "--inner"),
            (ed + ["--inner", "7"], 2, "at least 4 per replicate"),
            (ed + ["--trace-draws", "1"], 2, "--trace-draws"), (ed + ["--resume"], 2, "--resume"),
            (ed + ["--shard", "1/2"], 2, "--shard"), (ed + ["--box=-1e200:1e200"], 1, "--box"),
            (ed + ["--island-sweeps", "0"], 2, "--island-sweeps"), (ed + ["--island-sweeps", "1001"], 2, "--island-sweeps"),
            (ed + ["--stage1-sweeps", "0"], 2, "--stage1-sweeps"), (ed + ["--stage1-sweeps", "1001"], 2, "--stage1-sweeps"),
            (ed + ["--estimator", "plain", "--stage1-sweeps", "30"], 2, "--stage1-sweeps is a setting of the smc estimator"),
            (ed + ["--outer-moves", "-1"], 2, "--outer-moves"), (ed + ["--outer-moves", "1001"], 2, "--outer-moves"),
            (ed + ["--tilt-moves", "-1"], 2, "--tilt-moves"), (ed + ["--tilt-moves", "10001"], 2, "--tilt-moves"),
            (ed + ["--tilt-moves", "4", "--outer-moves", "4"], 2, "not both"),
            (ed + ["--chains", "0"], 2, "--chains"), (ed + ["--chains", "65"], 2, "--chains"),
            (ed + ["--estimator", "plain", "--chains", "2"], 2, "--chains is a setting of the smc estimator"),
            // smc-only settings with plain: an error, not ignored (explicit plain, and plain chosen for --store).
            (ed + ["--estimator", "plain", "--island-sweeps", "8"], 2, "--island-sweeps is a setting of the smc estimator"),
            (ed + ["--island-kernel", "hamiltonian"], 2, "--island-kernel"),  // removed: an unknown option
            // compare takes the same island flags, for smc only (its default estimator is plain).
            (compare + ["--island-sweeps", "8"], 2, "--island-sweeps is a setting of the smc estimator"),
            (compare + ["--estimator", "plain", "--trace-draws", "300"], 2, "--trace-draws is a setting of the smc estimator"),
            (compare + ["--estimator", "smc", "--island-sweeps", "0"], 2, "--island-sweeps"),
            (compare + ["--estimator", "smc", "--outer-moves", "1001"], 2, "--outer-moves"),
            (["ed", "--arch", "4-3-2", "--samples", "5", "--eps", "0.1", "--store", NSTemporaryDirectory() + "ts-never-written",
              "--trace-draws", "100"], 2, "(chosen for --store)"),
        ]
        for (args, code, flag) in cases {
            let (s, out, err) = await run(args)
            XCTAssertEqual(s, code, "\(args): \(err)")
            XCTAssertTrue(out.isEmpty, "\(args)")
            XCTAssertTrue(err.contains(flag), "\(args): \(err)")
            XCTAssertEqual(err.split(separator: "\n").count, err.contains("Usage") ? err.split(separator: "\n").count : 1, "\(args): \(err)")
        }
    }

    /// `compare` records every setting its estimator ran with, outer moves included (they were left out of
    /// its JSON before the comparison's settings carried the estimator's budget whole).
    func testCompareRecordsTheEstimatorsOwnSettings() async throws {
        let json = try await runJSON(["compare", "--archs", "8-4-3,8-3-4-3", "--data", "synthetic:teacher:8-4-3", "--samples", "40",
                                      "--fisher-samples", "10", "--estimator", "smc", "--outer-moves", "2", "--island-sweeps", "3",
                                      "--trace-draws", "100", "--paths", "8", "--inner", "8", "--seeds", "1", "--epochs", "1",
                                      "--batch", "20", "--json"])
        XCTAssertEqual(json["outer_moves"]?.doubleValue, 2)
        XCTAssertEqual(json["island_sweeps"]?.doubleValue, 3)
        XCTAssertEqual(json["trace_draws"]?.doubleValue, 100)
        XCTAssertEqual(json["paths"]?.doubleValue, 8)
    }
}
