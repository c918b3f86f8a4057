import ArgumentParser
import Foundation
import Benchmarks
import TwoScaleCore
import TwoScaleFormats

/// `twoscale bench [WORKLOAD]`: the reference workloads, timed, against their targets.
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
        cnn-floor: the dense kernels those CNN spectra cannot do without (the Gram syrk and the dsyevd of each \
        output-FIM draw; the second convolution's 16 filter Grams and eigenproblems and the 900-sided softmax \
        eigenproblem of each Markov inner draw, timed over 200 draws and scaled to 10⁴), on random matrices of the \
        same shapes: a floor under cnn-output and cnn-markov for any exact double-precision implementation; it \
        passes when the target is not below it. Also run by cnn and all. \
        p1-smc: the P1 setting (54-16-7, N = 100, σ² = 0.1) with the smc estimator at its default budget (K = 64, J = 32; \
        128 particles × 20 sweeps per first-layer neuron, islands of 2 × 16 particles), 2sED and lower 2sED with \
        intervals at ε = 10⁻³ and 0.1 (target ≤ 30 s). \
        fmnist-smc: the same for 784-32-10 on the first N = 100 Fashion-MNIST training images (target ≤ 10 minutes). \
        Wall time covers everything after argument parsing: data, Fisher spectra, estimators. Seed 1, no store.
        """)

    typealias Workload = ReferenceWorkloads.Workload

    @Argument(help: "Name.")
    var workload: Workload = .all

    @Option(help: "Parallel tasks (default: the active cores).")
    var threads: Int?

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let t = try threads.map { n -> Int in
            guard n >= 1, n <= 1024 else { throw TwoScaleError.invalid("--threads", "\(n)", allowed: "give a count from 1 to 1024") }
            return n
        } ?? Swift.max(1, ProcessInfo.processInfo.activeProcessorCount)
        #if DEBUG
        Console.warn("bench: this is a debug build; build with swift build -c release for meaningful figures")
        #endif
        let suite = try await ReferenceWorkloads.run(workload, threads: t)
        try output.emit(suite) { suite.benchmarks.map(Self.text).joined() }
    }

    /// One workload's lines: wall time against the target, where it went, memory, the check value.
    static func text(_ r: BenchmarkResult) -> String {
        var human = "\(r.name): \(r.description)\n"
        if let p = r.phases {
            human += String(format: "  wall %.2f s (target ≤ %g s) — data+model %.2f s, spectra %.2f s, estimators %.2f s\n",
                            r.seconds, r.targetSeconds, p.setup, p.spectra, p.estimators)
        } else {
            human += String(format: r.targetSeconds < 2 ? "  wall %.3f s (target ≤ %g s)\n" : "  wall %.2f s (target ≤ %g s)\n", r.seconds, r.targetSeconds)
        }
        if let m = r.memory, let tm = m.target {
            human += "  peak memory \(m.peak.map { RunProgress.bytes($0) } ?? "unknown") (target ≤ \(RunProgress.bytes(tm)))\n"
        }
        if let c = r.check {
            human += "  d_zeta(ε = \(Fmt.num(c.eps))) = \(Fmt.num(c.dZeta))"
                + (c.interval.map { " [\(Fmt.num($0.lowerBound)), \(Fmt.num($0.upperBound))]\n" } ?? " of d = \(r.dimension)\n")
        }
        return human + "  \(r.pass ? "PASS" : "FAIL")\n"
    }
}

extension ReferenceWorkloads.Workload: ExpressibleByArgument {}
