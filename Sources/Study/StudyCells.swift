import Bounds
import Fisher
import Experiments
import Foundation
import Statistics
import Estimation
import Networks
import RandomStreams
import SpectraStore
import Training
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// The Fisher-side measures of one (data set, architecture): the 2sED at ε_n by the smc estimator with
/// its 95% interval and certified bracket, the lower 2sED with its bracket, the Abbas et al. ED at n,
/// and the generic Fisher rank. They depend on the first N training inputs, not on training.
public struct FisherCell: Codable, Sendable, Equatable {
    public var dataset: String
    public var architecture: String
    public var parameters: Int
    /// n (the training-set size) and ε_n.
    public var n: Int
    public var eps: Double
    public var dZeta: Double
    public var ci95: [Double]
    public var bracket: [Double]
    public var dZetaLower: Double
    public var bracketLower: [Double]
    /// The outer ESS per later stage (of K).
    public var ess: [Double]
    public var paths: Int
    public var abbasED: Double
    /// The generic rank's bound, and whether a witness proved it (else the largest rank seen).
    public var genericRank: Int
    public var genericRankProved: Bool
    public var seconds: Double
    /// The interval `ed` reports for the 2sED and the lower 2sED, and its source ("sampled" or "bracket";
    /// `ReportedInterval`). Nil in cells written before they were recorded: the bracket is then used.
    public var interval: [Double]? = nil
    public var intervalSource: String? = nil
    public var intervalLower: [Double]? = nil
    public var intervalLowerSource: String? = nil

    enum CodingKeys: String, CodingKey {
        case dataset, architecture, parameters, n, eps, ci95, bracket, ess, paths, seconds, interval
        case dZeta = "d_zeta", dZetaLower = "d_zeta_lower", bracketLower = "bracket_lower", abbasED = "abbas_ed"
        case genericRank = "generic_rank", genericRankProved = "generic_rank_proved"
        case intervalSource = "interval_source", intervalLower = "interval_lower", intervalLowerSource = "interval_lower_source"
    }

    /// Whether every interval and bracket is a pair, as a finished cell's are (the analysis reads both ends).
    public var hasPairs: Bool {
        ([ci95, bracket, bracketLower] + [interval, intervalLower].compactMap { $0 }).allSatisfy { $0.count == 2 }
    }

    /// The law the study's bootstrap redraws this cell's 2sED (or lower 2sED) from: normal around the
    /// estimate with the sampled interval's half-width / 1.96 as sd where the reported interval is sampled,
    /// else uniform on the certified bracket.
    public func redraw(lower: Bool) -> Redraw {
        let source = lower ? intervalLowerSource : intervalSource
        if source == ReportedInterval.Source.sampled.rawValue, let i = lower ? intervalLower : interval, i.count == 2 {
            return .normal(mean: lower ? dZetaLower : dZeta, sd: (i[1] - i[0]) / (2 * 1.959963984540054))
        }
        let b = lower ? bracketLower : bracket
        return .uniform(lo: b[0], hi: b[1])
    }
}

/// One trained model and seed: the targets (final training loss; test − training error) and the
/// measures that need the trained θ̂.
public struct TrainingCell: Codable, Sendable, Equatable {
    public var dataset: String
    public var architecture: String
    public var learningRate: Double
    public var batchSize: Int
    public var seed: Int
    public var trainLoss: Double
    public var trainError: Double
    public var testLoss: Double
    public var testError: Double
    /// log of the ℓ₂ path norm, log Π‖W‖₂, Jiang's Fisher–Rao norm, the magnitude-aware PAC-Bayes
    /// flatness 1/α'² (and whether α' hit its cap; α' = 0, where the criterion fails at ε alone, is
    /// stored as 10³⁰⁰ so that it ranks sharpest), ‖θ̂ − θ₀‖₂.
    public var logPathNorm: Double
    public var logSpectralProduct: Double
    public var fisherRao: Double
    public var flatness: Double
    public var flatnessSaturated: Bool
    public var distanceFromInit: Double
    public var seconds: Double

    enum CodingKeys: String, CodingKey {
        case dataset, architecture, seed, flatness, seconds
        case learningRate = "learning_rate", batchSize = "batch_size", trainLoss = "train_loss", trainError = "train_error"
        case testLoss = "test_loss", testError = "test_error", logPathNorm = "log_path_norm", logSpectralProduct = "log_spectral_product"
        case fisherRao = "fisher_rao", flatnessSaturated = "flatness_saturated", distanceFromInit = "distance_from_init"
    }

    /// The generalisation gap in error: test error − training error.
    public var gap: Double { testError - trainError }
}

/// Computes cells. Every random choice comes from the grid's seed and the cell's indices, so a cell's
/// result does not depend on the order, the thread count or which other cells ran.
public struct StudyCellRunner: Sendable {
    public let grid: StudyGrid
    /// Threads for one Fisher cell's estimator.
    public let threads: Int
    /// The grid's architectures, in grid order (parsed once).
    let architectures: [Architecture]

    public init(grid: StudyGrid, threads: Int) throws {
        self.grid = grid
        self.threads = threads
        architectures = try grid.architectures.map(\.architecture)
    }

    static let fisherStream: UInt64 = 0x5354_4446  // "STDF"
    static let trainStream: UInt64 = 0x5354_4454  // "STDT"

    func seed(_ stream: UInt64, _ indices: [Int]) -> UInt64 {
        var rng = Xoshiro256(seed: grid.seed, stream: [stream] + indices.map(UInt64.init))
        return rng.next()
    }

    /// ε_n with n the data set's training-set size.
    public func epsN(_ d: StudyDataset) throws -> Double {
        try GeneralizationBound.epsilon(n: Double(d.trainSamples), gamma: grid.fisher.gamma)
    }

    public func fisher(dataset di: Int, architecture ai: Int, data: StudyData) async throws -> FisherCell {
        let f = grid.fisher, d = grid.datasets[di]
        let a = architectures[ai]
        let clock = ContinuousClock(), t0 = clock.now
        let seed = self.seed(Self.fisherStream, [di, ai])
        let model = try MarkovFisher(architecture: a, activation: .relu, data: data.train.prefix(f.samples).inputs, sigma2: f.sigma2,
                                     noiseSamples: f.noiseSamples, noiseSeed: seed)
        let eps = try epsN(d)
        let estimator = try EstimatorRegistry.estimator(.smc)
        let defaults = estimator.defaultBudget(.ed)
        let budget = EstimatorBudget(paths: f.paths ?? defaults.paths, inner: f.inner ?? defaults.inner)
        try estimator.checkBudget(budget, layers: a.parametricLayers.count)
        // The run's settings as `ed` records them, so that the estimate carries ed's report, and with it the
        // interval ed reports (sampled or bracket), which the study's bootstrap redraws from.
        let settings = NetworkRunConfiguration(fisher: .markov, arch: a.notation, bias: a.bias, activation: .relu, box: f.boxRange,
                                               seed: seed, data: d.train, samples: f.samples, labels: "none", standardize: false,
                                               sigma2: f.sigma2, noiseSamples: f.noiseSamples)
        let problem = EstimatorProblem(model: model, box: f.boxRange, seed: seed, budget: budget, configuration: settings)
        let request = MeasurementRequest(eps: [eps], zeta: f.zeta, lower: true, normalization: .trace, bootstrap: 0, threads: threads)
        let e = try await estimator.estimate(problem, request: request, progress: { _ in })
        guard let p = e.points.first, let b = p.bracket, let ci = p.ci95, let lower = p.dZetaLower else {
            throw TwoScaleError.failure("study: the smc estimator gave no estimate, interval or bracket for \(a.notation) on \(d.name)")
        }
        let abbas = try await abbasED(model: model, seed: seed, n: d.trainSamples)
        let rank = try GenericRank(model: model, box: f.boxRange, seed: seed)
        let seconds = (clock.now - t0) / .seconds(1)
        var cell = FisherCell(dataset: d.name, architecture: a.notation, parameters: a.parameterCount, n: d.trainSamples, eps: eps,
                              dZeta: p.dZeta, ci95: [ci.lowerBound, ci.upperBound], bracket: [b.dZeta.lowerBound, b.dZeta.upperBound],
                              dZetaLower: lower, bracketLower: [b.dZetaLower.lowerBound, b.dZetaLower.upperBound], ess: p.ess,
                              paths: budget.paths, abbasED: abbas, genericRank: rank.proved ? rank.bound : rank.witness,
                              genericRankProved: rank.proved, seconds: seconds)
        cell.interval = p.interval.map { [$0.range.lowerBound, $0.range.upperBound] }
        cell.intervalSource = p.interval?.source.rawValue
        cell.intervalLower = p.intervalLower.map { [$0.range.lowerBound, $0.range.upperBound] }
        cell.intervalLowerSource = p.intervalLower?.source.rawValue
        try cell.checkFinite()
        return cell
    }

    /// The Abbas et al. ED at n from `abbasPaths` uniform draws of θ (the Markov FIM's own spectra).
    func abbasED(model: MarkovFisher, seed: UInt64, n: Int) async throws -> Double {
        let design = try MonteCarloDesign(paths: grid.fisher.abbasPaths, inner: 1, box: grid.fisher.boxRange, seed: seed, activation: .relu)
        let paths = try await MonteCarlo.run(model: model, design: design, paths: Array(0..<design.paths), threads: threads)
        let spectra = try MonteCarlo.layeredSpectra(paths, blockDimensions: model.blockDimensions)
        let scale = try LayeredEstimator(spectra: spectra, normalization: .trace).scale
        let perPath = (0..<spectra.paths).map { k in spectra.own.map { $0[k] } }
        return try AbbasED.dimension(spectra: perPath, scale: scale, n: Double(n), gamma: grid.fisher.gamma)
    }

    /// The flatness search's settings (Jiang et al.: error criterion, 10% increase).
    static let flatnessDraws = 10, flatnessIterations = 12

    public func train(dataset di: Int, architecture ai: Int, setting si: Int, seed r: Int, data: StudyData) throws -> TrainingCell {
        let d = grid.datasets[di]
        let a = architectures[ai]
        let (lr, batch) = grid.trainingSettings[si]
        let clock = ContinuousClock(), t0 = clock.now
        // One seed per (data set, architecture, seed): every (lr, batch) starts from the same θ₀ and shuffles.
        let seed = self.seed(Self.trainStream, [di, ai, r])
        let config = try TrainingConfig(architecture: a, activation: .relu,
                                        optimizer: OptimizerSettings(kind: .adam, learningRate: lr),
                                        batchSize: batch, epochs: grid.epochs, seed: seed, evaluateEpochs: false)
        var initial: Network?
        let result = try Trainer(config: config).train(data: data.train) { cp in if initial == nil { initial = cp.network } }
        let net = result.network
        guard let y = data.train.labels, let yt = data.test.labels else { throw TwoScaleError.failure("study: data without labels") }
        let tr = net.crossEntropy(inputs: data.train.inputs, labels: y)
        // A teacher task's test side is its population risk in the labels' expectation.
        let te = data.population.map { p -> (loss: Double, accuracy: Double) in
            let r = p.risk(of: net)
            return (r.crossEntropy, 1 - r.zeroOne)
        } ?? net.crossEntropy(inputs: data.test.inputs, labels: yt)
        let theta0 = initial ?? net
        var dist = 0.0
        for (u, v) in zip(net.parameters, theta0.parameters) { dist += (u - v) * (u - v) }
        let flat = try MagnitudeFlatness(draws: Self.flatnessDraws, iterations: Self.flatnessIterations, seed: seed)
            .measure(net, inputs: data.train.inputs, labels: y)
        let cell = TrainingCell(dataset: d.name, architecture: a.notation, learningRate: lr, batchSize: batch, seed: r,
                                trainLoss: tr.loss, trainError: 1 - tr.accuracy, testLoss: te.loss, testError: 1 - te.accuracy,
                                logPathNorm: Foundation.log(ArchitectureComparison.pathNorm(net)),
                                logSpectralProduct: try ComplexityMeasures.logProductOfSpectralNorms(net),
                                fisherRao: try ComplexityMeasures.fisherRao(net, inputs: data.train.inputs, labels: y).jiang,
                                flatness: Swift.min(flat.measure, 1e300), flatnessSaturated: flat.saturated,
                                distanceFromInit: dist.squareRoot(), seconds: (clock.now - t0) / .seconds(1))
        try cell.checkFinite()
        return cell
    }
}

extension FisherCell {
    func checkFinite() throws {
        let all = [dZeta, dZetaLower, abbasED, eps] + ci95 + bracket + bracketLower
        guard all.allSatisfy(\.isFinite) else {
            throw TwoScaleError.failure("study: a Fisher measure of \(architecture) on \(dataset) is not finite")
        }
    }
}

extension TrainingCell {
    func checkFinite() throws {
        let all = [trainLoss, trainError, testLoss, testError, logPathNorm, logSpectralProduct, fisherRao, flatness, distanceFromInit]
        guard all.allSatisfy(\.isFinite) else {
            throw TwoScaleError.failure("study: a measure of \(architecture) (lr \(learningRate), batch \(batchSize), seed \(seed)) on \(dataset) is not finite (training diverged?)")
        }
    }
}
