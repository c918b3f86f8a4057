import Foundation
import TwoScaleCore

/// The precision target for joint tempering (`JointSMC`, the tempering estimator on networks): its reported interval
/// is the hull of the forward and reverse passes' 95% intervals (`ReportedInterval.bidirectional`), whose
/// width has three parts. The gap between the passes is the moves' lag, which more particles barely close and
/// more sweeps do (docs/METHOD.md §21). Each pass's half-width is the replicates' spread, which shrinks with the
/// particles P, and ĉ's error, which both passes share and only more draws of Tr F narrow. Each round starts
/// afresh (same seed) and changes the one that dominates at the widest interval's ε. Where the widest is the lower
/// 2sED's bracket, none of them narrows it, and the rounds stop there. An estimate outside its own reported interval
/// (`strayEstimate`) keeps a round that meets the target from ending the run, and doubles the sweeps.
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

    /// Whether, the sweeps sufficing, the interval at `p` wants more trace draws rather than more particles: at
    /// least `traceDrawsShare` (half) of its variance is ĉ's (`normalizationShare`). Four times the draws then narrow each pass's
    /// half-width by at least a fifth, and cost four times the draws of Tr F; twice the particles narrow it by at
    /// most a seventh, and cost twice the tempering.
    public static func temperingWantsTraceDraws(_ p: EpsilonEstimate) -> Bool {
        !temperingWantsSweeps(p) && p.normalizationShare >= traceDrawsShare
    }

    /// Runs `round` (the tempering estimator at P particles, a number of sweeps and of trace draws, returning its
    /// result and points) from `paths`, `sweeps` and `traceDraws` until every reported interval is at most `target`
    /// of its estimate, or the next round would pass `maxPaths` (default 8 P), `maximumSweepsFactor` × the
    /// sweeps (at most `jointMaximumSweeps`) or `maximumTraceDrawsFactor` × the trace draws (at most 10⁷).
    public static func runTempering<R: Sendable>(paths: Int, replicates: Int, sweeps: Int, traceDraws: Int, width target: Double,
                                                 maxPaths: Int?, progress: @escaping @Sendable (String) -> Void,
                                                 round: (_ paths: Int, _ sweeps: Int, _ traceDraws: Int) async throws
                                                     -> (result: R, points: [EpsilonEstimate]))
        async throws -> (result: R, target: PrecisionTarget) {
        let cap = try checkedCap(width: target, maxPaths: maxPaths, start: paths, particles: "P")
        let sweepsCap = Swift.min(jointMaximumSweeps, maximumSweepsFactor * sweeps)
        let drawsCap = traceDrawsCap(start: traceDraws)
        var (p, s, t) = (paths, sweeps, traceDraws)
        var rounds: [Round] = []
        while true {
            let clock = ContinuousClock(), t0 = clock.now
            progress("precision target: round \(rounds.count + 1), P = \(p), \(s) sweeps, \(t) trace draws")
            let (result, points) = try await round(p, s, t)
            guard let w = widest(points) else {
                throw TwoScaleError.usage("\(Setting.targetWidth) needs the tempering estimator's reported intervals (the Markov FIM with its certified bracket)")
            }
            rounds.append(Round(paths: p, inner: replicates, sweeps: s, traceDraws: t, width: w.width, eps: w.eps, source: w.source.rawValue,
                                seconds: (clock.now - t0) / .seconds(1)))
            // The lower 2sED's bracket (`ReportedInterval.temperedLower`: stage 1 did not decorrelate, or its islands
            // stayed noisy at their largest J): no round's P, sweeps or trace draws change either.
            let lowerBracket = w.lower && w.source == .bracket
            let widest = points.first(where: { $0.eps == w.eps })
            // Narrow enough, but an estimate outside its certified bracket: the moves' lag biases both passes.
            let stray = w.width <= target ? strayEstimate(points) : nil
            let wantsSweeps = stray != nil || (w.width > target && !lowerBracket && widest.map(temperingWantsSweeps) == true)
            let wantsDraws = w.width > target && !lowerBracket && !wantsSweeps && widest.map(temperingWantsTraceDraws) == true
            let outcome: Outcome? = w.width <= target && stray == nil ? .reached
                : lowerBracket && stray == nil ? .bracketLimited
                : wantsSweeps ? (2 * s > sweepsCap ? .budgetSpent : nil)
                : wantsDraws ? (4 * t > drawsCap ? .budgetSpent : nil)
                : 2 * p > cap ? .budgetSpent : nil
            if let outcome {
                let spent = outcome == .budgetSpent
                var out = PrecisionTarget(target: target, maxPaths: cap, outcome: outcome, rounds: rounds, maximumSweeps: sweepsCap,
                                          maximumTraceDraws: drawsCap, sweepsSpent: spent && wantsSweeps, traceDrawsSpent: spent && wantsDraws)
                out.estimateOutsideEps = stray?.eps
                return (result, out)
            }
            if wantsSweeps { s *= 2 } else if wantsDraws { t *= 4 } else { p *= 2 }
        }
    }
}
