import Foundation
import RandomStreams
@testable import Samplers
import TwoScaleCore
import XCTest

/// The majorant tilt's pieces (`StagedSMC.tiltEarlier`, docs/METHOD.md §22): its fit, and its kernel against the
/// tilted law computed by quadrature.
final class MajorantTiltTests: XCTestCase {
    /// Two stages of one coordinate each on [0, 1]: stage 1's root is x, stage 2's `e^{2x}·y`, and stage 2's
    /// majorant given x is `log(1 + s e^{2x})` (its factor with y at the box's top).
    struct TwoCoordinates: StagedModel {
        struct State: Sendable { var x = [0.0, 0.0] }
        var parameterCount: Int { 2 }
        var stageUnits: [StageUnits] { [StageUnits(count: 1, dimension: 1), StageUnits(count: 1, dimension: 1)] }
        func emptyState() -> State { State() }
        func setUnit(_ state: inout State, stage m: Int, unit u: Int, parameters: [Double]) { state.x[m] = parameters[0] }
        func stage(_ state: State, _ m: Int, box: ClosedRange<Double>) throws -> StageUnit {
            let c = m == 0 ? 1 : Foundation.exp(2 * state.x[0])
            return StageUnit(unit: SMCUnit(dimension: 1, box: box, roots: { w in w.map { c * $0 } }))
        }
        func uniformTrace(box: ClosedRange<Double>, rng: inout Xoshiro256) throws -> Double { 1 }
        func unitParameters(_ state: State, stage m: Int, unit u: Int) -> [Double] { [state.x[m]] }
        func stageMajorant(_ state: State, stage m: Int, scale s: Double, box: ClosedRange<Double>) throws -> Double? {
            m == 1 ? Foundation.log1p(s * Foundation.exp(2 * state.x[0]) * box.upperBound) : nil
        }
    }

    /// The fit's slope and R² on hand-computed cases; none where either side is constant.
    func testFit() {
        typealias S = StagedSMC<TwoCoordinates>
        let a = S.tiltFit(majorant: [0, 1, 2, 3], logZ: [1, 3, 5, 7])
        XCTAssertEqual(a?.slope ?? 0, 2, accuracy: 1e-15)
        XCTAssertEqual(a?.explained ?? 0, 1, accuracy: 1e-15)
        // x̄ = 1.5, ȳ = 3.75: Sxy = 8.5, Sxx = 5, Syy = 14.75; slope 1.7, R² = 72.25/73.75.
        let b = S.tiltFit(majorant: [0, 1, 2, 3], logZ: [1, 3, 5, 6])
        XCTAssertEqual(b?.slope ?? 0, 1.7, accuracy: 1e-15)
        XCTAssertEqual(b?.explained ?? 0, 72.25 / 73.75, accuracy: 1e-15)
        XCTAssertNil(S.tiltFit(majorant: [1, 1, 1], logZ: [0, 1, 2]))
        XCTAssertNil(S.tiltFit(majorant: [0, 1, 2], logZ: [4, 4, 4]))
    }

    /// Which condition turns a stage's tilt down, in the order `tiltEarlier` reads them: an outer ESS of at least K/2
    /// (exactly K/2 included), then a slope not above 0, then R² below one half (exactly one half tilts).
    func testDecisionNamesTheFirstFailingCondition() {
        typealias S = StagedSMC<TwoCoordinates>
        XCTAssertNil(S.tiltDecision(ess: 3, paths: 64, fit: (slope: 1.2, explained: 0.9)))
        XCTAssertNil(S.tiltDecision(ess: 31.9, paths: 64, fit: (slope: 0.1, explained: 0.5)))
        XCTAssertEqual(S.tiltDecision(ess: 32, paths: 64, fit: (slope: 1.2, explained: 0.9)), .essAtLeastHalf)
        XCTAssertEqual(S.tiltDecision(ess: 40, paths: 64, fit: (slope: -1, explained: 0.1)), .essAtLeastHalf)
        XCTAssertEqual(S.tiltDecision(ess: 3, paths: 64, fit: (slope: 0, explained: 0.9)), .slopeNotPositive)
        XCTAssertEqual(S.tiltDecision(ess: 3, paths: 64, fit: (slope: -335, explained: 0.04)), .slopeNotPositive)
        XCTAssertEqual(S.tiltDecision(ess: 3, paths: 64, fit: (slope: 3.3, explained: 0.499)), .explainedBelowHalf)
        XCTAssertEqual(S.tiltDecision(ess: 3, paths: 64, fit: (slope: .nan, explained: 0.9)), .slopeNotPositive)
    }

    /// The kernel leaves `π_1(x) e^{aL(x)} ∝ (1 + s x)(1 + s e^{2x})^a` invariant: 4 000 chains started
    /// uniform on the box, after 200 proposals each, have the mean and the share above 0.8 of that law (by
    /// quadrature) to 4.5 standard errors. The law's mean is 0.840; without the tilt it would be 0.583, and
    /// without the unit's own factor 0.816, 10 standard errors off.
    func testKernelAgainstQuadrature() throws {
        var smc = try StagedSMC(model: TwoCoordinates(), box: 0...1, seed: 3, paths: 4_000, inner: 8, traceDraws: 2)
        smc.tiltProposals = 200
        let (s, a) = (2.0, 3.0)
        let density: (Double) -> Double = { x in (1 + s * x) * Foundation.pow(1 + s * Foundation.exp(2 * x), a) }
        var (z, m1, above) = (0.0, 0.0, 0.0)
        let n = 200_000
        for i in 0..<n {
            let x = (Double(i) + 0.5) / Double(n), f = density(x)
            z += f
            m1 += x * f
            if x > 0.8 { above += f }
        }
        let (mean, share) = (m1 / z, above / z)
        var xs: [Double] = []
        for k in 0..<4_000 {
            var rng = Xoshiro256(seed: 11, stream: [UInt64(k)])
            var state = TwoCoordinates.State()
            state.x[0] = rng.uniform()
            let start = StagedSMC<TwoCoordinates>.TiltParticle(
                state: state, majorant: try XCTUnwrap(smc.model.stageMajorant(state, stage: 1, scale: s, box: 0...1)),
                unitLog: [try smc.unitLogs(state, stage: 0, scale: s)])
            let moved = try smc.tiltMove(start, stage: 1, scale: s, tilt: a, step: 0.5, rng: &rng)
            var x = state.x[0]
            for c in moved.changes { x = c.coordinates[0] }
            XCTAssertEqual(moved.majorant, Foundation.log1p(s * Foundation.exp(2 * x)), accuracy: 1e-12)
            XCTAssertEqual(moved.unitLog[0][0], Foundation.log1p(s * x), accuracy: 1e-12)
            xs.append(x)
        }
        let k = Double(xs.count)
        let m = xs.reduce(0, +) / k
        let sd = (xs.reduce(0) { $0 + ($1 - m) * ($1 - m) } / (k - 1)).squareRoot()
        XCTAssertEqual(m, mean, accuracy: 4.5 * sd / k.squareRoot(), "kernel mean \(m), exact \(mean)")
        let p = Double(xs.filter { $0 > 0.8 }.count) / k
        XCTAssertEqual(p, share, accuracy: 4.5 * (share * (1 - share) / k).squareRoot(), "share above 0.8: \(p), exact \(share)")
        XCTAssertGreaterThan(mean - 0.6, 10 * sd / k.squareRoot(), "the tilt must matter for this test")
    }

    /// `checkTilt`: 0 to 10 000 proposals, and never with `--outer-moves`.
    func testCheck() throws {
        typealias S = StagedSMC<TwoCoordinates>
        XCTAssertNoThrow(try S.checkTilt(proposals: 0, moveProposals: 4))
        XCTAssertNoThrow(try S.checkTilt(proposals: 10_000, moveProposals: 0))
        XCTAssertThrowsError(try S.checkTilt(proposals: -1, moveProposals: 0))
        XCTAssertThrowsError(try S.checkTilt(proposals: 10_001, moveProposals: 0))
        XCTAssertThrowsError(try S.checkTilt(proposals: 2, moveProposals: 2))
    }
}
