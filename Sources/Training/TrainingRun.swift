import Foundation
import Networks
import TwoScaleCore
import TwoScaleFormats

extension EpochRecord: Encodable {
    enum CodingKeys: String, CodingKey { case epoch, trainLoss, holdoutLoss, holdoutAccuracy, trainAccuracy, meanBatchLoss }

    /// Holdout figures and the mean batch loss only where measured; the training accuracy always (null
    /// without labels to score).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(epoch, forKey: .epoch)
        try c.encode(trainLoss, forKey: .trainLoss)
        try c.encodeIfPresent(holdoutLoss, forKey: .holdoutLoss)
        try c.encodeIfPresent(holdoutAccuracy, forKey: .holdoutAccuracy)
        try c.encode(trainAccuracy, forKey: .trainAccuracy)
        try c.encodeIfPresent(meanBatchLoss, forKey: .meanBatchLoss)
    }
}

extension OptimizerSettings: Encodable {
    enum CodingKeys: String, CodingKey { case kind, lr, momentum, beta1, beta2, epsilon }

    /// The settings the chosen optimizer uses: SGD's momentum, or Adam's β₁, β₂ and ε.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind.rawValue, forKey: .kind)
        try c.encode(learningRate, forKey: .lr)
        if kind == .sgd {
            try c.encode(momentum, forKey: .momentum)
        } else {
            try c.encode(beta1, forKey: .beta1)
            try c.encode(beta2, forKey: .beta2)
            try c.encode(epsilon, forKey: .epsilon)
        }
    }
}

/// One training run: the trainer's result with its configuration and data sizes, after writing the
/// checkpoints (each a weights file, listed in `DIR/index.json`) and the final weights where asked:
/// `train`'s result (docs/METHOD.md §16).
public struct TrainingRun: Sendable, Encodable {
    public var config: TrainingConfig
    public var result: TrainingResult
    public var trainSamples: Int
    public var holdoutSamples: Int?
    public var data: String

    /// One entry of a checkpoint folder's index.json.
    public struct CheckpointEntry: Sendable, Equatable, Codable {
        public var file: String
        public var epoch: Int
        public var step: Int
        public var endOfEpoch: Bool

        enum CodingKeys: String, CodingKey { case file, epoch, step, endOfEpoch = "end_of_epoch" }
    }

    struct CheckpointIndex: Encodable { var checkpoints: [CheckpointEntry] }

    /// Trains on `train` (scoring `holdout` each epoch). With `checkpoints`, every checkpoint is written
    /// there as it comes and the index last; with `weightsOut`, the final network (both atomically).
    public static func run(_ trainer: Trainer, train: Dataset, holdout: Dataset?, checkpoints: String?,
                           weightsOut: String?) throws -> TrainingRun {
        var index: [CheckpointEntry] = []
        if let dir = checkpoints { try AtomicFile.makeDirectory(dir) }
        if let w = weightsOut {  // fail before training, not after
            let dir = URL(fileURLWithPath: w).deletingLastPathComponent().path
            guard FileManager.default.fileExists(atPath: dir) else {
                throw TwoScaleError.file(w, "cannot be written: the folder \(dir) does not exist")
            }
        }
        let result = try trainer.train(data: train, holdout: holdout) { cp in
            guard let dir = checkpoints else { return }
            let name = cp.endOfEpoch ? String(format: "epoch-%04d.json", cp.epoch) : String(format: "step-%08d.json", cp.step)
            try WeightsFile.write(cp.network, to: dir + "/" + name)
            index.append(CheckpointEntry(file: name, epoch: cp.epoch, step: cp.step, endOfEpoch: cp.endOfEpoch))
        }
        if let dir = checkpoints {
            try AtomicFile.write(try JSONValue(encoding: CheckpointIndex(checkpoints: index)).serialized(), to: dir + "/index.json")
        }
        if let w = weightsOut { try WeightsFile.write(result.network, to: w) }
        return TrainingRun(config: trainer.config, result: result, trainSamples: train.count, holdoutSamples: holdout?.count,
                           data: train.source)
    }

    enum CodingKeys: String, CodingKey {
        case architecture, bias, activation, parameters, data, trainSamples, holdoutSamples, optimizer, batch, seed, `init`
        case epochs, final, steps, seconds, trainingSeconds, samplesPerSecond
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(config.architecture.notation, forKey: .architecture)
        try c.encode(config.architecture.bias, forKey: .bias)
        try c.encode(config.activation.rawValue, forKey: .activation)
        try c.encode(config.architecture.parameterCount, forKey: .parameters)
        try c.encode(data, forKey: .data)
        try c.encode(trainSamples, forKey: .trainSamples)
        try c.encode(holdoutSamples, forKey: .holdoutSamples)
        try c.encode(config.optimizer, forKey: .optimizer)
        try c.encode(config.batchSize, forKey: .batch)
        try c.encode(Int(truncatingIfNeeded: config.seed), forKey: .seed)
        try c.encode(config.initialization.description, forKey: .`init`)
        try c.encode(result.epochs, forKey: .epochs)
        try c.encode(result.epochs.last, forKey: .final)
        try c.encode(result.steps, forKey: .steps)
        try c.encode(result.totalSeconds, forKey: .seconds)
        try c.encode(result.trainingSeconds, forKey: .trainingSeconds)
        try c.encode(result.samplesPerSecond, forKey: .samplesPerSecond)
    }
}
