import Experiments
import ArgumentParser
import Bounds
import Foundation
import Networks
import Training
import TwoScaleCore
import TwoScaleFormats

/// `twoscale gap`: empirical generalisation gaps on a teacher task, against the deviation C·ε_n.
struct GapCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gap",
        abstract: "Empirical gaps |R − R_n| of a student trained on a random teacher task, against C·ε_n.",
        discussion: """
        Task: x ~ N(0, I), y ~ softmax(teacher(x)/T), teacher weights U(−1, 1). For every n and trial (own \
        random streams) n samples are drawn and the student is trained; at θ₀, after every epoch (and every \
        --checkpoint-every steps) and at --random-draws θ ~ U(--box), gap = |R(θ) − R_n(θ)| for cross-entropy \
        and 0-1 loss, with R over --population fresh inputs and the exact label distribution (its Monte Carlo \
        standard error is reported). The theorem speaks of θ ∈ Θ = --box only: checkpoints outside Θ are \
        counted (checkpoints_outside_box) and their largest gap reported apart (sup_gap_outside_box), never \
        included in a sup gap. Per n: gap_mean/gap_max = mean/max over trials of the trained student's \
        gap (final_outside_box trials end outside Θ); sup_gap_estimate (cross-entropy) and sup_gap_estimate_01 \
        = max over trials of max over in-box checkpoints and random draws (lower estimates of sup_{θ∈Θ}|R − R_n|). \
        The comparison with the bound uses --loss (default zero-one, bounded as the theorem assumes): sup_gap, \
        noise_floor = 2 × the largest standard error of R for that loss, resolved = sup_gap > noise_floor, \
        exceed_frequency = fraction of trials whose sup gap > C·ε_n; c_fit_per_n = the largest gap seen (sup_gap, \
        or with --loss probability the adversarial sup where larger; c_fit_source) / ε_n; c_fit = the largest, the \
        smallest C covering every observed gap (only meaningful where resolved). \
        With --store DIR (a spectra store of the student, from `twoscale ed --arch STUDENT --store DIR`), each \
        point also gets d_zeta_estimate and d_zeta_used at ε_n (as in `twoscale bound`: the certified bracket's \
        upper end of a Markov-FIM store, else a one-sided 95% bootstrap upper value, labelled in d_zeta_used_method) \
        and the bound's log_tail = log H − d_zeta_used·log ε_n − (K/γ)·log n (docs/METHOD.md §15; H and K \
        are user-set constants of the theorem, default 1). --d-zeta rank-limit (ζd + (1 − ζ)r, r the student's \
        generic Fisher rank on --rank-samples teacher inputs) or parameters (d) give the tail without a store; \
        neither is an upper bound of d_ζ(ε_n) (conservative: false). With --delta, n_for_delta is the smallest n \
        whose tail is below δ. The bound test (docs/METHOD.md §16): --loss probability (1 − p_θ(y|x), bounded and \
        Lipschitz), --project (projected training: every checkpoint in Θ) and --adversarial S (per n and trial, \
        projected gradient ascent on ±(R − R_n) from S random starts in Θ: adversarial_sup, the max over trials, a \
        lower estimate of sup_{θ∈Θ}|R − R_n|, with the standard error of R at its maximiser; adversarial_exceeds: \
        the bound's event sup ≥ C·ε_n was observed).
        """)

    @Option(help: "Teacher layer sizes, e.g. 10-8-3.")
    var teacher: String

    @Option(help: "Student layer sizes, e.g. 10-16-3 (same input size and classes as the teacher).")
    var student: String

    @Option(name: .customLong("n"), help: ArgumentHelp("Training-set sizes: a list or a log grid lo:hi:k (n ≥ 2).", valueName: "grid"))
    var nText: String = "100,1000,10000"

    @Option(help: "Trials per n (each a fresh sample and training run).")
    var trials: Int = 5

    @Option(help: "Teacher's hidden activation.")
    var teacherActivation: Activation = .relu

    @Option(help: "Student's hidden activation.")
    var activation: Activation = .relu

    @Option(help: "Teacher temperature T > 0 in softmax(teacher(x)/T).")
    var temperature: Double = 1

    /// gap's defaults for the training flags (and σ² of the Markov FIM behind --d-zeta rank-limit).
    enum Defaults: TrainingDefaults, NoiseDefaults {
        static var learningRate: Double { 1e-2 }
        static var batch: Int { 32 }
        static var epochs: Int { 20 }
        static var batchNote: String { "capped at n" }
    }

    @OptionGroup var training: TrainingOptions<Defaults>

    @Option(help: "Also checkpoint every k optimisation steps.")
    var checkpointEvery: Int?

    @Option(help: "Random parameter draws θ ~ U(--box) per (n, trial).")
    var randomDraws: Int = 20

    @Option(parsing: .unconditional, help: ArgumentHelp("The parameter box Θ = [lo, hi]^d for random draws.", valueName: "lo:hi"))
    var box: String = "-1:1"

    @Option(help: "Fresh inputs M for the population risk R.")
    var population: Int = 20_000

    @Option(help: "γ ∈ (0, 1] in ε_n = (log n/(γn))^(3/8).")
    var gamma: Double = 1

    @Option(name: .customLong("C"), help: "The theorem's constant C in the deviation C·ε_n (user-set).")
    var constC: Double = 1

    @Option(help: ArgumentHelp("Spectra store of the student (twoscale ed --store) for d_ζ(ε_n) and the bound's log tail.", valueName: "DIR"))
    var store: String?

    @Option(help: "With --store (lower: not conservative).")
    var estimator: StoreEstimator = .nested

    @Option(help: "With --store: ζ ∈ [0, 1) of d_ζ (the bound needs ζ ≥ 2/3).")
    var zeta: Double = 2.0 / 3.0

    @Option(name: .customLong("H"), help: "With --store: the theorem's constant H in the tail (user-set, > 0).")
    var constH: Double = 1

    @Option(name: .customLong("K"), help: "With --store: the theorem's constant K in n^(−K/γ) (user-set, 0 to 10⁶).")
    var constK: Double = 1

    @Flag(help: "With --store: the tail takes the population Fisher's certified upper end (Gaussian inputs).")
    var populationFisher = false

    @Option(help: "Random seed.")
    var seed: UInt64 = 1

    @Option(help: "Training runs at once (default: the active cores, at most 2). Results do not depend on it.")
    var threads: Int?

    @Option(help: "The loss compared with C·ε_n.")
    var loss: GapLoss = .zeroOne

    @Flag(help: "Train with projected steps onto Θ = --box (θ₀ and every step clamped).")
    var project = false

    @Option(help: ArgumentHelp("Adversarial search of sup_Θ|R − R_n| from S starts per trial (0: off).", valueName: "S"))
    var adversarial: Int = 0

    @Option(help: "With --adversarial: projected Adam steps per start and sign of R − R_n.")
    var adversarialIterations: Int = 100

    @Option(help: "With --adversarial: Adam's step as a fraction of the box width hi − lo, in (0, 1].")
    var adversarialStep: Double = 0.02

    @Option(help: ArgumentHelp("Where the tail's d_ζ(ε_n) comes from (docs/METHOD.md §16).", valueName: "source"))
    var dZeta: GapDimensionSource?

    @Option(help: "With --d-zeta rank-limit: teacher inputs N of the student's Fisher matrix.")
    var rankSamples: Int = 100

    @OptionGroup var noise: NoiseOptions<Defaults>

    @Option(help: "With a tail: the confidence level δ ∈ (0, 1); also report the smallest n whose tail is below δ.")
    var delta: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("With --delta: the integer range lo:hi searched for n_for_delta.", valueName: "lo:hi"))
    var deltaRange: String = "2:1e12"

    @OptionGroup var output: OutputOptions

    /// Every check that needs no file and no training.
    func validate() throws {
        _ = try Architecture(parsing: teacher, flag: "--teacher")
        _ = try config(student: try Architecture(parsing: student, flag: "--student"))
        _ = try SampleSizeGrid.parse(nText)
        try GeneralizationBound.checkGamma(gamma)
        _ = try BoundConstants(C: constC, H: constH, K: constK)
        if let t = threads, !(1...1024).contains(t) {
            throw TwoScaleError.invalid("--threads", "\(t)", allowed: "give a count from 1 to 1024")
        }
        let (lo, hi) = try Grid.parseInterval(box, flag: "--box")
        _ = try ParameterBox(lo: lo, hi: hi)
        _ = try adversarialSettings()
        if adversarial > 0, !loss.lipschitz {
            throw TwoScaleError.invalid("--loss", loss.rawValue,
                allowed: "--adversarial climbs the gradient of a Lipschitz loss; 0-1 is not Lipschitz and cross-entropy is unbounded: give --loss probability")
        }
        _ = try dimensionSource()
        if populationFisher && store == nil {
            throw TwoScaleError.usage("--population-fisher: give the student's spectra store (--store DIR)")
        }
        if delta != nil {
            guard try dimensionSource() != nil else {
                throw TwoScaleError.usage("--delta needs the bound's tail: give --store DIR or --d-zeta rank-limit|parameters")
            }
            _ = try deltaSearch()
        }
    }

    /// The adversarial search's settings (nil with --adversarial 0); the seed is replaced per (n, trial).
    func adversarialSettings() throws -> AdversarialSettings? {
        guard adversarial != 0 else { return nil }
        guard adversarial > 0 else {
            throw TwoScaleError.invalid("--adversarial", "\(adversarial)", allowed: "give the number of starting points S ≥ 1, or 0 for no search")
        }
        return try AdversarialSettings(starts: adversarial, iterations: adversarialIterations, stepFraction: adversarialStep, seed: seed)
    }

    /// Where the tail's d_ζ comes from (nil: no tail).
    func dimensionSource() throws -> GapDimensionSource? {
        switch (dZeta, store) {
        case (nil, nil): return nil
        case (nil, .some), (.store, .some): return .store
        case (.store, nil): throw TwoScaleError.missing("--store", "--d-zeta store needs the student's spectra store (--store DIR)")
        case (.some(let s), .some): throw TwoScaleError.usage("--d-zeta \(s.rawValue): give either a spectra store (--store) or --d-zeta \(s.rawValue), not both")
        case (.some(let s), nil): return s
        }
    }

    func deltaSearch() throws -> (value: Double, range: ClosedRange<Int>)? {
        try delta.map { ($0, try BoundReport.parseRange(deltaRange)) }
    }

    func run() async throws {
        let tArch = try Architecture(parsing: teacher, flag: "--teacher")
        let sArch = try Architecture(parsing: student, flag: "--student")
        let ns = try SampleSizeGrid.parse(nText)
        let constants = try BoundConstants(C: constC, H: constH, K: constK)
        let (lo, hi) = try Grid.parseInterval(box, flag: "--box")
        let task = try TeacherTask.random(architecture: tArch, activation: teacherActivation,
                                          temperature: temperature, seed: seed)
        var tail: GapTailSettings?
        if let source = try dimensionSource() {
            let bound = try GeneralizationBound(gamma: gamma, zeta: zeta, constants: constants)
            if let w = bound.zetaWarning { Console.warn(w) }
            switch source {
            case .store:
                guard let store else { throw TwoScaleError.missing("--store", "--d-zeta store needs the student's spectra store (--store DIR)") }
                let s = try await StoreSource(directory: store, estimator: estimator, zeta: zeta, normalization: .trace, population: populationFisher)
                if let why = s.store.uncertified {
                    Console.warn("gap --store: no certified upper end (\(why)); the tail uses a bootstrap upper value of d_ζ, which can understate it")
                }
                if !s.conservative {
                    Console.warn("gap --estimator lower: the lower 2sED is a lower bound of d_ζ, so the bound's tail beside the gaps is not conservative (use --estimator nested)")
                }
                guard s.dimension == sArch.parameterCount else {
                    throw TwoScaleError.invalid("--store", store, allowed: "the store is for d = \(s.dimension) parameters but the student \(sArch) has \(sArch.parameterCount); give the student's store")
                }
                tail = GapTailSettings(bound: bound, values: s.values, source: s.description, method: s.method,
                                       conservative: s.conservative, delta: try deltaSearch())
            case .rankLimit, .parameters:
                let d = source == .parameters ? GapDimension.parameters(student: sArch)
                    : try GapDimension.rankLimit(task: task, student: sArch, activation: activation, box: lo...hi, samples: rankSamples,
                                                 sigma2: noise.sigma2 ?? 0.1, noiseSamples: noise.noiseSamples, zeta: zeta, seed: seed)
                Console.warn("gap --d-zeta \(source.rawValue): \(d.method)")
                tail = GapTailSettings(bound: bound, values: d.values, source: d.description, method: d.method,
                                       conservative: false, delta: try deltaSearch())
            }
        }
        let act = activation
        var cfg = try config(student: sArch)
        if project { cfg.projection = try ParameterBox(lo: lo, hi: hi) }
        var experiment = try GapExperiment(task: task, student: sArch, studentActivation: act, training: cfg, sampleSizes: ns,
                                           trials: trials, randomDraws: randomDraws, box: lo...hi, populationSize: population, seed: seed)
        experiment.adversarial = try adversarialSettings()
        let progress = PhaseProgress(label: "gap", threads: threads ?? 1)
        progress.phase("training runs")
        defer { progress.finish() }
        let study = try await GapStudy.run(experiment, loss: loss, gamma: gamma, constants: constants,
                                           tail: tail, threads: threads) { done, total in
            progress.tick(done: done, total: total)
        }
        try output.emit(study) { GapReport.text(study) }
    }

    /// The student's training (the library checks the batch size, the epochs and --checkpoint-every).
    func config(student: Architecture) throws -> TrainingConfig {
        try training.config(architecture: student, activation: activation, seed: seed, checkpointEverySteps: checkpointEvery)
    }
}

/// How `gap` words a `GapStudy`.
enum GapReport {
    static func text(_ r: GapStudy) -> String {
        let summaries = r.summaries, constants = r.constants
        let head = "empirical gaps: teacher \(r.teacher), student \(r.student) (\(r.studentParameters) parameters), γ = \(Fmt.num(r.gamma)), "
            + "C = \(Fmt.num(constants.C)) (\(BoundConstants.note))\n"
            + "R over \(r.population) fresh inputs with exact labels (standard error ≤ \(Fmt.num(r.riskStandardError, 3)) cross-entropy, \(Fmt.num(r.riskStandardError01, 3)) 0-1)\n"
            + "sup gaps over θ ∈ Θ only (checkpoints outside the box are counted and excluded); compared loss: \(r.loss.note)\n\n"
        let table = Fmt.table(["n", "trials", "gap_mean", "gap_max", "sup_gap_ce", "sup_gap_01", "sup_gap", "noise_floor", "eps_n", "C·eps_n", "exceed", "c_fit", "outside Θ"],
                              summaries.map { s in
            [String(s.n), String(s.trials), Fmt.num(s.gapMean, 4), Fmt.num(s.gapMax, 4), Fmt.num(s.supGapEstimate, 4),
             Fmt.num(s.supGapEstimate01, 4), Fmt.num(s.supGap, 4), Fmt.num(s.noiseFloor, 3), Fmt.num(s.epsN, 4), Fmt.num(s.deviation, 4),
             Fmt.num(s.exceedFrequency, 3), Fmt.num(s.cFit, 4), "\(s.checkpointsOutsideBox)/\(s.checkpoints)"]
        })
        let unresolved = summaries.filter { !$0.resolved }.map { String($0.n) }
        let noise = unresolved.isEmpty ? "" : "note: at n = \(unresolved.joined(separator: ", ")) the sup gap is not above its noise floor (2 × the standard error of R): it and its c_fit are within noise; raise --population to resolve it\n"
        let tailText = r.tails.isEmpty ? "" : "\nbound's log tail from \(r.tailSource ?? "a store") (γ = \(Fmt.num(r.gamma)), H = \(Fmt.num(constants.H)), K = \(Fmt.num(constants.K)), \(BoundConstants.note)):\n"
            + (r.tailMethod.map { "d_zeta_used: \($0)\n" } ?? "")
            + Fmt.table(["n", "d_zeta_estimate", "d_zeta_used", "log_tail", "log10_tail"], summaries.compactMap { s in
                r.tails[s.n].map { [String(s.n), Fmt.num($0.estimate), Fmt.num($0.dZetaUsed), Fmt.num($0.logTail), Fmt.num($0.logTail / log(10))] } })
            + (r.delta.map { d in "n₀ for δ = \(Fmt.num(d)): \(r.nForDelta.map(String.init) ?? "none") (\(r.nForDeltaNote ?? ""))\n" } ?? "")
        let projectText = r.projected ? "\ntraining projected onto Θ: \(summaries.map(\.checkpointsOutsideBox).reduce(0, +)) of \(summaries.map(\.checkpoints).reduce(0, +)) checkpoints outside Θ\n" : ""
        let advText = r.adversarial.map { a in
            "\nadversarial search (\(a.starts) starts × 2 signs × \(a.iterations) projected Adam steps, step \(Fmt.num(a.stepFraction)) of the box width; loss 1 − p_θ(y|x)):\n"
                + Fmt.table(["n", "sup_gap (checkpoints, draws)", "adversarial_sup", "± se of R", "fresh R", "best start", "C·eps_n", "exceeds", "iterates outside Θ"],
                            summaries.compactMap { s in
                    s.adversarial.map { v in
                        [String(s.n), Fmt.num(s.supGap, 4), Fmt.num(v.sup, 4), Fmt.num(v.riskError, 2), Fmt.num(v.freshSup, 4), Fmt.num(v.bestStart, 4),
                         s.deviation.map { Fmt.num($0, 4) } ?? "–", v.exceeds.map { $0 ? "yes" : "no" } ?? "–",
                         "\(v.iteratesOutsideBox)/\(v.iteratesChecked)"]
                    }
                })
        } ?? ""
        return head + table + noise + projectText + advText + tailText + "\nc_fit = \(Fmt.num(r.trend.cFit, 4)) (smallest C covering every observed gap, the adversarial search's included"
            + " where it searched this loss); \(r.trendNote)\n"
            + (r.trend.logLogSlope.map { "log-log slope of the sup gap in n: \(Fmt.num($0, 3)) (ε_n: about −3/8 up to logs)\n" } ?? "")
    }
}
