@testable import Fisher
import Foundation
@testable import NetworkEstimators
@testable import Networks
@testable import SpectraStore
@testable import TwoScaleCLI
import TwoScaleCore
import TwoScaleNumerics
@testable import TwoScaleFormats
import XCTest

/// `ed`, `analyze`, `merge` end to end on a tiny real network (3-4-3, Markov FIM, N = 5, K = J = 4).
final class NetworkCommandTests: ScratchDirectoryTestCase {
    override class var scratchTag: String { "ed" }

    func run(_ args: [String]) async -> (Int32, String) {
        let capture = OutputCapture()
        let status = await Console.$capture.withValue(capture) { await TwoScaleMain.execute(args) }
        return (status, capture.text)
    }

    let base = ["--arch", "3-4-3", "--data", "synthetic:gaussian", "--samples", "5", "--paths", "4", "--inner", "4",
                "--sigma2", "0.5", "--seed", "3", "--eps", "1e-3:0.5:5", "--zeta", "0.7", "--lower", "--bootstrap", "50"]

    /// The JSON without "seconds" (the one key allowed to differ between runs).
    func numbers(_ text: String) throws -> JSONValue {
        let v = try JSONValue.parse(Data(text.utf8), source: "stdout")
        guard case let .object(kv) = v else { XCTFail("not an object"); return v }
        return .object(kv.filter { $0.0 != "seconds" })
    }

    /// Fisher rank and the ε → 0 limit against closed forms: a linear 2-1-2 network (no bias) on three
    /// points spanning R². Markov: F_1 = σ⁻²E[x xᵀ] has rank 2 at every θ (w ≠ 0 or not: act' ≡ 1);
    /// the softmax block is 2×2 with inputs h = w·x (1-d) and rank (K − 1)·1 = 1 unless h ≡ 0.
    /// Output FIM (K = 2): F = (1/N) Σ_n v_n g_n g_nᵀ with g_n = J_nᵀ(1, −1) = ((c − e)·x_n, w·x_n, −w·x_n),
    /// linear in x_n ∈ R², so rank 2 (not N(K − 1) = 3). Limit ζd + (1 − ζ)r.
    func testRankAndTheEpsilonZeroLimit() async throws {
        try "x1,x2\n1,0\n0,1\n1,1\n".write(toFile: dir + "/X.csv", atomically: true, encoding: .utf8)
        let common = ["--arch", "2-1-2", "--activation", "linear", "--data", "csv:\(dir)/X.csv", "--samples", "3", "--paths", "3", "--inner", "2",
                      "--zeta", "0.5", "--eps", "1e-3", "--seed", "5", "--json"]
        for (estimator, fisher, blocks, total) in [("plain", "markov", [2, 1], 3), ("smc", "markov", [2, 1], 3), ("plain", "output", [2], 2)] {
            let extra = estimator == "smc" ? ["--paths", "4", "--inner", "8"] : []
            let (s, out) = await run(["ed"] + common + extra + ["--estimator", estimator, "--fisher", fisher])
            XCTAssertEqual(s, 0, out)
            let j = try JSONValue.parse(Data(out.utf8), source: "stdout")
            XCTAssertEqual(j["rank"]?.doubleValue, Double(total), "\(estimator) \(fisher)")
            XCTAssertEqual(j["rank_blocks"]?.arrayValue?.compactMap { $0["rank"]?.doubleValue }, blocks.map(Double.init))
            XCTAssertEqual(try XCTUnwrap(j["d_zeta_limit"]?.doubleValue), 0.5 * 4 + 0.5 * Double(total), accuracy: 1e-12)
            // The Markov FIM's generic rank is proved (bound 1·2 + 1·min(3, 1) = 3, attained by a witness); the
            // output FIM keeps the draws' rank, a lower bound.
            let markov = fisher == "markov"
            XCTAssertEqual(j["d_zeta_limit_kind"], .string(markov ? "exact" : "lower_bound"), "\(estimator) \(fisher)")
            XCTAssertEqual(j["rank_proved"], .bool(markov))
            XCTAssertEqual(j["rank_generic"], markov ? .int(3) : .null)
            XCTAssertEqual(j["rank_generic_blocks"]?.arrayValue?.compactMap { $0["bound"]?.doubleValue }, markov ? [2, 1] : nil)
        }
        // analyze reads the same ranks from the store, and rebuilds the model for the generic rank.
        let store = dir + "/r"
        let (s1, out1) = await run(["ed"] + common + ["--store", store])
        XCTAssertEqual(s1, 0, out1)
        let (s2, out2) = await run(["analyze", store, "--zeta", "0.5", "--eps", "1e-3", "--json"])
        XCTAssertEqual(s2, 0, out2)
        XCTAssertEqual(withoutGenericRank(try numbers(out1)), withoutGenericRank(try numbers(out2)))
        let j2 = try JSONValue.parse(Data(out2.utf8), source: "analyze")
        XCTAssertEqual(j2["d_zeta_limit_kind"], .string("exact"), "analyze rebuilds the model")
        XCTAssertEqual(try XCTUnwrap(j2["d_zeta_limit"]?.doubleValue), 0.5 * 4 + 0.5 * 3, accuracy: 1e-12)
        XCTAssertEqual(j2["rank_generic"], .int(3))
    }

    /// The readable rank line says whether the limit is exact (a proved generic rank) or a lower bound.
    func testRankLineSaysWhichLimit() throws {
        let data = Matrix(rows: 4, cols: 3, data: [1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1])
        let arch = try Architecture(sizes: [3, 2, 2])
        let draws = try FisherRank(perDraw: [[Spectrum(roots: [1, 1, 1]), Spectrum(roots: [1])]], parameters: [6, 4], layers: [1, 2])
        let markov = try MarkovFisher(architecture: arch, activation: .relu, data: data, sigma2: 0.1, noiseSamples: 1, noiseSeed: 1)
        let proved = try GenericRank(model: markov, box: -1...1, seed: 1)
        XCTAssertTrue(proved.proved)
        let exact = NetworkReport.rankLine(RankReport(draws, generic: proved, zeta: 0.5, dimension: 10), dimension: 10)
        XCTAssertTrue(exact.contains("generic rank 8 (proved") && exact.contains("= 9 (exact)"), exact)
        let unproved = try GenericRank(model: markov, box: -1 ... -0.5, seed: 1)
        XCTAssertFalse(unproved.proved)
        let low = NetworkReport.rankLine(RankReport(draws, generic: unproved, zeta: 0.5, dimension: 10), dimension: 10)
        XCTAssertTrue(low.contains("generic rank ≤ 8") && low.contains("(lower bound: r = "), low)
        let spectraOnly = NetworkReport.rankLine(RankReport(draws, zeta: 0.5, dimension: 10), dimension: 10)
        XCTAssertTrue(spectraOnly.contains("≥ 7 (lower bound: r = 4, the largest rank seen)"), spectraOnly)
    }

    func testEdEndToEndAndAnalyzeReproducesIt() async throws {
        let store = dir + "/s"
        let (s, out) = await run(["ed"] + base + ["--store", store, "--json", "--abbas-n", "1000,10000"])
        XCTAssertEqual(s, 0, out)
        let j = try JSONValue.parse(Data(out.utf8), source: "stdout")
        XCTAssertEqual(j["dimension"], .int(24))
        let points = try XCTUnwrap(j["points"]?.arrayValue)
        XCTAssertEqual(points.count, 5)
        for p in points {
            let nested = try XCTUnwrap(p["d_zeta"]?.doubleValue), lower = try XCTUnwrap(p["d_zeta_lower"]?.doubleValue)
            XCTAssertNotNil(p["d_zeta_joint"]?.doubleValue)
            XCTAssertLessThanOrEqual(lower, nested + 1e-12)
            XCTAssertGreaterThanOrEqual(nested, 0.7 * 24, "d_ζ ≥ ζd")
            let ci = try XCTUnwrap(p["ci95"]?.arrayValue).compactMap(\.doubleValue)
            XCTAssertEqual(ci.count, 2)
            XCTAssertLessThanOrEqual(ci[0], ci[1])
        }
        XCTAssertEqual(try XCTUnwrap(j["ess"]?.arrayValue).count, 1, "one stage (m = 2) for two layers")
        XCTAssertEqual(try XCTUnwrap(j["abbas"]?.arrayValue).count, 2)
        XCTAssertNotNil(j["seconds"]?.doubleValue)
        XCTAssertEqual(Set(files(store).keys), ["meta.json", "own_1.npy", "own_2.npy", "inner_2.npy"])

        let (s2, out2) = await run(["analyze", store, "--eps", "1e-3:0.5:5", "--zeta", "0.7", "--lower", "--bootstrap", "50",
                                    "--abbas-n", "1000,10000", "--json"])
        XCTAssertEqual(s2, 0, out2)
        XCTAssertEqual(withoutGenericRank(try numbers(out2)), withoutGenericRank(try numbers(out)))

        // The readable summary works too.
        let (s3, human) = await run(["analyze", store, "--eps", "0.1", "--lower"])
        XCTAssertEqual(s3, 0)
        XCTAssertTrue(human.contains("d_zeta") && human.contains("3-4-3"), human)
    }

    func testThreadCountDoesNotChangeResults() async throws {
        let (s1, o1) = await run(["ed"] + base + ["--threads", "1", "--store", dir + "/t1", "--json"])
        let (s2, o2) = await run(["ed"] + base + ["--threads", "2", "--store", dir + "/t2", "--json"])
        XCTAssertEqual(s1, 0)
        XCTAssertEqual(s2, 0)
        XCTAssertEqual(try numbers(o1), try numbers(o2))
        XCTAssertEqual(files(dir + "/t1"), files(dir + "/t2"))
    }

    func testShardsMergeToTheUnshardedRun() async throws {
        let (s, full) = await run(["ed"] + base + ["--store", dir + "/full", "--json"])
        XCTAssertEqual(s, 0)
        for i in 1...3 {
            let (si, oi) = await run(["ed"] + base + ["--store", dir + "/shard\(i)", "--shard", "\(i)/3", "--json"])
            XCTAssertEqual(si, 0, oi)
        }
        // A shard cannot be analysed on its own; an incomplete merge writes nothing.
        let (sa, _) = await run(["analyze", dir + "/shard1", "--json"])
        XCTAssertEqual(sa, 1)
        let (sm0, _) = await run(["merge", dir + "/shard1", dir + "/shard3", "--out", dir + "/bad"])
        XCTAssertNotEqual(sm0, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/bad"))

        let (sm, om) = await run(["merge", dir + "/shard3", dir + "/shard1", dir + "/shard2", "--out", dir + "/merged", "--json"])
        XCTAssertEqual(sm, 0, om)
        XCTAssertEqual(files(dir + "/merged"), files(dir + "/full"), "merged shards = unsharded store, byte for byte")
        let (s2, analyzed) = await run(["analyze", dir + "/merged", "--eps", "1e-3:0.5:5", "--zeta", "0.7", "--lower",
                                        "--bootstrap", "50", "--json"])
        XCTAssertEqual(s2, 0)
        XCTAssertEqual(withoutGenericRank(try numbers(analyzed)), withoutGenericRank(try numbers(full)))
    }

    func testInterruptedRunResumesToTheSameBytes() async throws {
        let (s, full) = await run(["ed"] + base + ["--store", dir + "/full", "--json"])
        XCTAssertEqual(s, 0)
        // Make a run that was killed after paths 0 and 2: only their partial files, no final files.
        let killed = dir + "/killed"
        let (s1, _) = await run(["ed"] + base + ["--store", killed, "--json"])
        XCTAssertEqual(s1, 0)
        let store = try SpectraStore.open(directory: killed)
        let rows = try store.loadRows()
        for name in ["own_1.npy", "own_2.npy", "inner_2.npy"] { try FileManager.default.removeItem(atPath: killed + "/" + name) }
        try FileManager.default.createDirectory(atPath: killed + "/partial", withIntermediateDirectories: true)
        // Stored rows carry zero padding; a fresh path does not — either way the final bytes must agree.
        for k in [0, 2] { try store.writePartial(path: k, rows[k]) }

        // Without --resume: refused. With other settings: refused, naming the flag. No change to the store.
        let (r0, _) = await run(["ed"] + base + ["--store", killed])
        XCTAssertEqual(r0, 2)
        var other = base
        other[other.firstIndex(of: "--sigma2")! + 1] = "0.25"
        let (r1, _) = await run(["ed"] + other + ["--store", killed, "--resume"])
        XCTAssertEqual(r1, 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: killed + "/own_1.npy"))

        let (r2, resumed) = await run(["ed"] + base + ["--store", killed, "--resume", "--json"])
        XCTAssertEqual(r2, 0, resumed)
        XCTAssertEqual(files(killed), files(dir + "/full"))
        XCTAssertEqual(try numbers(resumed), try numbers(full))
    }

    func testBadInputIsAClearErrorWithoutOutput() async throws {
        let store = dir + "/never"
        for (args, code) in [
            (["--paths", "0"], Int32(2)), (["--inner", "0"], 2), (["--sigma2", "0"], 2), (["--sigma2", "-1"], 2),
            (["--samples", "0"], 2), (["--shard", "3/2"], 2), (["--shard", "x"], 2), (["--box", "1:-1"], 2),
            (["--arch", "3-x-3"], 2), (["--eps", "2"], 2), (["--threads", "0"], 2), (["--bootstrap", "1"], 2),
            (["--abbas-n", "3"], 2), (["--data", "nosuch:thing"], 2),
        ] as [([String], Int32)] {
            var a = base
            for i in stride(from: 0, to: args.count, by: 2) {
                if let j = a.firstIndex(of: args[i]) { a[j + 1] = args[i + 1] } else { a += [args[i], args[i + 1]] }
            }
            let (s, out) = await run(["ed"] + a + ["--store", store, "--json"])
            XCTAssertEqual(s, code, "\(args)")
            XCTAssertEqual(out, "", "no output on error: \(args)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: store), "no store left behind: \(args)")
        }
        let (s1, _) = await run(["ed"] + base + ["--resume"])
        XCTAssertEqual(s1, 2, "--resume needs --store")
        let (s2, _) = await run(["analyze", dir + "/nothing", "--json"])
        XCTAssertEqual(s2, 1)
    }

    func testStoreOfAnotherFormatOrTruncatedIsRefused() async throws {
        let store = dir + "/s"
        let (s, _) = await run(["ed"] + base + ["--store", store])
        XCTAssertEqual(s, 0)
        let metaPath = store + "/meta.json"
        let meta = String(decoding: FileManager.default.contents(atPath: metaPath)!, as: UTF8.self)
        try meta.replacingOccurrences(of: "twoscale-spectra/1", with: "twoscale-spectra/9").write(toFile: metaPath, atomically: true, encoding: .utf8)
        let (s1, o1) = await run(["analyze", store, "--json"])
        XCTAssertEqual(s1, 1)
        XCTAssertEqual(o1, "")
        try meta.write(toFile: metaPath, atomically: true, encoding: .utf8)
        let (s2, _) = await run(["analyze", store, "--json"])
        XCTAssertEqual(s2, 0)
        let npy = store + "/own_2.npy"
        let bytes = FileManager.default.contents(atPath: npy)!
        try bytes.prefix(100).write(to: URL(fileURLWithPath: npy))
        let (s3, o3) = await run(["analyze", store, "--json"])
        XCTAssertEqual(s3, 1)
        XCTAssertEqual(o3, "")
    }

    func testOutputFisherHasOneLayerAndNoInnerDraws() async throws {
        let store = dir + "/o"
        let (s, out) = await run(["ed", "--arch", "3-4-3", "--fisher", "output", "--samples", "5", "--paths", "5",
                                  "--eps", "0.01,0.1", "--store", store, "--json"])
        XCTAssertEqual(s, 0, out)
        let j = try JSONValue.parse(Data(out.utf8), source: "stdout")
        XCTAssertEqual(j["layers"], .array([.int(24)]))
        XCTAssertEqual(j["inner"], .int(0))
        XCTAssertEqual(j["ess"], .array([]))
        XCTAssertEqual(Set(files(store).keys), ["meta.json", "own_1.npy"])
        let own = try NPYArray.read(path: store + "/own_1.npy")
        XCTAssertEqual(own.shape, [5, 10], "min(d, N(K−1)) = min(24, 5·2) eigenvalues per path")
        for p in try XCTUnwrap(j["points"]?.arrayValue) {
            XCTAssertEqual(p["d_zeta"], p["d_zeta_joint"])
        }
    }
}

/// The low-ESS warning: its threshold, and that `ed` prints it on stderr (not in quiet mode).
final class EssWarningTests: XCTestCase {
    func testThreshold() {
        XCTAssertNil(NetworkReport.essWarning([50], paths: 100))
        XCTAssertNil(NetworkReport.essWarning([5.0], paths: 100))  // exactly K/20: no warning
        XCTAssertNil(NetworkReport.essWarning([1], paths: 1))      // one path: nothing to weigh
        XCTAssertNil(NetworkReport.essWarning([], paths: 100))      // one layer: no stages
        let w = NetworkReport.essWarning([40, 1.25], paths: 100)
        XCTAssertTrue(w?.contains("stage-3") == true && w?.contains("1.25 of K = 100") == true, w ?? "nil")
        XCTAssertNotNil(NetworkReport.essWarning([1.9], paths: 10))  // max(2, K/20) = 2
    }

    /// The tail-shortfall warning names ε, the spread, K, the shortfall and the half-width; none without one.
    /// Each reason a stage was not tilted, in words, and where the islands' noise is at least half of the outer
    /// log-weights' spread, that no fit can explain half of it (not said for a stage kept for its ESS).
    func testTiltLineSaysWhyAStageWasNotTilted() {
        let tilted = TiltDiagnostics(engaged: true, slope: 1.02, explained: 0.97, steps: 3, proposals: 100, accepted: 31, decorrelation: 0.25)
        let weak = TiltDiagnostics(declined: .explainedBelowHalf, slope: 3.3, explained: 0.043)
        let slope = TiltDiagnostics(declined: .slopeNotPositive, slope: -335, explained: 0.037)
        let kept = TiltDiagnostics(declined: .essAtLeastHalf, slope: 0.5, explained: 0.2)
        let line = NetworkReport.tiltLine([(0.001, [tilted, weak], [0.2, 0.79]), (0.1, [kept, slope], [0.9, 0.3])], stage: "stage")
        XCTAssert(line.contains("ε = 0.001: stage 2 tilted (β 1.02, R² 0.97) in 3 steps, acceptance 0.31, decorrelation 0.25"), line)
        XCTAssert(line.contains("stage 3 not tilted (β 3.3, R² 0.043: the majorant explains less than 0.5 of its outer log-weights' spread; "
                                + "the islands' noise is 79% of the outer log-weights' spread, so no fit can explain half of it: larger islands first (--inner))"), line)
        XCTAssert(line.contains("ε = 0.1: stage 2 not tilted (β 0.5, R² 0.2: its outer ESS is at least half of K)"), line)
        XCTAssert(line.contains("stage 3 not tilted (β -335, R² 0.037: the slope is not positive)"), line)
        XCTAssertEqual(line.components(separatedBy: "larger islands").count, 2, "only where the noise is at least half")
        XCTAssert(line.hasSuffix("; outer ESS and the interval's source are the tilted weights'\n"), line)
        let untilted = NetworkReport.tiltLine([(0.1, [kept, slope], [0.9, 0.3])], stage: "layer")
        XCTAssert(untilted.hasSuffix("the slope is not positive)\n"), "nothing tilted, no word on tilted weights: \(untilted)")
        XCTAssertEqual(NetworkReport.tiltLine([(0.1, [], [])], stage: "layer"), "")
        XCTAssert(NetworkReport.tiltLine([(0.1, [TiltDiagnostics(declined: .noFit)], [])], stage: "layer", firstTrial: true)
            .contains("§22; the first trial): ε = 0.1: layer 2 not tilted (no fit"))
    }

    func testTailShortfallText() {
        XCTAssertNil(NetworkReport.tailWarning(nil))
        // 784-32-10, seed 1, default budget, ε = 10⁻³ (lab/ESTIMATORS-LOG.md, Limits): s² = 168.5 nats².
        let shortfall = LogNormalSpread.shortfall(logVariance: 168.5, count: 64) / Foundation.log(1000.0)
        let w = NetworkReport.tailWarning(TailShortfall(eps: 0.001, shortfall: shortfall, halfWidth: 1.72, logVariance: 168.5, paths: 64))
        XCTAssertGreaterThan(shortfall, 6)
        for part in ["ε = 0.001", "168.5 nats²", "K = 64", "half-width 1.72", "likely higher", "--paths (K) shrink"] {
            XCTAssertTrue(w?.contains(part) == true, "\(part): \(w ?? "nil")")
        }
        // With the island-noise share known, the advice follows it: J when islands make most of the spread
        // (784-32-10's 71%), K when the spread is mostly real variation (the deeper MLPs' 1–5%).
        let islands = NetworkReport.tailWarning(TailShortfall(eps: 0.001, shortfall: shortfall, halfWidth: 1.72, logVariance: 168.5,
                                                              paths: 64, islandNoiseShare: 0.71))
        XCTAssertTrue(islands?.contains("71% of that spread is the islands' own noise, so raise the islands first (--inner J, or --island-sweeps") == true, islands ?? "nil")
        XCTAssertFalse(islands?.contains("--paths (K)") == true)
        let real = NetworkReport.tailWarning(TailShortfall(eps: 0.001, shortfall: shortfall, halfWidth: 1.72, logVariance: 168.5,
                                                           paths: 64, islandNoiseShare: 0.03))
        XCTAssertTrue(real?.contains("only 3% of that spread is island noise") == true, real ?? "nil")
        XCTAssertTrue(real?.contains("more --paths (K) shrink only slowly") == true, real ?? "nil")
        XCTAssertFalse(real?.contains("--inner") == true)
    }

    /// Joint tempering's lag warning names each ε whose passes lie apart, the gap and the half-width, and asks for sweeps.
    func testPassesApartText() {
        XCTAssertNil(NetworkReport.passesWarning([]))
        var p = EpsilonEstimate(eps: 0.001, zeta: 0.5, dimension: 40, estimate: LogEstimate(value: 10, variance: 0.05))
        p.setReverse(LogEstimate(value: 13, variance: 0.09), dimension: 40, replicates: [])
        XCTAssertTrue(p.passesApart)
        var close = p
        close.setReverse(LogEstimate(value: 10.1, variance: 0.09), dimension: 40, replicates: [])
        XCTAssertFalse(close.passesApart)
        XCTAssertNil(NetworkReport.passesWarning([close]), "only the points whose passes lie apart")
        let w = NetworkReport.passesWarning([close, p])
        for part in ["at ε = 0.001 the reverse 2sED is 0.4343 above the forward one", "half-width 0.0851", "The moves lag", "more --sweeps"] {
            XCTAssertTrue(w?.contains(part) == true, "\(part): \(w ?? "nil")")
        }
        XCTAssertEqual(w?.components(separatedBy: "at ε =").count, 2, "one point named: \(w ?? "nil")")
    }

    /// The order warning names ε, both intervals, and says neither value is to be trusted without a larger J.
    func testLowerAboveNestedText() {
        XCTAssertNil(NetworkReport.orderWarning(nil))
        let v = LowerAboveNested(eps: 0.001, nested: 18167.35, nestedInterval: 18165.63...18169.08,
                                 lower: 18177.53, lowerInterval: 18172.48...18182.58)
        let w = NetworkReport.orderWarning(v)
        for part in ["ε = 0.001", "10.18 above", "[18172.48, 18182.58]", "[18165.63, 18169.08]", "cannot be in that order",
                     "larger islands (--inner J, --island-sweeps)"] {
            XCTAssertTrue(w?.contains(part) == true, "\(part): \(w ?? "nil")")
        }
    }

    /// The above-bound warning names the quantity, ε, both intervals and what to do; none without a finding.
    func testEstimateAboveBoundText() {
        XCTAssertNil(NetworkReport.boundWarning(nil))
        let v = EstimateAboveBound(quantity: "d_zeta_lower", eps: 0.001, estimate: 18240.5, interval: 18238.25...18242.75,
                                   bound: 18231.22, boundInterval: 18230.38...18232.07)
        let w = NetworkReport.boundWarning(v)
        for part in ["the lower 2sED at ε = 0.001", "18240.5 [18238.25, 18242.75]", "upper bound 18231.22 [18230.38, 18232.07]",
                     "cannot be in that order", "wrong, not noisy", "(--inner J, --island-sweeps)"] {
            XCTAssertTrue(w?.contains(part) == true, "\(part): \(w ?? "nil")")
        }
        let joint = NetworkReport.boundWarning(EstimateAboveBound(quantity: "d_zeta", eps: 0.1, estimate: 3, interval: 2...4, bound: 1,
                                                                    boundInterval: 0.5...1.5))
        XCTAssertTrue(joint?.hasPrefix("the 2sED at ε = 0.1 ") == true, joint ?? "nil")
    }

    /// The bound's shortfall: reported only where it exceeds the bound's half-width, the largest such point,
    /// and its warning names ε, the spread, K, the shortfall and the half-width.
    func testBoundShortfallCheckAndText() throws {
        func point(eps: Double, spread: Double, half: Double) -> EpsilonEstimate {
            let stage = LogEstimate(value: 300, variance: 1)
            var u = UpperBound(eps: eps, zeta: 0.5, dimension: 10, estimate: LogEstimate(value: 400, variance: 1), lower: nil,
                               stage: stage, stageLower: stage, stageLogVariance: spread,
                               stageShortfall: LogNormalSpread.shortfall(logVariance: spread, count: 64))
            u.ci95 = (u.dZeta - half)...(u.dZeta + half)
            var p = EpsilonEstimate(eps: eps, zeta: 0.5, dZeta: 1, dZetaJoint: 1, ci95: 0...2, ci95Joint: 0...2, ess: [1])
            (p.standardError, p.islandNoise, p.logVariance, p.bound) = (1, [0.5], [spread], u)
            return p
        }
        // 784-32-10's log B spread of about 25 nats²: a shortfall of a few nats, under a unit in d_ζ.
        let small = point(eps: 0.001, spread: 25, half: 0.85)
        let s25 = try XCTUnwrap(small.bound).shortfall(eps: 0.001)
        XCTAssertGreaterThan(s25, 0.1)
        XCTAssertLessThan(s25, 0.85)
        let wide = point(eps: 0.001, spread: 100, half: 0.85), wider = point(eps: 0.1, spread: 100, half: 0.85)
        XCTAssertGreaterThan(try XCTUnwrap(wider.bound).shortfall(eps: 0.1), try XCTUnwrap(wide.bound).shortfall(eps: 0.001))
        XCTAssertNil(SMCReport.boundShortfall([small]))
        XCTAssertNil(NetworkReport.boundShortfallWarning(at: nil, paths: 64))
        let worst = SMCReport.boundShortfall([small, wide, wider])
        XCTAssertEqual(worst?.eps, 0.1, "the largest shortfall beyond its half-width")
        let w = NetworkReport.boundShortfallWarning(at: worst, paths: 64)
        for part in ["ε = 0.1", "K = 64", "100 nats²", "half-width 0.85", "likely higher than printed", "shortfall_upper"] {
            XCTAssertTrue(w?.contains(part) == true, "\(part): \(w ?? "nil")")
        }
    }

    func testEdWarnsOnStderr() async throws {
        let err = OutputCapture(), out = OutputCapture()
        let args = ["ed", "--estimator", "plain", "--arch", "10-8-3", "--samples", "20", "--paths", "30", "--inner", "10", "--sigma2", "0.1",
                    "--eps", "1e-3:0.5:5", "--seed", "1", "--json"]
        let status = await Console.$capture.withValue(out) {
            await Console.$errorCapture.withValue(err) { await TwoScaleMain.execute(args) }
        }
        XCTAssertEqual(status, 0, err.text)
        let json = try JSONValue.parse(Data(out.text.utf8), source: "ed")
        guard case let .array(ess)? = json["ess"], case let .double(minESS)? = ess.first else {
            return XCTFail("no ess in \(out.text.prefix(300))")
        }
        XCTAssertLessThan(minESS, 2, "this design concentrates the weights")
        XCTAssertTrue(err.text.contains("warning: the stage-2 weights have an effective sample size"), err.text)
    }
}
