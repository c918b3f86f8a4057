import Foundation
import Networks
import TwoScaleCore
import TwoScaleNumerics

/// Model selection before training, tested after it: for each architecture, the 2sED and lower 2sED
/// at one ε (typically ε_n for the training-set size n, docs/METHOD.md §15) from the Monte Carlo design of §13,
/// and the training loss after training with the same optimizer, data and budget. The paper's claim is
/// that the (lower) 2sED ranks architectures of equal size like their training loss does; the rank
/// correlation is left to the caller (`KendallTau`).
public struct ArchitectureComparison: Sendable {
    public struct Settings: Sendable {
        public var activation: Activation
        /// σ² of the Gaussian hidden layers and R noise draws (Markov FIM).
        public var sigma2: Double
        public var noiseSamples: Int
        /// Monte Carlo design (K, J, box, seed).
        public var paths: Int
        public var inner: Int
        public var box: ClosedRange<Double>
        public var seed: UInt64
        /// ε at which the 2sEDs are evaluated, and ζ.
        public var eps: Double
        public var zeta: Double
        public var threads: Int
        public var training: TrainingConfig

        public init(activation: Activation, sigma2: Double, noiseSamples: Int, paths: Int, inner: Int,
                    box: ClosedRange<Double>, seed: UInt64, eps: Double, zeta: Double, threads: Int, training: TrainingConfig) {
            self.activation = activation
            self.sigma2 = sigma2
            self.noiseSamples = noiseSamples
            self.paths = paths
            self.inner = inner
            self.box = box
            self.seed = seed
            self.eps = eps
            self.zeta = zeta
            self.threads = threads
            self.training = training
        }
    }

    /// One architecture's measurements.
    public struct Entry: Sendable {
        public var architecture: Architecture
        public var dZeta: Double
        public var dZetaLower: Double
        public var dZetaJoint: Double
        /// ESS of each stage's weights at ε.
        public var ess: [Double]
        public var trainLoss: Double
        public var trainAccuracy: Double?
        public var holdoutLoss: Double?
        public var holdoutAccuracy: Double?
        public var spectraSeconds: Double
        public var trainingSeconds: Double
    }

    public let settings: Settings

    public init(settings: Settings) { self.settings = settings }

    /// Measures one architecture: spectra on `fisherInputs` (N × n_0), then training on `train`.
    public func measure(_ a: Architecture, fisherInputs: Matrix, train: Dataset, holdout: Dataset?) async throws -> Entry {
        let s = settings
        let clock = ContinuousClock()
        let t0 = clock.now
        let model = try MarkovFisher(architecture: a, activation: s.activation, data: fisherInputs,
                                     sigma2: s.sigma2, noiseSamples: s.noiseSamples, noiseSeed: s.seed)
        let design = try MonteCarloDesign(paths: s.paths, inner: s.inner, box: s.box, seed: s.seed, activation: s.activation)
        let rows = try await MonteCarlo.run(model: model, design: design, paths: Array(0..<s.paths), threads: s.threads)
        let spectra = try MonteCarlo.layeredSpectra(rows, blockDimensions: model.blockDimensions)
        let p = try LayeredEstimator(spectra: spectra, normalization: .trace).points(eps: [s.eps], zeta: s.zeta)[0]
        let t1 = clock.now
        var config = s.training
        config = try TrainingConfig(architecture: a, activation: s.activation, optimizer: config.optimizer,
                                    batchSize: config.batchSize, epochs: config.epochs, seed: config.seed,
                                    initialization: config.initialization, evaluateEpochs: false)
        let result = try Trainer(config: config).train(data: train, holdout: holdout)
        let final = result.network.crossEntropy(inputs: train.inputs, labels: train.labels ?? [])
        let ho = holdout.map { result.network.crossEntropy(inputs: $0.inputs, labels: $0.labels ?? []) }
        let t2 = clock.now
        let sec = { (d: Duration) in Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }
        return Entry(architecture: a, dZeta: p.dZeta, dZetaLower: p.dZetaLower, dZetaJoint: p.dZetaJoint, ess: p.ess,
                     trainLoss: final.loss, trainAccuracy: final.accuracy, holdoutLoss: ho?.loss,
                     holdoutAccuracy: ho?.accuracy, spectraSeconds: sec(t1 - t0), trainingSeconds: sec(t2 - t1))
    }
}

/// One measure of an architecture set against the training loss: its values and Kendall's τ_b with the
/// loss (nil where τ is undefined because the measure is constant over the set).
public struct ComparisonMeasure: Sendable {
    public var name: String
    public var description: String
    public var values: [Double]
    public var tau: KendallTau?

    /// The 2sED measures beside simple baselines that need no Fisher matrix, each ranked against the
    /// final training loss. Baselines: parameter count, depth (weight layers), the narrowest hidden width
    /// and the last hidden width (0 for a network without hidden layers). A 2sED ranking is only
    /// informative where it does better than these.
    public static func all(_ entries: [ArchitectureComparison.Entry]) -> [ComparisonMeasure] {
        let loss = entries.map(\.trainLoss)
        func hidden(_ a: Architecture) -> [Int] { Array(a.sizes.dropFirst().dropLast()) }
        let columns: [(String, String, (ArchitectureComparison.Entry) -> Double)] = [
            ("d_zeta_lower", "lower 2sED at ε_n", { $0.dZetaLower }),
            ("d_zeta", "2sED (nested) at ε_n", { $0.dZeta }),
            ("lower_per_parameter", "lower 2sED / parameter count", { $0.dZetaLower / Double($0.architecture.parameterCount) }),
            ("parameters", "parameter count (baseline)", { Double($0.architecture.parameterCount) }),
            ("depth", "weight layers (baseline)", { Double($0.architecture.layers) }),
            ("min_hidden_width", "narrowest hidden layer (baseline)", { Double(hidden($0.architecture).min() ?? 0) }),
            ("last_hidden_width", "last hidden layer's width (baseline)", { Double(hidden($0.architecture).last ?? 0) }),
        ]
        return columns.map { name, text, f in
            let v = entries.map(f)
            return ComparisonMeasure(name: name, description: text, values: v, tau: try? KendallTau(v, loss))
        }
    }
}
