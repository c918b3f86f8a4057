import ArgumentParser
import Foundation
import Networks
import Sampling
import Training
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// `twoscale bench-train`: trainer throughput (samples per second of optimisation).
struct TrainBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-train",
        abstract: "Benchmark the trainer: samples/second of Adam on synthetic data (run a release build).",
        discussion: """
        For each architecture: N synthetic inputs x ~ N(0, I) of the right size with uniform random labels, \
        relu, softmax cross-entropy, Adam, the given batch size, a few epochs, no per-epoch evaluation. \
        samples_per_second = epochs·N / (time spent in optimisation steps); the best of --repeats runs. \
        benchmarks/train_numpy.py is the same loop in NumPy for comparison.
        """)

    @Option(help: "Architectures, comma-separated.")
    var arch: String = "54-16-7,784-128-10"

    @Option(help: "Mini-batch size.")
    var batch: Int = 64

    @Option(help: "Epochs per run.")
    var epochs: Int = 3

    @Option(help: "Synthetic training samples N.")
    var samples: Int = 20_000

    @Option(help: "Runs per architecture (the fastest is reported).")
    var repeats: Int = 3

    @Option(help: "Random seed.")
    var seed: UInt64 = 1

    @OptionGroup var output: OutputOptions

    func run() async throws {
        guard samples >= 1 else { throw TwoScaleError.invalid("--samples", "\(samples)", allowed: "give N ≥ 1") }
        guard repeats >= 1 else { throw TwoScaleError.invalid("--repeats", "\(repeats)", allowed: "give at least 1 run") }
        let archs = try arch.split(separator: ",").map { try Architecture(parsing: String($0)) }
        #if DEBUG
        let build = "debug"
        Console.warn("bench-train in a debug build: figures are not representative; use `swift build -c release`")
        #else
        let build = "release"
        #endif
        var rows: [JSONValue] = []
        var table: [[String]] = []
        for a in archs {
            var rng = Xoshiro256(seed: seed, stream: [500])
            var x = Matrix(rows: samples, cols: a.inputSize)
            for i in x.data.indices { x.data[i] = rng.normal() }
            let labels = (0..<samples).map { _ in rng.index(a.classes) }
            let data = Dataset(inputs: x, labels: labels, classes: a.classes, source: "synthetic")
            let settings = try OptimizerSettings(kind: .adam, learningRate: 1e-3)
            let cfg = try TrainingConfig(architecture: a, activation: .relu, optimizer: settings, batchSize: batch,
                                         epochs: epochs, seed: seed, evaluateEpochs: false)
            var best: TrainingResult?
            for _ in 0..<repeats {
                let r = try Trainer(config: cfg).train(data: data)
                if best == nil || r.trainingSeconds < best!.trainingSeconds { best = r }
            }
            let r = best!
            rows.append(.object([
                ("arch", .string(a.notation)), ("parameters", .int(a.parameterCount)),
                ("batch", .int(batch)), ("epochs", .int(epochs)), ("samples", .int(samples)),
                ("training_seconds", .double(r.trainingSeconds)), ("samples_per_second", .double(r.samplesPerSecond)),
            ]))
            table.append([a.description, String(a.parameterCount), String(batch), Fmt.num(r.trainingSeconds, 4), Fmt.num(r.samplesPerSecond, 5)])
        }
        let json = JSONValue.object([("build", .string(build)), ("optimizer", .string("adam")), ("activation", .string("relu")),
                                     ("threads", .int(1)), ("benchmarks", .array(rows))])
        try output.emit(json) {
            "trainer throughput (\(build) build, Adam, relu, one BLAS thread)\n\n"
                + Fmt.table(["arch", "parameters", "batch", "seconds", "samples/s"], table)
        }
    }
}
