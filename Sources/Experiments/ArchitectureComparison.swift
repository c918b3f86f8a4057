import Fisher
import Foundation
import Training
import Statistics
import Estimation
import Networks
import RandomStreams
import TwoScaleCore
import TwoScaleFormats
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
        /// The estimator's budget and settings (K, J, the draws for ĉ, its own sweeps and moves), read only by
        /// the estimator (`EstimatorRegistry`); the box and seed of its draws.
        public var budget: EstimatorBudget
        public var box: ClosedRange<Double>
        public var seed: UInt64
        /// ε at which the 2sEDs are evaluated, and ζ.
        public var eps: Double
        public var zeta: Double
        public var threads: Int
        public var training: TrainingConfig
        /// The 2sED estimator (docs/ESTIMATORS.md), found by its name in `EstimatorRegistry`.
        public var estimator: EstimatorKind

        public init(activation: Activation, sigma2: Double, noiseSamples: Int, budget: EstimatorBudget,
                    box: ClosedRange<Double>, seed: UInt64, eps: Double, zeta: Double, threads: Int, training: TrainingConfig,
                    estimator: EstimatorKind = .plain) {
            self.activation = activation
            self.sigma2 = sigma2
            self.noiseSamples = noiseSamples
            self.budget = budget
            self.box = box
            self.seed = seed
            self.eps = eps
            self.zeta = zeta
            self.threads = threads
            self.training = training
            self.estimator = estimator
        }
    }

    /// One architecture's measurements with one seed.
    public struct Entry: Sendable {
        public var architecture: Architecture
        /// Replicate index (0 keeps the run's own seed; r ≥ 1 derives the Monte Carlo and training seeds).
        public var replicate: Int
        public var dZeta: Double
        public var dZetaLower: Double
        public var dZetaJoint: Double
        /// smc: the half-widths of the 95% intervals of the 2sED and the lower 2sED (nil for plain, whose
        /// bootstrap over paths does not cover: docs/ESTIMATORS.md).
        public var ci95HalfWidth: Double?
        public var ci95HalfWidthLower: Double?
        /// ESS of each stage's weights at ε (smc: of the outer particles' weights, stages m ≥ 2).
        public var ess: [Double]
        /// smc: per stage m ≥ 2, the share of the outer weights' spread that is the islands' own noise
        /// (empty for plain).
        public var islandNoise: [Double] = []
        /// What lay outside its certified bracket (`BracketCheck`; a lower 2sED above it is already lowered).
        public var bracketCheck: BracketCheck? = nil
        /// The stage whose weights are degenerate (`WeightDegeneracy`), with the islands' share for smc.
        public var degeneracy: WeightDegeneracy? {
            var d = WeightDegeneracy.check(ess: ess, paths: paths)
            if let stage = d?.stage, islandNoise.indices.contains(stage - 2) { d?.islandNoiseShare = islandNoise[stage - 2] }
            return d
        }
        /// smc: the lower 2sED's interval wholly above the 2sED's at ε (`LowerAboveNested`: a failed
        /// correction); nil when it is not, and for plain (no intervals).
        public func lowerAboveNested(eps: Double) -> LowerAboveNested? {
            guard let h = ci95HalfWidth, let hl = ci95HalfWidthLower, h >= 0, hl >= 0 else { return nil }
            return LowerAboveNested.check([LowerAboveNested(eps: eps, nested: dZeta, nestedInterval: (dZeta - h)...(dZeta + h),
                                                            lower: dZetaLower, lowerInterval: (dZetaLower - hl)...(dZetaLower + hl))])
        }
        /// smc: the later stages' expected shortfall beyond the 2sED interval at ε (`TailShortfall`); nil
        /// when it lies within it, and for plain. Not in the JSON this version.
        public var tailShortfall: TailShortfall? = nil
        /// smc: the estimates of the upper bounds of the 2sED and the lower 2sED at ε (`UpperBound`: the
        /// softmax stage at uniform probabilities); nil for plain.
        public var dZetaUpper: Double? = nil
        public var dZetaLowerUpper: Double? = nil
        /// The certified brackets of the 2sED and the lower 2sED at ε (`CertifiedBracket`).
        public var bracket: ClosedRange<Double>? = nil
        public var bracketLower: ClosedRange<Double>? = nil
        /// K of the run (for the degeneracy check; 0: unknown, never degenerate).
        public var paths: Int = 0
        public var trainLoss: Double
        public var trainAccuracy: Double?
        public var holdoutLoss: Double?
        public var holdoutAccuracy: Double?
        /// Training loss (whole training set) after each epoch, epoch 0 = θ₀.
        public var lossHistory: [Double]
        /// Baselines at initialisation: ‖W‖₂ over all weights of θ₀, and its ℓ₂ path norm
        /// `√(1ᵀ (W_L∘W_L)⋯(W_1∘W_1) 1)` (biases left out).
        public var initialWeightNorm: Double
        public var initialPathNorm: Double
        /// Trained-model measures: `‖θ̂ − θ₀‖₂`, and the sharpness `mean_j L(θ̂ + u_j) − L(θ̂)` on the
        /// training set over `sharpnessDraws` perturbations `u_j ~ N(0, (α·rms(θ̂))² I)`, α = `sharpnessScale`.
        public var distanceFromInit: Double
        public var sharpness: Double
        public var spectraSeconds: Double
        public var trainingSeconds: Double

        /// `(L_{E−1} − L_E)/(L_0 − L_E)`: the last epoch's share of the whole decrease of the training loss
        /// since θ₀ (+∞ when the loss did not decrease at all, so an untrained run never counts as flat).
        public var lastEpochShare: Double {
            guard lossHistory.count >= 2, let last = lossHistory.last, let first = lossHistory.first else { return .infinity }
            let prev = lossHistory[lossHistory.count - 2]
            let total = first - last
            return total > 0 ? Swift.abs(prev - last) / total : .infinity
        }
    }

    /// Relative perturbation size α and the number of draws of the sharpness measure.
    public static let sharpnessScale = 0.05
    public static let sharpnessDraws = 10

    public let settings: Settings

    public init(settings: Settings) { self.settings = settings }

    /// The seed of replicate r: the run's seed for r = 0, otherwise a draw from the stream (seed, "CMPR", r).
    public func seed(replicate r: Int) -> UInt64 {
        guard r > 0 else { return settings.seed }
        var rng = Xoshiro256(seed: settings.seed, stream: [0x434D_5052, UInt64(r)])
        return rng.next()
    }

    /// Measures one architecture with replicate r's seeds: spectra on `fisherInputs` (N × n_0), then
    /// training on `train` (every epoch evaluated, θ₀ kept for the distance), then the trained measures.
    public func measure(_ a: Architecture, replicate r: Int = 0, fisherInputs: Matrix, train: Dataset,
                        holdout: Dataset?) async throws -> Entry {
        let s = settings
        let seed = self.seed(replicate: r)
        let clock = ContinuousClock()
        let t0 = clock.now
        let model = try MarkovFisher(architecture: a, activation: s.activation, data: fisherInputs,
                                     sigma2: s.sigma2, noiseSamples: s.noiseSamples, noiseSeed: seed)
        let d = try await twoScale(model, seed: seed)
        let bracket = d.bracket
        let t1 = clock.now
        var config = s.training
        config = try TrainingConfig(architecture: a, activation: s.activation, optimizer: config.optimizer,
                                    batchSize: config.batchSize, epochs: config.epochs,
                                    seed: r == 0 ? config.seed : seed &+ 0x9E37_79B9_7F4A_7C15,
                                    initialization: config.initialization, evaluateEpochs: true)
        var initial: Network?
        let result = try Trainer(config: config).train(data: train, holdout: holdout) { cp in
            if initial == nil { initial = cp.network }
        }
        let labels = train.labels ?? []
        // Every epoch is evaluated, so the last record holds θ̂'s training and holdout losses.
        guard let final = result.epochs.last else { throw TwoScaleError.failure("training of \(a) recorded no epoch") }
        let theta0 = initial ?? result.network
        let t2 = clock.now
        let w = result.network.parameters, w0 = theta0.parameters
        var dist = 0.0
        for i in w.indices { let d = w[i] - w0[i]; dist += d * d }
        let sharp = Self.sharpness(result.network, inputs: train.inputs, labels: labels, base: final.trainLoss,
                                   seed: seed)
        let sec = { (d: Duration) in Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }
        return Entry(architecture: a, replicate: r, dZeta: d.dZeta, dZetaLower: d.lower, dZetaJoint: d.joint,
                     ci95HalfWidth: d.halfWidth, ci95HalfWidthLower: d.halfWidthLower, ess: d.ess, islandNoise: d.noise,
                     bracketCheck: d.bracketCheck, tailShortfall: d.tail, dZetaUpper: d.upper?.dZeta, dZetaLowerUpper: d.upper?.dZetaLower, bracket: bracket.dZeta, bracketLower: bracket.dZetaLower, paths: s.budget.paths, trainLoss: final.trainLoss, trainAccuracy: final.trainAccuracy, holdoutLoss: final.holdoutLoss,
                     holdoutAccuracy: final.holdoutAccuracy, lossHistory: result.epochs.map(\.trainLoss),
                     initialWeightNorm: Self.weightNorm(theta0), initialPathNorm: Self.pathNorm(theta0),
                     distanceFromInit: dist.squareRoot(), sharpness: sharp,
                     spectraSeconds: sec(t1 - t0), trainingSeconds: sec(t2 - t1))
    }

    /// What `twoScale` measures of one architecture at ε: the 2sED, lower and joint 2sED, and for smc the
    /// half-widths of their 95% intervals, the island-noise shares and the tail check.
    struct TwoScaleMeasure {
        var dZeta: Double
        var lower: Double
        var joint: Double
        var halfWidth: Double?
        var halfWidthLower: Double?
        /// Per stage m ≥ 2: the outer (smc) or path (plain) ESS.
        var ess: [Double]
        /// smc: per stage m ≥ 2, the share of the outer weights' spread that is island noise (empty for plain).
        var noise: [Double]
        var tail: TailShortfall?
        /// smc: the upper bound's estimate (`UpperBound`).
        var upper: UpperBound? = nil
        /// The certified bracket at ε (smc: the run's; plain: computed at the spectra's c).
        var bracket: CertifiedBracket.Point
        var bracketCheck: BracketCheck?
    }

    /// The 2sED, lower and joint 2sED at ε with the chosen estimator (`EstimatorRegistry`; trace
    /// normalisation), and the half-widths of their 95% intervals where it gives them.
    func twoScale(_ model: MarkovFisher, seed: UInt64) async throws -> TwoScaleMeasure {
        let s = settings
        let estimator = try EstimatorRegistry.estimator(s.estimator)
        let problem = EstimatorProblem(model: model, box: s.box, seed: seed, budget: s.budget)
        let request = MeasurementRequest(eps: [s.eps], zeta: s.zeta, lower: true, normalization: .trace, bootstrap: 0, threads: s.threads)
        let e = try await estimator.estimate(problem, request: request, progress: { _ in })
        guard let p = e.points.first, let bracket = p.bracket else {
            throw TwoScaleError.failure("the \(s.estimator) estimator gave no estimate or no certified bracket at ε = \(s.eps)")
        }
        let half = { (c: ClosedRange<Double>?) in c.map { ($0.upperBound - $0.lowerBound) / 2 } }
        return TwoScaleMeasure(dZeta: p.dZeta, lower: p.dZetaLower ?? p.dZeta, joint: p.dZetaJoint, halfWidth: half(p.ci95),
                               halfWidthLower: half(p.ci95Lower), ess: p.ess, noise: p.islandNoise, tail: e.diagnostics.tailShortfall,
                               upper: p.bound, bracket: bracket, bracketCheck: e.diagnostics.bracketCheck)
    }

    /// `‖W‖₂` over every weight matrix (biases left out).
    public static func weightNorm(_ net: Network) -> Double {
        net.weights.reduce(0) { acc, m in m.data.reduce(acc) { $0 + $1 * $1 } }.squareRoot()
    }

    /// The ℓ₂ path norm `√(Σ_paths Π_m w²)` = `√(1ᵀ (W_L∘W_L)⋯(W_1∘W_1) 1)` (biases left out). Any layer
    /// stack: the all-ones input carried through every layer's `pathNormStep` (a parametric layer with
    /// every weight squared, no biases, no activation; a pooling window as one path per input it reads),
    /// its outputs summed.
    public static func pathNorm(_ net: Network) -> Double {
        let a = net.architecture
        var v = Matrix(rows: 1, cols: a.inputSize, data: [Double](repeating: 1, count: a.inputSize))
        for (m, layer) in a.stack.enumerated() { v = layer.pathNormStep(v, parameters: net.blocks[m]) }
        return v.data.reduce(0, +).squareRoot()
    }

    /// Mean increase of the training loss under `sharpnessDraws` Gaussian perturbations of every
    /// parameter with standard deviation `sharpnessScale·rms(θ)` (seeded stream "SHRP").
    public static func sharpness(_ net: Network, inputs: Matrix, labels: [Int], base: Double, seed: UInt64) -> Double {
        let w = net.parameters
        let rms = (w.reduce(0) { $0 + $1 * $1 } / Double(Swift.max(1, w.count))).squareRoot()
        var rng = Xoshiro256(seed: seed, stream: [0x5348_5250])
        var total = 0.0
        for _ in 0..<sharpnessDraws {
            var p = net
            p.setParameters(w.map { $0 + sharpnessScale * rms * rng.normal() })
            total += p.crossEntropy(inputs: inputs, labels: labels).loss - base
        }
        return total / Double(sharpnessDraws)
    }
}

/// One architecture over its replicate seeds: the mean and the spread of every quantity.
public struct ArchitectureSummary: Sendable {
    public var architecture: Architecture
    public var entries: [ArchitectureComparison.Entry]

    public init(architecture: Architecture, entries: [ArchitectureComparison.Entry]) {
        self.architecture = architecture
        self.entries = entries
    }

    public func mean(_ f: (ArchitectureComparison.Entry) -> Double) -> Double {
        entries.reduce(0) { $0 + f($1) } / Double(entries.count)
    }

    /// The mean over the seeds of an interval half-width that every seed has (smc), else nil (plain).
    public func meanHalfWidth(_ f: (ArchitectureComparison.Entry) -> Double?) -> Double? {
        let h = entries.compactMap(f)
        return h.count == entries.count && !h.isEmpty ? h.reduce(0, +) / Double(h.count) : nil
    }

    /// Sample standard deviation over the seeds (0 for one seed).
    public func sd(_ f: (ArchitectureComparison.Entry) -> Double) -> Double {
        guard entries.count >= 2 else { return 0 }
        let m = mean(f)
        return (entries.reduce(0) { $0 + (f($1) - m) * (f($1) - m) } / Double(entries.count - 1)).squareRoot()
    }

    /// Whether training flattened by the criterion: for every seed the last epoch brought less than
    /// `tolerance` of the whole decrease of the training loss since θ₀.
    /// The union of every seed's bracket (nil when a seed has none).
    public func bracket(_ f: (ArchitectureComparison.Entry) -> ClosedRange<Double>?) -> ClosedRange<Double>? {
        let all = entries.compactMap(f)
        guard all.count == entries.count, let lo = all.map(\.lowerBound).min(), let hi = all.map(\.upperBound).max() else { return nil }
        return lo...hi
    }

    public func flat(tolerance: Double) -> Bool { entries.allSatisfy { $0.lastEpochShare < tolerance } }
}

/// One measure of an architecture set against the training loss: its values and Kendall's τ_b with the
/// loss (nil where τ is undefined because the measure is constant over the set).
public struct ComparisonMeasure: Sendable {
    public var name: String
    public var description: String
    /// Per architecture: the mean over seeds, and the standard deviation.
    public var values: [Double]
    public var spreads: [Double]
    public var tau: KendallTau?

    /// The measures, each as its mean over seeds per architecture, ranked against the mean final
    /// training loss: the 2sEDs; baselines that need no Fisher matrix — parameter count, depth (weight
    /// layers), the narrowest and the last hidden width, the weight norm and the ℓ₂ path norm at
    /// initialisation; and two trained-model measures, the distance from initialisation and the
    /// sharpness. A 2sED ranking is informative only where it does better than the baselines.
    public static func all(_ summaries: [ArchitectureSummary]) -> [ComparisonMeasure] {
        typealias E = ArchitectureComparison.Entry
        let loss = summaries.map { $0.mean(\.trainLoss) }
        func hidden(_ a: Architecture) -> [Int] { a.hiddenWidths }
        let columns: [(String, String, (E) -> Double)] = [
            ("d_zeta_lower", "lower 2sED at ε_n", { $0.dZetaLower }),
            ("d_zeta", "2sED (nested) at ε_n", { $0.dZeta }),
            ("lower_per_parameter", "lower 2sED / parameter count", { $0.dZetaLower / Double($0.architecture.parameterCount) }),
            ("parameters", "parameter count (baseline)", { Double($0.architecture.parameterCount) }),
            ("depth", "weight layers (baseline)", { Double($0.architecture.parametricLayers.count) }),
            ("min_hidden_width", "narrowest hidden layer (baseline)", { Double(hidden($0.architecture).min() ?? 0) }),
            ("last_hidden_width", "last hidden layer's width (baseline)", { Double(hidden($0.architecture).last ?? 0) }),
            ("initial_weight_norm", "‖W‖₂ at initialisation (baseline)", { $0.initialWeightNorm }),
            ("initial_path_norm", "ℓ₂ path norm at initialisation (baseline)", { $0.initialPathNorm }),
            ("distance_from_init", "‖θ̂ − θ₀‖₂ after training (trained measure)", { $0.distanceFromInit }),
            ("sharpness", "sharpness: mean loss increase under 5% random perturbations (trained measure)", { $0.sharpness }),
        ]
        return columns.map { name, text, f in
            let v = summaries.map { $0.mean(f) }
            return ComparisonMeasure(name: name, description: text, values: v, spreads: summaries.map { $0.sd(f) },
                                     tau: try? KendallTau(v, loss))
        }
    }
}
