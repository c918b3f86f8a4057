import ArgumentParser
import Foundation
import Networks
import Benchmarks
import TwoScaleCore
import TwoScaleFormats

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

    func validate() throws {
        guard samples >= 1 else { throw TwoScaleError.invalid("--samples", "\(samples)", allowed: "give N ≥ 1") }
        guard repeats >= 1 else { throw TwoScaleError.invalid("--repeats", "\(repeats)", allowed: "give at least 1 run") }
    }

    func run() async throws {
        let archs = try arch.split(separator: ",").map { try Architecture(parsing: String($0)) }
        #if DEBUG
        Console.warn("bench-train in a debug build: figures are not representative; use `swift build -c release`")
        #endif
        let r = try TrainerThroughput.measure(archs, batch: batch, epochs: epochs, samples: samples, repeats: repeats, seed: seed)
        try output.emit(r) {
            "trainer throughput (\(r.build) build, Adam, relu, one BLAS thread)\n\n"
                + Fmt.table(["arch", "parameters", "batch", "seconds", "samples/s"], r.benchmarks.map {
                    [$0.arch, String($0.parameters), String($0.batch), Fmt.num($0.trainingSeconds, 4), Fmt.num($0.samplesPerSecond, 5)]
                })
        }
    }
}
