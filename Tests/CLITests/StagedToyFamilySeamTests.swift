import Foundation
import RandomStreams
import Samplers
import ToyModels
@testable import TwoScaleCLI
import TwoScaleCore
import TwoScaleFormats
import XCTest

/// A staged family defined only here, with a setting of its own (`--test-factor a`): two stages, 3 units of 5
/// coordinates and 2 units of 4, `F(θ) = diag(w_1², a² w_2²)` on `[lo, hi]` with lo ≥ 0. The stages do not
/// interact, so with `m̄ = (lo + hi)/2` and `s = t√c`, `log Z = d_1 log(1 + s m̄) + d_2 log(1 + s a m̄)` and
/// `c = d / (⟨w²⟩ (d_1 + a² d_2))` in closed form; the lower 2sED equals the 2sED and every outer ESS is K.
struct ScaledStagesTestToy: ExactStagedToy {
    struct State: Sendable { var stages: [[Double]] }
    static let factorSetting = Setting.declare("test-factor")

    let factor: Double
    let box: ClosedRange<Double>
    var stageUnits: [StageUnits] { [StageUnits(count: 3, dimension: 5), StageUnits(count: 2, dimension: 4)] }
    var parameterCount: Int { 23 }
    var parameters: [(name: String, value: Double)] { [("factor", factor)] }
    var mean: Double { (box.lowerBound + box.upperBound) / 2 }
    var meanTrace: Double {
        let (lo, hi) = (box.lowerBound, box.upperBound)
        return (lo * lo + lo * hi + hi * hi) / 3 * (15 + factor * factor * 8)
    }

    func emptyState() -> State { State(stages: [[Double](repeating: box.lowerBound, count: 15), [Double](repeating: box.lowerBound, count: 8)]) }
    func setUnit(_ state: inout State, stage m: Int, unit u: Int, parameters: [Double]) {
        let p = stageUnits[m].dimension
        for j in 0..<p { state.stages[m][u * p + j] = parameters[j] }
    }
    func stage(_ state: State, _ m: Int, box: ClosedRange<Double>) throws -> StageUnit {
        let p = stageUnits[m].dimension, r = m == 0 ? 1 : factor
        return StageUnit(unit: SMCUnit(dimension: p, box: box, roots: { v in v.map { r * $0 } }),
                         supremumRoots: { [Double](repeating: r * box.upperBound, count: p) })
    }
    func uniformTrace(box: ClosedRange<Double>, rng: inout Xoshiro256) throws -> Double {
        var t = 0.0
        for m in 0..<2 {
            let r2 = m == 0 ? 1 : factor * factor
            for _ in 0..<(m == 0 ? 15 : 8) {
                let w = rng.uniform(box.lowerBound, box.upperBound)
                t += r2 * w * w
            }
        }
        return t
    }
    func uniformState(box: ClosedRange<Double>, rng: inout Xoshiro256) -> State {
        State(stages: [(0..<15).map { _ in rng.uniform(box.lowerBound, box.upperBound) }, (0..<8).map { _ in rng.uniform(box.lowerBound, box.upperBound) }])
    }
    func unitParameters(_ state: State, stage m: Int, unit u: Int) -> [Double] {
        let p = stageUnits[m].dimension
        return Array(state.stages[m][(u * p)..<((u + 1) * p)])
    }
    func ceilings(box: ClosedRange<Double>, scale s: Double) throws -> StageCeilings {
        StageCeilings(stage: [15 * Foundation.log1p(s * mean), 8 * Foundation.log1p(s * factor * mean)],
                      unitRange: 5 * Foundation.log1p(s * box.upperBound), stageRange: [0, 8 * Foundation.log1p(s * factor * box.upperBound)])
    }
    func traceCeiling(box: ClosedRange<Double>) -> Double { box.upperBound * box.upperBound * (15 + factor * factor * 8) }
    func exact(eps: Double, zeta: Double, normalization: Normalization) throws
        -> (dZeta: Double, dZetaLower: Double, stageOuterESSFraction: [Double], stageLogZ: [Double]) {
        let s = ScaleParameters.t(eps: eps, zeta: zeta) * (try scale(normalization)).squareRoot()
        let z = [15 * Foundation.log1p(s * mean), 8 * Foundation.log1p(s * factor * mean)]
        let d = TwoScale.dimension(logMeanDet: z[0] + z[1], dimension: 23, zeta: zeta, eps: eps)
        return (d, d, [1], z)
    }
}

struct ScaledStagesTestFamily: StagedToyFamily {
    var name: String { "test-scaled" }
    var settings: [Setting] { [ScaledStagesTestToy.factorSetting] }
    func model(_ given: [Setting: [Double]], box: (Double, Double)) throws -> any ExactStagedToy {
        let a = given[ScaledStagesTestToy.factorSetting] ?? [2]
        guard a.count == 1, a[0] >= 0, a[0] <= 100, box.0 >= 0 else {
            throw TwoScaleError.invalid("\(ScaledStagesTestToy.factorSetting)", a.map { "\($0)" }.joined(separator: ","), allowed: "one factor from 0 to 100")
        }
        return ScaledStagesTestToy(factor: a[0], box: box.0...box.1)
    }
}

/// A staged toy family is one type with settings of its own: registered from the test target, `toy` takes
/// its name and its flag, runs its exact values and the smc estimator on it, and refuses its flag elsewhere.
final class StagedToyFamilySeamTests: XCTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try StagedToyFamilies.register(ScaledStagesTestFamily())
    }

    override func tearDown() {
        StagedToyFamilies.unregister("test-scaled")
        super.tearDown()
    }

    /// The closed form at factor a on [lo, hi].
    func closedForm(eps: Double, zeta: Double, factor a: Double, lo: Double, hi: Double) -> Double {
        let mean = (lo + hi) / 2, meanSquare = (lo * lo + lo * hi + hi * hi) / 3
        let c = 23 / (meanSquare * (15 + a * a * 8))
        let s = ScaleParameters.t(eps: eps, zeta: zeta) * c.squareRoot()
        return TwoScale.dimension(logMeanDet: 15 * Foundation.log1p(s * mean) + 8 * Foundation.log1p(s * a * mean), dimension: 23, zeta: zeta, eps: eps)
    }

    func testRegisteredStagedFamilyRunsWithItsOwnFlag() async throws {
        let json = try await runJSON(["toy", "--family", "test-scaled", "--test-factor", "3", "--box", "0.2:1.5", "--eps", "0.1,0.001", "--json"])
        XCTAssertEqual(json["family"], .string("test-scaled"))
        XCTAssertEqual(json["factor"]?.doubleValue, 3)
        XCTAssertEqual(json["dimension"]?.doubleValue, 23)
        guard case let .array(points)? = json["points"] else { return XCTFail("no points") }
        for (p, eps) in zip(points, [0.1, 0.001]) {
            let exact = closedForm(eps: eps, zeta: 2.0 / 3, factor: 3, lo: 0.2, hi: 1.5)
            XCTAssertEqual(try XCTUnwrap(p["d_zeta"]?.doubleValue), exact, accuracy: 1e-9 * exact, "ε = \(eps)")
            XCTAssertEqual(try XCTUnwrap(p["d_zeta_lower"]?.doubleValue), exact, accuracy: 1e-9 * exact)
        }
        // `--test-factor=0.5` spelling, and the smc estimator with its bracket on the plug-in model.
        let mc = try await runJSON(["toy", "--family", "test-scaled", "--test-factor=0.5", "--eps", "0.01", "--mc", "--paths", "32",
                                    "--inner", "16", "--seed", "4", "--json"])
        guard case let .array(mcPoints)? = mc["points"], let p = mcPoints.first else { return XCTFail("no points") }
        let exact = closedForm(eps: 0.01, zeta: 2.0 / 3, factor: 0.5, lo: 0, hi: 1)
        let estimate = try XCTUnwrap(p["d_zeta_mc"]?.doubleValue)
        XCTAssertEqual(estimate, exact, accuracy: 0.01 * exact, "independent stages: the smc estimate sits near the closed form")
        guard case let .array(bracket)? = p["d_zeta_bracket"], bracket.count == 2 else { return XCTFail("no bracket") }
        XCTAssertLessThanOrEqual(try XCTUnwrap(bracket[0].doubleValue), exact)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(bracket[1].doubleValue), exact)
        let text = await runCLICapturingErrors(["toy", "--family", "test-scaled", "--test-factor", "3", "--eps", "0.1"])
        XCTAssertEqual(text.status, 0)
        XCTAssertTrue(text.out.hasPrefix("test-scaled toy: stages 3×5, 2×4 (d = 23), box [0, 1], factor 3, ζ ="), text.out)
    }

    func testItsFlagIsRefusedElsewhereAndOthersAreRefusedOnIt() async {
        let onLayered = await runCLICapturingErrors(["toy", "--family", "layered", "--units", "3,3", "--test-factor", "2"])
        XCTAssertEqual(onLayered.status, 2)
        XCTAssertTrue(onLayered.err.contains("--test-factor is a setting of --family test-scaled"), onLayered.err)
        let onSeparable = await runCLICapturingErrors(["toy", "--family", "bernoulli", "--dim", "3", "--test-factor", "2"])
        XCTAssertEqual(onSeparable.status, 2)
        XCTAssertTrue(onSeparable.err.contains("--test-factor is a setting of --family test-scaled"), onSeparable.err)
        let layeredFlag = await runCLICapturingErrors(["toy", "--family", "test-scaled", "--coupling", "0.3"])
        XCTAssertEqual(layeredFlag.status, 2)
        XCTAssertTrue(layeredFlag.err.contains("--coupling is a setting of --family layered"), layeredFlag.err)
        let bad = await runCLICapturingErrors(["toy", "--family", "test-scaled", "--test-factor", "-1"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.err.contains("--test-factor") && bad.err.contains("one factor from 0 to 100"), bad.err)
        let typo = await runCLICapturingErrors(["toy", "--family", "test-scaled", "--test-facto", "2"])
        XCTAssertEqual(typo.status, 2)
        XCTAssertTrue(typo.err.contains("unknown option '--test-facto'"), typo.err)
        let unknown = await runCLICapturingErrors(["toy", "--family", "test-nothing"])
        XCTAssertTrue(unknown.err.contains("test-scaled"), "the parser lists the registered staged family: \(unknown.err)")
    }

    func testNamesAreUniqueAcrossSeparableAndStagedFamilies() {
        XCTAssertThrowsError(try StagedToyFamilies.register(ScaledStagesTestFamily()), "a name already taken")
        XCTAssertThrowsError(try StagedToyFamilies.register(LayeredToyFamily()))
        XCTAssertThrowsError(try AxisFamilies.register(NamedAxisTestFamily(name: "test-scaled")), "an axis family may not take a staged name")
        XCTAssertThrowsError(try AxisFamilies.register(NamedAxisTestFamily(name: "layered")))
        StagedToyFamilies.unregister("layered")
        XCTAssertNotNil(StagedToyFamilies.named("layered"), "a shipped family cannot be removed")
    }
}

/// An axis family under any name (its λ is irrelevant: only registration is tried).
struct NamedAxisTestFamily: AxisFamily {
    let name: String
    func lambda(_ t: Double) -> Double { 1 }
    func sqrtLambda(_ t: Double) -> Double { 1 }
    var domain: (lo: Double, hi: Double) { (0, 1) }
    var singularPoints: [Double] { [] }
    var singularPower: Double { 0 }
}
