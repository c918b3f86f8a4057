import Foundation
import Estimation
import NetworkEstimators
import Networks
import TwoScaleCore
import TwoScaleFormats
import XCTest

/// An estimator defined only here: d_ζ(ε) = ζ·d (its ε → 0 limit at full rank) plus its own setting
/// `--test-offset`, with an interval of ±1 and its own per-ε value `test_shift`. It exercises the estimator
/// seam the way a new estimator would: registered under a new name from outside Sources/, its flag and its
/// per-ε field run through `ed`, `compare` and `analyze` without any change to the commands.
enum ConstantTestEstimator: NetworkEstimator {
    static let kind = EstimatorKind(rawValue: "test-constant")
    static var reportsIntervals: Bool { true }
    static let offset = Setting.declare("test-offset")
    /// Added to every d_ζ.
    static var options: [EstimatorOption] { [EstimatorOption(offset, defaultValue: 0)] }

    static func defaultBudget(_ use: EstimatorUse) -> (paths: Int, inner: Int) { (3, 5) }

    struct Report: NetworkEstimateReport {
        var estimator: EstimatorKind
        var dimension: Int
        var paths: Int
        var inner: Int
        var points: [EpsilonEstimate]
        var seconds: Double = 0

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: ResultKey.self)
            try c.encode(estimator, forKey: ResultKey("estimator"))
            try c.encode(dimension, forKey: ResultKey("dimension"))
            try c.encode(paths, forKey: ResultKey("paths"))
            try c.encode(inner, forKey: ResultKey("inner"))
            try c.encode(points.map(NetworkEstimate.PointKeys.init), forKey: ResultKey("points"))
            try c.encode(seconds, forKey: ResultKey("seconds"))
        }
    }

    static func estimate(_ problem: EstimatorProblem, request: MeasurementRequest,
                         progress: @escaping @Sendable (String) -> Void) async throws -> NetworkEstimate {
        progress("constant")
        let d = Double(problem.model.architecture.parameterCount)
        let shift = Double(problem.budget.settings.value(options[0])), v = request.zeta * d + shift
        let points = request.eps.map { e in
            var p = EpsilonEstimate(eps: e, zeta: request.zeta, dZeta: v, dZetaJoint: v, dZetaLower: request.lower ? v : nil, ci95: v - 1...v + 1)
            p.extras = [.init(name: "test_shift", value: shift)]
            return p
        }
        let bracket = try await problem.model.certifiedBracket(box: problem.box, eps: request.eps, zeta: request.zeta, normalization: .none,
                                                               seed: problem.seed, draws: 20, laterStages: false, threads: 1)
        let report = problem.configuration.map { _ in
            Report(estimator: kind, dimension: Int(d), paths: problem.budget.paths, inner: problem.budget.inner, points: points)
        }
        return NetworkEstimate(kind: kind, points: points, paths: problem.budget.paths, scale: 1, bracket: bracket, report: report)
    }
}

final class EstimatorSeamTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        ShippedEstimators.install()
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try EstimatorRegistry.register(ConstantTestEstimator.self)
    }

    override func tearDown() {
        EstimatorRegistry.unregister(ConstantTestEstimator.kind)
        super.tearDown()
    }

    /// The new name is accepted by `ed` and `compare`, its result printed; `analyze` and the other
    /// estimators' flags are refused by what it declares, not by its name.
    func testRegisteredEstimatorRunsThroughTheCommands() async throws {
        let ed = try await runJSON(["ed", "--estimator", "test-constant", "--arch", "4-3-2", "--samples", "5", "--eps", "0.1,0.2",
                                    "--zeta", "0.5", "--lower", "--json"])
        XCTAssertEqual(ed["estimator"], .string("test-constant"))
        XCTAssertEqual(ed["paths"]?.doubleValue, 3)
        let points = try XCTUnwrap(ed["points"]?.arrayValue)
        XCTAssertEqual(points.count, 2)
        let d = try XCTUnwrap(ed["dimension"]?.doubleValue)
        XCTAssertEqual(points.first?["d_zeta"]?.doubleValue, 0.5 * d)
        XCTAssertEqual(points.first?["test_shift"]?.doubleValue, 0, "its own per-ε field, at its own setting's default")

        // Its own flag, in both spellings, reaches it through the settings and comes back in its own field.
        for words in [["--test-offset", "2"], ["--test-offset=2"]] {
            let shifted = try await runJSON(["ed", "--estimator", "test-constant", "--arch", "4-3-2", "--samples", "5", "--eps", "0.1",
                                             "--zeta", "0.5", "--json"] + words)
            let p = try XCTUnwrap(shifted["points"]?.arrayValue?.first)
            XCTAssertEqual(p["d_zeta"]?.doubleValue, 0.5 * d + 2, "\(words)")
            XCTAssertEqual(p["test_shift"]?.doubleValue, 2, "\(words)")
        }
        let (s5, _, e5) = await runCLICapturingErrors(["ed", "--estimator", "smc", "--arch", "4-3-2", "--samples", "5", "--eps", "0.1",
                                                       "--test-offset", "2"])
        XCTAssertEqual(s5, 2)
        XCTAssertTrue(e5.contains("--test-offset is a setting of the test-constant estimator, and this run uses smc"), e5)
        let (s6, _, e6) = await runCLICapturingErrors(["ed", "--estimator", "test-constant", "--arch", "4-3-2", "--samples", "5",
                                                       "--eps", "0.1", "--test-ofset", "2"])
        XCTAssertEqual(s6, 2)
        XCTAssertTrue(e6.contains("unknown option '--test-ofset'"), e6)
        let (s7, _, e7) = await runCLICapturingErrors(["ed", "--estimator", "test-constant", "--arch", "4-3-2", "--samples", "5",
                                                       "--eps", "0.1", "--test-offset", "two"])
        XCTAssertEqual(s7, 2)
        XCTAssertTrue(e7.contains("--test-offset"), e7)

        let compare = try await runJSON(["compare", "--archs", "4-4-3,4-2-2-3", "--data", "synthetic:teacher:4-3-3", "--samples", "30",
                                         "--fisher-samples", "10", "--estimator", "test-constant", "--seeds", "1", "--epochs", "1",
                                         "--batch", "10", "--json"])
        XCTAssertEqual(compare["estimator"], .string("test-constant"))
        XCTAssertEqual(compare["paths"]?.doubleValue, 3)
        XCTAssertNil(compare["trace_draws"], "smc's settings keys belong to smc")
        let shifted = try await runJSON(["compare", "--archs", "4-4-3,4-2-2-3", "--data", "synthetic:teacher:4-3-3", "--samples", "30",
                                         "--fisher-samples", "10", "--estimator", "test-constant", "--test-offset", "5", "--seeds", "1",
                                         "--epochs", "1", "--batch", "10", "--json"])
        let before = try XCTUnwrap(compare["points"]?.arrayValue?.first?["d_zeta"]?.doubleValue)
        let after = try XCTUnwrap(shifted["points"]?.arrayValue?.first?["d_zeta"]?.doubleValue)
        XCTAssertEqual(after, before + 5, accuracy: 1e-9, "compare passes the plug-in's own setting too")

        let (s1, _, e1) = await runCLICapturingErrors(["ed", "--estimator", "test-constant", "--arch", "4-3-2", "--samples", "5",
                                                       "--eps", "0.1", "--island-sweeps", "8"])
        XCTAssertEqual(s1, 2)
        XCTAssertTrue(e1.contains("--island-sweeps is a setting of the smc estimator, and this run uses test-constant"), e1)
        let (s2, _, e2) = await runCLICapturingErrors(["ed", "--estimator", "test-constant", "--arch", "4-3-2", "--samples", "5",
                                                       "--eps", "0.1", "--abbas-n", "100"])
        XCTAssertEqual(s2, 2)
        XCTAssertTrue(e2.contains("--abbas-n works with the plain estimator"), e2)
        let (s3, _, e3) = await runCLICapturingErrors(["analyze", "/nonexistent", "--estimator", "test-constant"])
        XCTAssertEqual(s3, 2)
        XCTAssertTrue(e3.contains("new run"), e3)
        let (s4, _, e4) = await runCLICapturingErrors(["ed", "--estimator", "no-such", "--arch", "4-3-2", "--samples", "5"])
        XCTAssertEqual(s4, 2)
        XCTAssertTrue(e4.contains("test-constant"), e4)
    }

    /// The registry is the only code that maps an estimator's name to what it does: no switch on an
    /// `EstimatorKind` and no comparison with `.plain` or `.smc` (or their names) anywhere else in Sources/.
    func testNoCodeOutsideTheRegistryTestsForAnEstimatorName() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        let allowed: Set<String> = ["Estimation/EstimatorRegistry.swift"]
        let patterns = [
            #"[=!]=\s*(EstimatorKind)?\.(plain|smc)\b"#,
            #"\bcase\s+(EstimatorKind)?\.(plain|smc)\s*[:,]"#,
            #"\bswitch\s+[\w.]*(estimator|estimatorKind)\s*\{"#,
            #"[=!]=\s*"(plain|smc)""#,
            #""(plain|smc)"\s*[=!]="#,
        ].map { try! NSRegularExpression(pattern: $0) }
        var found: [String] = []
        let files = FileManager.default.enumerator(atPath: sources.path)?.allObjects as? [String] ?? []
        XCTAssertGreaterThan(files.count, 50)
        for rel in files where rel.hasSuffix(".swift") && !allowed.contains(rel) {
            let text = try String(contentsOf: sources.appendingPathComponent(rel), encoding: .utf8)
            for (n, line) in text.components(separatedBy: "\n").enumerated() {
                let range = NSRange(line.startIndex..., in: line)
                if patterns.contains(where: { $0.firstMatch(in: line, range: range) != nil }) {
                    found.append("Sources/\(rel):\(n + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        XCTAssertEqual(found, [], "test the estimator's declared properties (EstimatorRegistry, NetworkEstimator), not its name")
    }

    /// The modules above the seam reach estimators only through it: Experiments, Study and the others below
    /// may not depend on NetworkEstimators (the shipped estimators), in Package.swift or by an import; the seam
    /// module itself imports no estimator. The import rule, not names, so a new estimator cannot leak in.
    func testModulesAboveTheSeamImportNoConcreteEstimator() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let forbidden = ["Estimation", "Experiments", "Study", "Bounds", "Statistics", "Training", "Reporting", "ToyModels"]
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var found: [String] = [], files = 0
        for module in forbidden {
            // Its target's dependency list in the manifest.
            let head = ".target(name: \"\(module)\""
            let start = try XCTUnwrap(manifest.range(of: head), "no target \(module)")
            let rest = manifest[start.upperBound...]
            let end = try XCTUnwrap(rest.range(of: "]"))
            if rest[..<end.lowerBound].contains("\"NetworkEstimators\"") { found.append("Package.swift: \(module) depends on NetworkEstimators") }
            let dir = root.appendingPathComponent("Sources/\(module)")
            for rel in try FileManager.default.contentsOfDirectory(atPath: dir.path) where rel.hasSuffix(".swift") {
                files += 1
                let text = try String(contentsOf: dir.appendingPathComponent(rel), encoding: .utf8)
                for (n, line) in text.components(separatedBy: "\n").enumerated()
                where line.trimmingCharacters(in: .whitespaces).hasPrefix("import NetworkEstimators")
                    || line.trimmingCharacters(in: .whitespaces).hasPrefix("@testable import NetworkEstimators") {
                    found.append("Sources/\(module)/\(rel):\(n + 1)")
                }
            }
        }
        XCTAssertGreaterThan(files, 30)
        XCTAssertEqual(found, [], "reach estimators through Estimation's EstimatorRegistry and NetworkEstimate")
        // The rule can fail: NetworkEstimators itself does import Estimation's seam and is where estimators live.
        let shipped = try String(contentsOf: root.appendingPathComponent("Sources/NetworkEstimators/ShippedEstimators.swift"), encoding: .utf8)
        XCTAssertTrue(shipped.contains("import Estimation"))
    }
}
