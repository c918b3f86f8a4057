import Foundation
import Samplers
import TwoScaleCore
import XCTest

/// The smc precision target's third lever (`PrecisionTarget.run`): where the widest reported interval is sampled and
/// at least half of its variance is ĉ's, the next round quadruples the trace draws instead of doubling K and J, on
/// rounds whose intervals are set here so that every decision is known.
final class TraceDrawsTargetTests: XCTestCase {
    static let start = PrecisionTarget.Budget(paths: 64, inner: 32, stageOneSweeps: 20, independenceMoves: false, traceDraws: 1000)

    /// A point at 2sED 100 whose sampled interval has half-width² `normalization` (ĉ's part) + `spread`, ĉ's share
    /// set as the estimator sets it; or the certified bracket reported over the same range.
    static func point(eps: Double = 0.1, normalization: Double, spread: Double, source: ReportedInterval.Source = .sampled) -> EpsilonEstimate {
        let half = (normalization + spread).squareRoot()
        var p = EpsilonEstimate(eps: eps, zeta: 0.5, dZeta: 100, dZetaJoint: 100, ci95: (100 - half)...(100 + half))
        p.normalizationShare = normalization / (normalization + spread)
        p.interval = ReportedInterval(range: p.ci95!, source: source)
        return p
    }

    static func run(width: Double, start: PrecisionTarget.Budget = start, points: @escaping @Sendable (PrecisionTarget.Budget) -> [EpsilonEstimate])
        async throws -> PrecisionTarget {
        try await PrecisionTarget.run(start: start, width: width, maxPaths: nil, defaultStageOneSweeps: 20, maximumStageOneSweeps: 1000,
                                      progress: { _ in }) { b in ((), points(b)) }.target
    }

    /// ĉ's part of the half-width² is 16 at 1 000 draws (∝ 1/draws), the replicates' 1 at K = 64 (∝ 1/K): shares 0.94,
    /// 0.8 and 0.5 quadruple the draws (8.25%, 4.47%, 2.83%); at 64 000 draws the share is 0.2 (2.24%) and K and J
    /// double: 1.73%, then 1.41%, reached. A narrow point at 10⁻³ that is nearly all ĉ's does not decide.
    func testTraceDrawsWhereTheNormalizationDominatesASampledInterval() async throws {
        let t = try await Self.run(width: 0.015) { b in
            let c = 16 * 1000 / Double(b.traceDraws), r = 64 / Double(b.paths)
            return [Self.point(eps: 0.001, normalization: c / 64, spread: c / 6400), Self.point(normalization: c, spread: r)]
        }
        XCTAssertEqual(t.outcome, .reached)
        XCTAssertEqual(t.rounds.map(\.traceDraws), [1000, 4000, 16000, 64000, 64000, 64000])
        XCTAssertEqual(t.rounds.map(\.paths), [64, 64, 64, 64, 128, 256])
        XCTAssertEqual(t.rounds.map(\.inner), [32, 32, 32, 32, 64, 128])
        XCTAssertEqual(try XCTUnwrap(t.rounds.first).width, 2 * 17.0.squareRoot() / 100, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(t.rounds.last).width, 2 * 0.5.squareRoot() / 100, accuracy: 1e-12)
        XCTAssertTrue(t.summary.contains("K = 64, J = 32: 8.25%; K = 64, J = 32, 4000 trace draws: 4.47%"), t.summary)
    }

    /// The bracket reported is no case for the trace draws, whatever the share: its width is the box's worst case.
    /// A share just under half doubles K and J.
    func testNotWhereTheBracketIsReportedNorUnderHalf() async throws {
        let bracket = try await Self.run(width: 0.01) { _ in [Self.point(normalization: 9, spread: 1, source: .bracket)] }
        XCTAssertEqual(bracket.outcome, .bracketLimited)
        XCTAssertEqual(bracket.rounds.map(\.traceDraws), [1000])
        let under = try await Self.run(width: 0.009) { b in
            [Self.point(normalization: 0.49 * 64 / Double(b.paths), spread: 0.51 * 64 / Double(b.paths))]
        }
        XCTAssertEqual(under.rounds.map(\.traceDraws), [1000, 1000, 1000, 1000])
        XCTAssertEqual(under.rounds.map(\.paths), [64, 128, 256, 512])
        XCTAssertEqual(under.outcome, .reached)
    }

    /// An interval that ĉ keeps wide stops at 64× the starting draws (at most 10⁷) and says so.
    func testTheTraceDrawsBudgetStopsIt() async throws {
        let spent = try await Self.run(width: 0.01) { _ in [Self.point(normalization: 8, spread: 1)] }
        XCTAssertEqual(spent.outcome, .budgetSpent)
        XCTAssertEqual(spent.rounds.map(\.traceDraws), [1000, 4000, 16000, 64000])
        XCTAssertEqual(spent.rounds.map(\.paths), [64, 64, 64, 64])
        XCTAssertTrue(spent.traceDrawsSpent)
        XCTAssertEqual(spent.maximumTraceDraws, 64000)
        XCTAssertTrue(spent.summary.contains("trace normalisation") && spent.summary.contains("pass 64000 trace draws"), spent.summary)
        var large = Self.start
        large.traceDraws = 2_000_000
        let capped = try await Self.run(width: 0.01, start: large) { _ in [Self.point(normalization: 8, spread: 1)] }
        XCTAssertEqual(capped.rounds.map(\.traceDraws), [2_000_000, 8_000_000])
        XCTAssertEqual(capped.maximumTraceDraws, 10_000_000)
    }

    /// ĉ's share of the lower 2sED's interval: the variance ĉ adds (0.8 nats²) against the lower estimate's own
    /// (0.2 + 0.8); the 2sED's is 0.8/0.85. Where the lower interval is the widest, its share decides: here 0.8,
    /// so the draws are quadrupled although the 2sED's interval is narrow.
    func testTheLowerIntervalsShare() async throws {
        let eps = 0.001, cv = 0.8
        var p = EpsilonEstimate(eps: eps, zeta: 0.5, dimension: 40, estimate: LogEstimate(value: 10, variance: 0.05 + cv),
                                lower: LogEstimate(value: 9, variance: 0.2 + cv), normalizationVariance: cv)
        XCTAssertEqual(p.normalizationShare(lower: false), cv / 0.85, accuracy: 1e-12)
        XCTAssertEqual(p.normalizationShare(lower: true), cv / 1.0, accuracy: 1e-12)
        p.interval = ReportedInterval(range: p.ci95!, source: .sampled)
        p.intervalLower = ReportedInterval(range: p.ci95Lower!, source: .sampled)
        let w = try XCTUnwrap(PrecisionTarget.widest([p]))
        XCTAssertEqual(w.width, (p.ci95Lower!.upperBound - p.ci95Lower!.lowerBound) / p.dZetaLower!, accuracy: 1e-12)
        XCTAssertEqual(w.normalizationShare, 0.8, accuracy: 1e-12)
        let point = p, narrow = Self.point(normalization: 0, spread: 1e-8)
        let t = try await Self.run(width: w.width * 0.999) { b in b.traceDraws == 1000 ? [point] : [narrow] }
            .rounds.map(\.traceDraws)
        XCTAssertEqual(t, [1000, 4000])
    }
}
