import Foundation
import Networks
import RandomStreams
import TwoScaleCore
import TwoScaleNumerics

/// Settings of an empirical-gap experiment on a teacher task.
public struct GapExperiment: Sendable {
    public var task: TeacherTask
    public var student: Architecture
    public var studentActivation: Activation
    /// Optimiser, batch (capped at n), epochs, initialisation and checkpoint frequency of every run;
    /// the seed field is replaced per (n, trial).
    public var training: TrainingConfig
    public var sampleSizes: [Int]
    public var trials: Int
    /// Parameter draws θ ~ U(box) per (n, trial).
    public var randomDraws: Int
    public var box: ClosedRange<Double>
    /// Fresh inputs M of the population sample.
    public var populationSize: Int
    public var seed: UInt64
    /// With settings: per (n, trial), the adversarial search of `sup_{θ∈Θ}|R − R_n|` for the loss
    /// `1 − p_θ(y|x)` (`AdversarialDeviation`), its seed replaced per unit; nil: off.
    public var adversarial: AdversarialSettings? = nil
    /// Whether the gaps of the loss `1 − p_θ(y|x)` are measured too (set by `GapStudy.run` for the probability loss, `Setting.loss`).
    public var probabilityLoss = false

    public init(task: TeacherTask, student: Architecture, studentActivation: Activation, training: TrainingConfig,
                sampleSizes: [Int], trials: Int, randomDraws: Int, box: ClosedRange<Double>,
                populationSize: Int, seed: UInt64) throws {
        guard student.inputSize == task.inputSize, student.classes == task.classes else {
            throw TwoScaleError.invalid("\(Setting.student)", student.notation,
                allowed: "the student needs the teacher's input size \(task.inputSize) and \(task.classes) classes")
        }
        guard !sampleSizes.isEmpty, sampleSizes.allSatisfy({ $0 >= 2 }) else {
            throw TwoScaleError.invalid("\(Setting.sampleSize)", sampleSizes.map(String.init).joined(separator: ","), allowed: "sample sizes n ≥ 2")
        }
        guard trials >= 1, trials <= 100_000 else {
            throw TwoScaleError.invalid("\(Setting.trials)", "\(trials)", allowed: "give from 1 to 100000 trials")
        }
        guard randomDraws >= 0, randomDraws <= 1_000_000 else {
            throw TwoScaleError.invalid("\(Setting.randomDraws)", "\(randomDraws)", allowed: "give a count from 0 to 10⁶")
        }
        // Every sample (n inputs, and the M population inputs) is held in memory as n × n_0 doubles:
        // refuse sizes that cannot be allocated instead of trapping on the allocation.
        let maxValues = 1 << 28
        let width = Swift.max(1, Swift.max(task.inputSize, task.classes))
        if let n = sampleSizes.first(where: { $0 > maxValues / width }) {
            throw TwoScaleError.invalid("\(Setting.sampleSize)", "\(n)", allowed: "a training set holds n × n_0 ≤ 2²⁸ values: n ≤ \(maxValues / width) here")
        }
        guard populationSize >= 2, populationSize <= maxValues / width else {
            throw TwoScaleError.invalid("\(Setting.population)", "\(populationSize)", allowed: "the population sample needs 2 ≤ M ≤ \(maxValues / width) inputs (M × n_0 ≤ 2²⁸ values)")
        }
        self.task = task
        self.student = student
        self.studentActivation = studentActivation
        self.training = training
        self.sampleSizes = sampleSizes
        self.trials = trials
        self.randomDraws = randomDraws
        self.box = box
        self.populationSize = populationSize
        self.seed = seed
    }
}

/// Gaps `|R(θ) − R_n(θ)|` of one (n, trial).
public struct TrialGaps: Sendable {
    public var n: Int
    public var trial: Int
    /// At the final trained θ̂.
    public var finalGap: Double
    public var finalGap01: Double
    /// Max over the trajectory's checkpoints inside the box Θ and the random draws θ ~ U(Θ) (a lower
    /// estimate of sup_{θ∈Θ}); checkpoints outside Θ never enter it.
    public var supGap: Double
    public var supGap01: Double
    /// Max over the checkpoints outside Θ (0 when there are none), reported apart.
    public var supGapOutside: Double = 0
    public var supGapOutside01: Double = 0
    /// Whether the final trained θ̂ lies outside Θ.
    public var finalOutsideBox: Bool = false
    /// Largest Monte Carlo standard error of R among the θ evaluated.
    public var riskError: Double
    public var riskError01: Double
    /// Checkpoints evaluated, and how many of them lie outside the box Θ.
    public var checkpoints: Int
    public var checkpointsOutsideBox: Int
    public var finalTrainLoss: Double
    public var finalPopulationRisk: Double
    /// The loss `1 − p_θ(y|x)` (measured when the experiment asks for it): final, in-box sup and outside
    /// sup gaps, and the largest standard error of its R.
    public var finalGapP: Double = 0
    public var supGapP: Double = 0
    public var supGapOutsideP: Double = 0
    public var riskErrorP: Double = 0
    /// The adversarial search on this trial's sample (when the experiment asks for it).
    public var adversarial: TrialAdversarial? = nil
}

/// One (n, trial)'s adversarial search (`AdversarialDeviation`) for the loss `1 − p_θ(y|x)`, condensed.
public struct TrialAdversarial: Sendable, Equatable {
    /// `|R(θ*) − R_n(θ*)|` with R on the population sample the search climbed on: a lower estimate of the sup.
    public var deviation: Double
    /// +1: R above R_n at θ*.
    public var sign: Int
    public var populationRisk: Double
    /// The Monte Carlo standard error of R(θ*) (`sd/√M`).
    public var populationRiskError: Double
    public var empiricalRisk: Double
    /// `|R'(θ*) − R_n(θ*)|` with R' on an independent population sample of the same size (θ* was chosen on
    /// the first, so this one is free of that selection), and its standard error.
    public var freshDeviation: Double
    public var freshRiskError: Double
    /// The largest `|g(θ₀)|` over the random starts: what the starts alone found.
    public var bestStart: Double
    public var iteratesChecked: Int
    public var iteratesOutsideBox: Int
}

/// The empirical side of the bound (docs/METHOD.md §16). For each n and trial, with the streams `(seed, 200, n, trial)` for
/// the sample and the student's training seed, and `(seed, 201, n, trial, j)` for the j-th random θ:
///
/// 1. draw n samples from the teacher; train the student (every-epoch checkpoints, θ₀ included);
/// 2. at every checkpoint θ and every random θ_j ~ U(Θ): `gap(θ) = |R(θ) − R_n(θ)|` for cross-entropy
///    and 0-1 loss, R from one shared population sample of M fresh inputs (stream `(seed, 202)`) with
///    exact label expectations, R_n on the n training samples;
/// 3. `sup gap` = the maximum over those θ — a lower estimate of `sup_θ |R(θ) − R_n(θ)|`.
///
/// Units (n, trial) run concurrently; each has its own streams, so results do not depend on the
/// number of threads.
public enum EmpiricalGap {
    /// `threads`: units run at once (default: the active cores, at most 2); results do not depend on it.
    public static func run(_ e: GapExperiment, threads: Int? = nil, progress: (@Sendable (Int, Int) -> Void)? = nil) async throws -> [TrialGaps] {
        var popRng = Xoshiro256(seed: e.seed, stream: [202])
        let population = e.task.population(count: e.populationSize, rng: &popRng)
        var freshRng = Xoshiro256(seed: e.seed, stream: [204])
        let fresh = e.adversarial == nil ? nil : e.task.population(count: e.populationSize, rng: &freshRng)
        let units = e.sampleSizes.flatMap { n in (0..<e.trials).map { (n, $0) } }
        var results = [TrialGaps?](repeating: nil, count: units.count)
        let width = Swift.max(1, threads ?? Swift.min(ProcessInfo.processInfo.activeProcessorCount, 2))
        var done = 0
        try await Parallel.forEach(units.count, threads: width, { i in
            let (n, t) = units[i]
            return try runUnit(e, n: n, trial: t, population: population, fresh: fresh)
        }, completed: { i, r in
            results[i] = r
            done += 1
            progress?(done, units.count)
        })
        return results.map { $0! }
    }

    static func runUnit(_ e: GapExperiment, n: Int, trial: Int, population: PopulationSample,
                        fresh: PopulationSample? = nil) throws -> TrialGaps {
        var rng = Xoshiro256(seed: e.seed, stream: [200, UInt64(n), UInt64(trial)])
        let data = e.task.sample(count: n, rng: &rng)
        var cfg = e.training
        cfg.architecture = e.student
        cfg.activation = e.studentActivation
        cfg.seed = rng.next()
        cfg.batchSize = Swift.min(cfg.batchSize, n)
        var g = TrialGaps(n: n, trial: trial, finalGap: 0, finalGap01: 0, supGap: 0, supGap01: 0,
                          riskError: 0, riskError01: 0, checkpoints: 0, checkpointsOutsideBox: 0,
                          finalTrainLoss: 0, finalPopulationRisk: 0)
        var lastP = 0.0  // the last θ's gap for 1 − p_θ(y|x)
        func measure(_ net: Network, inBox: Bool) throws -> (gap: Double, gap01: Double, trainLoss: Double, risk: Double) {
            let r = population.risk(of: net)
            let rn = EmpiricalRisk.of(net, on: data)
            let gap = Swift.abs(r.crossEntropy - rn.crossEntropy)
            let gap01 = Swift.abs(r.zeroOne - rn.zeroOne)
            guard gap.isFinite, gap01.isFinite else {
                throw TwoScaleError.failure("gap at n = \(n), trial \(trial + 1) is not finite: training diverged or a random θ from \(Setting.box) overflowed the network; lower \(Setting.learningRate) or use a smaller \(Setting.box)")
            }
            if inBox {
                g.supGap = Swift.max(g.supGap, gap)
                g.supGap01 = Swift.max(g.supGap01, gap01)
            } else {
                g.supGapOutside = Swift.max(g.supGapOutside, gap)
                g.supGapOutside01 = Swift.max(g.supGapOutside01, gap01)
            }
            g.riskError = Swift.max(g.riskError, r.crossEntropyError)
            g.riskError01 = Swift.max(g.riskError01, r.zeroOneError)
            if e.probabilityLoss {
                let rp = try ProbabilityLoss.population(net, on: population)
                let gapP = Swift.abs(rp.risk - (try ProbabilityLoss.empirical(net, on: data)).risk)
                if inBox { g.supGapP = Swift.max(g.supGapP, gapP) } else { g.supGapOutsideP = Swift.max(g.supGapOutsideP, gapP) }
                g.riskErrorP = Swift.max(g.riskErrorP, rp.standardError)
                lastP = gapP
            }
            return (gap, gap01, rn.crossEntropy, r.crossEntropy)
        }
        _ = try Trainer(config: cfg).train(data: data) { cp in
            let inBox = cp.network.parameters.allSatisfy { e.box.contains($0) }
            let m = try measure(cp.network, inBox: inBox)
            g.checkpoints += 1
            if !inBox { g.checkpointsOutsideBox += 1 }
            // The last checkpoint is the trained θ̂.
            (g.finalGap, g.finalGap01, g.finalTrainLoss, g.finalPopulationRisk) = m
            g.finalGapP = lastP
            g.finalOutsideBox = !inBox
        }
        for j in 0..<e.randomDraws {
            var r = Xoshiro256(seed: e.seed, stream: [201, UInt64(n), UInt64(trial), UInt64(j)])
            let net = Network.uniform(architecture: e.student, activation: e.studentActivation, box: e.box, rng: &r)
            _ = try measure(net, inBox: true)
        }
        if var settings = e.adversarial {
            var seedRng = Xoshiro256(seed: e.seed, stream: [203, UInt64(n), UInt64(trial)])
            settings.seed = seedRng.next()
            let box = try ParameterBox(e.box)
            let a = try AdversarialDeviation.searchSerially(architecture: e.student, activation: e.studentActivation, box: box,
                                                            data: data, population: population, settings: settings)
            let check = fresh ?? population
            let rf = try ProbabilityLoss.population(a.network, on: check)
            g.adversarial = TrialAdversarial(deviation: a.deviation, sign: a.sign, populationRisk: a.populationRisk,
                                             populationRiskError: a.populationRiskError, empiricalRisk: a.empiricalRisk,
                                             freshDeviation: Swift.abs(rf.risk - a.empiricalRisk), freshRiskError: rf.standardError,
                                             bestStart: a.climbs.map { Swift.abs($0.initialGap) }.max() ?? 0,
                                             iteratesChecked: a.iteratesChecked, iteratesOutsideBox: a.iteratesOutsideBox)
        }
        return g
    }
}

/// The loss whose gaps are compared with the bound's deviation.
public enum GapLoss: String, Sendable, CaseIterable {
    /// 0-1 loss: bounded in [0, 1], as the theorem assumes.
    case zeroOne = "zero-one"
    /// Cross-entropy: unbounded, outside the theorem's assumptions (reported for comparison).
    case crossEntropy = "cross-entropy"
    /// `1 − p_θ(y|x)` (`ProbabilityLoss`): bounded in [0, 1] and Lipschitz, as the theorem assumes.
    case probability = "probability"

    public var note: String {
        switch self {
        case .zeroOne: "0-1 loss (bounded in [0, 1] but not Lipschitz, as the theorem assumes it is)"
        case .crossEntropy: "cross-entropy (unbounded: outside the theorem's bounded-loss assumption)"
        case .probability: "1 − p_θ(y|x) (bounded in [0, 1] and Lipschitz: constant ½ in the logits under ‖·‖_∞, 1 in the probabilities; the theorem's assumptions)"
        }
    }

    /// Whether the loss is Lipschitz in θ's outputs, so that gradient ascent on its gap makes sense.
    public var lipschitz: Bool { self == .probability }

    /// This loss's in-box sup gap, its outside sup gap and the largest standard error of its R, of one trial.
    func values(_ g: TrialGaps) -> (sup: Double, outside: Double, error: Double) {
        switch self {
        case .zeroOne: (g.supGap01, g.supGapOutside01, g.riskError01)
        case .crossEntropy: (g.supGap, g.supGapOutside, g.riskError)
        case .probability: (g.supGapP, g.supGapOutsideP, g.riskErrorP)
        }
    }
}

/// Per-n summary of trial gaps against the deviation `C·ε_n`.
public struct GapSummary: Sendable {
    public var n: Int
    public var trials: Int
    /// Final-θ̂ gaps: mean and max over trials.
    public var gapMean: Double
    public var gapMax: Double
    /// Max over trials of the per-trial sup estimates; and their mean.
    public var supGapEstimate: Double
    public var supGapMean: Double
    public var gapMean01: Double
    public var gapMax01: Double
    public var supGapEstimate01: Double
    public var supGapMean01: Double
    public var epsN: Double?
    public var deviation: Double?
    /// The compared loss: its sup gap over θ ∈ Θ (max over trials) and its noise floor, 2 × the largest
    /// standard error of R for that loss.
    public var loss: GapLoss
    public var supGap: Double
    public var noiseFloor: Double
    /// Fraction of trials whose sup gap (compared loss) exceeds `C·ε_n`.
    public var exceedFrequency: Double?
    /// `max(supGap, adversarial sup) / ε_n` (compared loss; the adversarial search's sup counts where it
    /// searched the same loss, 1 − p): the smallest C covering every observed gap at this n.
    public var cFit: Double?
    /// Which search gave the largest gap behind `cFit`: "adversarial" or "checkpoints and random draws".
    public var cFitSource: String?
    public var riskError: Double
    public var riskError01: Double
    public var checkpointsOutsideBox: Int
    public var checkpoints: Int
    /// Largest gap at checkpoints outside Θ (compared loss; excluded from `supGap`), and trials whose
    /// final θ̂ lies outside Θ.
    public var supGapOutside: Double
    public var finalOutsideBox: Int
    /// The adversarial searches of this n (nil when off).
    public var adversarial: AdversarialSummary? = nil

    /// Whether the sup gap stands above the noise floor.
    public var resolved: Bool { supGap > noiseFloor }

    /// Summaries per n (in the order given), with `ε_n` from `epsilon` (nil where the bound is vacuous).
    public static func summarize(_ gaps: [TrialGaps], sampleSizes: [Int], C: Double, loss: GapLoss = .zeroOne,
                                 epsilon: (Int) -> Double?) -> [GapSummary] {
        sampleSizes.map { n in
            let g = gaps.filter { $0.n == n }
            let t = Double(g.count)
            let lossGap: (TrialGaps) -> Double = { loss.values($0).sup }
            let sup = g.map(lossGap).max() ?? 0
            let floor = 2 * (g.map { loss.values($0).error }.max() ?? 0)
            let e = epsilon(n)
            var summary = GapSummary(
                n: n, trials: g.count,
                gapMean: g.reduce(0) { $0 + $1.finalGap } / t, gapMax: g.map(\.finalGap).max() ?? 0,
                supGapEstimate: g.map(\.supGap).max() ?? 0, supGapMean: g.reduce(0) { $0 + $1.supGap } / t,
                gapMean01: g.reduce(0) { $0 + $1.finalGap01 } / t, gapMax01: g.map(\.finalGap01).max() ?? 0,
                supGapEstimate01: g.map(\.supGap01).max() ?? 0, supGapMean01: g.reduce(0) { $0 + $1.supGap01 } / t,
                epsN: e, deviation: e.map { C * $0 },
                loss: loss, supGap: sup, noiseFloor: floor,
                exceedFrequency: e.map { eps in Double(g.filter { lossGap($0) > C * eps }.count) / t },
                cFit: e.map { sup / $0 },
                riskError: g.map(\.riskError).max() ?? 0, riskError01: g.map(\.riskError01).max() ?? 0,
                checkpointsOutsideBox: g.reduce(0) { $0 + $1.checkpointsOutsideBox },
                checkpoints: g.reduce(0) { $0 + $1.checkpoints },
                supGapOutside: g.map { loss.values($0).outside }.max() ?? 0,
                finalOutsideBox: g.filter(\.finalOutsideBox).count)
            summary.adversarial = AdversarialSummary(g.compactMap(\.adversarial), deviation: e.map { C * $0 })
            // The adversarial search maximises the gap of the loss 1 − p: it counts for that loss only.
            if loss == .probability, let a = summary.adversarial, a.sup > sup {
                summary.cFit = e.map { a.sup / $0 }
                summary.cFitSource = e.map { _ in "adversarial" }
            } else {
                summary.cFitSource = e.map { _ in "checkpoints and random draws" }
            }
            return summary
        }
    }
}

/// Per n, the adversarial searches over the trials: the adversarial sup (max over trials, a lower estimate
/// of `sup_{θ∈Θ}|R − R_n|` for the loss `1 − p_θ(y|x)`) with the Monte Carlo error of R at its maximiser,
/// and whether it exceeds the deviation `C·ε_n`, i.e. whether the bound's event `sup ≥ C·ε_n` was seen.
public struct AdversarialSummary: Sendable, Equatable {
    /// The largest adversarial |R − R_n| over the trials, and the trial (0-based) that gave it.
    public var sup: Double
    public var trial: Int
    /// At that trial's θ*: the standard error of R, and the gap with R on an independent population sample.
    public var riskError: Double
    public var freshSup: Double
    public var freshRiskError: Double
    /// The largest |g(θ₀)| over every trial's random starts.
    public var bestStart: Double
    /// sup > C·ε_n; and sup − 2·(its standard error) > C·ε_n (beyond Monte Carlo noise); nil where ε_n ≥ 1.
    public var exceeds: Bool?
    public var exceedsBeyondNoise: Bool?
    /// The fraction of trials whose adversarial gap exceeds C·ε_n.
    public var exceedFrequency: Double?
    public var iteratesChecked: Int
    public var iteratesOutsideBox: Int

    /// nil for no trials.
    public init?(_ t: [TrialAdversarial], deviation: Double?) {
        guard var best = t.first else { return nil }
        var bestTrial = 0
        for (i, a) in t.enumerated() where a.deviation > best.deviation { best = a; bestTrial = i }
        sup = best.deviation
        trial = bestTrial
        riskError = best.populationRiskError
        freshSup = best.freshDeviation
        freshRiskError = best.freshRiskError
        bestStart = t.map(\.bestStart).max() ?? 0
        exceeds = deviation.map { best.deviation > $0 }
        exceedsBeyondNoise = deviation.map { best.deviation - 2 * best.populationRiskError > $0 }
        exceedFrequency = deviation.map { d in Double(t.filter { $0.deviation > d }.count) / Double(t.count) }
        iteratesChecked = t.reduce(0) { $0 + $1.iteratesChecked }
        iteratesOutsideBox = t.reduce(0) { $0 + $1.iteratesOutsideBox }
    }
}

/// What the per-n summaries say together: the smallest C covering every observed sup gap (`cFit`, the
/// largest `c_fit` over n), its first and last values over n, and the least-squares slope of
/// `log sup_gap` against `log n` (ε_n itself falls like n^(−3/8) up to logarithms).
public struct GapTrend: Sendable, Equatable {
    public var cFit: Double?
    /// (n, c_fit) at the smallest and the largest n with ε_n < 1; nil with fewer than two such n.
    public var first: (n: Int, cFit: Double)?
    public var last: (n: Int, cFit: Double)?
    public var logLogSlope: Double?

    public static func == (a: GapTrend, b: GapTrend) -> Bool {
        a.cFit == b.cFit && a.first?.n == b.first?.n && a.first?.cFit == b.first?.cFit
            && a.last?.n == b.last?.n && a.last?.cFit == b.last?.cFit && a.logLogSlope == b.logLogSlope
    }

    public init(_ summaries: [GapSummary]) {
        let fits = summaries.compactMap { s in s.cFit.map { (n: s.n, cFit: $0) } }
        cFit = fits.map(\.cFit).max()
        guard fits.count >= 2, let f = fits.first, let l = fits.last else { return }
        first = f
        last = l
        let pts = summaries.filter { $0.supGap > 0 }.map { (Foundation.log(Double($0.n)), Foundation.log($0.supGap)) }
        guard pts.count >= 2 else { return }
        let mx = pts.map(\.0).reduce(0, +) / Double(pts.count), my = pts.map(\.1).reduce(0, +) / Double(pts.count)
        let sxx = pts.reduce(0) { $0 + ($1.0 - mx) * ($1.0 - mx) }
        let sxy = pts.reduce(0) { $0 + ($1.0 - mx) * ($1.1 - my) }
        if sxx > 0 { logLogSlope = sxy / sxx }
    }

    /// Whether c_fit rises with n: the observed sup gap then shrinks more slowly than ε_n.
    public var rises: Bool? { first.flatMap { f in last.map { $0.cFit > f.cFit } } }
}
