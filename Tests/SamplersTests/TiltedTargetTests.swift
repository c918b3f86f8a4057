import Foundation
import Samplers
import TwoScaleCore
import XCTest

/// The smc precision target (`PrecisionTarget.run`) on a run tilted by the majorant over two later stages, whose
/// 2sED reports its bracket whatever the budget (`EpsilonEstimate.tiltedOverSeveralStages`): on rounds whose points
/// are set here, the islands' lever that would double J elsewhere is not pulled, and the target stops at once.
final class TiltedTargetTests: XCTestCase {
    static let start = PrecisionTarget.Budget(paths: 64, inner: 32, stageOneSweeps: 20, independenceMoves: false, traceDraws: 1000)

    /// A 2sED at 100 with a sampled interval, a bracket [80, 130] reported in its place, and two later stages whose
    /// second one fails on noisy islands (outer ESS 5% of K, s² 3, σ̄² 2.4, 80% of the spread): the islands' lever
    /// (`PrecisionTarget.Levers`); `tilted`: both later stages tilted.
    static func point(tilted: Bool) -> EpsilonEstimate {
        var p = EpsilonEstimate(eps: 0.1, zeta: 0.5, dZeta: 100, dZetaJoint: 100, ci95: 99...101)
        p.bracket = CertifiedBracket.Point(eps: 0.1, zeta: 0.5, dimension: 200, stageUpper: [0], stageLower: [0])
        p.bracket?.dZeta = 80...130
        p.interval = ReportedInterval(range: 80...130, source: .bracket)
        (p.ess, p.logVariance, p.islandNoise, p.islandNoiseVariance) = ([0.6 * 64, 0.05 * 64], [0.5, 3.0], [0.1, 0.8], [0.05, 2.4])
        p.tilts = [TiltDiagnostics(engaged: tilted), TiltDiagnostics(engaged: tilted)]
        return p
    }

    static func run(tilted: Bool) async throws -> PrecisionTarget {
        try await PrecisionTarget.run(start: start, width: 0.02, maxPaths: nil, defaultStageOneSweeps: 20, maximumStageOneSweeps: 1000,
                                      progress: { _ in }) { _ in ((), [Self.point(tilted: tilted)]) }.target
    }

    func testNoLeverForATiltedRunsBracket() async throws {
        let plain = try await Self.run(tilted: false)
        XCTAssertEqual(plain.rounds.map(\.inner), [32, 64, 128, 256], "untilted, the islands' lever doubles J to its cap")
        XCTAssertEqual(plain.outcome, .budgetSpent)
        let tilted = try await Self.run(tilted: true)
        XCTAssertEqual(tilted.rounds.map(\.inner), [32])
        XCTAssertEqual(tilted.outcome, .bracketLimited)
        // The lower 2sED's interval of the same tilted run can still be sampled: its levers stand.
        XCTAssertEqual(PrecisionTarget.Levers(Self.point(tilted: true), paths: 64, lower: true), .init(stageOne: false, islands: true))
        XCTAssertFalse(PrecisionTarget.Levers(Self.point(tilted: true), paths: 64).any)
    }
}
