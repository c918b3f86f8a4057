import Bounds
import Foundation
import Training
import TwoScaleCore

/// The bound's tail at one sample size, beside the gaps: the d_ζ estimate, the value used, log tail.
public struct GapTail: Sendable, Equatable {
    public var estimate: Double
    public var dZetaUsed: Double
    public var logTail: Double
}

/// The bound's side of `gap`: the bound (γ, ζ, C, H, K), d_ζ(ε) as a closure (the estimate and the value
/// used in the tail), where that value comes from and whether it is conservative (an upper bound of d_ζ),
/// and optionally δ with the range searched for n₀, the smallest n whose tail is below δ.
public struct GapTailSettings {
    public var bound: GeneralizationBound
    public var values: DimensionValues
    public var source: String
    public var method: String
    public var conservative: Bool
    public var delta: (value: Double, range: ClosedRange<Int>)?

    public init(bound: GeneralizationBound, values: @escaping DimensionValues, source: String, method: String = "",
                conservative: Bool = true, delta: (value: Double, range: ClosedRange<Int>)? = nil) {
        self.bound = bound
        self.values = values
        self.source = source
        self.method = method
        self.conservative = conservative
        self.delta = delta
    }
}

/// Empirical generalisation gaps against sample size, with the bound's deviation C·ε_n and, given a
/// spectra store of the student, its log tail: `gap`'s result (docs/METHOD.md §16). JSON keys in this
/// order; the per-n points carry every `GapSummary` field.
public struct GapStudy: Sendable, Encodable {
    public var teacher: String
    public var student: String
    public var studentParameters: Int
    public var gamma: Double
    public var summaries: [GapSummary]
    public var tails: [Int: GapTail]
    public var trend: GapTrend
    public var population: Int
    public var tailSource: String?
    public var constants: BoundConstants
    public var seconds: Double = 0
    /// With a tail: how d_ζ's value was obtained and whether it bounds d_ζ from above; with δ, n₀.
    public var tailMethod: String?
    public var tailConservative: Bool?
    public var delta: Double?
    public var nForDelta: Int?
    public var nForDeltaNote: String?
    /// Whether every student was trained with projected steps onto Θ (the projection's box is Θ).
    public var projected = false
    /// The adversarial search's settings (nil: off).
    public var adversarial: AdversarialSettings?

    /// The largest standard error of R among the θ evaluated (cross-entropy and 0-1).
    public var riskStandardError: Double { summaries.map(\.riskError).max() ?? 0 }
    public var riskStandardError01: Double { summaries.map(\.riskError01).max() ?? 0 }
    public var loss: GapLoss { summaries.first?.loss ?? .zeroOne }

    public static let adversarialNote = "adversarial_sup: per (n, trial) projected Adam ascent on ±(R − R_n) for 1 − p_θ(y|x) from random starts in Θ, every iterate checked in Θ; the max over trials, a lower estimate of sup_{θ∈Θ}|R − R_n| (up to the Monte Carlo error of R, adversarial_risk_error); adversarial_sup_fresh re-evaluates R at the maximiser on an independent population sample; adversarial_exceeds: the bound's event sup ≥ C·ε_n was observed"

    public static let riskNote = "R is a Monte Carlo average over the population inputs (exact label expectation); risk_standard_error is the largest standard error of R among the θ evaluated, so gaps below about 2 × risk_standard_error are within its noise (raise \(Setting.population))"

    /// In words: how c_fit moves with n.
    public var trendNote: String {
        guard let first = trend.first, let last = trend.last else {
            return "c_fit needs at least two sample sizes with ε_n < 1 to show a trend"
        }
        let direction = last.cFit > first.cFit ? "rises" : (last.cFit < first.cFit ? "falls" : "stays")
        let meaning = last.cFit > first.cFit ? "the observed sup gap shrinks more slowly than ε_n"
            : "the observed sup gap shrinks at least as fast as ε_n"
        return "c_fit_per_n \(direction) from \(NumberText.format(first.cFit, digits: 4)) at n = \(first.n) to \(NumberText.format(last.cFit, digits: 4)) at n = \(last.n): \(meaning)"
    }

    /// Runs the experiment, summarises it per n with the loss compared against C·ε_n, and, with `tail`,
    /// evaluates the bound's log tail at each n with ε_n < 1.
    public static func run(_ experiment: GapExperiment, loss: GapLoss, gamma: Double, constants: BoundConstants,
                           tail: GapTailSettings?, threads: Int?,
                           progress: (@Sendable (Int, Int) -> Void)? = nil) async throws -> GapStudy {
        let clock = ContinuousClock()
        let start = clock.now
        if experiment.adversarial != nil, !loss.lipschitz {
            throw TwoScaleError.invalid("\(Setting.loss)", loss.rawValue,
                allowed: "the adversarial search climbs the gradient of a Lipschitz loss: give \(Setting.loss) probability with \(Setting.adversarial)")
        }
        var experiment = experiment
        experiment.probabilityLoss = loss == .probability
        let gaps = try await EmpiricalGap.run(experiment, threads: threads) { done, total in progress?(done, total) }
        let ns = experiment.sampleSizes
        let summaries = GapSummary.summarize(gaps, sampleSizes: ns, C: constants.C, loss: loss) {
            GeneralizationBound.epsilonIfValid(n: Double($0), gamma: gamma)
        }
        var tails: [Int: GapTail] = [:]
        if let tail {
            for s in summaries where s.epsN != nil {
                let v = try tail.values(try tail.bound.epsilon(n: s.n))
                let p = try tail.bound.point(n: s.n, source: { _ in v.used })
                tails[s.n] = GapTail(estimate: v.estimate, dZetaUsed: p.dZeta, logTail: p.logTail)
            }
        }
        var study = GapStudy(teacher: experiment.task.teacher.architecture.notation, student: experiment.student.notation,
                             studentParameters: experiment.student.parameterCount, gamma: gamma, summaries: summaries, tails: tails,
                             trend: GapTrend(summaries), population: experiment.populationSize, tailSource: tail?.source,
                             constants: constants)
        study.projected = experiment.training.projection?.range == experiment.box
        // Held by construction (the projection clamps every step, every climb is projected); checked, not assumed.
        if study.projected, let s = summaries.first(where: { $0.checkpointsOutsideBox > 0 }) {
            throw TwoScaleError.failure("internal error: projected training left Θ at n = \(s.n) (\(s.checkpointsOutsideBox) checkpoints outside the box)")
        }
        if let s = summaries.first(where: { ($0.adversarial?.iteratesOutsideBox ?? 0) > 0 }) {
            throw TwoScaleError.failure("internal error: the adversarial search left Θ at n = \(s.n)")
        }
        study.adversarial = experiment.adversarial
        if let tail {
            study.tailMethod = tail.method
            study.tailConservative = tail.conservative
            if let (delta, range) = tail.delta {
                let values = tail.values
                let r = try SampleSizeSearch.smallestN(bound: tail.bound, delta: delta, range: range, source: { try values($0).used })
                study.delta = delta
                study.nForDelta = r.n
                study.nForDeltaNote = try r.n == nil
                    ? BoundEvaluation.notReached(bound: tail.bound, range: range, values: values)
                    : "smallest integer n in \(range.lowerBound)...\(range.upperBound) with log_tail < log δ (\(r.method), \(r.evaluations) evaluations)"
            }
        }
        let elapsed = clock.now - start
        study.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        return study
    }

    typealias Key = ResultKey

    /// One n's point: the summary's fields, then the tail's (with a store).
    struct Point: Encodable {
        var s: GapSummary
        var tail: GapTail?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(s.n, forKey: Key("n"))
            try c.encode(s.trials, forKey: Key("trials"))
            try c.encode(s.gapMean, forKey: Key("gap_mean"))
            try c.encode(s.gapMax, forKey: Key("gap_max"))
            try c.encode(s.supGapEstimate, forKey: Key("sup_gap_estimate"))
            try c.encode(s.supGapMean, forKey: Key("sup_gap_mean"))
            try c.encode(s.epsN, forKey: Key("eps_n"))
            try c.encode(s.deviation, forKey: Key("deviation"))
            try c.encode(s.exceedFrequency, forKey: Key("exceed_frequency"))
            try c.encode(s.gapMean01, forKey: Key("gap_mean_01"))
            try c.encode(s.gapMax01, forKey: Key("gap_max_01"))
            try c.encode(s.supGapEstimate01, forKey: Key("sup_gap_estimate_01"))
            try c.encode(s.supGapMean01, forKey: Key("sup_gap_mean_01"))
            try c.encode(s.supGap, forKey: Key("sup_gap"))
            try c.encode(s.noiseFloor, forKey: Key("noise_floor"))
            try c.encode(s.resolved, forKey: Key("resolved"))
            try c.encode(s.cFit, forKey: Key("c_fit"))
            try c.encodeIfPresent(s.cFitSource, forKey: Key("c_fit_source"))
            try c.encode(s.checkpoints, forKey: Key("checkpoints"))
            try c.encode(s.checkpointsOutsideBox, forKey: Key("checkpoints_outside_box"))
            try c.encode(s.supGapOutside, forKey: Key("sup_gap_outside_box"))
            try c.encode(s.finalOutsideBox, forKey: Key("final_outside_box"))
            if let t = tail {
                try c.encode(t.estimate, forKey: Key("d_zeta_estimate"))
                try c.encode(t.dZetaUsed, forKey: Key("d_zeta_used"))
                try c.encode(t.logTail, forKey: Key("log_tail"))
                try c.encode(t.logTail / Foundation.log(10), forKey: Key("log10_tail"))
            }
            if let a = s.adversarial {
                try c.encode(a.sup, forKey: Key("adversarial_sup"))
                try c.encode(a.riskError, forKey: Key("adversarial_risk_error"))
                try c.encode(a.trial + 1, forKey: Key("adversarial_trial"))
                try c.encode(a.freshSup, forKey: Key("adversarial_sup_fresh"))
                try c.encode(a.freshRiskError, forKey: Key("adversarial_risk_error_fresh"))
                try c.encode(a.bestStart, forKey: Key("adversarial_best_start"))
                try c.encode(a.exceeds, forKey: Key("adversarial_exceeds"))
                try c.encode(a.exceedsBeyondNoise, forKey: Key("adversarial_exceeds_beyond_noise"))
                try c.encode(a.exceedFrequency, forKey: Key("adversarial_exceed_frequency"))
                try c.encode(a.iteratesChecked, forKey: Key("adversarial_iterates_checked"))
                try c.encode(a.iteratesOutsideBox, forKey: Key("adversarial_iterates_outside_box"))
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(teacher, forKey: Key("teacher"))
        try c.encode(student, forKey: Key("student"))
        try c.encode(studentParameters, forKey: Key("student_parameters"))
        try c.encode(gamma, forKey: Key("gamma"))
        try c.encode(summaries.map { Point(s: $0, tail: tails[$0.n]) }, forKey: Key("points"))
        try c.encode(loss.rawValue, forKey: Key("loss"))
        try c.encode(loss.note, forKey: Key("loss_note"))
        try c.encode(trend.cFit, forKey: Key("c_fit"))
        try c.encode(summaries.map(\.cFit), forKey: Key("c_fit_per_n"))
        try c.encode(trendNote, forKey: Key("c_fit_trend"))
        try c.encode(trend.logLogSlope, forKey: Key("sup_gap_loglog_slope"))
        try c.encode(riskStandardError, forKey: Key("risk_standard_error"))
        try c.encode(riskStandardError01, forKey: Key("risk_standard_error_01"))
        try c.encode(Self.riskNote, forKey: Key("risk_note"))
        try c.encode(population, forKey: Key("population"))
        try c.encode(tailSource, forKey: Key("tail_source"))
        try c.encode(constants, forKey: Key("constants"))
        if let tailMethod {
            try c.encode(tailMethod, forKey: Key("d_zeta_used_method"))
            try c.encode(tailConservative, forKey: Key("conservative"))
        }
        if let delta {
            try c.encode(delta, forKey: Key("delta"))
            try c.encode(nForDelta, forKey: Key("n_for_delta"))
            try c.encode(nForDeltaNote, forKey: Key("n_for_delta_note"))
        }
        if projected { try c.encode(true, forKey: Key("projected")) }
        if let a = adversarial {
            try c.encode(a.starts, forKey: Key("adversarial_starts"))
            try c.encode(a.iterations, forKey: Key("adversarial_iterations"))
            try c.encode(a.stepFraction, forKey: Key("adversarial_step"))
            try c.encode(Self.adversarialNote, forKey: Key("adversarial_note"))
        }
        try c.encode(seconds, forKey: Key("seconds"))
    }
}
