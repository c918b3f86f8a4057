import Foundation
import Networks
import RandomStreams
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// Everything that defines a training run; the same configuration and data give the same bytes.
public struct TrainingConfig: Sendable {
    public var architecture: Architecture
    public var activation: Activation
    public var optimizer: OptimizerSettings
    public var batchSize: Int
    public var epochs: Int
    public var seed: UInt64
    public var initialization: Initialization
    /// Also checkpoint every k optimizer steps (nil: only at the end of every epoch, and θ₀).
    public var checkpointEverySteps: Int?
    /// Evaluate the full training (and holdout) loss after every epoch; off for pure throughput runs
    /// (then the epoch records hold the mean mini-batch loss of the epoch instead).
    public var evaluateEpochs: Bool
    /// Projected training: with a box Θ, θ₀ and θ after every optimiser step are projected onto Θ
    /// (`ParameterBox.project`, every weight and bias clamped into [lo, hi]); the optimiser's state is
    /// left as it is. nil (the default): training is free, and nothing changes.
    public var projection: ParameterBox?

    public init(architecture: Architecture, activation: Activation, optimizer: OptimizerSettings, batchSize: Int,
                epochs: Int, seed: UInt64, initialization: Initialization = .glorot,
                checkpointEverySteps: Int? = nil, evaluateEpochs: Bool = true, projection: ParameterBox? = nil) throws {
        guard batchSize >= 1 else {
            throw TwoScaleError.invalid("\(Setting.batch)", "\(batchSize)", allowed: "the batch size must be ≥ 1")
        }
        guard epochs >= 1 else {
            throw TwoScaleError.invalid("\(Setting.epochs)", "\(epochs)", allowed: "give at least 1 epoch")
        }
        if let k = checkpointEverySteps, k < 1 {
            throw TwoScaleError.invalid("\(Setting.checkpointEvery)", "\(k)", allowed: "checkpoint every k ≥ 1 steps")
        }
        self.architecture = architecture
        self.activation = activation
        self.optimizer = optimizer
        self.batchSize = batchSize
        self.epochs = epochs
        self.seed = seed
        self.initialization = initialization
        self.checkpointEverySteps = checkpointEverySteps
        self.evaluateEpochs = evaluateEpochs
        self.projection = projection
    }
}

/// Losses after one epoch (epoch 0 = the initial network).
public struct EpochRecord: Sendable, Equatable {
    public var epoch: Int
    /// Mean cross-entropy over the whole training set, evaluated after the epoch.
    public var trainLoss: Double
    /// nil when epochs are not evaluated (`evaluateEpochs` off).
    public var trainAccuracy: Double?
    public var holdoutLoss: Double?
    public var holdoutAccuracy: Double?
    /// Mean mini-batch loss during the epoch (what the optimizer saw).
    public var meanBatchLoss: Double?
}

/// θ at one point of the trajectory.
public struct Checkpoint: Sendable {
    /// Epochs completed (0 for θ₀).
    public var epoch: Int
    /// Optimizer steps taken.
    public var step: Int
    /// True for θ₀ and the end of an epoch, false for a mid-epoch (every-k-steps) checkpoint.
    public var endOfEpoch: Bool
    public var network: Network
}

public struct TrainingResult: Sendable {
    public var network: Network
    /// Epoch 0 (θ₀) then 1…E.
    public var epochs: [EpochRecord]
    public var steps: Int
    /// Wall time of the optimisation steps only (gathering batches, gradients, updates).
    public var trainingSeconds: Double
    /// Wall time including evaluation and checkpoints.
    public var totalSeconds: Double
    /// Training samples processed by the optimiser (epochs × training-set size).
    public var samplesProcessed: Int

    public var samplesPerSecond: Double { trainingSeconds > 0 ? Double(samplesProcessed) / trainingSeconds : 0 }
}

/// Mini-batch training of the deterministic MLP (σ = 0) on the mean cross-entropy
/// `R_n(θ) = (1/n) Σ_i −log softmax(f_θ(x_i))[y_i]`, by SGD with momentum or Adam.
///
/// Reproducibility: θ₀ is drawn from the stream `(seed, 1)`, epoch e shuffles the training set with
/// the stream `(seed, 2, e)` (Fisher–Yates); the last mini-batch of an epoch may be smaller. Every
/// step is deterministic (OpenBLAS on one thread), so the same seed gives the same bytes. With a
/// `projection` box the training is projected: θ stays in Θ at θ₀ and after every step.
public struct Trainer: Sendable {
    public let config: TrainingConfig

    public init(config: TrainingConfig) { self.config = config }

    /// Checks that the data fit the architecture and the batch size.
    public func validate(_ data: Dataset, name: String = "\(Setting.data)") throws {
        let a = config.architecture
        guard data.features == a.inputSize else {
            throw TwoScaleError.invalid("\(Setting.architecture)", a.notation,
                allowed: "the input size \(a.inputSize) must equal the number of features of \(name) (\(data.features))")
        }
        guard let labels = data.labels else {
            throw TwoScaleError.invalid(name, data.source, allowed: "training needs class labels (e.g. \(Setting.labels) last for a CSV)")
        }
        if let bad = labels.firstIndex(where: { $0 < 0 || $0 >= a.classes }) {
            throw TwoScaleError.invalid(name, data.source,
                allowed: "sample \(bad + 1) has label \(labels[bad]); labels must lie in 0..<\(a.classes), the output size of \(Setting.architecture)")
        }
        guard data.count >= 1 else {
            throw TwoScaleError.invalid(name, data.source, allowed: "the training set is empty")
        }
    }

    /// Trains on `data`, evaluating `holdout` (if any) after every epoch; `checkpoint` sees θ₀, θ after
    /// every epoch and, with `checkpointEverySteps`, every k steps.
    public func train(data: Dataset, holdout: Dataset? = nil,
                      checkpoint: ((Checkpoint) throws -> Void)? = nil) throws -> TrainingResult {
        try validate(data)
        if let h = holdout { try validate(h, name: "holdout") }
        guard config.batchSize <= data.count else {
            throw TwoScaleError.invalid("\(Setting.batch)", "\(config.batchSize)",
                allowed: "the batch size must not exceed the training set (\(data.count) samples)")
        }
        let clock = ContinuousClock()
        let start = clock.now
        var trainingTime = Duration.zero
        var initRng = Xoshiro256(seed: config.seed, stream: [1])
        var net = config.initialization.network(architecture: config.architecture, activation: config.activation, rng: &initRng)
        config.projection?.project(&net)
        var opt = Optimizer(settings: config.optimizer, parameterCount: config.architecture.parameterCount)
        let labels = data.labels!  // checked by validate
        let n = data.count, f = data.features
        var order = Array(0..<n)
        var records: [EpochRecord] = []
        var step = 0

        func evaluate(epoch: Int, batchLoss: Double?) throws -> EpochRecord {
            let tr: (Double, Double?) = config.evaluateEpochs || epoch == 0
                ? { let e = net.crossEntropy(inputs: data.inputs, labels: labels); return (e.loss, e.accuracy) }()
                : (batchLoss ?? .nan, nil)
            let ho = holdout.map { h in net.crossEntropy(inputs: h.inputs, labels: h.labels!) }
            let rec = EpochRecord(epoch: epoch, trainLoss: tr.0, trainAccuracy: tr.1,
                                  holdoutLoss: ho?.loss, holdoutAccuracy: ho?.accuracy, meanBatchLoss: batchLoss)
            guard rec.trainLoss.isFinite, rec.holdoutLoss?.isFinite ?? true else {
                throw TwoScaleError.failure("training diverged at epoch \(epoch): the loss is not finite; lower \(Setting.learningRate)")
            }
            return rec
        }

        records.append(try evaluate(epoch: 0, batchLoss: nil))
        try checkpoint?(Checkpoint(epoch: 0, step: 0, endOfEpoch: true, network: net))

        for epoch in 1...config.epochs {
            var rng = Xoshiro256(seed: config.seed, stream: [2, UInt64(epoch)])
            for i in stride(from: n - 1, to: 0, by: -1) { order.swapAt(i, rng.index(i + 1)) }
            var lossSum = 0.0
            var b0 = 0
            while b0 < n {
                let t0 = clock.now
                let b1 = Swift.min(n, b0 + config.batchSize)
                var x = Matrix(rows: b1 - b0, cols: f)
                var y = [Int](repeating: 0, count: b1 - b0)
                x.data.withUnsafeMutableBufferPointer { xp in
                    data.inputs.data.withUnsafeBufferPointer { dp in
                        for r in 0..<(b1 - b0) {
                            let src = order[b0 + r] * f
                            for j in 0..<f { xp[r * f + j] = dp[src + j] }
                            y[r] = labels[order[b0 + r]]
                        }
                    }
                }
                let g = net.crossEntropyGradient(inputs: x, labels: y)
                guard g.loss.isFinite else {
                    throw TwoScaleError.failure("training diverged at epoch \(epoch), step \(step + 1): the loss is not finite; lower \(Setting.learningRate)")
                }
                lossSum += g.loss * Double(b1 - b0)
                opt.step(&net, gradient: g.gradient)
                config.projection?.project(&net)
                step += 1
                b0 = b1
                trainingTime += clock.now - t0
                if let k = config.checkpointEverySteps, step % k == 0, b0 < n {
                    try checkpoint?(Checkpoint(epoch: epoch - 1, step: step, endOfEpoch: false, network: net))
                }
            }
            records.append(try evaluate(epoch: epoch, batchLoss: lossSum / Double(n)))
            try checkpoint?(Checkpoint(epoch: epoch, step: step, endOfEpoch: true, network: net))
        }
        let seconds = { (d: Duration) -> Double in Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }
        return TrainingResult(network: net, epochs: records, steps: step, trainingSeconds: seconds(trainingTime),
                              totalSeconds: seconds(clock.now - start), samplesProcessed: n * config.epochs)
    }
}

/// A seeded random holdout split.
public enum HoldoutSplit {
    /// Splits off `round(fraction·N)` samples (chosen by a Fisher–Yates shuffle with the stream
    /// `(seed, 3)`) as the holdout set; both parts keep their original order.
    public static func split(_ data: Dataset, fraction: Double, seed: UInt64) throws -> (train: Dataset, holdout: Dataset) {
        guard fraction.isFinite, fraction > 0, fraction < 1 else {
            throw TwoScaleError.invalid("\(Setting.holdout)", "\(fraction)", allowed: "the holdout fraction must lie in (0, 1)")
        }
        let k = Int((fraction * Double(data.count)).rounded())
        guard k >= 1, k < data.count else {
            throw TwoScaleError.invalid("\(Setting.holdout)", "\(fraction)",
                allowed: "with \(data.count) samples the holdout would have \(k); it needs at least 1 and must leave training samples")
        }
        var idx = Array(0..<data.count)
        var rng = Xoshiro256(seed: seed, stream: [3])
        for i in stride(from: idx.count - 1, to: 0, by: -1) { idx.swapAt(i, rng.index(i + 1)) }
        let hold = Array(idx[0..<k]).sorted()
        let train = Array(idx[k...]).sorted()
        return (data.subset(train), data.subset(hold))
    }
}
