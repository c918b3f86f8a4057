import Foundation
import Testing
import TwoScaleCore

/// `bound --store DIR` evaluates d_ζ at each ε_n from the store: it must equal `analyze DIR --eps ε_n`.
@Suite struct BoundStoreTests {
    func tempDir() -> String {
        let d = NSTemporaryDirectory() + "twoscale-bound-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    @Test func storeGivesDZetaAtEachEpsN() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = dir + "/s"
        _ = try await runJSON(["ed", "--arch", "3-4-3", "--data", "synthetic:gaussian", "--samples", "5", "--paths", "4",
                               "--inner", "3", "--sigma2", "0.5", "--eps", "0.1", "--seed", "2", "--store", store, "--json"])
        for est in ["nested", "lower", "joint"] {
            let b = try await runJSON(["bound", "--n", "1000,100000", "--gamma", "0.5", "--store", store, "--estimator", est, "--json"])
            let pts = try #require(b["points"]?.arrayValue)
            #expect(pts.count == 2)
            #expect(b["conservative"] == .bool(est != "lower"))
            #expect(b["d_zeta_used_method"]?.stringValue?.contains("one-sided 95%") == true)
            for p in pts {
                let e = try #require(p["eps_n"]?.doubleValue)
                let n = try #require(p["n"]?.doubleValue)
                #expect(abs(e - pow(log(n) / (0.5 * n), 3.0 / 8)) < 1e-15)
                // The same 200 bootstrap resamples (seeded by the run's seed) as analyze's intervals: the 0.95
                // quantile lies between the estimate and the two-sided interval's 0.975 end.
                let a = try await runJSON(["analyze", store, "--eps", "\(e)", "--lower", "--bootstrap", "200", "--json"])
                let ap = try #require(a["points"]?.arrayValue?.first)
                let key = est == "nested" ? "d_zeta" : (est == "lower" ? "d_zeta_lower" : "d_zeta_joint")
                let ci = est == "nested" ? "ci95" : (est == "lower" ? "ci95_lower" : "ci95_joint")
                #expect(p["d_zeta_estimate"]?.doubleValue == ap[key]?.doubleValue, "\(est) at n = \(n)")
                let d = try #require(p["d_zeta_used"]?.doubleValue)
                let upper975 = try #require(ap[ci]?.arrayValue?.last?.doubleValue)
                #expect(d >= (try #require(ap[key]?.doubleValue)) && d <= upper975, "\(est): used \(d), 0.975 end \(upper975)")
                let tail = -d * log(e) - 1 / 0.5 * log(n)  // log H = 0, K = 1
                #expect(abs(try #require(p["log_tail"]?.doubleValue) - tail) < 1e-9 * abs(tail))
            }
        }
    }

    @Test func storeErrors() async {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (s1, o1) = await runCLI(["bound", "--n", "1000", "--store", dir + "/missing", "--json"])
        #expect(s1 != 0 && o1.isEmpty)
        let (s2, o2) = await runCLI(["bound", "--n", "1000", "--store", dir, "--family", "constant", "--lambdas", "1", "--json"])
        #expect(s2 == 2 && o2.isEmpty)
        let (s3, _) = await runCLI(["bound", "--n", "1000", "--store", dir, "--estimator", "median", "--json"])
        #expect(s3 == 2)
    }
}

/// `gap --store` puts the bound's d_ζ(ε_n) and log tail beside the gaps: the same numbers as `bound --store`.
@Suite struct GapTailTests {
    @Test func gapTailEqualsBound() async throws {
        let dir = NSTemporaryDirectory() + "twoscale-gaptail-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = dir + "/student"
        _ = try await runJSON(["ed", "--arch", "4-5-3", "--data", "synthetic:gaussian", "--samples", "6", "--paths", "4",
                               "--inner", "3", "--eps", "0.1", "--seed", "3", "--store", store, "--json"])
        let g = try await runJSON(["gap", "--teacher", "4-3-3", "--student", "4-5-3", "--n", "100,300", "--trials", "1",
                                   "--epochs", "2", "--population", "500", "--random-draws", "2", "--store", store,
                                   "--K", "2", "--json"])
        let b = try await runJSON(["bound", "--n", "100,300", "--store", store, "--estimator", "nested", "--K", "2", "--json"])
        let gp = try #require(g["points"]?.arrayValue), bp = try #require(b["points"]?.arrayValue)
        #expect(gp.count == 2)
        for (x, y) in zip(gp, bp) {
            #expect(x["d_zeta_used"]?.doubleValue == y["d_zeta_used"]?.doubleValue)
            #expect(x["d_zeta_estimate"]?.doubleValue == y["d_zeta_estimate"]?.doubleValue)
            #expect(x["log_tail"]?.doubleValue == y["log_tail"]?.doubleValue)
        }
        // a store of another network is refused
        let (status, out) = await runCLI(["gap", "--teacher", "4-3-3", "--student", "4-6-3", "--n", "100", "--trials", "1",
                                          "--store", store, "--json"])
        #expect(status == 2 && out.isEmpty)
    }
}
