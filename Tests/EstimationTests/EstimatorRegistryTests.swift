import Estimation
import ToyModels
import TwoScaleCore
import XCTest

/// Two estimators that exist only here, registered and removed around each test: the registry maps their
/// names and their declared settings, and nothing else in this test target knows a shipped estimator.
private enum FirstStub: NetworkEstimator {
    static let kind = EstimatorKind(rawValue: "stub-first")
    static let depth = Setting.declare("stub-depth")
    static var options: [EstimatorOption] { [EstimatorOption(depth, defaultValue: 3)] }
    static var toy: ToyMonteCarlo.Method? { .smc }
    static func defaultBudget(_ use: EstimatorUse) -> (paths: Int, inner: Int) { (2, 2) }
    static func estimate(_ problem: EstimatorProblem, request: MeasurementRequest,
                         progress: @escaping @Sendable (String) -> Void) async throws -> NetworkEstimate {
        NetworkEstimate(kind: kind, points: [], paths: problem.budget.paths, scale: 1, bracket: nil)
    }
}

private enum SecondStub: NetworkEstimator {
    static let kind = EstimatorKind(rawValue: "stub-second")
    static var commandSettings: [Setting] { [.bootstrap] }
    static var estimatesLower: Bool { false }
    static func defaultBudget(_ use: EstimatorUse) -> (paths: Int, inner: Int) { (4, 4) }
    static func estimate(_ problem: EstimatorProblem, request: MeasurementRequest,
                         progress: @escaping @Sendable (String) -> Void) async throws -> NetworkEstimate {
        NetworkEstimate(kind: kind, points: [], paths: problem.budget.paths, scale: 1, bracket: nil)
    }
}

final class EstimatorRegistryTests: XCTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try EstimatorRegistry.register(FirstStub.self)
        try EstimatorRegistry.register(SecondStub.self)
    }

    override func tearDown() {
        EstimatorRegistry.unregister(FirstStub.kind)
        EstimatorRegistry.unregister(SecondStub.kind)
        super.tearDown()
    }

    func testNamesMapToTheirEstimatorsAndNothingElse() throws {
        XCTAssertTrue(try EstimatorRegistry.estimator(FirstStub.kind) == FirstStub.self)
        XCTAssertTrue(try EstimatorRegistry.estimator(SecondStub.kind) == SecondStub.self)
        XCTAssertThrowsError(try EstimatorRegistry.estimator(EstimatorKind(rawValue: "stub-none"))) { e in
            let message = Setting.plain((e as? TwoScaleError)?.message ?? "")
            XCTAssertTrue(message.contains("stub-first") && message.contains("stub-second"), message)
        }
        XCTAssertThrowsError(try EstimatorRegistry.register(FirstStub.self), "a name is taken once")
        XCTAssertTrue(EstimatorRegistry.lowerEstimators.contains("stub-first"))
        XCTAssertFalse(EstimatorRegistry.lowerEstimators.contains("stub-second"))
    }

    /// The one registry serves the toy models too: an estimator with a toy run is found for `toy --mc`, one
    /// without is refused with the names that have one.
    func testToyRunsComeFromTheSameRegistry() throws {
        let run = try EstimatorRegistry.toyMethod(FirstStub.kind)
        XCTAssertEqual(run.kind, FirstStub.kind, "under the estimator's own name")
        XCTAssertTrue(run.separateTrace, "the smc run it names")
        XCTAssertThrowsError(try EstimatorRegistry.toyMethod(SecondStub.kind)) { e in
            let message = Setting.plain((e as? TwoScaleError)?.message ?? "")
            XCTAssertTrue(message.contains("stub-first"), message)
        }
    }

    /// A setting given to a run of another estimator names its owner; an estimator's own settings and the
    /// command settings it claims are its own.
    func testForeignSettingsNameTheirOwner() throws {
        let foreign = try XCTUnwrap(EstimatorRegistry.foreignSetting([FirstStub.depth], for: SecondStub.kind))
        XCTAssertEqual(foreign.setting, FirstStub.depth)
        XCTAssertEqual(foreign.owner, FirstStub.kind)
        XCTAssertNil(EstimatorRegistry.foreignSetting([FirstStub.depth], for: FirstStub.kind))
        XCTAssertNil(EstimatorRegistry.foreignSetting([.bootstrap], for: SecondStub.kind))
        XCTAssertEqual(SecondStub.settings, [.bootstrap])
        XCTAssertEqual(FirstStub.settings, [FirstStub.depth])
    }

    /// A given value wins, then the option's default, then the estimator's derived fallback; the given
    /// settings are listed in a fixed order.
    func testSettingsTakeTheGivenValueThenTheDefault() throws {
        var s = EstimatorSettings()
        let option = FirstStub.options[0]
        XCTAssertEqual(s.value(option), 3)
        XCTAssertEqual(s.value(EstimatorOption(.traceDraws, defaultValue: nil), fallback: 1_000), 1_000)
        s[FirstStub.depth] = 7
        s[.traceDraws] = 50
        XCTAssertEqual(s.value(option), 7)
        XCTAssertEqual(s.given.map(\.name), [FirstStub.depth.name, Setting.traceDraws.name].sorted())
        XCTAssertEqual(EstimatorBudget(paths: 2, inner: 3, settings: s).settings[FirstStub.depth], 7)
        // A declared setting renders as its own name, a marker of no setting stays as it is.
        XCTAssertEqual(Setting.plain("raise \(FirstStub.depth)"), "raise stub-depth")
    }
}
