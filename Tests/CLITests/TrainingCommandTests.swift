import Foundation
import TwoScaleCLI
import TwoScaleCore
import TwoScaleFormats
import XCTest

/// `bound`, `train`, `gap` and `bench-train` run in-process.
final class TrainingCommandTests: XCTestCase {
    func run(_ args: [String]) async -> (status: Int32, out: String) {
        let cap = OutputCapture()
        let status = await Console.$capture.withValue(cap) { await TwoScaleMain.execute(args) }
        return (status, cap.text)
    }

    func runJSON(_ args: [String], file: StaticString = #filePath, line: UInt = #line) async throws -> JSONValue {
        let (status, out) = await run(args + ["--json"])
        XCTAssertEqual(status, 0, "twoscale \(args.joined(separator: " "))", file: file, line: line)
        return try JSONValue.parse(Data(out.utf8), source: "stdout")
    }

    func testBoundJSON() async throws {
        let j = try await runJSON(["bound", "--n", "1000,10000,100000,1000000", "--gamma", "1", "--zeta", "0.6667",
                                   "--family", "constant", "--lambdas", "4,0.01", "--delta", "0.05", "--C", "2", "--H", "3", "--K", "1.5"])
        let pts = try XCTUnwrap(j["points"]?.arrayValue)
        XCTAssertEqual(pts.count, 4)
        let want = [0.154793, 0.072712, 0.033338, 0.015054]
        for (p, e) in zip(pts, want) {
            XCTAssertEqual(p["eps_n"]!.doubleValue!, e, accuracy: 6e-7)
            XCTAssertEqual(p["deviation"]!.doubleValue!, 2 * p["eps_n"]!.doubleValue!, accuracy: 1e-15)
            // Tail by hand from the reported d_ζ.
            let n = p["n"]!.doubleValue!, dz = p["d_zeta_used"]!.doubleValue!, eps = p["eps_n"]!.doubleValue!
            XCTAssertEqual(p["d_zeta_estimate"]?.doubleValue, dz)  // a toy model is exact: nothing to widen
            XCTAssertEqual(p["log_tail"]!.doubleValue!, log(3) - dz * log(eps) - 1.5 * log(n), accuracy: 1e-10)
        }
        // d_ζ for λ = (4, 0.01), trace normalisation: c = 2/4.01, closed form.
        let eps = pts[0]["eps_n"]!.doubleValue!, z = 0.6667, c = 2 / 4.01
        let t = pow(eps, z - 1)
        let dz = 2 * z + (log1p(t * (c * 4).squareRoot()) + log1p(t * (c * 0.01).squareRoot())) / abs(log(eps))
        XCTAssertEqual(pts[0]["d_zeta_used"]!.doubleValue!, dz, accuracy: 1e-10)
        XCTAssertEqual(j["conservative"], .bool(true))
        XCTAssertNotNil(j["n_for_delta"]?.doubleValue)
        XCTAssertEqual(j["constants"]?["note"]?.stringValue, "user-set constants of the theorem")
        XCTAssertEqual(j["constants"]?["H"]?.doubleValue, 3)
    }

    func testBoundLogGridAndUnreachedDelta() async throws {
        let j = try await runJSON(["bound", "--n", "1e3:1e6:20", "--family", "constant", "--lambdas", "1,1,1",
                                   "--H", "1e300", "--K", "0.01", "--delta", "1e-3", "--delta-range", "2:100000"])
        XCTAssertEqual(j["points"]?.arrayValue?.count, 20)
        XCTAssertEqual(j["n_for_delta"], .null)
        // K = 0.01 is below what the tail needs to fall (K > (3/8)·d·(1 − 1/log n) ≈ 1): no range helps.
        let note = j["n_for_delta_note"]?.stringValue ?? ""
        XCTAssertTrue(note.contains("the tail grows with n") && !note.contains("widen"), note)
        // With K = 5 it falls, but from H = 1e300 not below δ by n = 10⁵: a wider range helps.
        let falling = try await runJSON(["bound", "--n", "1e3:1e6:20", "--family", "constant", "--lambdas", "1,1,1",
                                         "--H", "1e300", "--K", "5", "--delta", "1e-3", "--delta-range", "2:100000"])
        XCTAssertEqual(falling["n_for_delta"], .null)
        XCTAssertTrue(falling["n_for_delta_note"]?.stringValue?.contains("widen --delta-range") ?? false)
    }

    func testBadInputExitsWithUsageError() async {
        let toy = ["--family", "constant", "--lambdas", "4,0.01"]
        for args in [
            ["bound", "--n", "1000", "--gamma", "0"] + toy,
            ["bound", "--n", "1000", "--gamma", "1.5"] + toy,
            ["bound", "--n", "1"] + toy,
            ["bound", "--n", "2,3,1000", "--gamma", "0.1"] + toy,  // ε_n ≥ 1 at n = 2
            ["bound", "--n", "1000", "--zeta", "1"] + toy,
            ["bound", "--n", "1000"],  // no d_ζ source
            ["train", "--arch", "10-16-3", "--data", "synthetic:teacher:10-8-3", "--samples", "100", "--lr", "0"],
            ["train", "--arch", "10-16-3", "--data", "synthetic:teacher:10-8-3", "--samples", "100", "--lr", "-1"],
            ["train", "--arch", "10-16-3", "--data", "synthetic:teacher:10-8-3", "--samples", "100", "--batch", "101"],
            ["train", "--arch", "10-16-3", "--data", "synthetic:teacher:10-8-3", "--samples", "100", "--batch", "0"],
            ["train", "--arch", "10-16-3", "--data", "synthetic:teacher:10-8-3", "--samples", "100", "--epochs", "0"],
            ["train", "--arch", "9-16-3", "--data", "synthetic:teacher:10-8-3", "--samples", "100"],
            ["train", "--arch", "10-16-2", "--data", "synthetic:teacher:10-8-3", "--samples", "100"],
            ["train", "--arch", "10-16-3", "--data", "synthetic:teacher:10-8-3", "--samples", "100", "--optimizer", "rmsprop"],
            ["gap", "--teacher", "10-8-3", "--student", "9-16-3", "--n", "100"],
            ["gap", "--teacher", "10-8-3", "--student", "10-16-3", "--n", "1"],
        ] {
            let (status, out) = await run(args)
            XCTAssertEqual(status, 2, args.joined(separator: " "))
            XCTAssertEqual(out, "", args.joined(separator: " "))
        }
    }

    func testTrainIsReproducibleAndWritesCheckpoints() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("twoscale-train-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let args = ["train", "--arch", "10-12-3", "--data", "synthetic:teacher:10-8-3", "--samples", "300", "--holdout", "0.2",
                    "--epochs", "4", "--lr", "0.01", "--batch", "32", "--seed", "7"]
        let a = try await runJSON(args + ["--checkpoints", dir, "--checkpoint-every", "5", "--weights-out", dir + "/final.json"])
        let b = try await runJSON(args)
        func strip(_ v: JSONValue) -> JSONValue {
            guard case let .object(kv) = v else { return v }
            return .object(kv.filter { !["seconds", "training_seconds", "samples_per_second"].contains($0.0) })
        }
        XCTAssertEqual(strip(a), strip(b))
        let epochs = try XCTUnwrap(a["epochs"]?.arrayValue)
        XCTAssertEqual(epochs.count, 5)
        XCTAssertLessThan(epochs[4]["train_loss"]!.doubleValue!, epochs[0]["train_loss"]!.doubleValue!)
        XCTAssertNotNil(epochs[4]["holdout_accuracy"]?.doubleValue)
        XCTAssertEqual(a["train_samples"]?.doubleValue, 240)
        XCTAssertGreaterThan(a["samples_per_second"]!.doubleValue!, 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        XCTAssertTrue(files.contains("epoch-0000.json") && files.contains("epoch-0004.json") && files.contains("step-00000005.json"))
        XCTAssertFalse(files.contains { $0.hasPrefix(".") })  // no temporary files left
        // The last epoch checkpoint is the final network.
        let last = try String(contentsOfFile: dir + "/epoch-0004.json", encoding: .utf8)
        XCTAssertEqual(last, try String(contentsOfFile: dir + "/final.json", encoding: .utf8))
        let w = try JSONValue.parse(Data(last.utf8), source: "w")
        XCTAssertEqual(w["weights"]?.arrayValue?.count, 2)
        XCTAssertEqual(w["weights"]?.arrayValue?[0].arrayValue?.count, 12)
    }

    func testGapShowsShrinkingGapsAndCFit() async throws {
        let j = try await runJSON(["gap", "--teacher", "6-5-3", "--student", "6-8-3", "--n", "40,2000", "--trials", "3",
                                   "--epochs", "6", "--population", "4000", "--random-draws", "4", "--seed", "3"])
        let pts = try XCTUnwrap(j["points"]?.arrayValue)
        XCTAssertEqual(pts.count, 2)
        let small = pts[0], large = pts[1]
        XCTAssertGreaterThan(small["gap_mean"]!.doubleValue!, large["gap_mean"]!.doubleValue!)
        XCTAssertGreaterThan(small["sup_gap_estimate"]!.doubleValue!, large["sup_gap_estimate"]!.doubleValue!)
        for p in pts {
            XCTAssertEqual(p["trials"]?.doubleValue, 3)
            XCTAssertEqual(p["deviation"]!.doubleValue!, p["eps_n"]!.doubleValue!, accuracy: 1e-15)
            XCTAssertNotNil(p["exceed_frequency"]?.doubleValue)
            XCTAssertNotNil(p["gap_mean_01"]?.doubleValue)
            XCTAssertNotNil(p["sup_gap_estimate_01"]?.doubleValue)
        }
        let perN = try XCTUnwrap(j["c_fit_per_n"]?.arrayValue?.compactMap(\.doubleValue))
        XCTAssertEqual(j["c_fit"]?.doubleValue, perN.max())
        XCTAssertEqual(j["loss"]?.stringValue, "zero-one")
        for (p, c) in zip(pts, perN) {
            XCTAssertEqual(p["sup_gap"]?.doubleValue, p["sup_gap_estimate_01"]?.doubleValue)
            XCTAssertEqual(c, p["sup_gap"]!.doubleValue! / p["eps_n"]!.doubleValue!, accuracy: 1e-12)
            let floor = try XCTUnwrap(p["noise_floor"]?.doubleValue)
            XCTAssertLessThanOrEqual(floor, 2 * j["risk_standard_error_01"]!.doubleValue!)
            XCTAssertEqual(p["resolved"], .bool(p["sup_gap"]!.doubleValue! > floor))
        }
        XCTAssertNotNil(j["c_fit_trend"]?.stringValue)
        XCTAssertGreaterThan(j["risk_standard_error"]!.doubleValue!, 0)
        // Cross-entropy as the compared loss: its sup gap and c_fit.
        let ce = try await runJSON(["gap", "--teacher", "6-5-3", "--student", "6-8-3", "--n", "40,2000", "--trials", "3",
                                    "--epochs", "6", "--population", "4000", "--random-draws", "4", "--seed", "3", "--loss", "cross-entropy"])
        XCTAssertEqual(ce["loss"]?.stringValue, "cross-entropy")
        for p in try XCTUnwrap(ce["points"]?.arrayValue) {
            XCTAssertEqual(p["sup_gap"]?.doubleValue, p["sup_gap_estimate"]?.doubleValue)
        }
    }

    /// θ ∈ Θ only: with a box far smaller than the trajectory and no random draws, every checkpoint lies
    /// outside Θ, so no gap enters a sup (all zero) and the outside gaps are reported apart.
    func testGapExcludesCheckpointsOutsideTheBox() async throws {
        let j = try await runJSON(["gap", "--teacher", "6-5-3", "--student", "6-8-3", "--n", "200", "--trials", "2",
                                   "--epochs", "3", "--population", "2000", "--random-draws", "0", "--seed", "4", "--box", "-1e-6:1e-6"])
        let p = try XCTUnwrap(j["points"]?.arrayValue?.first)
        XCTAssertEqual(p["checkpoints"]?.doubleValue, 2 * 4)
        XCTAssertEqual(p["checkpoints_outside_box"]?.doubleValue, 2 * 4)
        XCTAssertEqual(p["final_outside_box"]?.doubleValue, 2)
        XCTAssertEqual(p["sup_gap"]?.doubleValue, 0)
        XCTAssertEqual(p["sup_gap_estimate"]?.doubleValue, 0)
        XCTAssertGreaterThan(try XCTUnwrap(p["sup_gap_outside_box"]?.doubleValue), 0)
        XCTAssertEqual(p["resolved"], .bool(false))
    }

    /// `compare` ranks every measure — the 2sEDs and the baselines — against the training loss: each τ_b
    /// equals a brute-force count of concordant and discordant pairs on the printed values.
    func testCompareReportsEveryMeasureWithItsTau() async throws {
        // Three equal-size (45-parameter) networks of depth 2, 3, 4.
        let j = try await runJSON(["compare", "--archs", "6-5-3,6-4-3-3,6-3-3-3-3", "--data", "synthetic:teacher:6-5-3",
                                   "--samples", "200", "--epochs", "2", "--paths", "4", "--inner", "3", "--fisher-samples", "20",
                                   "--seed", "2"])
        let pts = try XCTUnwrap(j["points"]?.arrayValue)
        let loss = pts.compactMap { $0["train_loss"]?.doubleValue }
        XCTAssertEqual(loss.count, 3)
        func tauB(_ x: [Double], _ y: [Double]) -> Double? {
            var c = 0.0, d = 0.0, tx = 0.0, ty = 0.0
            for i in 0..<x.count { for k in (i + 1)..<x.count {
                let a = x[i] - x[k], b = y[i] - y[k]
                if a == 0 && b == 0 { continue }
                if a == 0 { tx += 1 } else if b == 0 { ty += 1 } else if a * b > 0 { c += 1 } else { d += 1 }
            } }
            let den = ((c + d + tx) * (c + d + ty)).squareRoot()
            return den > 0 && c + d + tx > 0 && c + d + ty > 0 ? (c - d) / den : nil
        }
        let widths = [[5], [4, 3], [3, 3, 3]]
        let expected: [String: [Double]] = [
            "d_zeta_lower": pts.compactMap { $0["d_zeta_lower"]?.doubleValue },
            "d_zeta": pts.compactMap { $0["d_zeta"]?.doubleValue },
            "lower_per_parameter": pts.compactMap { $0["lower_per_parameter"]?.doubleValue },
            "parameters": [45, 45, 45], "depth": [2, 3, 4],
            "min_hidden_width": widths.map { Double($0.min()!) }, "last_hidden_width": widths.map { Double($0.last!) },
            "initial_weight_norm": pts.compactMap { $0["initial_weight_norm"]?.doubleValue },
            "initial_path_norm": pts.compactMap { $0["initial_path_norm"]?.doubleValue },
            "distance_from_init": pts.compactMap { $0["distance_from_init"]?.doubleValue },
            "sharpness": pts.compactMap { $0["sharpness"]?.doubleValue },
        ]
        let measures = try XCTUnwrap(j["measures"]?.arrayValue)
        XCTAssertEqual(measures.compactMap { $0["name"]?.stringValue },
                       ["d_zeta_lower", "d_zeta", "lower_per_parameter", "parameters", "depth", "min_hidden_width", "last_hidden_width",
                        "initial_weight_norm", "initial_path_norm", "distance_from_init", "sharpness"])
        XCTAssertEqual(j["seeds"]?.doubleValue, 3)
        for p in pts {
            XCTAssertEqual(p["seeds"]?.doubleValue, 3)
            XCTAssertGreaterThan(try XCTUnwrap(p["train_loss_sd"]?.doubleValue), 0)  // seeds differ
        }
        // One seed reproduces the first replicate: --seeds 1 gives replicate 0 alone.
        let one = try await runJSON(["compare", "--archs", "6-5-3,6-4-3-3,6-3-3-3-3", "--data", "synthetic:teacher:6-5-3",
                                     "--samples", "200", "--epochs", "2", "--paths", "4", "--inner", "3", "--fisher-samples", "20",
                                     "--seed", "2", "--seeds", "1"])
        for p in try XCTUnwrap(one["points"]?.arrayValue) { XCTAssertEqual(p["train_loss_sd"]?.doubleValue, 0) }
        for m in measures {
            let name = try XCTUnwrap(m["name"]?.stringValue)
            let values = try XCTUnwrap(expected[name])
            if let t = tauB(values, loss) {
                XCTAssertEqual(try XCTUnwrap(m["kendall_tau_vs_train_loss"]?.doubleValue), t, accuracy: 1e-12, name)
                let p = try XCTUnwrap(m["p_value"]?.doubleValue)
                XCTAssertTrue(p > 0 && p <= 1, name)
            } else {
                XCTAssertEqual(m["kendall_tau_vs_train_loss"], .null, name)  // the parameter count is constant here
            }
        }
        XCTAssertEqual(measures[0]["kendall_tau_vs_train_loss"]?.doubleValue, j["kendall_tau_lower_vs_train_loss"]?.doubleValue)
    }

    func testBenchTrainRuns() async throws {
        let j = try await runJSON(["bench-train", "--arch", "4-3-2,5-2", "--samples", "64", "--epochs", "1", "--repeats", "1"])
        let rows = try XCTUnwrap(j["benchmarks"]?.arrayValue)
        XCTAssertEqual(rows.count, 2)
        XCTAssertGreaterThan(rows[0]["samples_per_second"]!.doubleValue!, 0)
        XCTAssertEqual(rows[1]["parameters"]?.doubleValue, 10)
    }

    /// ζ below 2/3 is allowed with a warning (exit 0); the tail still follows the formula.
    func testBoundBelowTwoThirdsWarnsButRuns() async throws {
        let j = try await runJSON(["bound", "--n", "5000", "--zeta", "0.5", "--family", "constant", "--lambdas", "2"])
        let p = try XCTUnwrap(j["points"]?.arrayValue?.first)
        let eps = pow(log(5000.0) / 5000, 0.375)
        XCTAssertEqual(p["d_zeta_used"]!.doubleValue!, 1 + log(1 + pow(eps, 0.5)) / abs(log(eps)), accuracy: 1e-12)
    }
}
