import Foundation
import Samplers
import TwoScaleCore
import XCTest

/// The precision target where every reported interval is narrow enough but an estimate lies outside its own
/// (`PrecisionTarget.strayEstimate`): the certified bracket holds by construction, so the estimate is biased beyond
/// its interval and the round is not done. On rounds whose points are set here, so that every decision is known.
final class StrayEstimateTargetTests: XCTestCase {
    static let start = PrecisionTarget.Budget(paths: 64, inner: 32, stageOneSweeps: 20, independenceMoves: false, traceDraws: 1000)

    /// A 2sED estimate `estimate` whose bracket [99.5, 100.5] (1% wide) is reported; `noisy`: its one later stage
    /// fails the outer weights' check with islands that are most of the spread (outer ESS 5% of K, s² 3, 80% of it
    /// the islands'), the islands' lever (`PrecisionTarget.Levers`); else the weights pass and a sampled interval
    /// [98.5, 99.8] is cut to the bracket. `lower`: the lower 2sED's estimate, with the same interval.
    static func point(estimate: Double, noisy: Bool = true, lower: Double? = nil) -> EpsilonEstimate {
        var p = EpsilonEstimate(eps: 0.1, zeta: 0.5, dZeta: estimate, dZetaJoint: estimate, dZetaLower: lower, ci95: 98.5...99.8)
        p.bracket = CertifiedBracket.Point(eps: 0.1, zeta: 0.5, dimension: 200, stageUpper: [0], stageLower: [0])
        p.bracket?.dZeta = 99.5...100.5
        if noisy {
            p.interval = ReportedInterval(range: 99.5...100.5, source: .bracket)
            (p.ess, p.logVariance, p.islandNoise, p.islandNoiseVariance) = ([0.6 * 64, 0.05 * 64], [0.5, 3.0], [0.1, 0.8], [0.05, 2.4])
        } else {
            p.interval = ReportedInterval.cut(98.5...99.8, to: 99.5...100.5)
            (p.ess, p.logVariance, p.islandNoise, p.islandNoiseVariance) = ([0.9 * 64, 0.9 * 64], [0.05, 0.05], [0.1, 0.1], [0.05, 0.05])
        }
        if lower != nil { p.intervalLower = p.interval }
        return p
    }

    static func run(width: Double = 0.02, points: @escaping @Sendable (PrecisionTarget.Budget) -> [EpsilonEstimate]) async throws
        -> PrecisionTarget {
        try await PrecisionTarget.run(start: start, width: width, maxPaths: nil, defaultStageOneSweeps: 20, maximumStageOneSweeps: 1000,
                                      progress: { _ in }) { b in ((), points(b)) }.target
    }

    func testWhichEstimatesStray() {
        XCTAssertNil(PrecisionTarget.strayEstimate([Self.point(estimate: 100)]))
        XCTAssertNil(PrecisionTarget.strayEstimate([Self.point(estimate: 99.5)]), "on the bracket's end is inside")
        let below = PrecisionTarget.strayEstimate([Self.point(estimate: 100), Self.point(estimate: 99.4)])
        XCTAssertEqual(below?.eps, 0.1)
        XCTAssertEqual(below?.lower, false)
        let lower = PrecisionTarget.strayEstimate([Self.point(estimate: 100, lower: 100.6)])
        XCTAssertEqual(lower?.lower, true)
        // A sampled interval cut to the bracket whose estimate lies below the bracket.
        let cut = Self.point(estimate: 99.2, noisy: false)
        XCTAssertEqual(cut.interval?.source, .sampled)
        XCTAssertEqual(cut.interval?.range, 99.5...99.8)
        XCTAssertEqual(PrecisionTarget.strayEstimate([cut])?.eps, 0.1)
    }

    /// 1% meets a 2% target in every round, but the estimate lies below the bracket until J = 128: the islands'
    /// lever doubles J twice, and the target is reached once the estimate is inside. Without the check the first
    /// round would have ended it.
    func testAStrayEstimatePullsItsPointsLevers() async throws {
        let t = try await Self.run { b in [Self.point(estimate: b.inner >= 128 ? 99.9 : 99.0)] }
        XCTAssertEqual(t.outcome, .reached)
        XCTAssertEqual(t.rounds.map(\.inner), [32, 64, 128])
        XCTAssertEqual(t.rounds.map(\.paths), [64, 64, 64])
        XCTAssertTrue(t.rounds.allSatisfy { $0.width <= 0.02 })
        XCTAssertNil(t.estimateOutsideEps)
        // The lower 2sED's estimate outside its interval counts the same.
        let lower = try await Self.run { b in [Self.point(estimate: 100, lower: b.inner >= 64 ? 100.2 : 100.8)] }
        XCTAssertEqual(lower.rounds.map(\.inner), [32, 64])
        XCTAssertEqual(lower.outcome, .reached)
    }

    /// An estimate that stays outside: J up to its cap (8 × the start), then the budget is spent, and the summary says
    /// why. Where no lever applies (the weights pass, so the sampled interval was cut to the bracket), one round, and
    /// the outcome names it.
    func testAStrayEstimateThatStaysOutsideIsReported() async throws {
        let spent = try await Self.run { _ in [Self.point(estimate: 99.0)] }
        XCTAssertEqual(spent.outcome, .budgetSpent)
        XCTAssertEqual(spent.rounds.map(\.inner), [32, 64, 128, 256])
        XCTAssertEqual(spent.estimateOutsideEps, 0.1)
        XCTAssertTrue(spent.summary.contains("the estimate at ε = 0.1 lies outside its certified bracket"), spent.summary)
        let none = try await Self.run { _ in [Self.point(estimate: 99.2, noisy: false)] }
        XCTAssertEqual(none.outcome, .estimateOutside)
        XCTAssertEqual(none.rounds.count, 1)
        XCTAssertTrue(none.summary.contains("no round's lever applies"), none.summary)
        let json = String(decoding: try JSONEncoder().encode(none), as: UTF8.self)
        XCTAssertTrue(json.contains("\"outcome\":\"estimate_outside\"") && json.contains("\"estimate_outside_eps\":0.1"), json)
        // Wider than the target, the stray estimate does not decide: the usual rule (the islands' lever) does.
        let wide = try await Self.run(width: 0.005) { _ in [Self.point(estimate: 99.0)] }
        XCTAssertEqual(wide.rounds.map(\.inner), [32, 64, 128, 256])
        XCTAssertNil(wide.estimateOutsideEps)
    }

    /// Joint tempering: a stray estimate doubles the sweeps (the moves' lag biases both passes) until it is inside,
    /// or the sweeps' cap is passed.
    func testTemperingDoublesTheSweepsForAStrayEstimate() async throws {
        let t = try await PrecisionTarget.runTempering(paths: 64, replicates: 4, sweeps: 5, traceDraws: 1000, width: 0.02, maxPaths: nil,
                                                       progress: { _ in }) { _, s, _ in ((), [Self.point(estimate: s >= 20 ? 100 : 99.0)]) }
        XCTAssertEqual(t.target.rounds.compactMap(\.sweeps), [5, 10, 20])
        XCTAssertEqual(t.target.outcome, .reached)
        let spent = try await PrecisionTarget.runTempering(paths: 64, replicates: 4, sweeps: 5, traceDraws: 1000, width: 0.02, maxPaths: nil,
                                                           progress: { _ in }) { _, _, _ in ((), [Self.point(estimate: 99.0)]) }
        XCTAssertEqual(spent.target.rounds.compactMap(\.sweeps), [5, 10, 20, 40])
        XCTAssertEqual(spent.target.outcome, .budgetSpent)
        XCTAssertTrue(spent.target.summary.contains("lies outside its certified bracket, and the next round would pass 40 sweeps"),
                      spent.target.summary)
    }
}
