import ArgumentParser
import Foundation
import Networks
import TwoScaleCore

/// `twoscale ed`: the 2sED of a stochastic network by the Monte Carlo design of SPEC §5.
struct EdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ed",
        abstract: "2sED (nested, joint, lower) of a network by Monte Carlo over its parameter box.",
        discussion: """
        K paths θ^k ~ U(box^d); for each layer m ≥ 2 and path k, J inner draws of θ_m with θ_<m fixed (SPEC §5). \
        The eigenvalues per (path, layer, draw) go to the spectra store (--store DIR), written path by path: \
        a run stopped at any moment continues with --resume (same settings required), and \
        twoscale analyze DIR recomputes any ε grid, ζ, normalisation or Abbas ED from it. \
        --shard i/n computes only the paths k ≡ i−1 (mod n) (k = 0…K−1) into a shard store; \
        twoscale merge joins the shards into the store of the unsharded run, byte for byte. \
        Every path and inner draw has its own random stream, so results do not depend on --threads. \
        The "ess" list gives, per stage m ≥ 2, the smallest effective sample size of the stage weights over the ε grid.
        """)

    @OptionGroup var network: NetworkModelOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("Parameter box lo:hi, the same on every axis.", valueName: "lo:hi"))
    var box: String = "-1:1"

    @Option(help: "Estimator: plain (uniform paths, the spectra store; biased low in high d, see docs/ESTIMATORS.md) or smc (factorised over neurons, annealed SMC samplers with intervals; Markov FIM, no store).")
    var estimator: EstimatorKind = .plain

    @Option(help: "K (default 100 for plain, 64 for smc): plain: paths θ^k ~ U(box); smc: outer particles (islands) of later layers, and 4K particles per first-layer neuron.")
    var paths: Int?

    @Option(help: "J (default 100 for plain, 32 for smc): plain: inner draws of θ_m per path and layer m ≥ 2 (unused for --fisher output); smc: particles per island neuron.")
    var inner: Int?

    static let smcDefaultPaths = 64
    static let smcDefaultInner = 32

    @Option(help: "smc: uniform draws of θ for the trace normalisation ĉ (no eigenproblem; its uncertainty enters the interval).")
    var traceDraws: Int = 1000

    @Option(help: ArgumentHelp("Spectra store folder (created; see twoscale analyze).", valueName: "DIR"))
    var store: String?

    @Flag(help: "Continue the run stored in --store (its meta.json must record the same settings); starts it if absent.")
    var resume = false

    @Option(help: ArgumentHelp("Compute only shard i of n (paths k ≡ i−1 mod n) into --store; merge the shards with twoscale merge.", valueName: "i/n"))
    var shard: String?

    @OptionGroup var analysis: AnalysisOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        try PathFlags.check(store, flag: "--store", what: "a folder for the spectra store")
    }

    func run() async throws {
        let start = Date()
        // Everything the user typed is checked before any file is touched or any path computed.
        let architecture = try network.checkedArchitecture()
        let (lo, hi) = try Grid.parseInterval(box, flag: "--box")
        let request = try analysis.request()
        let paths = self.paths ?? (estimator == .smc ? Self.smcDefaultPaths : 100)
        let inner = self.inner ?? (estimator == .smc ? Self.smcDefaultInner : 100)
        if estimator == .smc {
            for (given, flag) in [(store != nil, "--store"), (shard != nil, "--shard"), (resume, "--resume"),
                                  (!request.abbasN.isEmpty, "--abbas-n"), (network.fisher == .output, "--fisher output")] where given {
                throw TwoScaleError.usage("\(flag) works with the plain estimator (uniform-path spectra); add --estimator plain, or drop \(flag) (the smc estimator's samples depend on ε, see docs/ESTIMATORS.md)")
            }
            let model = try network.makeModel(architecture: architecture)
            guard let markov = model as? MarkovFisher else {
                throw TwoScaleError.usage("--estimator smc needs the Markov FIM (--fisher markov)")
            }
            let smc = try NetworkSMC(model: markov, box: lo...hi, seed: UInt64(network.seed), paths: paths, inner: inner,
                                     traceDraws: traceDraws)
            let result = try await smc.run(eps: request.eps, zeta: request.zeta, normalization: request.normalization,
                                           lower: request.lower, threads: request.threads) { Console.progress("ed: " + $0) }
            let settings = network.settings(architecture: architecture, box: lo...hi)
            let report = SMCNetworkReport(result: result, architecture: architecture, settings: settings, request: request,
                                          paths: paths, inner: inner, seconds: Date().timeIntervalSince(start))
            try output.emit(report.json) { report.human }
            return
        }
        let design = try MonteCarloDesign(paths: paths, inner: inner, box: lo...hi, seed: UInt64(network.seed),
                                          activation: network.activation)
        let shardSpec = try shard.map { try Shard(parsing: $0) }
        if let s = shardSpec {
            guard store != nil else { throw TwoScaleError.usage("--shard: a shard is written to a store; add --store DIR") }
            guard s.count <= paths else {
                throw TwoScaleError.invalid("--shard", s.description, allowed: "n must not exceed the number of paths K = \(paths)")
            }
        }
        if resume && store == nil { throw TwoScaleError.usage("--resume: give the store to continue with --store DIR") }
        if let dir = store, !resume, FileManager.default.fileExists(atPath: dir + "/meta.json") {
            throw TwoScaleError.invalid("--store", dir, allowed: "the folder already holds a spectra store; add --resume to continue it, or choose another folder")
        }

        // The paths this run stores (all K, or shard i/n's share), counted without listing them.
        let storedCount = shardSpec.map { (paths - $0.index + $0.count) / $0.count } ?? paths
        let blocks = network.fisher == .output ? [architecture.parameterCount] : architecture.layerParameterCounts
        let plannedBytes = RunProgress.storeBytes(layers: blocks, paths: storedCount, inner: inner)
        guard plannedBytes <= RunProgress.maxStoreBytes else {
            throw TwoScaleError.invalid("--paths", "\(paths)", allowed: "K = \(paths) paths × J = \(inner) inner draws of d = \(architecture.parameterCount) parameters make a store of up to \(RunProgress.bytes(plannedBytes)) (held in memory to assemble); the limit is 1 TiB: use fewer paths or inner draws, or --shard")
        }

        let model = try network.makeModel(architecture: architecture)
        let layers = model.blockDimensions
        let meta = try StoreMeta(layers: layers, paths: paths, inner: layers.count > 1 ? inner : 0,
                                 settings: network.settings(architecture: architecture, box: lo...hi), shard: shardSpec)
        let runner = try SpectraRun(model: model, design: design, meta: meta, threads: request.threads)
        let progress = RunProgress(label: "ed", storeBytes: plannedBytes, threads: request.threads)
        // With a store, Ctrl-C stops cleanly: the Monte Carlo task is cancelled (finished paths are saved,
        // paths in progress are dropped and recomputed on resume) and the message says how to resume.
        let interruption = store != nil ? Interruption.install() : nil
        defer { interruption?.remove() }
        let work = Task { [store, resume] in
            try await runner.execute(store: store, resume: resume, progress: progress.update)
        }
        interruption?.onInterrupt { work.cancel() }
        let outcome: SpectraRun.Outcome
        do {
            outcome = try await work.value
        } catch {
            guard let i = interruption, i.requested, let dir = store else { throw error }
            let done = (try? SpectraStore.open(directory: dir).completedPaths().count) ?? 0
            Console.error("twoscale: interrupted; \(done) of \(meta.storedPaths.count) paths are saved in \(dir). "
                + "Continue with the same command and --resume (e.g. twoscale ed … --store \(dir) --resume).")
            throw ExitCode(130)
        }

        if let s = shardSpec {
            let seconds = Date().timeIntervalSince(start)
            let json: JSONValue = .object([
                ("store", .string(store ?? "")), ("shard", .string(s.description)),
                ("paths", .int(meta.storedPaths.count)), ("total_paths", .int(paths)),
                ("computed", .int(outcome.computed)), ("dimension", .int(meta.dimension)), ("seconds", .double(seconds)),
            ])
            try output.emit(json) {
                "shard \(s) of \(architecture): \(meta.storedPaths.count) of K = \(paths) paths in \(store ?? "") (\(outcome.computed) computed now); merge all \(s.count) shards with twoscale merge\n"
            }
            return
        }
        let spectra = try MonteCarlo.layeredSpectra(outcome.rows, blockDimensions: layers)
        let report = try await NetworkReport.compute(spectra: spectra, meta: meta, request: request,
                                                     seconds: Date().timeIntervalSince(start))
        try output.emit(report.json) { report.human }
    }
}
