import Experiments
import ArgumentParser
import Bounds
import Foundation
import Estimation
import NetworkEstimators
import Networks
import SpectraStore
import Training
import TwoScaleCore
import TwoScaleFormats

/// `twoscale compare`: does the (lower) 2sED rank architectures like their training loss?
struct CompareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Rank architectures by lower 2sED at ε_n and by training loss; Kendall τ between them.",
        discussion: """
        For each architecture in --archs: the Markov-FIM 2sED, lower 2sED and joint 2sED at ε = ε_n \
        (docs/METHOD.md §15, n = --bound-n or the training-set size) on the first --fisher-samples training inputs, \
        by --estimator plain (K paths and J inner draws, docs/METHOD.md §13) or smc (K outer particles, J island \
        particles, with 95% intervals and ed's --island-sweeps; docs/ESTIMATORS.md); then training from scratch with the same optimizer, \
        data and budget (default Adam, lr 1e-3, batch 64), recording the final training loss (and \
        holdout loss/accuracy with --holdout). Reports Kendall's τ_b between the lower 2sED and the \
        training loss with its two-sided p-value (exact without ties for up to 50 architectures, \
        normal approximation otherwise), and the same for the nested 2sED. Architectures should have \
        about the same number of parameters (a warning is printed when one differs from the median by \
        more than 3%).
        """)

    @Option(help: ArgumentHelp("Architectures, comma-separated, e.g. 54-16-7,54-13-11-9-7 (docs/GUIDE.md, Architectures).", valueName: "list"))
    var archs: String

    /// compare's defaults for the shared option groups: --data is required (labelled, last CSV column),
    /// plain with compare's budget, σ² = 0.1, 5 epochs.
    enum Defaults: DataDefaults, NoiseDefaults, TrainingDefaults, EstimatorDefaults {
        static var epochs: Int { 5 }
        static var use: EstimatorUse { .compare }
        static var estimator: EstimatorKind? { PlainEstimator.kind }
        static var estimatorHelp: String { "plain (uniform paths) or smc (with intervals). (default: plain)" }
    }

    @OptionGroup var data: DataOptions<Defaults>

    @Option(help: "Fraction of the loaded data held out (seeded) for holdout loss and accuracy, in (0, 1).")
    var holdout: Double?

    @Option(name: .customLong("fisher-samples"), help: "N: the first N training inputs average the Fisher matrix.")
    var fisherSamples: Int = 100

    @OptionGroup var estimation: EstimatorOptions<Defaults>

    /// The estimator (plain unless --estimator says otherwise).
    var estimator: EstimatorKind { estimation.estimator ?? PlainEstimator.kind }

    /// The draws for ĉ: as given, or ed's default for the largest of the architectures (one number for
    /// the whole comparison).
    func traceDraws(_ list: [Architecture]) -> Int {
        estimation.traceDraws ?? TraceEstimate.defaultDraws(parameters: list.map(\.parameterCount).max() ?? 0)
    }

    /// K and J with the estimator's defaults.
    var budget: (paths: Int, inner: Int) {
        guard let chosen = try? EstimatorRegistry.estimator(estimator) else { return (estimation.paths ?? 50, estimation.inner ?? 50) }
        return estimation.budget(chosen)
    }

    @OptionGroup var noise: NoiseOptions<Defaults>

    @Option(parsing: .unconditional, help: ArgumentHelp("Parameter box lo:hi of the Monte Carlo paths.", valueName: "lo:hi"))
    var box: String = "-1:1"

    @Option(help: "Hidden activation: relu, tanh, sigmoid, linear.")
    var activation: Activation = .relu

    @Option(name: .customLong("bound-n"), help: "n in ε_n = (log n/(γn))^(3/8) (default: the training-set size).")
    var boundN: Int?

    @Option(help: "γ ∈ (0, 1] in ε_n.")
    var gamma: Double = 1

    @Option(help: "Meso-scale exponent ζ ∈ [0, 1).")
    var zeta: Double = 2.0 / 3.0

    @OptionGroup var training: TrainingOptions<Defaults>

    @Option(help: "Seed of every random draw (data, paths, noise, initialisation, shuffling).")
    var seed: UInt64 = 1

    @Option(help: "Replicate seeds per architecture (≥ 1, from --seed).")
    var seeds: Int = 3

    @Option(name: .customLong("flat-tolerance"), help: "Training counts as flat if the last epoch gave < this share of the loss decrease.")
    var flatTolerance: Double = 0.05

    @Option(help: "Parallel Monte Carlo tasks (default: active cores); results do not depend on it.")
    var threads: Int?

    @OptionGroup var output: OutputOptions

    /// The architectures of --archs, parsed and checked to share their input and classes.
    func architectures() throws -> [Architecture] {
        let list = archs.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard list.count >= 2 else {
            throw TwoScaleError.invalid("--archs", archs, allowed: "give at least two architectures, comma-separated")
        }
        let architectures = try list.map { try Architecture(parsing: $0, flag: "--archs") }
        let inputs = Set(architectures.map(\.inputSize)), classes = Set(architectures.map(\.classes))
        guard inputs.count == 1, classes.count == 1 else {
            throw TwoScaleError.invalid("--archs", archs, allowed: "every architecture needs the same input size and number of classes")
        }
        return architectures
    }

    /// Every check that needs no file: before any data is read.
    func validate() throws {
        let list = try architectures()
        let chosen = try EstimatorRegistry.estimator(estimator)
        guard chosen.estimatesLower else {
            throw TwoScaleError.usage("compare ranks by the lower 2sED, which the \(estimator) estimator does not estimate; use --estimator \(EstimatorRegistry.lowerEstimators)")
        }
        let draws = traceDraws(list)
        for a in list {
            try chosen.checkBudget(EstimatorBudget(paths: budget.paths, inner: budget.inner, settings: try estimation.settings([.traceDraws: draws])),
                                   layers: a.parametricLayers.count)
        }
        try EstimatorFlags.refuseForeign(estimation.given, kind: estimator, choice: estimation.estimatorGiven != nil ? .given : .byDefault)
        guard fisherSamples >= 1 else {
            throw TwoScaleError.invalid("--fisher-samples", "\(fisherSamples)", allowed: "N must be ≥ 1")
        }
        if let t = threads, !(1...1024).contains(t) {
            throw TwoScaleError.invalid("--threads", "\(t)", allowed: "give a count from 1 to 1024")
        }
        try ScaleParameters.checkZeta(zeta)
        _ = try Grid.parseInterval(box, flag: "--box")
        _ = try trainingConfig(list[0])
        guard (1...100).contains(seeds) else { throw TwoScaleError.invalid("--seeds", "\(seeds)", allowed: "give from 1 to 100 replicate seeds") }
        guard flatTolerance > 0, flatTolerance < 1 else {
            throw TwoScaleError.invalid("--flat-tolerance", "\(flatTolerance)", allowed: "give a fraction in (0, 1)")
        }
    }

    /// The training of every architecture (the library checks the batch size and the epochs; the
    /// architecture is `ArchitectureComparison`'s to set per entry).
    func trainingConfig(_ architecture: Architecture) throws -> TrainingConfig {
        try training.config(architecture: architecture, activation: activation, seed: seed)
    }

    func run() async throws {
        let architectures = try architectures()
        let (lo, hi) = try Grid.parseInterval(box, flag: "--box")
        let act = activation
        let training = try trainingConfig(architectures[0])

        let loaded = try data.load(architecture: architectures[0], seed: seed)
        if let labels = loaded.labels {
            let dataClasses = loaded.classes ?? ((labels.max() ?? 0) + 1)
            guard dataClasses <= architectures[0].classes else {
                throw TwoScaleError.invalid("--archs", archs, allowed: "the data have \(dataClasses) classes; the output layer must have at least that many")
            }
        }
        // The library's rules for training data (labels given and in range), as train says them; about --archs.
        do { try self.training.checkData(loaded, config: training) } catch let e as TwoScaleError { throw e.renaming("\(Setting.architecture)", to: "--archs") }
        var train = loaded, held: Dataset? = nil
        if let f = holdout {
            let s = try HoldoutSplit.split(loaded, fraction: f, seed: seed)
            train = s.train
            held = s.holdout
        }
        guard training.batchSize <= train.count else {
            throw TwoScaleError.invalid("--batch", "\(training.batchSize)", allowed: "the batch size must not exceed the training set (\(train.count) samples)")
        }
        let n = boundN ?? train.count
        let epsN = try GeneralizationBound.epsilon(n: Double(n), gamma: gamma)
        guard fisherSamples <= train.count else {
            throw TwoScaleError.invalid("--fisher-samples", "\(fisherSamples)", allowed: "at most the training-set size (\(train.count))")
        }
        let fisherInputs = train.prefix(fisherSamples).inputs
        // The estimator's settings are its defaults unless given, and given only to an estimator that reads them;
        // the trace draws are the largest network's for every network.
        let settings = ArchitectureComparison.Settings(
            activation: act, sigma2: noise.sigma2 ?? 0.1, noiseSamples: noise.noiseSamples,
            budget: EstimatorBudget(paths: budget.paths, inner: budget.inner,
                                    settings: try estimation.settings([.traceDraws: traceDraws(architectures)])),
            box: lo...hi, seed: seed, eps: epsN, zeta: zeta,
            threads: threads ?? Swift.max(1, ProcessInfo.processInfo.activeProcessorCount), training: training,
            estimator: estimator)
        _ = try MonteCarloDesign(paths: budget.paths, inner: budget.inner, box: lo...hi, seed: seed, activation: act)

        let counts = architectures.map(\.parameterCount).sorted()
        let median = Double(counts[counts.count / 2])
        for a in architectures where Swift.abs(Double(a.parameterCount) - median) > 0.03 * median {
            Console.warn("\(a) has \(a.parameterCount) parameters, more than 3% from the median \(Int(median)): the comparison is not between equal sizes")
        }

        let comparison = ArchitectureComparison(settings: settings)
        let progress = PhaseProgress(label: "compare", threads: settings.threads)
        let study = try await progress.observing { try await ComparisonStudy.run(
            architectures, seeds: seeds, comparison: comparison, fisherInputs: fisherInputs, train: train, holdout: held,
            epsN: epsN, n: n, flatTolerance: flatTolerance,
            progress: { i, r in
                let a = architectures[i]
                progress.phase("[\(i + 1)/\(architectures.count)] \(a) (\(a.parameterCount) parameters), seed \(r + 1)/\(seeds)")
            },
            measured: { e in
                if let w = NetworkReport.essWarning(e.degeneracy) { Console.warn("\(e.architecture): " + w) }
                if let w = NetworkReport.orderWarning(e.lowerAboveNested(eps: epsN)) { Console.warn("\(e.architecture): " + w) }
                if let w = NetworkReport.tailWarning(e.tailShortfall) { Console.warn("\(e.architecture): " + w) }
                if let w = NetworkReport.bracketWarning(e.bracketCheck) { Console.warn("\(e.architecture): " + w) }
            }) }
        try output.emit(study) { Self.text(study) }
    }

    /// The readable summary of a comparison.
    static func text(_ r: ComparisonStudy) -> String {
        let summaries = r.summaries, settings = r.settings, flatTolerance = r.flatTolerance
        let seedCount = summaries.first?.entries.count ?? 0
        var human = "architecture comparison at ε_n = \(Fmt.num(r.epsN)) (n = \(r.n)), ζ = \(Fmt.num(settings.zeta)), \(settings.estimator.rawValue) estimator, K = \(settings.budget.paths), J = \(settings.budget.inner), \(settings.training.epochs) epochs, \(seedCount) seed(s) (mean ± sd)\n"
        human += "training flattened (last epoch < \(Fmt.num(flatTolerance)) of the loss decrease) for every architecture and seed: \(r.allFlat ? "yes" : "no")\n\n"
        human += Fmt.table(["arch", "params", "lower 2sED", "2sED", "train loss", "flat"], summaries.map { m in
            [m.architecture.notation, String(m.architecture.parameterCount),
             "\(Fmt.num(m.mean(\.dZetaLower))) ± \(Fmt.num(m.sd(\.dZetaLower), 3))", "\(Fmt.num(m.mean(\.dZeta))) ± \(Fmt.num(m.sd(\.dZeta), 3))",
             "\(Fmt.num(m.mean(\.trainLoss))) ± \(Fmt.num(m.sd(\.trainLoss), 3))", m.flat(tolerance: flatTolerance) ? "yes" : "no"]
        })
        if (try? EstimatorRegistry.estimator(settings.estimator))?.reportsIntervals == true {
            human += "\n\(settings.estimator): mean half-width of the 95% intervals over the seeds (lower 2sED; 2sED): "
            human += summaries.map { m in
                "\(m.architecture.notation) \(m.meanHalfWidth(\.ci95HalfWidthLower).map { Fmt.num($0, 3) } ?? "—"); \(m.meanHalfWidth(\.ci95HalfWidth).map { Fmt.num($0, 3) } ?? "—")"
            }.joined(separator: ", ") + "\n"
        }
        let pairs = r.pairs
        human += "\ncertified brackets of the 2sED (over the seeds): " + summaries.map { m in
            "\(m.architecture.notation) \(m.bracket(\.bracket).map { "[\(Fmt.num($0.lowerBound)), \(Fmt.num($0.upperBound))]" } ?? "—")"
        }.joined(separator: ", ")
        human += "\npairs ordered with certainty (disjoint brackets, δ ≤ \(Fmt.num(CertifiedBracket.defaultDelta * Double(summaries.count * seedCount))) in all): "
            + "\(pairs.filter { $0.order != nil }.count) of \(pairs.count) for the 2sED, \(pairs.filter { $0.orderLower != nil }.count) for the lower 2sED"
            + (pairs.contains { $0.order != nil } ? " (" + pairs.compactMap { p in p.order.map { "\(p.a) \($0) \(p.b)" } }.joined(separator: ", ") + ")" : "") + "\n"
        human += "\nKendall τ (lower 2sED vs training loss) = \(Fmt.num(r.tauLower.tau)), p = \(Fmt.num(r.tauLower.pValue))"
        human += "\nKendall τ (2sED vs training loss) = \(Fmt.num(r.tauNested.tau)), p = \(Fmt.num(r.tauNested.pValue))\n"
        human += "\nevery measure against the training loss (baselines beside the 2sED):\n"
        human += Fmt.table(["measure", "Kendall τ", "p"], r.measures.map { m in
            [m.description, m.tau.map { Fmt.num($0.tau) } ?? "undefined (constant)", m.tau.map { Fmt.num($0.pValue) } ?? "—"]
        })
        return human
    }
}
