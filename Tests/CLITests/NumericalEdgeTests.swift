import Foundation
@testable import Networks
@testable import SpectraStore
import TwoScaleCLI
import TwoScaleCore
@testable import TwoScaleFormats
import XCTest

/// Numerical edge cases, each pinned to a closed form or to a clear error (never a NaN/∞ or a trap):
/// ε → 0 and → 1, ζ → 1, zero Fisher matrices, eigenvalues at the clamp threshold, tiny and huge σ²,
/// saturated softmax, and d ≥ 10⁵ in `analyze`.
final class NumericalEdgeTests: ScratchDirectoryTestCase {
    override class var scratchTag: String { "edge" }

    func json(_ args: [String]) async throws -> JSONValue {
        let r = await runCLICapturingErrors(args)
        XCTAssertEqual(r.status, 0, "\(args): \(r.err)")
        return try JSONValue.parse(Data(r.out.utf8), source: "stdout")
    }

    func points(_ v: JSONValue) throws -> [JSONValue] { try XCTUnwrap(v["points"]?.arrayValue) }

    /// Every number in a JSON value (for "all finite" checks: the writer refuses non-finite ones, so
    /// parsing succeeded already; this also checks that they are present).
    func numbers(_ v: JSONValue) -> [Double] {
        switch v {
        case let .double(x): return [x]
        case let .int(i): return [Double(i)]
        case let .array(a): return a.flatMap(numbers)
        case let .object(kv): return kv.flatMap { numbers($0.1) }
        default: return []
        }
    }

    /// The closed form for constant λ on [0,1]^d: `d_ζ = ζd + Σ_i log(1 + ε^(ζ−1)√(cλ_i))/|log ε|` with
    /// `c = d/Σλ` (trace) — evaluated here in long double where the product fits, by logs otherwise.
    func constantDZeta(_ lambdas: [Double], eps: Double, zeta: Double, trace: Bool = true) -> Double {
        let d = Double(lambdas.count)
        let c = trace ? d / lambdas.reduce(0, +) : 1
        let logEps = Foundation.log(eps)
        var s = 0.0
        for l in lambdas where l > 0 {
            // log(ε^(ζ−1)√(cλ)) = (ζ−1) log ε + ½ log(cλ)
            let logTerm = (zeta - 1) * logEps + 0.5 * Foundation.log(c * l)
            s += logTerm > 36 ? logTerm + Foundation.exp(-logTerm) : Foundation.log1p(Foundation.exp(logTerm))
        }
        return zeta * d + s / Swift.abs(logEps)
    }

    func testEpsilonToZeroAndToOneAndZetaToOne() async throws {
        let lambdas = [4.0, 0.01, 1e20, 1e-20]
        for eps in [1e-300, 1e-150, 0.5, 1 - 1e-12] {
            for zeta in [0, 2.0 / 3, 0.999999] {
                for trace in [true, false] {
                    let v = try await json(["toy", "--family", "constant", "--lambdas", lambdas.map { "\($0)" }.joined(separator: ","),
                                            "--eps", "\(eps)", "--zeta", "\(zeta)", "--normalize", trace ? "trace" : "none", "--json"])
                    let got = try XCTUnwrap(try points(v)[0]["d_zeta"]?.doubleValue)
                    let want = constantDZeta(lambdas, eps: eps, zeta: zeta, trace: trace)
                    XCTAssertEqual(got, want, accuracy: 1e-9 * Swift.max(1, Swift.abs(want)), "ε = \(eps), ζ = \(zeta), trace \(trace)")
                    XCTAssertGreaterThanOrEqual(got, zeta * 4 - 1e-9)
                }
            }
        }
        // ε^(ζ−1)·√λ beyond a double (10³⁰⁰ · 10¹⁰): exactly (300 + 10 + 300)/300 at ζ = 0, c = 1.
        let v = try await json(["toy", "--family", "constant", "--lambdas", "1e20,1", "--eps", "1e-300", "--zeta", "0",
                                "--normalize", "none", "--json"])
        let p = try points(v)[0]
        XCTAssertEqual(try XCTUnwrap(p["d_zeta"]?.doubleValue), 610.0 / 300, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(p["log_box_count"]?.doubleValue), 610 * Foundation.log(10.0), accuracy: 1e-9, "⌈10¹⁰/10⁻³⁰⁰⌉·⌈1/10⁻³⁰⁰⌉")
        XCTAssertEqual(p["box_count"], .null, "a count beyond 2⁵³ is given in log form only")
    }

    func testNetworkAtExtremeScalesStaysFinite() async throws {
        let base = ["ed", "--estimator", "plain", "--arch", "3-4-3", "--samples", "3", "--paths", "3", "--inner", "2", "--lower", "--bootstrap", "10",
                    "--abbas-n", "1e6", "--json"]
        for (eps, zeta) in [(1e-300, 0.0), (1e-300, 0.999999), (1 - 1e-12, 2.0 / 3), (1 - 1e-12, 0.999999)] {
            let v = try await json(base + ["--eps", "\(eps)", "--zeta", "\(zeta)"])
            for p in try points(v) {
                let nested = try XCTUnwrap(p["d_zeta"]?.doubleValue), lower = try XCTUnwrap(p["d_zeta_lower"]?.doubleValue)
                XCTAssertTrue(nested.isFinite && lower.isFinite)
                XCTAssertLessThanOrEqual(zeta * 24, lower + 1e-9 * nested, "ζd ≤ lower at ε = \(eps)")
                XCTAssertLessThanOrEqual(lower, nested * (1 + 1e-12), "lower ≤ nested at ε = \(eps)")
            }
        }
    }

    /// A zero Fisher matrix (every input 0: the one-layer output FIM vanishes) gives F̂ = 0 and d_ζ = ζd.
    func testZeroFisherGivesZetaD() async throws {
        try Data("0,0,0\n0,0,0\n".utf8).write(to: URL(fileURLWithPath: dir + "/zeros.csv"))
        let f = try await json(["fisher", "--arch", "3-2", "--data", "csv:\(dir)/zeros.csv", "--fisher", "output", "--json"])
        XCTAssertEqual(f["trace"]?.doubleValue, 0)
        for zeta in [0.0, 0.5] {
            let v = try await json(["ed", "--arch", "3-2", "--data", "csv:\(dir)/zeros.csv", "--samples", "2", "--fisher", "output",
                                    "--paths", "3", "--eps", "1e-3,0.1", "--zeta", "\(zeta)", "--json"])
            for p in try points(v) { XCTAssertEqual(p["d_zeta"]?.doubleValue, zeta * 6) }
        }
        let t = try await json(["toy", "--family", "constant", "--lambdas", "0,0,0", "--eps", "0.1", "--zeta", "0.5", "--json"])
        XCTAssertEqual(try points(t)[0]["d_zeta"]?.doubleValue, 1.5)
    }

    /// Negative round-off down to −10⁻⁸·λ_max is clamped (and counted); one ulp beyond is an error.
    func testClampThreshold() throws {
        let at = try Spectrum(eigenvalues: [1, -Spectrum.negativeTolerance, 0.25])
        XCTAssertEqual(at.clamped, 1)
        XCTAssertEqual(at.roots, [1, 0.5])
        XCTAssertEqual(at.trace, 1.25)
        XCTAssertThrowsError(try Spectrum(eigenvalues: [1, -Spectrum.negativeTolerance.nextUp])) { e in
            XCTAssertEqual((e as? TwoScaleError)?.kind, .failure)
        }
        // The threshold is relative: scaled spectra clamp the same way.
        XCTAssertEqual(try Spectrum(eigenvalues: [1e-200, -1e-208]).clamped, 1)
        XCTAssertEqual(try Spectrum(eigenvalues: [1e200, -1e192]).clamped, 1)
        XCTAssertEqual(try Spectrum(eigenvalues: [0, -0.0]).clamped, 0, "an all-zero spectrum has nothing to clamp")
    }

    /// σ² from 10⁻¹² to 10¹²: Markov spectra and the 2sED stay finite; under the trace normalisation the
    /// 2sED of the Markov FIM does not change with σ² when every block scales alike (one-layer network:
    /// F = Σ/σ² exactly, so c·F is independent of σ²).
    func testTinyAndHugeSigma2() async throws {
        var values: [Double] = []
        for s in ["1e-12", "1", "1e12"] {
            let f = try await json(["fisher", "--arch", "3-4-3", "--data", "synthetic:gaussian", "--samples", "4", "--fisher", "markov",
                                    "--sigma2", s, "--json"])
            XCTAssertTrue(numbers(f).allSatisfy(\.isFinite))
            let v = try await json(["ed", "--estimator", "plain", "--arch", "3-2", "--samples", "4", "--paths", "3", "--sigma2", s, "--eps", "0.1", "--json"])
            values.append(try XCTUnwrap(try points(v)[0]["d_zeta"]?.doubleValue))
        }
        XCTAssertEqual(values[0], values[1], accuracy: 1e-9 * values[1])
        XCTAssertEqual(values[2], values[1], accuracy: 1e-9 * values[1])
    }

    /// Weights in ±1000 saturate the softmax (probabilities underflow to 0 or round to 1): the output
    /// FIM is (nearly) 0, every number stays finite and d_ζ ∈ [ζd, d_ζ(F̂ = I)].
    func testSaturatedSoftmax() async throws {
        for fisher in ["output", "markov"] {
            let v = try await json(["ed", "--estimator", "plain", "--arch", "3-4-3", "--samples", "4", "--paths", "4", "--inner", "2", "--box=-1000:1000",
                                    "--fisher", fisher, "--eps", "0.1", "--zeta", "0.5", "--lower", "--json"])
            for p in try points(v) {
                let dz = try XCTUnwrap(p["d_zeta"]?.doubleValue)
                XCTAssertGreaterThanOrEqual(dz, 0.5 * 24 - 1e-9, fisher)
                XCTAssertTrue(numbers(p).allSatisfy(\.isFinite))
            }
        }
        try Data(#"{"weights": [[[1000,-1000,1000],[-1000,1000,-1000]]]}"#.utf8).write(to: URL(fileURLWithPath: dir + "/w.json"))
        let f = try await json(["fisher", "--arch", "3-2", "--weights", dir + "/w.json", "--data", "synthetic:gaussian", "--samples", "5",
                                "--fisher", "output", "--json"])
        let eig = numbers(try XCTUnwrap(f["blocks"]))
        XCTAssertTrue(eig.allSatisfy { $0.isFinite && $0 > -1e-8 })
    }

    /// d = 110000 parameters (two blocks of 60000 and 50000) with K = 3, J = 2 and five nonzero
    /// eigenvalues per row (the rest are zeros, omitted as the store allows). With the same spectrum in
    /// every row the nested, joint and lower estimators all equal the closed form
    /// `ζd + Σ_i log1p(t√(cλ_i))/|log ε|`, `c = d/Tr F`.
    func testAnalyzeAtOneHundredThousandParameters() async throws {
        let store = dir + "/big"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        let layers = [60_000, 50_000], K = 3, J = 2
        let row1 = [5.0, 1, 0.5, 1e-3, 1e-9], row2 = [2.0, 2, 0.1, 1e-4, 0]
        let meta = try StoreMeta(layers: layers, paths: K, inner: J, configuration: NetworkRunConfiguration(
            fisher: .markov, arch: "110000-params", bias: false, activation: .relu, box: -1...1, seed: 1, data: "synthetic:gaussian",
            samples: 10, labels: "none", standardize: false, sigma2: 0.1, noiseSamples: 1))
        try AtomicFile.write(try meta.serialized(), to: store + "/meta.json")
        try NPYArray(shape: [K, 5], data: Array((0..<K).map { _ in row1 }.joined())).write(to: store + "/own_1.npy")
        try NPYArray(shape: [K, 5], data: Array((0..<K).map { _ in row2 }.joined())).write(to: store + "/own_2.npy")
        try NPYArray(shape: [K, J, 5], data: Array((0..<(K * J)).map { _ in row2 }.joined())).write(to: store + "/inner_2.npy")
        let eps = 0.01, zeta = 2.0 / 3
        let v = try await json(["analyze", store, "--eps", "\(eps)", "--zeta", "\(zeta)", "--lower", "--abbas-n", "1e6", "--json"])
        XCTAssertEqual(v["dimension"], .int(110_000))
        let d = 110_000.0
        let all = row1 + row2
        let c = d / all.reduce(0, +)
        let t = Foundation.pow(eps, zeta - 1)
        let want = zeta * d + all.reduce(0) { $0 + Foundation.log1p(t * ($1 * c).squareRoot()) } / Swift.abs(Foundation.log(eps))
        let p = try points(v)[0]
        for key in ["d_zeta", "d_zeta_joint", "d_zeta_lower"] {
            XCTAssertEqual(try XCTUnwrap(p[key]?.doubleValue), want, accuracy: 1e-9 * want, key)
        }
        XCTAssertTrue(numbers(v).allSatisfy(\.isFinite))
    }
}
