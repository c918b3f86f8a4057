import Foundation
import Samplers
import TwoScaleCore
import XCTest

/// Joint tempering's precision target (`PrecisionTarget.runTempering`): which of P and the sweeps each round
/// doubles, and when it stops, on rounds whose intervals are set here so that every decision is known.
final class TemperingTargetTests: XCTestCase {
    /// A point at 2sED `value` with forward and reverse 95% intervals of half-width `half` around `value` and
    /// `value + gap`, the hull as reported (cut to a wide bracket).
    static func point(eps: Double = 0.1, value: Double = 100, half: Double, gap: Double) -> EpsilonEstimate {
        var p = EpsilonEstimate(eps: eps, zeta: 0.5, dZeta: value, dZetaJoint: value, ci95: (value - half)...(value + half))
        p.dZetaReverse = value + gap
        p.ci95Reverse = (value + gap - half)...(value + gap + half)
        p.interval = ReportedInterval.bidirectional(forward: p.ci95!, reverse: p.ci95Reverse!, bracket: 0...1_000)
        return p
    }

    func testSweepsWhereThePassesLieApart() {
        XCTAssertTrue(PrecisionTarget.temperingWantsSweeps(Self.point(half: 0.1, gap: 0.3)))
        XCTAssertFalse(PrecisionTarget.temperingWantsSweeps(Self.point(half: 0.3, gap: 0.29)))
        XCTAssertTrue(PrecisionTarget.temperingWantsSweeps(Self.point(half: 0.3, gap: -0.31)), "either side")
        // A hull that misses the bracket: the bracket is reported, and the passes are off.
        var off = Self.point(half: 1, gap: 0)
        off.interval = ReportedInterval.bidirectional(forward: off.ci95!, reverse: off.ci95Reverse!, bracket: 200...300)
        XCTAssertEqual(off.interval?.source, .bracket)
        XCTAssertTrue(PrecisionTarget.temperingWantsSweeps(off))
        // No reverse pass (another estimator's point): never the sweeps.
        var plain = Self.point(half: 0.1, gap: 5)
        plain.dZetaReverse = nil
        plain.ci95Reverse = nil
        XCTAssertFalse(PrecisionTarget.temperingWantsSweeps(plain))
    }

    /// The passes' gap is read against their replicates' half-widths: the variance ĉ adds (σ_c² = 0.8 nats²), which both
    /// passes carry alike, comes out of each. At ε = 10⁻³ the reverse pass's replicates give 0.09 nats², so its
    /// half-width is 1.96·0.3/log 1000 = 0.0851 without ĉ and 1.96·√0.89/log 1000 = 0.2687 with it: a gap of one nat
    /// (0.1448) lies between the two and asks for sweeps; half a nat (0.0724) does not.
    func testTheNormalizationIsNoPartOfTheGap() throws {
        let eps = 0.001, l = Foundation.log(1000.0), cv = 0.8
        func point(gap nats: Double) -> EpsilonEstimate {
            var p = EpsilonEstimate(eps: eps, zeta: 0.5, dimension: 40, estimate: LogEstimate(value: 10, variance: 0.05 + cv),
                                    normalizationVariance: cv)
            p.ci95 = LogEstimate(value: 10, variance: 0.04 + cv).dimension(d: 40, zeta: 0.5, eps: eps).ci95
            p.setReverse(LogEstimate(value: 10 + nats, variance: 0.09 + cv), dimension: 40, replicates: [])
            return p
        }
        let apart = point(gap: 1), close = point(gap: 0.5)
        let g = try XCTUnwrap(apart.passesGap)
        XCTAssertEqual(g.gap, 1 / l, accuracy: 1e-12)
        XCTAssertEqual(g.halfWidth, 1.959963984540054 * 0.3 / l, accuracy: 1e-12)
        let withC = try XCTUnwrap(apart.ci95Reverse)
        XCTAssertEqual((withC.upperBound - withC.lowerBound) / 2, 1.959963984540054 * 0.89.squareRoot() / l, accuracy: 1e-12)
        XCTAssertTrue(apart.passesApart)
        XCTAssertTrue(PrecisionTarget.temperingWantsSweeps(apart))
        XCTAssertFalse(close.passesApart)
        XCTAssertFalse(PrecisionTarget.temperingWantsSweeps(close))
        // Without ĉ's variance (a toy's exact c) the half-widths are the intervals' own.
        var exact = EpsilonEstimate(eps: eps, zeta: 0.5, dimension: 40, estimate: LogEstimate(value: 10, variance: 0.05))
        exact.setReverse(LogEstimate(value: 11, variance: 0.09), dimension: 40, replicates: [])
        XCTAssertEqual(try XCTUnwrap(exact.passesGap).halfWidth, try XCTUnwrap(exact.ci95Reverse).upperBound - exact.dZetaReverse!,
                       accuracy: 1e-12)
        XCTAssertNil(EpsilonEstimate(eps: eps, zeta: 0.5, dZeta: 1, dZetaJoint: 1, ci95: 0...2).passesGap)
    }

    /// Rounds where the gap is 4/sweeps and each pass's half-width 4/√P at ε = 0.1 (a width 8 times smaller at
    /// 10⁻³), the hull (2·half + gap)/100: P = 64, 5 sweeps: gap 0.8 > half 0.5, 1.8%; 10 sweeps: gap 0.4 ≤ 0.5,
    /// 1.4%; P = 128: gap 0.4 > half 0.354, 1.11%; 20 sweeps: 0.907%, reached.
    func testRoundsDoubleWhatDominates() async throws {
        let calls = Calls()
        let out = try await PrecisionTarget.runTempering(paths: 64, replicates: 4, sweeps: 5, traceDraws: 1000, width: 0.01, maxPaths: nil, progress: { _ in }) { p, s, _ in
            await calls.add(p, s)
            let half = 4 / Double(p).squareRoot(), gap = 4 / Double(s)
            return ((p, s), [Self.point(eps: 0.001, half: half / 8, gap: 0), Self.point(half: half, gap: gap)])
        }
        let seen = await calls.list
        XCTAssertEqual(seen.map(\.0), [64, 64, 128, 128])
        XCTAssertEqual(seen.map(\.1), [5, 10, 10, 20])
        XCTAssertEqual(out.target.outcome, .reached)
        XCTAssertEqual(out.result.0, 128)
        XCTAssertEqual(out.target.rounds.map(\.sweeps), [5, 10, 10, 20])
        XCTAssertEqual(out.target.rounds.map(\.eps), [0.1, 0.1, 0.1, 0.1])
        XCTAssertEqual(try XCTUnwrap(out.target.rounds.last).width, (8 / 128.0.squareRoot() + 0.2) / 100, accuracy: 1e-12)
        XCTAssertTrue(out.target.rounds.allSatisfy { $0.stage1Sweeps == nil && $0.inner == 4 })
        XCTAssertTrue(out.target.summary.contains("reached") && out.target.summary.contains("P = 128, 20 sweeps, 1000 trace draws"),
                      out.target.summary)
        XCTAssertEqual(out.target.rounds.map(\.traceDraws), [1000, 1000, 1000, 1000], "ĉ's share is 0 here")
    }

    /// A point whose passes agree and whose half-width² is `normalization` (ĉ's part) plus `spread` (the
    /// replicates'), with ĉ's share of it set as the estimator sets it.
    static func point(eps: Double = 0.1, normalization: Double, spread: Double) -> EpsilonEstimate {
        var p = point(eps: eps, half: (normalization + spread).squareRoot(), gap: 0)
        p.normalizationShare = normalization / (normalization + spread)
        return p
    }

    /// Rounds where ĉ's part of each pass's half-width² is 16 at 1 000 trace draws (∝ 1/draws) and the replicates'
    /// 1 at P = 64 (∝ 1/P), the hull 2·half/100: ĉ's share 0.94, 0.8 and 0.5 quadruple the draws (8.25%, 4.47%,
    /// 2.83%); at 64 000 draws it is 0.2 (2.24%), so P doubles: 1.73%, then 1.41%, reached. A narrow point at
    /// 10⁻³ whose variance is nearly all ĉ's does not decide: the widest does.
    func testTraceDrawsWhereTheNormalizationDominates() async throws {
        let calls = Calls()
        let out = try await PrecisionTarget.runTempering(paths: 64, replicates: 4, sweeps: 5, traceDraws: 1000, width: 0.015, maxPaths: nil,
                                                         progress: { _ in }) { p, s, t in
            await calls.add(p, t)
            let c = 16 * 1000 / Double(t), r = 64 / Double(p)
            return ((), [Self.point(eps: 0.001, normalization: c / 64, spread: c / 6400), Self.point(normalization: c, spread: r)])
        }
        let seen = await calls.list
        XCTAssertEqual(seen.map(\.0), [64, 64, 64, 64, 128, 256])
        XCTAssertEqual(seen.map(\.1), [1000, 4000, 16000, 64000, 64000, 64000])
        XCTAssertEqual(out.target.outcome, .reached)
        XCTAssertEqual(out.target.rounds.map(\.traceDraws), [1000, 4000, 16000, 64000, 64000, 64000])
        XCTAssertEqual(out.target.rounds.map(\.sweeps), [5, 5, 5, 5, 5, 5])
        XCTAssertEqual(try XCTUnwrap(out.target.rounds.first).width, 2 * 17.0.squareRoot() / 100, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(out.target.rounds.last).width, 2 * 0.5.squareRoot() / 100, accuracy: 1e-12)
        XCTAssertTrue(out.target.summary.contains("P = 256, 5 sweeps, 64000 trace draws: 1.41%"), out.target.summary)
        // The passes lying apart come first: the sweeps, whatever ĉ's share.
        var apart = Self.point(normalization: 16, spread: 1)
        apart.interval = ReportedInterval.bidirectional(forward: apart.ci95!, reverse: apart.ci95!, bracket: 200...300)
        XCTAssertTrue(PrecisionTarget.temperingWantsSweeps(apart))
        XCTAssertFalse(PrecisionTarget.temperingWantsTraceDraws(apart))
        XCTAssertFalse(PrecisionTarget.temperingWantsTraceDraws(Self.point(normalization: 0.49, spread: 0.51)))
    }

    /// An interval that ĉ keeps wide stops at 64× the starting trace draws, or at 10⁷, and says so.
    func testTheTraceDrawsBudgetStopsIt() async throws {
        let spent = try await PrecisionTarget.runTempering(paths: 16, replicates: 4, sweeps: 5, traceDraws: 1000, width: 0.01, maxPaths: nil,
                                                           progress: { _ in }) { _, _, _ in ((), [Self.point(normalization: 8, spread: 1)]) }
        XCTAssertEqual(spent.target.outcome, .budgetSpent)
        XCTAssertEqual(spent.target.rounds.map(\.traceDraws), [1000, 4000, 16000, 64000])
        XCTAssertEqual(spent.target.rounds.map(\.paths), [16, 16, 16, 16])
        XCTAssertTrue(spent.target.traceDrawsSpent)
        XCTAssertFalse(spent.target.sweepsSpent)
        XCTAssertTrue(spent.target.summary.contains("trace normalisation") && spent.target.summary.contains("pass 64000 trace draws"),
                      spent.target.summary)
        let large = try await PrecisionTarget.runTempering(paths: 16, replicates: 4, sweeps: 5, traceDraws: 1_000_000, width: 0.01, maxPaths: nil,
                                                           progress: { _ in }) { _, _, _ in ((), [Self.point(normalization: 8, spread: 1)]) }
        XCTAssertEqual(large.target.rounds.map(\.traceDraws), [1_000_000, 4_000_000])
        XCTAssertEqual(large.target.maximumTraceDraws, 10_000_000)
    }

    /// The lower 2sED's interval the widest and the bracket (stage 1 not decorrelated, or noisy islands): no round
    /// narrows it, so the rounds stop at once, `bracket_limited`; where it is sampled and the widest, P doubles.
    func testTheLowerBracketStopsIt() async throws {
        func point(lowerNoise: Double, half: Double) -> EpsilonEstimate {
            var p = Self.point(half: 0.1, gap: 0)
            p.setLower(LogEstimate(value: 10, variance: 0), dimension: 40, normalizationVariance: 0)
            p.dZetaLower = 99
            p.ci95Lower = (99 - half)...(99 + half)
            p.intervalLower = ReportedInterval.temperedLower(sampled: p.ci95Lower!, islandNoiseVariance: [lowerNoise], decorrelation: 0.9,
                                                             bracket: 60...101)
            return p
        }
        let calls = Calls()
        let stuck = try await PrecisionTarget.runTempering(paths: 16, replicates: 4, sweeps: 5, traceDraws: 1000, width: 0.02, maxPaths: nil,
                                                           progress: { _ in }) { p, s, _ in
            await calls.add(p, s)
            return ((), [point(lowerNoise: 3, half: 0.1)])
        }
        XCTAssertEqual(stuck.target.outcome, .bracketLimited)
        XCTAssertEqual(stuck.target.rounds.count, 1)
        XCTAssertEqual(try XCTUnwrap(stuck.target.rounds.first).source, "bracket")
        XCTAssertEqual(try XCTUnwrap(stuck.target.rounds.first).width, 41.0 / 99, accuracy: 1e-12)
        let spread = try await PrecisionTarget.runTempering(paths: 16, replicates: 4, sweeps: 5, traceDraws: 1000, width: 0.02, maxPaths: nil,
                                                            progress: { _ in }) { p, _, _ in
            ((), [point(lowerNoise: 0.5, half: 8 / Double(p).squareRoot())])
        }
        XCTAssertEqual(spread.target.outcome, .reached)
        XCTAssertEqual(spread.target.rounds.map(\.paths), [16, 32, 64, 128])
    }

    /// The budget: a gap that never closes stops at 8× the starting sweeps; a spread that never narrows at `maxPaths`.
    func testTheBudgetStopsItAndSaysWhich() async throws {
        let lag = try await PrecisionTarget.runTempering(paths: 16, replicates: 4, sweeps: 5, traceDraws: 1000, width: 0.01, maxPaths: nil, progress: { _ in }) { p, s, _ in
            ((), [Self.point(half: 0.1, gap: 3)])
        }
        XCTAssertEqual(lag.target.outcome, .budgetSpent)
        XCTAssertEqual(lag.target.rounds.map(\.sweeps), [5, 10, 20, 40])
        XCTAssertTrue(lag.target.sweepsSpent)
        XCTAssertTrue(lag.target.summary.contains("the two passes lie apart") && lag.target.summary.contains("40 sweeps"), lag.target.summary)
        let spread = try await PrecisionTarget.runTempering(paths: 16, replicates: 4, sweeps: 5, traceDraws: 1000, width: 0.01, maxPaths: 64, progress: { _ in }) { p, s, _ in
            ((), [Self.point(half: 3, gap: 0)])
        }
        XCTAssertEqual(spread.target.outcome, .budgetSpent)
        XCTAssertEqual(spread.target.rounds.map(\.paths), [16, 32, 64])
        XCTAssertFalse(spread.target.sweepsSpent)
        XCTAssertTrue(spread.target.summary.contains("within P ≤ 64"), spread.target.summary)
        await XCTAssertThrowsErrorAsync(try await PrecisionTarget.runTempering(paths: 16, replicates: 4, sweeps: 5, traceDraws: 1000, width: 0.01, maxPaths: 8,
                                                                              progress: { _ in }) { _, _, _ in ((), [EpsilonEstimate]()) })
    }
}

private actor Calls {
    var list: [(Int, Int)] = []
    func add(_ p: Int, _ s: Int) { list.append((p, s)) }
}

private func XCTAssertThrowsErrorAsync<T>(_ body: @autoclosure () async throws -> T, file: StaticString = #filePath, line: UInt = #line) async {
    do {
        _ = try await body()
        XCTFail("no error", file: file, line: line)
    } catch {}
}
