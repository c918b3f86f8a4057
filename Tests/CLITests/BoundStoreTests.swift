import Fisher
import Foundation
import SpectraStore
import Testing
import TwoScaleCore
import TwoScaleFormats

/// `bound --store DIR` evaluates d_ζ at each ε_n from the store: it must equal `analyze DIR --eps ε_n`.
@Suite struct BoundStoreTests {
    func tempDir() -> String {
        let d = NSTemporaryDirectory() + "twoscale-bound-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        return d
    }

    /// A plain-estimator store of the 3-4-3 network at `store`, on Gaussian inputs or on `data`.
    func makeStore(_ store: String, data: String = "synthetic:gaussian", samples: Int = 5) async throws {
        _ = try await runJSON(["ed", "--arch", "3-4-3", "--data", data, "--samples", "\(samples)", "--paths", "4",
                               "--inner", "3", "--sigma2", "0.5", "--eps", "0.1", "--seed", "2", "--store", store, "--json"])
    }

    /// Six rows of three values in [−1, 1], as a CSV file at `path`.
    func writeCSV(_ path: String) throws {
        try (0..<6).map { i in (0..<3).map { j in "\(Double((i * 7 + j * 3) % 11) / 5 - 1)" }.joined(separator: ",") }
            .joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    @Test func storeGivesDZetaAtEachEpsN() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = dir + "/s"
        try await makeStore(store)
        for est in ["nested", "lower", "joint"] {
            let b = try await runJSON(["bound", "--n", "1000,100000", "--gamma", "0.5", "--store", store, "--estimator", est, "--json"])
            let pts = try #require(b["points"]?.arrayValue)
            #expect(pts.count == 2)
            // The certified upper end bounds every estimator's quantity: the tail is conservative for all three,
            // for the stand-in of 5 inputs and one noise draw, not for the population Fisher, and the run says so.
            #expect(b["conservative"] == .bool(true))
            #expect(b["d_zeta_used_method"]?.stringValue?.contains("not for the population Fisher") == true)
            let unmet = Set((b["assumptions"]?.arrayValue ?? []).filter { $0["met"] == .bool(false) }.compactMap { $0["assumption"]?.stringValue })
            #expect(unmet == ["the model is C^{1,1} in θ", "p_θ(y|x) is bounded below, so the loss is Lipschitz in θ uniformly",
                              "d_ζ of the population Fisher information"])
            #expect(b["d_zeta_used_method"]?.stringValue?.contains("certified upper end") == true)
            for p in pts {
                let e = try #require(p["eps_n"]?.doubleValue)
                let n = try #require(p["n"]?.doubleValue)
                #expect(abs(e - pow(log(n) / (0.5 * n), 3.0 / 8)) < 1e-15)
                let a = try await runJSON(["analyze", store, "--eps", "\(e)", "--lower", "--bootstrap", "200", "--json"])
                let ap = try #require(a["points"]?.arrayValue?.first)
                let key = est == "nested" ? "d_zeta" : (est == "lower" ? "d_zeta_lower" : "d_zeta_joint")
                #expect(p["d_zeta_estimate"]?.doubleValue == ap[key]?.doubleValue, "\(est) at n = \(n)")
                // d_zeta_used is the bracket's upper end with every block at its majorant: at or above the upper
                // end that ed prints for the same run at ε_n (same spectra, so the same c), which takes the first
                // block's sampled bound where that is smaller, and above the estimate.
                let ed = try await runJSON(["ed", "--estimator", "plain", "--arch", "3-4-3", "--data", "synthetic:gaussian", "--samples", "5",
                                            "--paths", "4", "--inner", "3", "--sigma2", "0.5", "--eps", "\(e)", "--seed", "2", "--json"])
                let hi = try #require(ed["points"]?.arrayValue?.first?["d_zeta_bracket"]?.arrayValue?.last?.doubleValue)
                let d = try #require(p["d_zeta_used"]?.doubleValue)
                #expect(d >= hi * (1 - 1e-12), "\(est): used \(d), bracket's upper end \(hi)")
                #expect(d >= (try #require(ap[key]?.doubleValue)))
                let tail = -d * log(e) - 1 / 0.5 * log(n)  // log H = 0, K = 1
                #expect(abs(try #require(p["log_tail"]?.doubleValue) - tail) < 1e-9 * abs(tail))
            }
        }
    }

    /// A store whose data file has moved: no certified upper end, so the bootstrap's one-sided 95% value
    /// enters the tail, the method says why, and the lower 2sED's tail is labelled non-conservative.
    @Test func storeWithoutItsDataFallsBackToTheBootstrap() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let csv = dir + "/x.csv", store = dir + "/s"
        try writeCSV(csv)
        try await makeStore(store, data: "csv:" + csv, samples: 6)
        let certified = try await runJSON(["bound", "--n", "1000", "--store", store, "--json"])
        #expect(certified["d_zeta_used_method"]?.stringValue?.contains("certified upper end") == true)
        try FileManager.default.removeItem(atPath: csv)
        for est in ["nested", "lower"] {
            let (status, out, _) = await runCLICapturingErrors(["bound", "--n", "1000", "--store", store, "--estimator", est, "--json"])
            #expect(status == 0)
            let b = try JSONValue.parse(Data(out.utf8), source: "bound")
            #expect(b["conservative"] == .bool(est != "lower"))
            #expect(b["d_zeta_used_method"]?.stringValue?.contains("no certified upper end") == true)
            #expect(b["d_zeta_used_method"]?.stringValue?.contains("one-sided 95%") == true)
        }
    }

    /// `--population-fisher`: on a Gaussian-input store the tail takes the population Fisher's upper end (the
    /// library's `populationCeilings` at the upper end of its c interval), the population assumption is met,
    /// and the run says so; on a store of a data file, or without a store, it is refused.
    @Test func populationFisherTail() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = dir + "/s"
        try await makeStore(store)
        let b = try await runJSON(["bound", "--n", "1000,100000", "--store", store, "--population-fisher", "--json"])
        #expect(b["conservative"] == .bool(true))
        #expect(b["d_zeta_used_method"]?.stringValue?.contains("population Fisher's 2sED") == true)
        let met = (b["assumptions"]?.arrayValue ?? []).first { $0["assumption"]?.stringValue == "d_ζ of the population Fisher information" }
        #expect(met?["met"] == .bool(true))
        let sample = try await runJSON(["bound", "--n", "1000,100000", "--store", store, "--json"])
        for (p, q) in zip(try #require(b["points"]?.arrayValue), try #require(sample["points"]?.arrayValue)) {
            #expect(p["d_zeta_estimate"]?.doubleValue == q["d_zeta_estimate"]?.doubleValue)
            #expect(p["d_zeta_used"]?.doubleValue != q["d_zeta_used"]?.doubleValue)
            #expect((p["d_zeta_used"]?.doubleValue ?? 0) > 15)  // d = 31: ζd = 20.7 and more
        }
        let (s1, _, e1) = await runCLICapturingErrors(["bound", "--n", "1000", "--population-fisher", "--family", "constant", "--lambdas", "1"])
        #expect(s1 != 0 && e1.contains("--population-fisher"))
        let csv = dir + "/x.csv", fileStore = dir + "/f"
        try writeCSV(csv)
        try await makeStore(fileStore, data: "csv:" + csv, samples: 6)
        let (s2, _, e2) = await runCLICapturingErrors(["bound", "--n", "1000", "--store", fileStore, "--population-fisher"])
        #expect(s2 != 0 && e2.contains("Gaussian inputs"))
    }

    /// On an MLP of three blocks the tail's upper end takes the tilted chain where it is smaller (docs/METHOD.md §19,
    /// "Upper end, tilted"), for the store's inputs and for the population: `bound`'s `d_zeta_used` is the library's
    /// `dZetaUpper` with the chain, never above the untilted one and below it somewhere.
    @Test func deepStoreTakesTheTiltedChain() async throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = dir + "/s"
        _ = try await runJSON(["ed", "--arch", "6-5-4-3", "--data", "synthetic:gaussian", "--samples", "8", "--paths", "4",
                               "--inner", "3", "--sigma2", "0.3", "--eps", "0.1", "--seed", "2", "--store", store, "--json"])
        for population in [false, true] {
            let b = try await runJSON(["bound", "--n", "100,10000,1000000", "--store", store, "--json"] + (population ? ["--population-fisher"] : []))
            let d = try await StoreDimension(directory: store, estimate: .nested, zeta: 2.0 / 3, normalization: .trace, population: population, threads: 1)
            let ceilings = try #require(d.ceilings), chain = try #require(d.chain), c = try #require(d.scale).range.upperBound
            var tighter = 0
            for p in try #require(b["points"]?.arrayValue) {
                let e = try #require(p["eps_n"]?.doubleValue)
                let s = ScaleParameters.t(eps: e, zeta: 2.0 / 3) * c.squareRoot()
                let tilted = BlockCeiling.dZetaUpper(ceilings, chain: chain, scale: s, eps: e, zeta: 2.0 / 3, dimension: d.dimension)
                let untilted = BlockCeiling.dZetaUpper(ceilings, scale: s, eps: e, zeta: 2.0 / 3, dimension: d.dimension)
                #expect(p["d_zeta_used"]?.doubleValue == tilted, "population \(population) ε_n = \(e)")
                #expect(tilted <= untilted)
                if tilted < untilted - 0.01 { tighter += 1 }
            }
            #expect(tighter > 0, "population \(population)")
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
