import ArgumentParser
import Foundation
import Networks
import Sampling
import ToyModels
import TwoScaleCore
import TwoScaleFormats

/// `twoscale bench p1|p2|all`: the reference workloads, timed, against their targets.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time the reference workloads (build with -c release) and check them against their targets.",
        discussion: """
        p1: MLP 54-16-7, Markov FIM, σ² = 0.1, N = 100 Gaussian inputs, K = J = 100, nested + joint + lower 2sED \
        with 200 bootstrap resamples over a 30-point ε grid 1e-3:0.5:30 (target ≤ 3 s wall). \
        p2: MLP 784-128-10 (101 632 parameters), output FIM, N = 100 Fashion-MNIST images, K = 100 draws, \
        the same 2sED pass (target ≤ 25 s wall, peak memory ≤ 1 GB: VmHWM of this process). \
        toy: exact toy models with d = 10 000 over a 100-point ε grid 1e-4:0.5:100 — constant λ (10 000 values \
        log-uniform over 6 decades, seed 1) and Bernoulli on [0.01, 0.99] with greedy covers (target ≤ 1 s each). \
        cnn: the Fashion-MNIST CNN 28x28x1-conv8k5-maxpool2-conv16k5-maxpool2-10 (5 960 parameters), N = 100 \
        images, the Markov FIM (σ² = 0.1) with K = J = 100 (lower + nested) and the output FIM with K = 100, \
        the same 2sED pass (targets: 10× faster than the JAX peer benchmarks/cnn_fisher_jax.py — ≤ 340 s and ≤ 4.7 s — and peak memory ≤ 1 GB). \
        p1-smc: the p1 network with the smc estimator at its default budget (K = 64, J = 32; 256 particles per \
        first-layer neuron), 2sED and lower 2sED with intervals over a 5-point ε grid 1e-3:0.5:5 (target ≤ 30 s). \
        Wall time covers everything after argument parsing: data, Fisher spectra, estimators. Seed 1, no store.
        """)

    enum Workload: String, ExpressibleByArgument, CaseIterable { case toy, p1, p2, p1smc = "p1-smc", cnn, cnnMarkov = "cnn-markov", cnnOutput = "cnn-output", all }

    @Argument(help: "Which workload: toy, p1, p2, p1-smc, cnn (both CNN routes: cnn-markov, cnn-output) or all.")
    var workload: Workload = .all

    @Option(help: "Parallel tasks (default: the active cores).")
    var threads: Int?

    @OptionGroup var output: OutputOptions

    struct Case {
        var name: String
        var description: String
        var arch: String
        var fisher: FisherKind
        var data: String
        var paths: Int
        var inner: Int
        var targetSeconds: Double
        var targetMemoryBytes: Int?
    }

    static let cases: [Case] = [
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

    /// The benchmark CNN: about 6 000 parameters, the size the CNN issue asks to compare against a peer.
    /// The targets are a tenth of the JAX peer's idle times here (benchmarks/cnn_fisher_jax.py: 46.9 s for the
    /// output route, ≈ 3 400 s for the Markov route extrapolated from 6 paths).
    static let cnnArch = "28x28x1-conv8k5-maxpool2-conv16k5-maxpool2-10"

    func run() async throws {
        let t = try threads.map { n -> Int in
            guard n >= 1, n <= 1024 else { throw TwoScaleError.invalid("--threads", "\(n)", allowed: "give a count from 1 to 1024") }
            return n
        } ?? Swift.max(1, ProcessInfo.processInfo.activeProcessorCount)
        let chosen = Self.cases.filter { workload == .all || $0.name == workload.rawValue || (workload == .cnn && $0.name.hasPrefix("cnn-")) }
        var results: [JSONValue] = []
        var lines = ""
        #if DEBUG
        Console.warn("bench: this is a debug build; build with swift build -c release for meaningful figures")
        #endif
        if workload == .toy || workload == .all {
            for r in try Self.measureToy() {
                results.append(r.json)
                lines += r.human
            }
        }
        if workload == .p1smc || workload == .all {
            let r = try await measureSMC(threads: t)
            results.append(r.json)
            lines += r.human
        }
        for c in chosen {
            let r = try await measure(c, threads: t)
            results.append(r.json)
            lines += r.human
        }
        let json: JSONValue = .object([("threads", .int(t)), ("benchmarks", .array(results))])
        try output.emit(json) { lines }
    }

    struct Result {
        var json: JSONValue
        var human: String
    }

    func measure(_ c: Case, threads: Int) async throws -> Result {
        let start = Date()
        let architecture = try Architecture(parsing: c.arch)
        let data = try DataSource.load(c.data, samples: 100, labels: .none, standardize: false, seed: 1,
                                       inputSize: architecture.inputSize, inputShape: architecture.inputShape, flag: "--data")
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
        let request = MeasurementRequest(eps: try Grid.parse("1e-3:0.5:30", flag: "--eps"), zeta: 2.0 / 3.0, lower: true,
                                         normalization: .trace, bootstrap: 200, threads: threads)
        let measurement = try await NetworkMeasurement.measure(spectra: spectra, meta: meta, request: request)
        let estimatorSeconds = Date().timeIntervalSince(t2)
        let wall = Date().timeIntervalSince(start)
        let peak = Self.peakMemoryBytes()
        let timeOK = wall <= c.targetSeconds
        let memOK = c.targetMemoryBytes.map { t in peak.map { $0 <= t } ?? false } ?? true
        let mid = try JSONValue(encoding: measurement.points[15])
        var kv: [(String, JSONValue)] = [
            ("name", .string(c.name)), ("description", .string(c.description)),
            ("dimension", .int(spectra.dimension)), ("paths", .int(c.paths)), ("inner", .int(meta.inner)),
            ("seconds", .double(wall)), ("setup_seconds", .double(setup)),
            ("spectra_seconds", .double(spectraSeconds)), ("estimator_seconds", .double(estimatorSeconds)),
            ("target_seconds", .double(c.targetSeconds)),
            ("peak_memory_bytes", peak.map { .int($0) } ?? .null),
            ("target_memory_bytes", c.targetMemoryBytes.map { .int($0) } ?? .null),
            ("pass", .bool(timeOK && memOK)),
        ]
        kv.append(("check_point", mid))
        var human = "\(c.name): \(c.description)\n"
        human += String(format: "  wall %.2f s (target ≤ %g s) — data+model %.2f s, spectra %.2f s, estimators %.2f s\n",
                        wall, c.targetSeconds, setup, spectraSeconds, estimatorSeconds)
        if let tm = c.targetMemoryBytes {
            human += "  peak memory \(peak.map { RunProgress.bytes($0) } ?? "unknown") (target ≤ \(RunProgress.bytes(tm)))\n"
        }
        human += "  d_zeta(ε = \(Fmt.num(measurement.points[15].eps))) = \(Fmt.num(measurement.points[15].dZeta)) of d = \(spectra.dimension)\n"
        human += "  \(timeOK && memOK ? "PASS" : "FAIL")\n"
        return Result(json: .object(kv), human: human)
    }

    /// The p1 network with the smc estimator at its default budget.
    func measureSMC(threads: Int) async throws -> Result {
        let start = Date()
        let architecture = try Architecture(parsing: "54-16-7")
        let data = try DataSource.load("synthetic:gaussian", samples: 100, labels: .none, standardize: false, seed: 1,
                                       inputSize: architecture.inputSize, inputShape: architecture.inputShape, flag: "--data")
        let model = try MarkovFisher(architecture: architecture, activation: .relu, data: data.inputs, sigma2: 0.1,
                                     noiseSamples: 1, noiseSeed: 1)
        let smc = try NetworkSMC(model: model, box: -1...1, seed: 1, paths: EdCommand.smcDefaultPaths,
                                 inner: EdCommand.smcDefaultInner, traceDraws: 1000)
        let eps = try Grid.parse("1e-3:0.5:5", flag: "--eps")
        let r = try await smc.run(eps: eps, zeta: 2.0 / 3.0, normalization: .trace, lower: true, threads: threads)
        let wall = Date().timeIntervalSince(start)
        let ok = wall <= 30
        let p = r.points[0]
        let json: JSONValue = .object([
            ("name", .string("p1-smc")),
            ("description", .string("MLP 54-16-7, Markov FIM (σ² = 0.1), N = 100 Gaussian, smc K = 64, J = 32, 5 ε, 2sED + lower with intervals")),
            ("dimension", .int(976)), ("seconds", .double(wall)), ("target_seconds", .double(30)), ("pass", .bool(ok)),
            ("check_point", .object([("eps", .double(p.eps)), ("d_zeta", .double(p.dZeta)),
                                     ("ci95", .numbers([p.ci95.lowerBound, p.ci95.upperBound])),
                                     ("d_zeta_lower", .number(p.dZetaLower))])),
        ])
        var human = "p1-smc: MLP 54-16-7, smc estimator (K = 64, J = 32), 5 ε, 2sED + lower with intervals\n"
        human += String(format: "  wall %.2f s (target ≤ 30 s)\n", wall)
        human += "  d_zeta(ε = \(Fmt.num(p.eps))) = \(Fmt.num(p.dZeta)) [\(Fmt.num(p.ci95.lowerBound)), \(Fmt.num(p.ci95.upperBound))]\n"
        human += "  \(ok ? "PASS" : "FAIL")\n"
        return Result(json: json, human: human)
    }

    /// The toy workloads: `toy` command computations (JSON report included) at d = 10 000.
    static func measureToy() throws -> [Result] {
        var rng = Xoshiro256(seed: 1)
        let lambdas = (0..<10_000).map { _ in Foundation.pow(10, rng.uniform(-3, 3)) }
        let eps = try Grid.parse("1e-4:0.5:100", flag: "--eps")
        let models: [(String, String, () throws -> ToyModel)] = [
            ("toy-constant", "toy model, constant λ (10 000 values over 6 decades), 100 ε", { try ToyModel(family: .constant, lambdas: lambdas) }),
            ("toy-bernoulli", "toy model, Bernoulli d = 10 000 on [0.01, 0.99], 100 ε, greedy covers", { try ToyModel(family: .bernoulli, dimension: 10_000, box: (0.01, 0.99)) }),
        ]
        return try models.map { name, description, make in
            let start = Date()
            let result = try ToyMeasurement.measure(model: try make(), eps: eps, zeta: 2.0 / 3.0, normalization: .trace, greedyMax: 1_000_000)
            _ = try JSONValue(encoding: result).serialized()
            let wall = Date().timeIntervalSince(start)
            let ok = wall <= 1
            let json: JSONValue = .object([("name", .string(name)), ("description", .string(description)),
                                           ("dimension", .int(10_000)), ("seconds", .double(wall)),
                                           ("target_seconds", .double(1)), ("pass", .bool(ok))])
            let human = "\(name): \(description)\n" + String(format: "  wall %.3f s (target ≤ 1 s)\n", wall) + "  \(ok ? "PASS" : "FAIL")\n"
            return Result(json: json, human: human)
        }
    }

    /// Peak resident memory of this process (VmHWM in /proc/self/status), in bytes.
    static func peakMemoryBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            if parts.count >= 2, let kb = Int(parts[1]) { return kb * 1024 }
        }
        return nil
    }
}
