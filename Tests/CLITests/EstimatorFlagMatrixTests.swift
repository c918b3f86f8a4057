import Foundation
import Estimation
import NetworkEstimators
import Networks
@testable import TwoScaleCLI
import TwoScaleCore
import XCTest

/// Every command that runs an estimator (`ed`, `compare`, `toy --mc`), each of its estimator-specific
/// flags, under each estimator: refused, naming the estimator the flag belongs to, under any estimator but
/// its own, and taken under its own — never accepted and ignored. One message for all three commands
/// (`EstimatorFlags.refuseForeign`).
final class EstimatorFlagMatrixTests: XCTestCase {
    /// A valid value for each estimator-specific flag ("" for a flag that takes none).
    static let values: [String: String] = ["--bootstrap": "7", "--trace-draws": "100", "--island-sweeps": "3", "--outer-moves": "2",
                                           "--stage1-sweeps": "30", "--independence-moves": "", "--tilt-moves": "2",
                                           "--chains": "2"]

    /// The commands with an estimator, a quick valid command line of each, and the estimator-specific
    /// flags it takes.
    static let commands: [(name: String, base: [String], flags: [String])] = [
        ("ed", ["ed", "--arch", "4-3-2", "--data", "synthetic:gaussian", "--samples", "6", "--eps", "0.1", "--seed", "1",
                "--paths", "8", "--inner", "8", "--json"], ["--bootstrap", "--trace-draws", "--island-sweeps", "--outer-moves", "--stage1-sweeps",
                                                          "--independence-moves", "--tilt-moves", "--chains"]),
        ("compare", ["compare", "--archs", "4-3-2,4-2-2", "--data", "synthetic:teacher:4-3-2", "--samples", "20",
                     "--fisher-samples", "10", "--paths", "8", "--inner", "8", "--epochs", "1", "--batch", "10", "--seeds", "1",
                     "--json"], ["--trace-draws", "--island-sweeps", "--outer-moves", "--stage1-sweeps", "--independence-moves", "--tilt-moves",
                                 "--chains"]),
        ("toy --mc", ["toy", "--family", "bernoulli", "--dim", "3", "--box", "0.1:0.9", "--eps", "0.1", "--mc", "--paths", "8",
                      "--json"], ["--bootstrap", "--trace-draws"]),
    ]

    /// The shipped estimators (a test may register more for a while; they do not run the toy models).
    static let estimators: [any NetworkEstimator.Type] = [PlainEstimator.self, SMCEstimator.self]

    /// The flags of an estimator's own settings.
    static func flags(_ e: any NetworkEstimator.Type) -> [String] { e.settings.map { FlagSpelling.flag(for: $0) } }

    func testEachCommandsEstimatorFlagsUnderEachEstimator() async throws {
        var refused = 0, accepted = 0
        for command in Self.commands {
            for flag in command.flags {
                let value = try XCTUnwrap(Self.values[flag], "no test value for \(flag): add one")
                let owner = try XCTUnwrap(Self.estimators.first { Self.flags($0).contains(flag) }, "\(flag) belongs to no estimator")
                for estimator in Self.estimators {
                    let line = command.base + ["--estimator", estimator.kind.rawValue, flag] + (value.isEmpty ? [] : [value])
                    let r = await runCLICapturingErrors(line)
                    let label = "\(command.name) --estimator \(estimator.kind) \(flag)"
                    if Self.flags(estimator).contains(flag) {
                        XCTAssertEqual(r.status, 0, "\(label): \(r.err)")
                        XCTAssertFalse(r.out.isEmpty, label)
                        accepted += 1
                    } else {
                        XCTAssertEqual(r.status, 2, "\(label): \(r.err)")
                        // (toy --mc names smc "the default" also when given, as its default is smc.)
                        XCTAssertTrue(r.err.contains("\(flag) is a setting of the \(owner.kind) estimator, and this run uses \(estimator.kind)"),
                                      "\(label): \(r.err)")
                        XCTAssertTrue(r.err.contains("drop \(flag), or add --estimator \(owner.kind)"), "\(label): \(r.err)")
                        XCTAssertTrue(r.out.isEmpty, label)
                        refused += 1
                    }
                }
            }
        }
        XCTAssertEqual(refused + accepted, 34, "ed 8 flags, compare 7, toy --mc 2, each under 2 estimators")
        XCTAssertEqual(refused, 17)
    }

    /// Without --estimator, each command names its default in the refusal.
    func testTheDefaultIsNamed() async {
        for (line, flag, kind) in [(Self.commands[0].base, "--bootstrap", "smc"), (Self.commands[1].base, "--island-sweeps", "plain"),
                                   (Self.commands[2].base, "--bootstrap", "smc")] {
            let r = await runCLICapturingErrors(line + [flag, Self.values[flag] ?? "1"])
            XCTAssertEqual(r.status, 2, r.err)
            XCTAssertTrue(r.err.contains("and this run uses \(kind) (the default): drop \(flag)"), r.err)
        }
    }
}
