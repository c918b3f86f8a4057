import Fisher
import Foundation
import Estimation
import NetworkEstimators
import Networks
import RandomStreams
import SpectraStore
import ToyModels
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// The reference workloads of `twoscale bench`, timed against their targets (docs/PERFORMANCE.md).
/// Wall time covers everything after argument parsing: data, Fisher spectra, estimators. Seed 1, no store.
public enum ReferenceWorkloads {
    public enum Workload: String, CaseIterable, Sendable {
        case toy, p1, p2, p1smc = "p1-smc", fmnistSMC = "fmnist-smc", cnn, cnnMarkov = "cnn-markov", cnnOutput = "cnn-output",
             cnnFloor = "cnn-floor", all
    }

    /// A network workload: the plain estimator's spectra and 2sED pass on one model.
    public struct Case: Sendable {
        public var name: String
        public var description: String
        public var arch: String
        public var fisher: FisherKind
        public var data: String
        public var paths: Int
        public var inner: Int
        public var targetSeconds: Double
        public var targetMemoryBytes: Int?
    }

    /// The benchmark CNN: about 6 000 parameters, the size the CNN work compares against a peer. The
    /// targets are a tenth of the JAX peer's idle times (benchmarks/cnn_fisher_jax.py; its measured times
    /// are in docs/PERFORMANCE.md, the cnn-output and cnn-markov rows).
    public static let cnnArch = "28x28x1-conv8k5-maxpool2-conv16k5-maxpool2-10"

    public static let cases: [Case] = [
        Case(name: "p1", description: "MLP 54-16-7, Markov FIM (σ² = 0.1), N = 100 Gaussian, K = J = 100, 30 ε, lower + nested",
             arch: "54-16-7", fisher: .markov, data: "synthetic:gaussian", paths: 100, inner: 100, targetSeconds: 3, targetMemoryBytes: nil),
        Case(name: "p2", description: "MLP 784-128-10, output FIM, N = 100 Fashion-MNIST, K = 100, 30 ε",
             arch: "784-128-10", fisher: .output, data: "fashion-mnist", paths: 100, inner: 1, targetSeconds: 25,
             targetMemoryBytes: 1 << 30),
        Case(name: "cnn-markov", description: "CNN 28x28x1-conv8k5-maxpool2-conv16k5-maxpool2-10, Markov FIM (σ² = 0.1), N = 100 Fashion-MNIST, K = J = 100, 30 ε, lower + nested",
             arch: cnnArch, fisher: .markov, data: "fashion-mnist", paths: 100, inner: 100, targetSeconds: 340,
             targetMemoryBytes: 1 << 30),
        Case(name: "cnn-output", description: "CNN 28x28x1-conv8k5-maxpool2-conv16k5-maxpool2-10, output FIM, N = 100 Fashion-MNIST, K = 100, 30 ε",
             arch: cnnArch, fisher: .output, data: "fashion-mnist", paths: 100, inner: 1, targetSeconds: 4.7,
             targetMemoryBytes: 1 << 30),
    ]

    /// The smc workload's budget (ed's defaults for the smc estimator).
    public static let smcPaths = MarkovSMC.defaultPaths, smcInner = MarkovSMC.defaultInner

    /// Runs `workload` (every workload for `.all`) with `threads` parallel tasks.
    public static func run(_ workload: Workload, threads: Int) async throws -> BenchmarkSuite {
        var results: [BenchmarkResult] = []
        if workload == .toy || workload == .all { results += try measureToy() }
        for setting in SMCSetting.all where workload == setting.workload || workload == .all {
            results.append(try await measureSMC(setting, threads: threads))
        }
        let chosen = cases.filter { workload == .all || $0.name == workload.rawValue || (workload == .cnn && $0.name.hasPrefix("cnn-")) }
        for c in chosen { results.append(try await measure(c, threads: threads)) }
        if workload == .cnnFloor || workload == .cnn || workload == .all { results += try await KernelFloor.measure(threads: threads) }
        return BenchmarkSuite(threads: threads, benchmarks: results)
    }

    /// One network case: data and model, the plain design's spectra, then nested, joint and lower 2sED
    /// with 200 bootstrap resamples over 30 ε.
    public static func measure(_ c: Case, threads: Int) async throws -> BenchmarkResult {
        let start = Date()
        let architecture = try Architecture(parsing: c.arch)
        let data = try DataSource.load(c.data, samples: 100, labels: .none, standardize: false, seed: 1,
                                       inputSize: architecture.inputSize, inputShape: architecture.inputShape, flag: "\(Setting.data)")
        let model: any FisherModel = c.fisher == .markov
            ? try MarkovFisher(architecture: architecture, activation: .relu, data: data.inputs, sigma2: 0.1, noiseSamples: 1, noiseSeed: 1)
            : try OutputFisher(architecture: architecture, activation: .relu, data: data.inputs)
        let setup = Date().timeIntervalSince(start)
        let design = try MonteCarloDesign(paths: c.paths, inner: c.inner, box: -1...1, seed: 1, activation: .relu)
        let layers = model.blockDimensions
        let configuration = NetworkRunConfiguration(
            fisher: c.fisher, arch: architecture.notation, bias: false, activation: .relu, box: -1...1, seed: 1, data: c.data,
            samples: 100, labels: "none", standardize: false, sigma2: 0.1, noiseSamples: 1)
        let meta = try StoreMeta(layers: layers, paths: c.paths, inner: layers.count > 1 ? c.inner : 0, configuration: configuration)
        let t1 = Date()
        let outcome = try await SpectraRun(model: model, design: design, meta: meta, threads: threads).execute(store: nil, resume: false)
        let spectraSeconds = Date().timeIntervalSince(t1)
        let t2 = Date()
        let spectra = try MonteCarlo.layeredSpectra(outcome.rows, blockDimensions: layers)
        let request = MeasurementRequest(eps: LogGrid.points(from: 1e-3, to: 0.5, count: 30), zeta: 2.0 / 3.0, lower: true,
                                         normalization: .trace, bootstrap: 200, threads: threads)
        let measurement = try await PlainReport.measure(spectra: spectra, meta: meta, request: request)
        let estimatorSeconds = Date().timeIntervalSince(t2)
        let wall = Date().timeIntervalSince(start)
        let peak = peakMemoryBytes()
        let memOK = c.targetMemoryBytes.map { t in peak.map { $0 <= t } ?? false } ?? true
        let mid = measurement.points[15]
        return BenchmarkResult(
            name: c.name, description: c.description, dimension: spectra.dimension, paths: c.paths, inner: meta.inner, seconds: wall,
            phases: .init(setup: setup, spectra: spectraSeconds, estimators: estimatorSeconds), targetSeconds: c.targetSeconds,
            memory: .init(peak: peak, target: c.targetMemoryBytes), pass: wall <= c.targetSeconds && memOK,
            check: BenchmarkResult.Check(point: mid, sampled: false))
    }

    /// An smc workload: a network and its data at the smc estimator's default budget, 2sED and lower 2sED
    /// with intervals and the certified bracket at ε = 10⁻³ and 0.1 (the command of the issue that set the
    /// target; a finer grid costs one set of islands per ε more).
    public struct SMCSetting: Sendable {
        public var workload: Workload
        public var architecture: String
        public var data: String
        /// The data as the description names it.
        public var dataName: String
        public var targetSeconds: Double

        /// P1 (54-16-7 on N = 100 Gaussian inputs, ≤ 30 s) and 784-32-10 on N = 100 Fashion-MNIST images
        /// (≤ 10 minutes), both with σ² = 0.1.
        public static let all = [SMCSetting(workload: .p1smc, architecture: "54-16-7", data: "synthetic:gaussian", dataName: "Gaussian",
                                             targetSeconds: 30),
                                 SMCSetting(workload: .fmnistSMC, architecture: "784-32-10", data: "fashion-mnist", dataName: "Fashion-MNIST",
                                             targetSeconds: 600)]
    }

    public static func measureSMC(_ setting: SMCSetting, threads: Int) async throws -> BenchmarkResult {
        let start = Date()
        let architecture = try Architecture(parsing: setting.architecture)
        let data = try DataSource.load(setting.data, samples: 100, labels: .none, standardize: false, seed: 1,
                                       inputSize: architecture.inputSize, inputShape: architecture.inputShape, flag: "\(Setting.data)")
        let model = try MarkovFisher(architecture: architecture, activation: .relu, data: data.inputs, sigma2: 0.1,
                                     noiseSamples: 1, noiseSeed: 1)
        let smc = try MarkovSMC(model: model, box: -1...1, seed: 1, paths: smcPaths, inner: smcInner, traceDraws: TraceEstimate.defaultDraws(parameters: architecture.parameterCount))
        let eps = [0.001, 0.1]
        let r = try await smc.run(eps: eps, zeta: 2.0 / 3.0, normalization: .trace, lower: true, threads: threads)
        let wall = Date().timeIntervalSince(start)
        return BenchmarkResult(
            name: setting.workload.rawValue,
            description: "MLP \(setting.architecture), Markov FIM (σ² = 0.1), N = 100 \(setting.dataName), smc K = \(smcPaths), J = \(smcInner), ε = 10⁻³ and 0.1, 2sED + lower with intervals",
            dimension: architecture.parameterCount, paths: nil, inner: nil, seconds: wall, phases: nil, targetSeconds: setting.targetSeconds,
            memory: nil, pass: wall <= setting.targetSeconds,
            check: BenchmarkResult.Check(point: r.points[0], sampled: true))
    }

    /// The toy workloads: `toy`'s computation (JSON included) at d = 10 000 over 100 ε.
    public static func measureToy() throws -> [BenchmarkResult] {
        var rng = Xoshiro256(seed: 1)
        let lambdas = (0..<10_000).map { _ in Foundation.pow(10, rng.uniform(-3, 3)) }
        let eps = LogGrid.points(from: 1e-4, to: 0.5, count: 100)
        let models: [(String, String, () throws -> ToyModel)] = [
            ("toy-constant", "toy model, constant λ (10 000 values over 6 decades), 100 ε", { try ToyModel(family: .constant, lambdas: lambdas) }),
            ("toy-bernoulli", "toy model, Bernoulli d = 10 000 on [0.01, 0.99], 100 ε, greedy covers", { try ToyModel(family: .bernoulli, dimension: 10_000, box: (0.01, 0.99)) }),
        ]
        return try models.map { name, description, make in
            let start = Date()
            let result = try ToyMeasurement.measure(model: try make(), eps: eps, zeta: 2.0 / 3.0, normalization: .trace, greedyMax: 1_000_000)
            _ = try JSONValue(encoding: result).serialized()
            let wall = Date().timeIntervalSince(start)
            return BenchmarkResult(name: name, description: description, dimension: 10_000, paths: nil, inner: nil, seconds: wall,
                                   phases: nil, targetSeconds: 1, memory: nil, pass: wall <= 1, check: nil)
        }
    }

    /// Peak resident memory of this process (VmHWM in /proc/self/status), in bytes.
    public static func peakMemoryBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            if parts.count >= 2, let kb = Int(parts[1]) { return kb * 1024 }
        }
        return nil
    }
}

/// The workloads run by one `bench`.
public struct BenchmarkSuite: Sendable, Encodable {
    public var threads: Int
    /// Where OpenBLAS took its work buffers: `per-thread` (the executable's CBLASBuffers) or `shared` (the
    /// library's table under its mutex).
    public var blasBuffers: String
    public var benchmarks: [BenchmarkResult]

    public init(threads: Int, benchmarks: [BenchmarkResult]) {
        self.threads = threads
        self.blasBuffers = BLASBuffers.perThread ? "per-thread" : "shared"
        self.benchmarks = benchmarks
    }
}

/// One timed workload against its targets.
public struct BenchmarkResult: Sendable, Encodable {
    /// Where the network cases spend their time.
    public struct Phases: Sendable, Equatable {
        public var setup: Double
        public var spectra: Double
        public var estimators: Double
    }

    /// Peak resident memory and its target (network cases).
    public struct Memory: Sendable, Equatable {
        public var peak: Int?
        public var target: Int?
    }

    /// A value the workload computed, to check a faster build still computes the same thing: a point of
    /// the plain estimator, or of the smc estimator with its interval.
    public struct Check: Sendable, Encodable {
        public var point: EpsilonEstimate
        /// Whether the point is a sampler's (JSON: `eps`, `d_zeta`, `ci95`, `d_zeta_lower`), else the plain
        /// estimator's (its `ed` keys).
        public var sampled: Bool

        public var eps: Double { point.eps }
        public var dZeta: Double { point.dZeta }
        public var interval: ClosedRange<Double>? { sampled ? point.ci95 : nil }

        public func encode(to encoder: any Encoder) throws {
            guard sampled else { return try PlainReport.PointKeys(point).encode(to: encoder) }
            var c = encoder.container(keyedBy: ResultKey.self)
            try c.encode(point.eps, forKey: ResultKey("eps"))
            try c.encode(point.dZeta, forKey: ResultKey("d_zeta"))
            try c.encode(point.ci95, forKey: ResultKey("ci95"))
            try c.encode(point.dZetaLower, forKey: ResultKey("d_zeta_lower"))
        }
    }

    public var name: String
    public var description: String
    public var dimension: Int
    public var paths: Int?
    public var inner: Int?
    public var seconds: Double
    public var phases: Phases?
    public var targetSeconds: Double
    public var memory: Memory?
    public var pass: Bool
    public var check: Check?

    enum CodingKeys: String, CodingKey {
        case name, description, dimension, paths, inner, seconds, setupSeconds, spectraSeconds, estimatorSeconds, targetSeconds
        case peakMemoryBytes, targetMemoryBytes, pass, checkPoint
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(description, forKey: .description)
        try c.encode(dimension, forKey: .dimension)
        try c.encodeIfPresent(paths, forKey: .paths)
        try c.encodeIfPresent(inner, forKey: .inner)
        try c.encode(seconds, forKey: .seconds)
        if let p = phases {
            try c.encode(p.setup, forKey: .setupSeconds)
            try c.encode(p.spectra, forKey: .spectraSeconds)
            try c.encode(p.estimators, forKey: .estimatorSeconds)
        }
        try c.encode(targetSeconds, forKey: .targetSeconds)
        if let m = memory {
            try c.encode(m.peak, forKey: .peakMemoryBytes)
            try c.encode(m.target, forKey: .targetMemoryBytes)
        }
        try c.encode(pass, forKey: .pass)
        try c.encodeIfPresent(check, forKey: .checkPoint)
    }
}
