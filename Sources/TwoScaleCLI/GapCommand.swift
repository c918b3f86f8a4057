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
        exceed_frequency = fraction of trials whose sup gap > C·ε_n; c_fit_per_n = sup_gap/ε_n; c_fit = the \
        largest, the smallest C covering every observed gap (only meaningful where resolved). \
        With --store DIR (a spectra store of the student, from `twoscale ed --arch STUDENT --store DIR`), each \
        point also gets d_zeta_estimate and d_zeta_used (the one-sided 95% upper value, as in `twoscale bound`) \
        at ε_n and the bound's log_tail = log H − d_zeta_used·log ε_n − (K/γ)·log n (docs/METHOD.md §15; H and K \
        are user-set constants of the theorem, default 1).
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

    /// gap's defaults for the training flags.
    enum Defaults: TrainingDefaults {
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

    @Option(name: .customLong("K"), help: "With --store: the theorem's constant K in n^(−K/γ) (user-set, ≥ 0).")
    var constK: Double = 1

    @Option(help: "Random seed.")
    var seed: UInt64 = 1

    @Option(help: "Training runs at once (default: the active cores, at most 2). Results do not depend on it.")
    var threads: Int?

    @Option(help: "The loss compared with C·ε_n.")
    var loss: GapLoss = .zeroOne

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
    }

    func run() async throws {
        let tArch = try Architecture(parsing: teacher, flag: "--teacher")
        let sArch = try Architecture(parsing: student, flag: "--student")
        let ns = try SampleSizeGrid.parse(nText)
        let constants = try BoundConstants(C: constC, H: constH, K: constK)
        var tail: (bound: GeneralizationBound, source: StoreSource)?
        if let store {
            let bound = try GeneralizationBound(gamma: gamma, zeta: zeta, constants: constants)
            if let w = bound.zetaWarning { Console.warn(w) }
            let s = try StoreSource(directory: store, estimator: estimator, zeta: zeta, normalization: .trace)
            if !s.conservative {
                Console.warn("gap --estimator lower: the lower 2sED is a lower bound of d_ζ, so the bound's tail beside the gaps is not conservative (use --estimator nested)")
            }
            guard s.dimension == sArch.parameterCount else {
                throw TwoScaleError.invalid("--store", store, allowed: "the store is for d = \(s.dimension) parameters but the student \(sArch) has \(sArch.parameterCount); give the student's store")
            }
            tail = (bound, s)
        }
        let (lo, hi) = try Grid.parseInterval(box, flag: "--box")
        let task = try TeacherTask.random(architecture: tArch, activation: teacherActivation,
                                          temperature: temperature, seed: seed)
        let act = activation
        let cfg = try config(student: sArch)
        let experiment = try GapExperiment(task: task, student: sArch, studentActivation: act, training: cfg, sampleSizes: ns,
                                           trials: trials, randomDraws: randomDraws, box: lo...hi, populationSize: population, seed: seed)
        let showProgress = Console.stderrIsTerminal
        let study = try await GapStudy.run(experiment, loss: loss, gamma: gamma, constants: constants,
                                           tail: tail.map { ($0.bound, $0.source.values, $0.source.description) }, threads: threads) { done, total in
            if showProgress { Console.error("gap: \(done)/\(total) runs") }
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
        let tailText = r.tails.isEmpty ? "" : "\nbound's log tail from \(r.tailSource ?? "a store") (H = \(Fmt.num(constants.H)), K = \(Fmt.num(constants.K)), \(BoundConstants.note)):\n"
            + Fmt.table(["n", "d_zeta_estimate", "d_zeta_used", "log_tail"], summaries.compactMap { s in
                r.tails[s.n].map { [String(s.n), Fmt.num($0.estimate), Fmt.num($0.dZetaUsed), Fmt.num($0.logTail)] } })
        return head + table + noise + tailText + "\nc_fit = \(Fmt.num(r.trend.cFit, 4)) (smallest C covering every observed gap); \(r.trendNote)\n"
            + (r.trend.logLogSlope.map { "log-log slope of the sup gap in n: \(Fmt.num($0, 3)) (ε_n: about −3/8 up to logs)\n" } ?? "")
    }
}
