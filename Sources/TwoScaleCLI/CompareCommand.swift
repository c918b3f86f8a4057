import ArgumentParser
import Bounds
import Foundation
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

    @Option(help: ArgumentHelp("csv:PATH, idx:IMAGES,LABELS, fashion-mnist[:test], synthetic:teacher:ARCH (docs/FORMATS.md).", valueName: "source"))
    var data: String

    @Option(help: "Training-set size n (the first n samples; required for synthetic sources).")
    var samples: Int?

    @Option(help: "CSV label column.")
    var labels: LabelColumn = .last

    @Flag(help: "Z-score every input feature.")
    var standardize = false

    @Option(help: ArgumentHelp("One input's shape, e.g. 28x28x1, for CSV rows that are images (channels fastest; docs/GUIDE.md).", valueName: "HxWxC"))
    var shape: String?

    @Option(help: "Fraction of the loaded data held out (seeded) for holdout loss and accuracy, in (0, 1).")
    var holdout: Double?

    @Option(name: .customLong("fisher-samples"), help: "N: the first N training inputs average the Fisher matrix.")
    var fisherSamples: Int = 100

    @Option(help: "plain (uniform paths) or smc (with intervals).")
    var estimator: EstimatorKind = Self.defaultEstimator

    static let defaultEstimator = PlainNetworkEstimator.kind

    @Option(help: "K: plain: paths θ^k ~ U(box) (default 50); smc: outer particles, 2K per first-layer neuron (64).")
    var paths: Int?

    @Option(help: "J: plain: inner draws per path and later layer (default 50); smc: island size, ≥ 8 (32).")
    var inner: Int?

    @Option(name: .customLong("trace-draws"), help: "smc: draws of θ for the trace normalisation (default: one per two parameters of the largest, ≥ 1000).")
    var traceDrawsOption: Int?

    @OptionGroup var islands: IslandOptions

    /// The draws for ĉ: as given, or ed's default for the largest of the architectures (one number for
    /// the whole comparison).
    func traceDraws(_ list: [Architecture]) -> Int {
        traceDrawsOption ?? TraceEstimate.defaultDraws(parameters: list.map(\.parameterCount).max() ?? 0)
    }

    /// K and J with the estimator's defaults.
    var budget: (paths: Int, inner: Int) {
        let d: (paths: Int, inner: Int) = (try? EstimatorRegistry.estimator(estimator))?.defaultBudget(.compare) ?? (50, 50)
        return (paths ?? d.paths, inner ?? d.inner)
    }

    @Option(help: "σ² of the Gaussian hidden layers (> 0).")
    var sigma2: Double = 0.1

    @Option(name: .customLong("noise-samples"), help: "R: noise draws per input.")
    var noiseSamples: Int = 1

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

    @Option(help: "Optimizer: adam or sgd.")
    var optimizer: String = "adam"

    @Option(help: "Learning rate η > 0.")
    var lr: Double = 1e-3

    @Option(help: "SGD momentum μ ∈ [0, 1).")
    var momentum: Double = 0.9

    @Option(help: "Mini-batch size.")
    var batch: Int = 64

    @Option(help: "Training epochs (≥ 1).")
    var epochs: Int = 5

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
        let draws = traceDraws(list)
        for a in list {
            try chosen.checkBudget(EstimatorBudget(paths: budget.paths, inner: budget.inner, traceDraws: draws, islandSweeps: islands.sweeps),
                                   layers: a.parametricLayers.count)
        }
        if let (flag, owner) = EstimatorRegistry.foreignFlag((traceDrawsOption != nil ? ["--trace-draws"] : []) + islands.given, for: estimator) {
            // Another estimator's settings: an error, not ignored.
            let why = estimator == Self.defaultEstimator ? " (compare's default)" : ""
            throw TwoScaleError.usage("\(flag) is a setting of the \(owner) estimator, and this comparison uses \(estimator)\(why): add --estimator \(owner), or drop \(flag)")
        }
        guard fisherSamples >= 1 else {
            throw TwoScaleError.invalid("--fisher-samples", "\(fisherSamples)", allowed: "N must be ≥ 1")
        }
        guard sigma2.isFinite, sigma2 > 0 else {
            throw TwoScaleError.invalid("--sigma2", "\(sigma2)", allowed: "σ² must be a finite number > 0")
        }
        guard noiseSamples >= 1 else {
            throw TwoScaleError.invalid("--noise-samples", "\(noiseSamples)", allowed: "R must be ≥ 1")
        }
        if let t = threads, !(1...1024).contains(t) {
            throw TwoScaleError.invalid("--threads", "\(t)", allowed: "give a count from 1 to 1024")
        }
        try ScaleParameters.checkZeta(zeta)
        _ = try Grid.parseInterval(box, flag: "--box")
        _ = try OptimizerSettings(kind: try TrainingData.optimizer(optimizer), learningRate: lr, momentum: momentum)
        guard epochs >= 1 else { throw TwoScaleError.invalid("--epochs", "\(epochs)", allowed: "give at least 1 epoch") }
        guard batch >= 1 else { throw TwoScaleError.invalid("--batch", "\(batch)", allowed: "the batch size must be ≥ 1") }
        guard (1...100).contains(seeds) else { throw TwoScaleError.invalid("--seeds", "\(seeds)", allowed: "give from 1 to 100 replicate seeds") }
        guard flatTolerance > 0, flatTolerance < 1 else {
            throw TwoScaleError.invalid("--flat-tolerance", "\(flatTolerance)", allowed: "give a fraction in (0, 1)")
        }
    }

    func run() async throws {
        let architectures = try architectures()
        let (lo, hi) = try Grid.parseInterval(box, flag: "--box")
        let act = activation
        let opt = try OptimizerSettings(kind: try TrainingData.optimizer(optimizer), learningRate: lr, momentum: momentum)

        let loaded = try TrainingData.load(data, samples: samples, labels: labels,
                                           standardize: standardize, seed: seed, architecture: architectures[0], shape: shape)
        guard let dataClasses = loaded.classes ?? loaded.labels.map({ ($0.max() ?? 0) + 1 }), loaded.labels != nil else {
            throw TwoScaleError.invalid("--data", data, allowed: "training needs labels (CSV: --labels last)")
        }
        guard dataClasses <= architectures[0].classes else {
            throw TwoScaleError.invalid("--archs", archs, allowed: "the data have \(dataClasses) classes; the output layer must have at least that many")
        }
        var train = loaded, held: Dataset? = nil
        if let f = holdout {
            let s = try HoldoutSplit.split(loaded, fraction: f, seed: seed)
            train = s.train
            held = s.holdout
        }
        guard batch <= train.count else {
            throw TwoScaleError.invalid("--batch", "\(batch)", allowed: "the batch size must not exceed the training set (\(train.count) samples)")
        }
        let n = boundN ?? train.count
        let epsN = try GeneralizationBound.epsilon(n: Double(n), gamma: gamma)
        guard fisherSamples <= train.count else {
            throw TwoScaleError.invalid("--fisher-samples", "\(fisherSamples)", allowed: "at most the training-set size (\(train.count))")
        }
        let fisherInputs = train.prefix(fisherSamples).inputs
        let training = try TrainingConfig(architecture: architectures[0], activation: act, optimizer: opt,
                                          batchSize: batch, epochs: epochs, seed: seed)
        var settings = ArchitectureComparison.Settings(
            activation: act, sigma2: sigma2, noiseSamples: noiseSamples, paths: budget.paths, inner: budget.inner,
            box: lo...hi, seed: seed, eps: epsN, zeta: zeta,
            threads: threads ?? Swift.max(1, ProcessInfo.processInfo.activeProcessorCount), training: training,
            estimator: estimator, traceDraws: traceDraws(architectures))
        settings.islandSweeps = islands.sweeps  // the default unless given, and given only to an estimator that reads it
        _ = try MonteCarloDesign(paths: budget.paths, inner: budget.inner, box: lo...hi, seed: seed, activation: act)

        let counts = architectures.map(\.parameterCount).sorted()
        let median = Double(counts[counts.count / 2])
        for a in architectures where Swift.abs(Double(a.parameterCount) - median) > 0.03 * median {
            Console.warn("\(a) has \(a.parameterCount) parameters, more than 3% from the median \(Int(median)): the comparison is not between equal sizes")
        }

        let comparison = ArchitectureComparison(settings: settings)
        let study = try await ComparisonStudy.run(
            architectures, seeds: seeds, comparison: comparison, fisherInputs: fisherInputs, train: train, holdout: held,
            epsN: epsN, n: n, flatTolerance: flatTolerance,
            progress: { i, r in
                let a = architectures[i]
                if !Console.quiet { Console.error("compare: [\(i + 1)/\(architectures.count)] \(a) (\(a.parameterCount) parameters), seed \(r + 1)/\(seeds)") }
            },
            measured: { e in
                if let w = NetworkReport.essWarning(e.degeneracy) { Console.warn("\(e.architecture): " + w) }
                if let w = NetworkReport.orderWarning(e.lowerAboveNested(eps: epsN)) { Console.warn("\(e.architecture): " + w) }
                if let w = NetworkReport.tailWarning(e.tailShortfall) { Console.warn("\(e.architecture): " + w) }
            })
        try output.emit(study) { Self.text(study) }
    }

    /// The readable summary of a comparison.
    static func text(_ r: ComparisonStudy) -> String {
        let summaries = r.summaries, settings = r.settings, flatTolerance = r.flatTolerance
        let seedCount = summaries.first?.entries.count ?? 0
        var human = "architecture comparison at ε_n = \(Fmt.num(r.epsN)) (n = \(r.n)), ζ = \(Fmt.num(settings.zeta)), \(settings.estimator.rawValue) estimator, K = \(settings.paths), J = \(settings.inner), \(settings.training.epochs) epochs, \(seedCount) seed(s) (mean ± sd)\n"
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
