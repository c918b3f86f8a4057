import Foundation
import TwoScaleCLI
import TwoScaleCore
import TwoScaleFormats
import XCTest

/// Same command and seed → the same bytes: JSON (timing keys removed, see docs/RELIABILITY.md) and
/// files (stores, weights), across repeated runs and across `--threads 1` and `--threads 2`.
final class DeterminismTests: ScratchDirectoryTestCase {
    override class var scratchTag: String { "det" }

    /// The JSON text of `args` without timing keys, re-serialised (so the comparison is of bytes).
    func bytes(_ args: [String]) async throws -> String {
        let r = await runCLICapturingErrors(args)
        XCTAssertEqual(r.status, 0, "\(args): \(r.err)")
        let v = try JSONValue.parse(Data(r.out.utf8), source: args.first ?? "")
        // Paths of per-run folders differ by design: drop them before comparing.
        return try withoutTimingKeys(v).serialized()
    }

    func checkEd(_ extra: [String]) async throws {
        let base = ["ed", "--arch", "4-5-3", "--samples", "6", "--paths", "6", "--inner", "4", "--sigma2", "0.3",
                    "--noise-samples", "2", "--seed", "11", "--eps", "1e-3:0.5:4", "--zeta", "0.7", "--lower",
                    "--bootstrap", "40", "--abbas-n", "1000", "--json"] + extra
        let a = try await bytes(base + ["--threads", "1", "--store", dir + "/a"])
        let b = try await bytes(base + ["--threads", "2", "--store", dir + "/b"])
        let c = try await bytes(base + ["--threads", "2"])  // no store: the same numbers
        XCTAssertEqual(a, b, "ed \(extra): --threads 1 vs 2")
        XCTAssertEqual(a, c, "ed \(extra): with and without a store")
        XCTAssertFalse(files(dir + "/a").isEmpty)
        XCTAssertEqual(files(dir + "/a"), files(dir + "/b"), "store bytes, --threads 1 vs 2")
        // analyze on the store, at both thread counts, reproduces ed.
        let an = ["--eps", "1e-3:0.5:4", "--zeta", "0.7", "--lower", "--bootstrap", "40", "--abbas-n", "1000", "--json"]
        let x = try await bytes(["analyze", dir + "/a"] + an + ["--threads", "1"])
        let y = try await bytes(["analyze", dir + "/b"] + an + ["--threads", "2"])
        XCTAssertEqual(x, y, "analyze: --threads 1 vs 2")
        // analyze reproduces ed, generic rank and bracket included (it rebuilds the model from the store's settings).
        XCTAssertEqual(x, a, "analyze reproduces ed")
        XCTAssertEqual(try JSONValue.parse(Data(x.utf8), source: "analyze")["d_zeta_limit_kind"], .string(extra.contains("output") ? "lower_bound" : "exact"))
        try FileManager.default.removeItem(atPath: dir + "/a")
        try FileManager.default.removeItem(atPath: dir + "/b")
    }

    func testEdMarkovAndAnalyze() async throws { try await checkEd([]) }

    func testEdOutputFisher() async throws { try await checkEd(["--fisher", "output", "--activation", "tanh"]) }

    func testFisherRepeats() async throws {
        let args = ["fisher", "--arch", "4-5-3", "--data", "synthetic:gaussian", "--samples", "7", "--fisher", "markov",
                    "--sigma2", "0.2", "--noise-samples", "3", "--seed", "4", "--json"]
        let a = try await bytes(args), b = try await bytes(args)
        XCTAssertEqual(a, b)
        let o = args.map { $0 == "markov" ? "output" : $0 }
        let c = try await bytes(o), d = try await bytes(o)
        XCTAssertEqual(c, d)
    }

    func testTrainRepeatsWithTheSameWeightsBytes() async throws {
        let args = ["train", "--arch", "3-6-2", "--data", "synthetic:teacher:3-4-2", "--samples", "40", "--batch", "8",
                    "--epochs", "3", "--holdout", "0.25", "--seed", "9", "--json"]
        let a = try await bytes(args + ["--weights-out", dir + "/w1.json", "--checkpoints", dir + "/c1"])
        let b = try await bytes(args + ["--weights-out", dir + "/w2.json", "--checkpoints", dir + "/c2"])
        XCTAssertEqual(a, b)
        XCTAssertEqual(FileManager.default.contents(atPath: dir + "/w1.json"), FileManager.default.contents(atPath: dir + "/w2.json"))
        let c1 = files(dir + "/c1"), c2 = files(dir + "/c2")
        XCTAssertFalse(c1.isEmpty)
        // index.json may name its own folder; every weights file must match.
        XCTAssertEqual(c1.filter { $0.key != "index.json" }, c2.filter { $0.key != "index.json" })
    }

    /// The smc estimator with independence sweeps (each replicate's pilot on a stream of its own) on a
    /// three-stage layered toy: the same bytes at 1 and 2 threads, and the setting written.
    func testIndependenceMovesAcrossThreadCounts() async throws {
        let args = ["toy", "--family", "layered", "--units", "3,4,2", "--unit-size", "5,3,4", "--eps", "1e-3,0.1", "--mc",
                    "--paths", "8", "--inner", "8", "--trace-draws", "200", "--independence-moves", "--seed", "7", "--json"]
        let a = try await bytes(args + ["--threads", "1"])
        let b = try await bytes(args + ["--threads", "2"])
        XCTAssertEqual(a, b, "toy --independence-moves: --threads 1 vs 2")
        XCTAssertEqual(try JSONValue.parse(Data(a.utf8), source: "toy")["monte_carlo"]?["independence_moves"], .bool(true))
        let off = try await bytes(args.filter { $0 != "--independence-moves" } + ["--threads", "2"])
        XCTAssertNil(try JSONValue.parse(Data(off.utf8), source: "toy")["monte_carlo"]?["independence_moves"])
        XCTAssertNotEqual(a, off)
    }

    /// `ed --chains 2` on a network of two later stages: the same bytes at 1 and 2 threads, the setting written,
    /// and the summary's first line says the estimates are the chains' mean.
    func testEdChainsAcrossThreadCounts() async throws {
        let args = ["ed", "--arch", "4-3-3-2", "--samples", "6", "--paths", "8", "--inner", "8", "--trace-draws", "100",
                    "--eps", "1e-3,0.1", "--lower", "--chains", "2", "--seed", "5", "--json"]
        let a = try await bytes(args + ["--threads", "1"])
        let b = try await bytes(args + ["--threads", "2"])
        XCTAssertEqual(a, b, "ed --chains 2: --threads 1 vs 2")
        XCTAssertEqual(try JSONValue.parse(Data(a.utf8), source: "ed")["chains"], .int(2))
        let one = try await bytes(args.filter { $0 != "--chains" && $0 != "2" } + ["--threads", "2"])
        XCTAssertNil(try JSONValue.parse(Data(one.utf8), source: "ed")["chains"])
        XCTAssertNotEqual(a, one)
        let text = await runCLICapturingErrors(args.filter { $0 != "--json" } + ["--quiet"])
        XCTAssertEqual(text.status, 0, text.err)
        let head = text.out.components(separatedBy: "\n")[0]
        XCTAssert(head.hasPrefix("2sED of 4-3-3-2") && head.contains("2 chains (estimates their mean"), head)
    }

    func testGapAcrossThreadCounts() async throws {
        let args = ["gap", "--teacher", "3-4-2", "--student", "3-5-2", "--n", "20,40", "--trials", "3", "--epochs", "2",
                    "--population", "200", "--random-draws", "2", "--seed", "3", "--json"]
        let a = try await bytes(args + ["--threads", "1"])
        let b = try await bytes(args + ["--threads", "2"])
        XCTAssertEqual(a, b, "gap: --threads 1 vs 2")
    }

    /// A box with a negative end (`--box -0.5:0.5`, and the default `-1:1` written out) is read as the
    /// option's value, not as a flag, and gives the same bytes as the `--box=…` spelling.
    func testNegativeBoxIsAValueNotAFlag() async throws {
        let cases: [[String]] = [
            ["ed", "--arch", "3-4-2", "--samples", "5", "--paths", "4", "--inner", "8", "--sigma2", "0.2",
             "--seed", "2", "--eps", "0.1,0.3", "--lower", "--trace-draws", "100", "--json"],
            ["fisher", "--arch", "3-4-2", "--data", "synthetic:gaussian", "--samples", "5", "--sigma2", "0.2",
             "--seed", "2", "--json"],
            ["train", "--arch", "3-4-2", "--data", "synthetic:teacher:3-2", "--samples", "20", "--batch", "5",
             "--epochs", "1", "--init", "box", "--seed", "2", "--json"],
            ["gap", "--teacher", "3-2-2", "--student", "3-4-2", "--n", "20", "--trials", "1", "--epochs", "1",
             "--population", "100", "--random-draws", "2", "--seed", "2", "--json"],
        ]
        for args in cases {
            let spaced = try await bytes(args + ["--box", "-0.5:0.5"])
            let joined = try await bytes(args + ["--box=-0.5:0.5"])
            XCTAssertEqual(spaced, joined, "\(args[0]) --box -0.5:0.5")
            if args[0] != "train" {
                let explicitDefault = try await bytes(args + ["--box", "-1:1"])
                let implicitDefault = try await bytes(args)
                XCTAssertEqual(explicitDefault, implicitDefault, "\(args[0]): default box")
                XCTAssertNotEqual(spaced, implicitDefault, "\(args[0]): the box changes the numbers")
            }
        }
    }
}
