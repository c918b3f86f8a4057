import ArgumentParser
import Foundation
import Fisher
import Estimation
import NetworkEstimators
import Networks
import SpectraStore
import Training
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

extension FisherKind: ExpressibleByArgument {}
extension Activation: ExpressibleByArgument {}
extension LabelColumn: ExpressibleByArgument {}

// One option group per concern — the model, the data, the training, the estimator, the output
// (`OutputOptions`) — each declared once and taken by every command that has that concern's flags, with
// its validation in the group's `validate()` (ArgumentParser runs it while parsing, before the command's):
// the same mistake gets the same message from every command. Where the rule is the library's, the group
// calls the library (`Architecture(parsing:)`, `DataSource.parseShape`, `OptimizerSettings`,
// `TrainingConfig`, `Trainer.validate`, `EstimatorRegistry.foreignSetting`). A command's own defaults (ed reads
// 100 synthetic inputs by default, train needs --data, gap trains with lr 1e-2, …) are the group's type
// parameter: an enum of the command's conforming to the group's `…Defaults` protocol.

// MARK: - Model

/// The network: `--arch`, `--bias`, `--activation` (`ed`, `fisher`, `train`). `compare` (`--archs`, a
/// list) and `gap` (`--teacher`, `--student`) spell their architectures otherwise and have no `--bias`;
/// they parse them through the same `Architecture(parsing:flag:)`.
struct ModelOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Layer sizes (54-16-7) or image layers (28x28x1-conv8k5-maxpool2-10); docs/GUIDE.md.", valueName: "arch"))
    var arch: String

    @Flag(help: "Biases on every layer, as nn.Linear (default: none).")
    var bias = false

    @Option(help: "Hidden activation.")
    var activation: Activation = .relu

    func validate() throws { _ = try architecture() }

    /// The architecture `--arch` and `--bias` describe (the library's parser and its messages).
    func architecture() throws -> Architecture { try Architecture(parsing: arch, bias: bias) }
}

/// A command's default `--sigma2`: nil where the Markov FIM needs it given (`fisher`).
protocol NoiseDefaults { static var sigma2: Double? { get } }
extension NoiseDefaults { static var sigma2: Double? { 0.1 } }

/// The Markov FIM's hidden-layer noise: `--sigma2`, `--noise-samples` (`ed`, `fisher`, `compare`).
struct NoiseOptions<Defaults: NoiseDefaults>: ParsableArguments {
    @Option(name: .customLong("sigma2"), help: ArgumentHelp(
        "σ² > 0 of the Gaussian hidden-layer noise (markov"
            + (Defaults.sigma2.map { "; docs/METHOD.md §10). (default: \($0))" } ?? ", required there; docs/METHOD.md §10).")))
    var sigma2Given: Double?

    @Option(name: .customLong("noise-samples"), help: "R: noise draws per input for the hidden states (markov; common random numbers).")
    var noiseSamples: Int = 1

    /// σ²: as given, else the command's default (nil: none).
    var sigma2: Double? { sigma2Given ?? Defaults.sigma2 }

    /// MarkovFisher's own rules, checked before any data is read.
    func validate() throws {
        if let s = sigma2, !(s.isFinite && s > 0) {
            throw TwoScaleError.invalid("--sigma2", "\(s)", allowed: "the noise variance σ² must be a finite number > 0")
        }
        guard noiseSamples >= 1 else {
            throw TwoScaleError.invalid("--noise-samples", "\(noiseSamples)", allowed: "the number of noise draws R must be ≥ 1")
        }
    }
}

/// The Fisher matrix of the model: `--fisher` and the Markov FIM's noise (`ed`, `fisher`).
struct FisherModelOptions<Defaults: NoiseDefaults>: ParsableArguments {
    @Option(help: "markov: stochastic network; output: deterministic.")
    var fisher: FisherKind = .markov

    @OptionGroup var noise: NoiseOptions<Defaults>

    func validate() throws {
        if fisher == .markov && noise.sigma2 == nil {
            throw TwoScaleError.missing("--sigma2", "--fisher markov needs the noise variance, e.g. --sigma2 0.1")
        }
    }

    /// The Fisher estimator of `architecture` on `inputs` (noise seeded by `seed`).
    func model(architecture: Architecture, activation: Activation, inputs: Matrix, seed: UInt64) throws -> any FisherModel {
        switch fisher {
        case .markov:
            return try MarkovFisher(architecture: architecture, activation: activation, data: inputs,
                                    sigma2: noise.sigma2 ?? 1, noiseSamples: noise.noiseSamples, noiseSeed: seed)
        case .output:
            return try OutputFisher(architecture: architecture, activation: activation, data: inputs)
        }
    }
}

// MARK: - Data

/// A command's defaults for the data flags.
protocol DataDefaults {
    /// `--data` when not given; nil: the flag is required.
    static var data: String? { get }
    /// `--samples` when not given, as an upper limit (a smaller file gives all its inputs, with a note); nil:
    /// every input (synthetic sources then need the flag).
    static var samples: Int? { get }
    static var labels: LabelColumn { get }
}
extension DataDefaults {
    static var data: String? { nil }
    static var samples: Int? { nil }
    static var labels: LabelColumn { .last }
}

/// The data: `--data`, `--samples`, `--labels`, `--standardize`, `--shape` (`ed`, `fisher`, `train`,
/// `compare`), loaded through `DataSource.load`.
struct DataOptions<Defaults: DataDefaults>: ParsableArguments {
    static var dataHelp: ArgumentHelp {
        ArgumentHelp("csv:PATH, idx:…, fashion-mnist[:test] or synthetic:… (docs/FORMATS.md).", valueName: "source")
    }

    @Option(help: Self.dataHelp)
    var data: String

    @Option(name: .customLong("samples"), help: ArgumentHelp(
        "N: use the first N inputs" + (Defaults.samples.map { " (default: all, at most \($0))." } ?? " (required for synthetic sources).")))
    var samplesGiven: Int?

    @Option(help: "CSV label column (never a feature; training needs one).")
    var labels: LabelColumn = Defaults.labels

    @Flag(help: "Z-score every input feature over the loaded samples (constant features become 0).")
    var standardize = false

    @Option(help: ArgumentHelp("One input's shape, e.g. 28x28x1, for CSV rows that are images (channels fastest; docs/GUIDE.md).", valueName: "HxWxC"))
    var shape: String?

    /// `--data` is required unless the command has a default source.
    init() {
        if let source = Defaults.data { _data = Option(wrappedValue: source, help: Self.dataHelp) }
    }

    /// N: as given, else the command's default (nil: every input).
    var samples: Int? { samplesGiven ?? Defaults.samples }

    func validate() throws {
        // DataSource.load's rule, checked before any file is read.
        if let n = samples, n < 1 { throw TwoScaleError.invalid("--samples", "\(n)", allowed: "the number of samples must be ≥ 1") }
        _ = try declaredShape()
    }

    func declaredShape() throws -> ImageShape? { try shape.map { try DataSource.parseShape($0) } }

    /// Loads `--data` for `architecture`. Without `--samples`, a command's default N is an upper limit, and a
    /// source with fewer inputs gives all of them, with a note saying how many.
    func load(architecture: Architecture, seed: UInt64) throws -> Dataset {
        let capped = samplesGiven == nil && Defaults.samples != nil
        let set = try load(data, samples: samples, architecture: architecture, seed: seed, flag: "--data", samplesAtMost: capped)
        if capped, let n = samples, set.count < n, !TwoScaleMain.silentRank {
            Console.note("--samples not given: using all \(set.count) inputs of \(data) (the default is at most \(n))")
        }
        return set
    }

    /// Loads another source (`train --test-data`) with the same labels, scaling and shape.
    func load(_ source: String, samples: Int?, architecture: Architecture, seed: UInt64, flag: String,
              samplesAtMost: Bool = false) throws -> Dataset {
        try DataSource.load(source, samples: samples, labels: labels, standardize: standardize, seed: seed,
                            inputSize: architecture.inputSize, inputShape: architecture.inputShape,
                            declaredShape: try declaredShape(), flag: flag, samplesAtMost: samplesAtMost)
    }
}

// MARK: - Training

/// A command's defaults for the training flags.
protocol TrainingDefaults {
    static var learningRate: Double { get }
    static var batch: Int { get }
    static var epochs: Int { get }
    /// How the command treats a batch larger than the training set (appended to `--batch`'s help).
    static var batchNote: String { get }
}
extension TrainingDefaults {
    static var learningRate: Double { 1e-3 }
    static var batch: Int { 64 }
    static var batchNote: String { "at most the training-set size" }
}

/// The optimiser and its schedule: `--optimizer`, `--lr`, `--momentum`, `--batch`, `--epochs` (`train`,
/// `gap`, `compare`); the rules are `OptimizerSettings`' and `TrainingConfig`'s.
struct TrainingOptions<Defaults: TrainingDefaults>: ParsableArguments {
    @Option(help: "Optimizer: adam or sgd (with --momentum).")
    var optimizer: String = "adam"

    @Option(help: "Learning rate η > 0.")
    var lr: Double = Defaults.learningRate

    @Option(help: "SGD momentum μ ∈ [0, 1).")
    var momentum: Double = 0.9

    @Option(help: ArgumentHelp("Mini-batch size ≥ 1, \(Defaults.batchNote)."))
    var batch: Int = Defaults.batch

    @Option(help: "Training epochs (≥ 1).")
    var epochs: Int = Defaults.epochs

    func validate() throws { _ = try settings() }

    func settings() throws -> OptimizerSettings {
        try OptimizerSettings(kind: try TrainingData.optimizer(optimizer), learningRate: lr, momentum: momentum)
    }

    /// The training configuration for `architecture` (checks the batch size and the epochs).
    func config(architecture: Architecture, activation: Activation, seed: UInt64, initialization: Initialization = .glorot,
                checkpointEverySteps: Int? = nil) throws -> TrainingConfig {
        try TrainingConfig(architecture: architecture, activation: activation, optimizer: try settings(), batchSize: batch,
                           epochs: epochs, seed: seed, initialization: initialization, checkpointEverySteps: checkpointEverySteps)
    }

    /// The library's rules for training data (features, labels in range, not empty): what `train` and
    /// `compare` say about data without labels.
    func checkData(_ data: Dataset, config: TrainingConfig, name: String = "--data") throws {
        try Trainer(config: config).validate(data, name: name)
    }
}

// MARK: - Estimator

/// A command's estimator defaults.
protocol EstimatorDefaults {
    /// Whose default budget applies (ed's, compare's).
    static var use: EstimatorUse { get }
    /// `--estimator` when not given; nil: the run chooses (ed: smc, or plain for its plain-only flags).
    static var estimator: EstimatorKind? { get }
    static var estimatorHelp: String { get }
}

/// The Monte Carlo estimator: `--estimator`, `--paths`, `--inner` and the estimator-specific
/// `--trace-draws`, `--island-sweeps` (`ed`, `compare`). `toy --mc` runs the toy models' own estimators
/// (`ToyMonteCarloOptions`: no `--island-sweeps`, its `--inner` a setting of `--family layered`) and
/// shares the rule for estimator-specific flags, `EstimatorFlags.refuseForeign`.
struct EstimatorOptions<Defaults: EstimatorDefaults>: ParsableArguments {
    @Option(name: .customLong("estimator"), help: ArgumentHelp(Defaults.estimatorHelp))
    var estimatorGiven: EstimatorKind?

    @Option(help: ArgumentHelp("K: plain: paths (default \(PlainEstimator.defaultBudget(Defaults.use).paths)); "
        + "smc: outer particles (\(SMCEstimator.defaultBudget(Defaults.use).paths)); tempering: particles per sampler (\(TemperingEstimator.defaultBudget(Defaults.use).paths))."))
    var paths: Int?

    @Option(help: ArgumentHelp("J: plain: inner draws per path and layer (\(PlainEstimator.defaultBudget(Defaults.use).inner)); "
        + "smc: island size ≥ 8 (\(SMCEstimator.defaultBudget(Defaults.use).inner)); tempering: samplers (\(TemperingEstimator.defaultBudget(Defaults.use).inner))."))
    var inner: Int?

    @Option(help: ArgumentHelp("smc, tempering: uniform draws of θ for ĉ (default d/2, ≥ 1000; d the largest network's).",
                               valueName: "n"))
    var traceDraws: Int?

    @Option(help: ArgumentHelp("smc: Metropolis–Hastings sweeps per island step (default 4); units with many weights may need more.",
                               valueName: "n"))
    var islandSweeps: Int?

    @Option(help: ArgumentHelp("smc: N SMC² redraws per particle and step (0: off).", valueName: "N"))
    var outerMoves: Int?

    @Option(help: ArgumentHelp("smc: N majorant-tilt moves per particle-step (0: off).", valueName: "N"))
    var tiltMoves: Int?

    @Option(help: ArgumentHelp("smc: R independent whole runs, averaged (default 1).", valueName: "R"))
    var chains: Int?

    @Option(name: .customLong("stage1-sweeps"),
            help: ArgumentHelp("smc: Metropolis–Hastings sweeps per first-layer step (default 20); wide inputs need about one per input.",
                               valueName: "n"))
    var stageOneSweeps: Int?

    @Flag(help: "smc: independence sweeps fitted to a pilot run (off).")
    var independenceMoves = false

    /// The flags of a registered estimator's own options that no command declares (a plug-in's: its
    /// `EstimatorOption`s, spelled by `FlagSpelling`), as the parser left them: `--flag value` or `--flag=value`.
    @Argument(parsing: .allUnrecognized, help: .hidden)
    var pluginWords: [String] = []

    /// The estimator: as given, else the command's default (nil: the run chooses).
    var estimator: EstimatorKind? { (estimatorGiven ?? Defaults.estimator).map(EstimatorRegistry.current) }

    /// Notes a former estimator name given (`EstimatorRegistry.renamed`).
    func noteRename() {
        if let g = estimatorGiven, let note = EstimatorRegistry.renameNote(g) { Console.note(note) }
    }

    func validate() throws { _ = try pluginSettings() }

    /// The plug-in options' values in `pluginWords`; any other word is an error, as the parser's own.
    func pluginSettings() throws -> [Setting: Int] {
        var out: [Setting: Int] = [:]
        for w in try FlagSpelling.pluginValues(pluginWords, settings: EstimatorRegistry.all.flatMap { $0.options.map(\.setting) }) {
            guard let v = Int(w.value) else { throw TwoScaleError.invalid(w.flag, w.value, allowed: "a whole number") }
            out[w.setting] = v
        }
        return out
    }

    /// The estimator's own settings given: `--trace-draws`, `--island-sweeps`, `--outer-moves`, `extra` (a
    /// command's own flags of that kind), and a plug-in's.
    func settings(_ extra: [Setting: Int?] = [:]) throws -> EstimatorSettings {
        var s = EstimatorSettings(try pluginSettings())
        let fixed: [Setting: Int?] = [.traceDraws: traceDraws, .islandSweeps: islandSweeps, .outerMoves: outerMoves,
                                      .stageOneSweeps: stageOneSweeps, .independenceMoves: independenceMoves ? 1 : nil,
                                      .tiltMoves: tiltMoves, .chains: chains]
        for (k, v) in fixed.merging(extra, uniquingKeysWith: { a, _ in a }) { if let v { s[k] = v } }
        return s
    }

    /// The estimator-specific settings given, by name (each some estimator's own, `NetworkEstimator.settings`).
    var given: [Setting] { ((try? settings()) ?? EstimatorSettings()).given }

    /// K and J: as given, else `estimator`'s defaults for the command.
    func budget(_ estimator: any NetworkEstimator.Type) -> (paths: Int, inner: Int) {
        let d = estimator.defaultBudget(Defaults.use)
        return (paths ?? d.paths, inner ?? d.inner)
    }
}

/// Estimator-specific flags (`--bootstrap`, `--trace-draws`, `--island-sweeps`) given to a run of
/// another estimator: an error naming the estimator they belong to, never ignored — one message for
/// `ed`, `compare` and `toy --mc`.
enum EstimatorFlags {
    /// How the run came by its estimator.
    enum Choice {
        /// `--estimator` given.
        case given
        /// The command's default.
        case byDefault
        /// Chosen for these flags, which only it serves (ed: plain for --store, --shard, …).
        case chosenFor([String])
    }

    static func refuseForeign(_ given: [Setting], kind: EstimatorKind, choice: Choice) throws {
        guard let (setting, owner) = EstimatorRegistry.foreignSetting(given, for: kind) else { return }
        let flag = FlagSpelling.flag(for: setting)
        let head = "\(flag) is a setting of the \(owner) estimator, and this run uses \(kind)"
        switch choice {
        case .chosenFor(let features):
            throw TwoScaleError.usage(head + " (chosen for \(features.joined(separator: ", "))): drop \(flag), or run \(owner) without the plain-only flags")
        case .byDefault:
            throw TwoScaleError.usage(head + " (the default): drop \(flag), or add --estimator \(owner)")
        case .given:
            throw TwoScaleError.usage(head + ": drop \(flag), or add --estimator \(owner)")
        }
    }
}
