import Foundation
import TwoScaleCore

/// The precision target for joint tempering (`JointSMC`, the tempering estimator on networks): its reported interval
/// is the hull of the forward and reverse passes' 95% intervals (`ReportedInterval.bidirectional`), whose
/// width has two parts. The passes' spread over the replicates shrinks with the particles P; the gap between
/// the passes is the moves' lag, which more particles barely close and more sweeps do (docs/METHOD.md §21).
/// Each round starts afresh (same seed) and doubles the one that dominates at the widest interval's ε.
extension PrecisionTarget {
    /// The largest sweeps the rounds reach, as a multiple of the starting sweeps (and at most `jointMaximumSweeps`).
    public static var maximumSweepsFactor: Int { 8 }

    /// Whether joint tempering's interval at `p` wants more sweeps rather than more particles: its two
    /// passes' estimates lie further apart than the wider of their 95% half-widths without ĉ's share
    /// (`EpsilonEstimate.passesApart`), or the hull misses the certified bracket altogether (the reported
    /// interval is then the bracket, and the passes are off).
    public static func temperingWantsSweeps(_ p: EpsilonEstimate) -> Bool {
        p.interval?.source == .bracket || p.passesApart
    }

    /// Runs `round` (the tempering estimator at P particles and a number of sweeps, returning its result and
    /// points) from `paths` and `sweeps` until every reported interval is at most `target` of its estimate, or
    /// the next round would pass `maxPaths` (default 8 P) or `maximumSweepsFactor` × the sweeps (at most `jointMaximumSweeps`).
    public static func runTempering<R: Sendable>(paths: Int, replicates: Int, sweeps: Int, width target: Double, maxPaths: Int?,
                                                 progress: @escaping @Sendable (String) -> Void,
                                                 round: (_ paths: Int, _ sweeps: Int) async throws -> (result: R, points: [EpsilonEstimate]))
        async throws -> (result: R, target: PrecisionTarget) {
        let cap = try checkedCap(width: target, maxPaths: maxPaths, start: paths, particles: "P")
        let sweepsCap = Swift.min(jointMaximumSweeps, maximumSweepsFactor * sweeps)
        var (p, s) = (paths, sweeps)
        var rounds: [Round] = []
        while true {
            let clock = ContinuousClock(), t0 = clock.now
            progress("precision target: round \(rounds.count + 1), P = \(p), \(s) sweeps")
            let (result, points) = try await round(p, s)
            guard let w = widest(points) else {
                throw TwoScaleError.usage("\(Setting.targetWidth) needs the tempering estimator's reported intervals (the Markov FIM with its certified bracket)")
            }
            rounds.append(Round(paths: p, inner: replicates, sweeps: s, width: w.width, eps: w.eps, source: w.source.rawValue,
                                seconds: (clock.now - t0) / .seconds(1)))
            let wantsSweeps = w.width > target && points.first(where: { $0.eps == w.eps }).map(temperingWantsSweeps) == true
            let outcome: Outcome? = w.width <= target ? .reached
                : wantsSweeps ? (2 * s > sweepsCap ? .budgetSpent : nil)
                : 2 * p > cap ? .budgetSpent : nil
            if let outcome {
                return (result, PrecisionTarget(target: target, maxPaths: cap, outcome: outcome, rounds: rounds, maximumSweeps: sweepsCap,
                                                sweepsSpent: outcome == .budgetSpent && wantsSweeps))
            }
            if wantsSweeps { s *= 2 } else { p *= 2 }
        }
    }
}
