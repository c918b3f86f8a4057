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
        var points: [NetworkEstimate.Point]
        var seconds: Double = 0
    }

    static func estimate(_ problem: EstimatorProblem, request: MeasurementRequest,
                         progress: @escaping @Sendable (String) -> Void) async throws -> NetworkEstimate {
        progress("constant")
        let d = Double(problem.model.architecture.parameterCount)
        let points = request.eps.map { e in
            NetworkEstimate.Point(eps: e, dZeta: request.zeta * d, dZetaJoint: request.zeta * d,
                                  dZetaLower: request.lower ? request.zeta * d : nil, ci95: request.zeta * d - 1...request.zeta * d + 1)
        }
        let bracket = try await problem.model.certifiedBracket(box: problem.box, eps: request.eps, zeta: request.zeta, scale: 1,
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
}

/// Every estimator's own flags under every other estimator: `ed` and `compare` refuse each one, naming the
/// estimator it belongs to, and accept it under its own — never accepted and ignored.
final class EstimatorFlagMatrixTests: XCTestCase {
    /// A valid value for each estimator-specific flag.
    static let values: [String: String] = ["--bootstrap": "7", "--trace-draws": "100", "--island-sweeps": "3"]

    func testEachEstimatorsFlagsAreRefusedUnderTheOthers() async throws {
        let ed = ["ed", "--arch", "4-3-2", "--data", "synthetic:gaussian", "--samples", "6", "--eps", "0.1", "--seed", "1",
                  "--paths", "8", "--inner", "8", "--json"]
        let compare = ["compare", "--archs", "4-3-2,4-2-2", "--data", "synthetic:teacher:4-3-2", "--samples", "20",
                       "--fisher-samples", "10", "--paths", "8", "--inner", "8", "--epochs", "1", "--batch", "10", "--json"]
        let compareFlags: Set<String> = ["--trace-draws", "--island-sweeps"]
        var checked = 0
        for owner in EstimatorRegistry.all {
            for flag in owner.flags {
                let value = try XCTUnwrap(Self.values[flag], "no test value for \(flag): add one")
                for other in EstimatorRegistry.all where other.kind != owner.kind && !other.flags.contains(flag) {
                    var lines = [ed]
                    if compareFlags.contains(flag) { lines.append(compare) }
                    for base in lines {
                        let r = await runCLICapturingErrors(base + ["--estimator", other.kind.rawValue, flag, value])
                        XCTAssertEqual(r.status, 2, "\(base[0]) --estimator \(other.kind) \(flag): \(r.err)")
                        XCTAssertTrue(r.err.contains("\(flag) is a setting of the \(owner.kind) estimator"), r.err)
                        XCTAssertTrue(r.out.isEmpty)
                        checked += 1
                    }
                }
                // Under its own estimator the flag is taken.
                let own = await runCLICapturingErrors(ed + ["--estimator", owner.kind.rawValue, flag, value])
                XCTAssertEqual(own.status, 0, "ed --estimator \(owner.kind) \(flag): \(own.err)")
            }
        }
        XCTAssertGreaterThanOrEqual(checked, 5, "plain's --bootstrap under smc; smc's two flags under plain, in ed and compare")
    }
}
