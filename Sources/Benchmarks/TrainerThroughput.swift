import Foundation
import Networks
import RandomStreams
import Training
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// Trainer throughput (`bench-train`): samples per second of Adam on synthetic data. For each
/// architecture: N inputs x ~ N(0, I) with uniform random labels, relu, softmax cross-entropy, the given
/// batch size, a few epochs, no per-epoch evaluation; `samples_per_second` = epochs·N / (time spent in
/// optimisation steps), the best of `repeats` runs. benchmarks/train_numpy.py is the same loop in NumPy.
public struct TrainerThroughput: Sendable, Encodable {
    public struct Row: Sendable, Equatable, Encodable {
        public var arch: String
        public var parameters: Int
        public var batch: Int
        public var epochs: Int
        public var samples: Int
        public var trainingSeconds: Double
        public var samplesPerSecond: Double
    }

    /// `debug` or `release`: the build the figures come from.
    public var build: String
    public let optimizer = "adam"
    public let activation = "relu"
    public let threads = 1
    public var benchmarks: [Row]

    enum CodingKeys: String, CodingKey { case build, optimizer, activation, threads, benchmarks }

    public static var buildKind: String {
        #if DEBUG
        return "debug"
        #else
        return "release"
        #endif
    }

    public static func measure(_ architectures: [Architecture], batch: Int, epochs: Int, samples: Int, repeats: Int,
                               seed: UInt64) throws -> TrainerThroughput {
        guard samples >= 1, repeats >= 1 else {
            throw TwoScaleError.failure("trainer throughput needs N ≥ 1 samples and at least one run (N = \(samples), \(repeats) runs)")
        }
        for a in architectures {
            try DataSource.checkSyntheticSize(samples: samples, features: Swift.max(a.inputSize, a.classes), spec: a.notation)
        }
        var rows: [Row] = []
        for a in architectures {
            var rng = Xoshiro256(seed: seed, stream: [500])
            var x = Matrix(rows: samples, cols: a.inputSize)
            for i in x.data.indices { x.data[i] = rng.normal() }
            let labels = (0..<samples).map { _ in rng.index(a.classes) }
            let data = Dataset(inputs: x, labels: labels, classes: a.classes, source: "synthetic")
            let settings = try OptimizerSettings(kind: .adam, learningRate: 1e-3)
            let cfg = try TrainingConfig(architecture: a, activation: .relu, optimizer: settings, batchSize: batch,
                                         epochs: epochs, seed: seed, evaluateEpochs: false)
            var best = try Trainer(config: cfg).train(data: data)
            for _ in 1..<repeats {
                let r = try Trainer(config: cfg).train(data: data)
                if r.trainingSeconds < best.trainingSeconds { best = r }
            }
            rows.append(Row(arch: a.notation, parameters: a.parameterCount, batch: batch, epochs: epochs, samples: samples,
                            trainingSeconds: best.trainingSeconds, samplesPerSecond: best.samplesPerSecond))
        }
        return TrainerThroughput(build: buildKind, benchmarks: rows)
    }
}
