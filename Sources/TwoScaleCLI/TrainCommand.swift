import ArgumentParser
import Foundation
import Networks
import Training
import TwoScaleCore
import TwoScaleFormats

/// `twoscale train`: mini-batch SGD/Adam on the cross-entropy of the deterministic MLP.
struct TrainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Train an MLP classifier (softmax cross-entropy) with SGD+momentum or Adam.",
        discussion: """
        Mini-batch training of the deterministic network (σ = 0): the last batch of an epoch may be smaller. \
        θ₀ is uniform Glorot (W_m ~ U(±√(6/(n_{m−1}+n_m))), zero biases) or, with --init box, U(--box) for \
        every parameter. θ₀ uses the stream (seed, 1), epoch e shuffles with (seed, 2, e), the holdout split \
        uses (seed, 3): the same seed gives the same bytes. train_loss/train_accuracy are evaluated on the \
        whole training set after each epoch (epoch 0 = θ₀). samples_per_second counts optimisation steps \
        only (not evaluation). --checkpoints DIR writes θ as weights files (the `fisher --weights` format) \
        for θ₀, after every epoch and every --checkpoint-every steps, plus DIR/index.json.
        """)

    /// train's defaults for the shared option groups: --data is required, labels in the last CSV column.
    enum Defaults: DataDefaults, TrainingDefaults {
        static var epochs: Int { 10 }
    }

    @OptionGroup var model: ModelOptions
    @OptionGroup var data: DataOptions<Defaults>

    @Option(help: "Held-out data instead of --holdout, e.g. fashion-mnist:test (as --data, not synthetic).")
    var testData: String?

    @Option(help: "Held-out samples for --test-data (default: as many as --samples).")
    var testSamples: Int?

    @Option(help: "Fraction of the data held out (random, seeded) for holdout loss and accuracy, in (0, 1).")
    var holdout: Double?

    @OptionGroup var training: TrainingOptions<Defaults>

    @Option(help: "Random seed (initialisation, shuffling, holdout split, synthetic data).")
    var seed: UInt64 = 1

    @Option(name: .customLong("init"), help: "Initialisation: glorot or box.")
    var initialization: String = "glorot"

    @Option(parsing: .unconditional, help: ArgumentHelp("Box lo:hi for --init box.", valueName: "lo:hi"))
    var box: String = "-1:1"

    @Option(help: "Folder for checkpoint weights files (created if needed).")
    var checkpoints: String?

    @Option(help: "Also checkpoint every k optimisation steps (with --checkpoints).")
    var checkpointEvery: Int?

    @Option(help: "Write the trained weights to this file (the fisher --weights format).")
    var weightsOut: String?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        try PathFlags.check(checkpoints, flag: "--checkpoints", what: "a folder for the checkpoints")
        try PathFlags.check(weightsOut, flag: "--weights-out", what: "a file name for the weights")
        _ = try config()
    }

    /// The trainer's settings (the library checks the batch size, the epochs and --checkpoint-every).
    func config() throws -> TrainingConfig {
        try training.config(architecture: try model.architecture(), activation: model.activation, seed: seed,
                            initialization: try TrainingData.initialization(initialization, box: box),
                            checkpointEverySteps: checkpointEvery)
    }

    func run() async throws {
        let config = try config()
        let architecture = config.architecture
        if let every = checkpointEvery, checkpoints == nil {
            throw TwoScaleError.invalid("--checkpoint-every", "\(every)", allowed: "it needs --checkpoints DIR")
        }
        if holdout != nil && testData != nil {
            throw TwoScaleError.usage("--holdout and --test-data: give one of them, not both")
        }
        var trainSet = try data.load(architecture: architecture, seed: seed)
        var holdSet: Dataset?
        if let f = holdout {
            (trainSet, holdSet) = try HoldoutSplit.split(trainSet, fraction: f, seed: seed)
        } else if let t = testData {
            guard !t.hasPrefix("synthetic") else {
                throw TwoScaleError.invalid("--test-data", t,
                    allowed: "synthetic sources repeat the training inputs under one seed; use --holdout FRACTION instead")
            }
            holdSet = try data.load(t, samples: testSamples ?? data.samples, architecture: architecture, seed: seed,
                                    flag: "--test-data")
        }
        let trainer = Trainer(config: config)
        try trainer.validate(trainSet)
        if let h = holdSet { try trainer.validate(h, name: testData != nil ? "--test-data" : "--holdout") }
        guard training.batch <= trainSet.count else {
            throw TwoScaleError.invalid("--batch", "\(training.batch)", allowed: "the batch size must not exceed the training set (\(trainSet.count) samples)")
        }
        let run = try TrainingRun.run(trainer, train: trainSet, holdout: holdSet, checkpoints: checkpoints, weightsOut: weightsOut)
        try output.emit(run) { Self.text(run) }
    }

    /// The readable summary: the loss per epoch and the optimisation speed.
    static func text(_ run: TrainingRun) -> String {
        let config = run.config, result = run.result, o = config.optimizer
        let head = "trained \(config.architecture) (\(config.architecture.parameterCount) parameters, \(config.activation.rawValue)) on \(run.data): "
            + "\(run.trainSamples) samples\(run.holdoutSamples.map { ", \($0) held out" } ?? ""), \(o.kind.rawValue) lr \(Fmt.num(o.learningRate)), batch \(config.batchSize)\n\n"
        let table = Fmt.table(["epoch", "train_loss", "train_acc", "holdout_loss", "holdout_acc"], result.epochs.map { r in
            [String(r.epoch), Fmt.num(r.trainLoss), Fmt.num(r.trainAccuracy), Fmt.num(r.holdoutLoss), Fmt.num(r.holdoutAccuracy)]
        })
        return head + table + "\n\(result.steps) steps in \(Fmt.num(result.totalSeconds, 4)) s (\(Fmt.num(result.samplesPerSecond, 4)) samples/s of optimisation)\n"
    }
}
