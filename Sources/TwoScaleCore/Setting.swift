import Foundation

/// A setting of a computation, as the libraries' errors and notes name it. No library spells a
/// command-line flag: a message names a setting by interpolating it (`"use a smaller \(Setting.box)"`),
/// which writes a marker `⟪box⟫`; the command line renders every marker it prints as the flag that sets
/// it (TwoScaleCLI's `FlagSpelling`), and `Setting.plain` reads markers as the settings' names elsewhere.
public struct Setting: Hashable, Sendable, CustomStringConvertible {
    /// The setting's name: the identifier of its constant below.
    public let name: String
    init(_ name: String) { self.name = name }

    /// A setting outside the catalogue below, which a plug-in (an estimator's own `EstimatorOption`) names:
    /// its markers render like the catalogue's, and the command line spells it as its name after two dashes.
    public static func declare(_ name: String) -> Setting {
        declared.lock.lock()
        defer { declared.lock.unlock() }
        declared.names.insert(name)
        return Setting(name)
    }

    private final class Declared: @unchecked Sendable {
        let lock = NSLock()
        var names: Set<String> = []
    }

    private static let declared = Declared()

    static func named(_ name: String) -> Setting? {
        if let s = byName[name] { return s }
        declared.lock.lock()
        defer { declared.lock.unlock() }
        return declared.names.contains(name) ? Setting(name) : nil
    }

    /// The marker a message carries.
    public var description: String { Self.open + name + Self.close }

    static let open = "\u{27EA}", close = "\u{27EB}"

    /// `text` with every marker replaced by `spell(setting)` (a marker that names no setting is kept).
    public static func render(_ text: String, _ spell: (Setting) -> String) -> String {
        guard text.contains(open) else { return text }
        var out = "", rest = Substring(text)
        while let a = rest.range(of: open) {
            out += rest[..<a.lowerBound]
            let after = rest[a.upperBound...]
            guard let b = after.range(of: close) else { rest = rest[a.lowerBound...]; break }
            let name = String(after[..<b.lowerBound])
            out += named(name).map(spell) ?? String(rest[a.lowerBound..<b.upperBound])
            rest = after[b.upperBound...]
        }
        return out + rest
    }

    /// `text` with every marker read as the setting's name.
    public static func plain(_ text: String) -> String { render(text) { $0.name } }

    static let byName = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// The sample size n of Abbas et al.'s effective dimension.
    public static let abbasSampleSize = Setting("abbasSampleSize")
    /// The adversarial search.
    public static let adversarial = Setting("adversarial")
    /// The network's architecture.
    public static let architecture = Setting("architecture")
    /// The batch size.
    public static let batch = Setting("batch")
    /// Whether the layers have biases.
    public static let bias = Setting("bias")
    /// The bootstrap resamples.
    public static let bootstrap = Setting("bootstrap")
    /// The parameter box.
    public static let box = Setting("box")
    /// The folder a long sampler saves its progress in, and continues from.
    public static let checkpoint = Setting("checkpoint")
    /// The steps between checkpoints.
    public static let checkpointEvery = Setting("checkpointEvery")
    /// The layered toy's coupling γ.
    public static let coupling = Setting("coupling")
    /// The data source.
    public static let data = Setting("data")
    /// The confidence level δ.
    public static let delta = Setting("delta")
    /// The range of δ searched.
    public static let deltaRange = Setting("deltaRange")
    /// The toy model's dimension.
    public static let dimension = Setting("dimension")
    /// The study's folder.
    public static let studyFolder = Setting("studyFolder")
    /// The training epochs.
    public static let epochs = Setting("epochs")
    /// The covering radii ε.
    public static let epsilon = Setting("epsilon")
    /// The Monte Carlo estimator.
    public static let estimator = Setting("estimator")
    /// The toy model's family.
    public static let family = Setting("family")
    /// The Fisher route (Markov or output).
    public static let fisherRoute = Setting("fisherRoute")
    /// The bound's γ.
    public static let gamma = Setting("gamma")
    /// The largest greedy cover.
    public static let greedyMax = Setting("greedyMax")
    /// The holdout fraction.
    public static let holdout = Setting("holdout")
    /// J, the inner draws.
    public static let inner = Setting("inner")
    /// The islands' sweeps per step.
    public static let islandSweeps = Setting("islandSweeps")
    /// Stage 1's sweeps per step (the smc estimator's first layer).
    public static let stageOneSweeps = Setting("stageOneSweeps")
    /// Independence sweeps beside the random walk's (the smc estimator).
    public static let independenceMoves = Setting("independenceMoves")
    /// The adversarial search's iterations.
    public static let adversarialIterations = Setting("adversarialIterations")
    /// Joint tempering beside the toy's smc.
    public static let joint = Setting("joint")
    /// JSON output.
    public static let json = Setting("json")
    /// Where a CSV's labels are.
    public static let labels = Setting("labels")
    /// The constant toy's eigenvalues.
    public static let lambdas = Setting("lambdas")
    /// The loss.
    public static let loss = Setting("loss")
    /// The lower 2sED.
    public static let lower = Setting("lower")
    /// The learning rate.
    public static let learningRate = Setting("learningRate")
    /// The precision target's largest K.
    public static let maxPaths = Setting("maxPaths")
    /// The toy's Monte Carlo estimate.
    public static let monteCarlo = Setting("monteCarlo")
    /// The momentum.
    public static let momentum = Setting("momentum")
    /// The sample sizes n.
    public static let sampleSize = Setting("sampleSize")
    /// The noise draws R per input.
    public static let noiseSamples = Setting("noiseSamples")
    /// The normalisation.
    public static let normalize = Setting("normalize")
    /// The output folder.
    public static let output = Setting("output")
    /// The report's folder.
    public static let outputFolder = Setting("outputFolder")
    /// The outer moves per particle and step.
    public static let outerMoves = Setting("outerMoves")
    /// K, the paths.
    public static let paths = Setting("paths")
    /// The majorant-tilt moves per particle and step.
    public static let tiltMoves = Setting("tiltMoves")
    /// The smc estimator's independent whole runs (chains), joined.
    public static let chains = Setting("chains")
    /// The study's plan.
    public static let plan = Setting("plan")
    /// The population sample.
    public static let population = Setting("population")
    /// The population Fisher (inputs and noise averaged) in a store's tail.
    public static let populationFisher = Setting("populationFisher")
    /// The random parameter draws.
    public static let randomDraws = Setting("randomDraws")
    /// The inputs of the generic rank.
    public static let rankSamples = Setting("rankSamples")
    /// Continuing a store.
    public static let resume = Setting("resume")
    /// The number of inputs N.
    public static let samples = Setting("samples")
    /// The seed.
    public static let seed = Setting("seed")
    /// The inputs' image shape.
    public static let shape = Setting("shape")
    /// The shard i/n.
    public static let shard = Setting("shard")
    /// The noise variance σ².
    public static let noiseVariance = Setting("noiseVariance")
    /// The adversarial search's starts.
    public static let adversarialStarts = Setting("adversarialStarts")
    /// The adversarial search's step.
    public static let adversarialStep = Setting("adversarialStep")
    /// The spectra store.
    public static let store = Setting("store")
    /// The student architecture.
    public static let student = Setting("student")
    /// Joint tempering's sweeps per step.
    public static let sweeps = Setting("sweeps")
    /// The precision target.
    public static let targetWidth = Setting("targetWidth")
    /// The teacher architecture.
    public static let teacher = Setting("teacher")
    /// The teacher's temperature.
    public static let temperature = Setting("temperature")
    /// The layered toy's threshold.
    public static let threshold = Setting("threshold")
    /// The draws for the trace normalisation.
    public static let traceDraws = Setting("traceDraws")
    /// The trials.
    public static let trials = Setting("trials")
    /// The layered toy's unit sizes.
    public static let unitSize = Setting("unitSize")
    /// The layered toy's units.
    public static let units = Setting("units")
    /// The weights file.
    public static let weights = Setting("weights")
    /// The meso-scale exponent ζ.
    public static let zeta = Setting("zeta")

    /// The hidden layers' activation.
    public static let activation = Setting("activation")
    /// Whether the inputs are standardised.
    public static let standardize = Setting("standardize")
    /// The theorem's constant C.
    public static let constantC = Setting("constantC")
    /// The theorem's constant H.
    public static let constantH = Setting("constantH")
    /// The theorem's constant K.
    public static let constantK = Setting("constantK")

    /// Every setting above.
    public static let all: [Setting] = [
        .abbasSampleSize, .adversarial, .architecture, .batch, .bias, .bootstrap, .box, .chains, .checkpoint, .checkpointEvery, .coupling,
        .data, .delta, .deltaRange, .dimension, .studyFolder, .epochs, .epsilon, .estimator, .family, .fisherRoute,
        .gamma, .greedyMax, .holdout, .independenceMoves, .inner, .islandSweeps, .stageOneSweeps, .adversarialIterations, .joint, .json, .labels,
        .lambdas, .loss, .lower, .learningRate, .maxPaths, .monteCarlo, .momentum, .sampleSize, .noiseSamples,
        .normalize, .output, .outputFolder, .outerMoves, .paths, .plan, .population, .populationFisher, .randomDraws, .rankSamples,
        .resume, .samples, .seed, .shape, .shard, .noiseVariance, .adversarialStarts, .adversarialStep, .store,
        .student, .sweeps, .targetWidth, .teacher, .temperature, .threshold, .tiltMoves, .traceDraws, .trials, .unitSize, .units,
        .weights, .zeta, .activation, .standardize, .constantC, .constantH, .constantK,
    ]
}
