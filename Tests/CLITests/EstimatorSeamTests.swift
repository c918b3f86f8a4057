import Foundation
import NetworkEstimators
import Networks
import TwoScaleCore
import TwoScaleFormats
import XCTest

/// An estimator defined only here: d_ζ(ε) = ζ·d, its ε → 0 limit at full rank, with an interval of ±1.
/// It exercises the estimator seam the way a new estimator would: registered under a new name, it runs
/// through `ed`, `compare` and `analyze` without any change to the commands.
enum ConstantTestEstimator: NetworkEstimator {
    static let kind = EstimatorKind(rawValue: "test-constant")
    static var reportsIntervals: Bool { true }

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
        let points = request.eps.map { e in
            EpsilonEstimate(eps: e, zeta: request.zeta, dZeta: request.zeta * d, dZetaJoint: request.zeta * d,
                            dZetaLower: request.lower ? request.zeta * d : nil, ci95: request.zeta * d - 1...request.zeta * d + 1)
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

        let compare = try await runJSON(["compare", "--archs", "4-4-3,4-2-2-3", "--data", "synthetic:teacher:4-3-3", "--samples", "30",
                                         "--fisher-samples", "10", "--estimator", "test-constant", "--seeds", "1", "--epochs", "1",
                                         "--batch", "10", "--json"])
        XCTAssertEqual(compare["estimator"], .string("test-constant"))
        XCTAssertEqual(compare["paths"]?.doubleValue, 3)
        XCTAssertNil(compare["trace_draws"], "smc's settings keys belong to smc")

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
        let allowed: Set<String> = ["NetworkEstimators/EstimatorRegistry.swift"]
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

    /// The experiments above the estimators (Experiments, Study) reach them only through the seam: the
    /// registry, `NetworkEstimate` and `EstimatorBudget`, never a concrete estimator's type or its own report.
    /// (The concrete estimators share the NetworkEstimators module with the seam, so this reads names, not
    /// imports.)
    func testExperimentsNameNoConcreteEstimator() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let concrete = try NSRegularExpression(pattern: #"\b(PlainEstimator|SMCEstimator|JointEstimator|MarkovSMC|SMCReport|PlainReport|JointReport|StagedSMC|JointSMC)\b"#)
        var found: [String] = [], files = 0
        for module in ["Experiments", "Study"] {
            let dir = root.appendingPathComponent("Sources/\(module)")
            for rel in try FileManager.default.contentsOfDirectory(atPath: dir.path) where rel.hasSuffix(".swift") {
                files += 1
                let text = try String(contentsOf: dir.appendingPathComponent(rel), encoding: .utf8)
                for (n, line) in text.components(separatedBy: "\n").enumerated()
                where concrete.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil {
                    found.append("Sources/\(module)/\(rel):\(n + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        XCTAssertGreaterThan(files, 8)
        XCTAssertEqual(found, [], "reach estimators through EstimatorRegistry and NetworkEstimate")
    }
}
