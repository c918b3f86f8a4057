import ArgumentParser
import Cluster
import Fisher
import Foundation
import Estimation
import NetworkEstimators
import Samplers
import Networks
import SpectraStore
import TwoScaleCore
import TwoScaleFormats

/// `twoscale ed`: the 2sED of a stochastic network by the Monte Carlo design of docs/METHOD.md §13.
struct EdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ed",
        abstract: "2sED (nested, joint, lower) of a network by Monte Carlo over its parameter box.",
        discussion: """
        The 2sED does not depend on trained weights. Default: smc (docs/ESTIMATORS.md), with 95% intervals \
        and a certified bracket; --store, --resume, --shard, --abbas-n and --fisher output choose plain. \
        Results do not depend on --threads or MPI ranks. Terms: docs/GLOSSARY.md; usage: docs/GUIDE.md.
        """)

    /// ed's defaults for the shared option groups: 100 Gaussian inputs, σ² = 0.1, the estimator chosen by the run.
    enum Defaults: DataDefaults, NoiseDefaults, EstimatorDefaults {
        static let inputs = 100
        static var data: String? { "synthetic:gaussian" }
        static var samples: Int? { inputs }
        static var labels: LabelColumn { .none }
        static var use: EstimatorUse { .ed }
        static var estimator: EstimatorKind? { nil }
        static var estimatorHelp: String { "smc (default), plain (which --store and its kin select), tempering." }
    }

    @OptionGroup var model: ModelOptions
    @OptionGroup var data: DataOptions<Defaults>
    @OptionGroup var fisherModel: FisherModelOptions<Defaults>

    @Option(help: "Seed of every random draw.")
    var seed: UInt64 = 1

    @Option(parsing: .unconditional, help: ArgumentHelp("Parameter box lo:hi, the same on every axis.", valueName: "lo:hi"))
    var box: String = "-1:1"

    @OptionGroup var estimation: EstimatorOptions<Defaults>

    @Option(help: "tempering: sweeps per step (⌈widest unit/4⌉, 5–1000).")
    var sweeps: Int?

    @Option(help: ArgumentHelp("smc, tempering: rerun, raising what limits it, until every reported interval is at most W of its estimate.", valueName: "W"))
    var targetWidth: Double?

    @Option(help: "Cap on K or P for --target-width (default 8 × first).")
    var maxPaths: Int?

    @Option(help: ArgumentHelp("Spectra store folder (created; see twoscale analyze).", valueName: "DIR"))
    var store: String?

    @Option(help: ArgumentHelp("tempering: keep progress in DIR; rerun to continue.", valueName: "DIR"))
    var checkpoint: String?

    @Flag(help: "Continue --store's run (same settings), or start it.")
    var resume = false

    @Option(help: ArgumentHelp("Compute only shard i of n into --store, for twoscale merge; auto: from the SLURM array task.", valueName: "i/n|auto"))
    var shard: String?

    @OptionGroup var analysis: AnalysisOptions
    @OptionGroup var output: OutputOptions

    /// Not an input of the 2sED: given, it is refused with the command that takes weights.
    @Option(help: .hidden)
    var weights: String?

    /// The estimator settings given (`--trace-draws`, `--island-sweeps`, `--sweeps`, `--bootstrap`): each is some
    /// estimator's own (`NetworkEstimator.settings`), an error with another, not ignored.
    var estimatorFlags: [Setting] { estimation.given + analysis.given + (sweeps != nil ? [.sweeps] : []) }

    /// The Fisher estimator the flags ask for, on the data they name (read here).
    func makeModel(architecture: Architecture) throws -> any FisherModel {
        let inputs = try data.load(architecture: architecture, seed: seed).inputs
        return try fisherModel.model(architecture: architecture, activation: model.activation, inputs: inputs, seed: seed)
    }

    /// The number of inputs a model holds (`--samples`, or fewer where the default met a smaller file).
    static func inputCount(_ model: any FisherModel) -> Int? {
        (model as? MarkovFisher)?.data.rows ?? (model as? OutputFisher)?.data.rows
    }

    /// The run configuration a store's meta.json records (σ² and R only for the Markov FIM).
    func configuration(architecture: Architecture, box: ClosedRange<Double>, inputs: Int?) -> NetworkRunConfiguration {
        NetworkRunConfiguration(fisher: fisherModel.fisher, arch: architecture.notation, bias: model.bias, activation: model.activation,
                                box: box, seed: seed, data: data.data, samples: inputs ?? data.samples ?? Defaults.inputs,
                                labels: data.labels.rawValue, standardize: data.standardize,
                                sigma2: fisherModel.noise.sigma2 ?? 0.1, noiseSamples: fisherModel.noise.noiseSamples)
    }

    func validate() throws {
        if maxPaths != nil, targetWidth == nil {
            throw TwoScaleError.usage("--max-paths caps --target-width's rounds: add --target-width W, or drop --max-paths")
        }
        if let w = weights {
            throw TwoScaleError.invalid("--weights", w, allowed: "ed does not take weights: the 2sED averages the Fisher information over the parameter box, so it is a property of the architecture, the data and the box, computable before training. The spectrum at trained weights: twoscale fisher --weights FILE")
        }
        try PathFlags.check(store, flag: "--store", what: "a folder for the spectra store")
        try PathFlags.check(checkpoint, flag: "--checkpoint", what: "a folder for the samplers' checkpoints")
        if checkpoint != nil, targetWidth != nil {
            throw TwoScaleError.usage("--checkpoint saves one run's samplers, and --target-width's rounds are several runs: drop one of them")
        }
    }

    func run() async throws {
        let start = Date()
        // Everything the user typed is checked before any file is touched or any path computed.
        let architecture = try model.architecture()
        let (lo, hi) = try Grid.parseInterval(box, flag: "--box")
        var request = try analysis.request()
        if TwoScaleMain.launch.mpi != nil, analysis.threads == nil, let cpus = CPUAffinity.count() {
            request.threads = cpus  // a rank's default: the cores mpirun bound it to
        }
        let plainOnly = Self.plainOnlyFeatures(store: store != nil, shard: shard != nil, resume: resume,
                                               abbas: !request.abbasN.isEmpty, outputFisher: fisherModel.fisher == .output)
        estimation.noteRename()
        let kind = estimation.estimator ?? EstimatorRegistry.defaultKind(needsStoredSpectra: !plainOnly.isEmpty)
        let estimator = try EstimatorRegistry.estimator(kind)
        try EstimatorFlags.refuseForeign(estimatorFlags, kind: kind, choice: estimation.estimator != nil ? .given
                                         : plainOnly.isEmpty ? .byDefault : .chosenFor(plainOnly))
        if estimation.estimator == nil, !plainOnly.isEmpty, !TwoScaleMain.silentRank {
            Console.note("ed: \(plainOnly.joined(separator: ", ")) needs uniform-path spectra, which only the \(kind) estimator produces: using --estimator \(kind) (\(EstimatorRegistry.edDefault) is the default otherwise; give --estimator to choose)")
        }
        if targetWidth != nil, kind != SMCEstimator.kind, kind != TemperingEstimator.kind {
            throw TwoScaleError.usage("--target-width works with the smc and tempering estimators' reported intervals, not with \(kind)"
                + (plainOnly.isEmpty ? "" : " (chosen for \(plainOnly.joined(separator: ", ")))"))
        }
        if checkpoint != nil, !estimator.savesCheckpoints {
            throw TwoScaleError.usage("--checkpoint: the \(kind) estimator does not save checkpoints; use --estimator \(TemperingEstimator.kind)"
                + (estimator.storesSpectra ? ", or --store DIR and --resume (the \(kind) estimator's spectra store)" : ""))
        }
        if request.lower, !estimator.estimatesLower {
            throw TwoScaleError.usage("--lower: the \(kind) estimator estimates the 2sED only; drop --lower, or use --estimator \(EstimatorRegistry.lowerEstimators)")
        }
        let (paths, inner) = estimation.budget(estimator)
        if let note = Self.costNote(paths: paths, inner: inner, defaults: estimator.defaultBudget(.ed)), !TwoScaleMain.silentRank {
            Console.note(note)
        }
        if !estimator.storesSpectra {
            try await runEndToEnd(estimator, architecture: architecture, box: lo...hi, request: request, paths: paths, inner: inner,
                                  plainOnly: plainOnly, start: start)
            return
        }
        let design = try MonteCarloDesign(paths: paths, inner: inner, box: lo...hi, seed: seed,
                                          activation: model.activation)
        let shardSpec = try shard.map { try Self.parseShard($0, paths: paths) }
        if shardSpec != nil, store == nil { throw TwoScaleError.usage("--shard: a shard is written to a store; add --store DIR") }
        if resume && store == nil { throw TwoScaleError.usage("--resume: give the store to continue with --store DIR") }

        // The paths this run stores (all K, or shard i/n's share), counted without listing them.
        let storedCount = shardSpec.map { (paths - $0.index + $0.count) / $0.count } ?? paths
        let blocks = fisherModel.fisher == .output ? [architecture.parameterCount] : architecture.blockParameterCounts
        let plannedBytes = RunProgress.storeBytes(layers: blocks, paths: storedCount, inner: inner)
        guard plannedBytes <= RunProgress.maxStoreBytes else {
            throw TwoScaleError.invalid("--paths", "\(paths)", allowed: "K = \(paths) paths × J = \(inner) inner draws of d = \(architecture.parameterCount) parameters make a store of up to \(RunProgress.bytes(plannedBytes)) (held in memory to assemble); the limit is 1 TiB: use fewer paths or inner draws, or --shard")
        }

        // What the store must not already hold, then the model (reads the data) and the run.
        let prepare = { (lead: Bool) throws -> SpectraRun in
            if lead, let dir = store, !resume, FileManager.default.fileExists(atPath: dir + "/meta.json") {
                throw TwoScaleError.invalid("--store", dir, allowed: "the folder already holds a spectra store; add --resume to continue it, or choose another folder")
            }
            let model = try makeModel(architecture: architecture)
            let layers = model.blockDimensions
            let meta = try StoreMeta(layers: layers, paths: paths, inner: layers.count > 1 ? inner : 0,
                                     configuration: configuration(architecture: architecture, box: lo...hi, inputs: Self.inputCount(model)),
                                     shard: shardSpec)
            return try SpectraRun(model: model, design: design, meta: meta, threads: request.threads)
        }

        let outcome: SpectraRun.Outcome
        let meta: StoreMeta
        var runModel: (any FisherModel)?
        if let rank = TwoScaleMain.launch.mpi {
            // One rank of an MPI job: rank 0 writes the store and prints the result; the others compute
            // their share of the paths and leave silently.
            guard let result = try await runOnRanks(rank, prepare: prepare, plannedBytes: plannedBytes, threads: request.threads) else { return }
            (outcome, meta) = result
        } else {
            let runner = try prepare(true)
            meta = runner.meta
            runModel = runner.model
            outcome = try await runHere(runner, plannedBytes: plannedBytes, threads: request.threads)
        }

        if let s = shardSpec {
            let summary = ShardRunSummary(store: store ?? "", meta: meta, computed: outcome.computed,
                                          seconds: Date().timeIntervalSince(start))
            try output.emit(summary) {
                "shard \(s) of \(architecture): \(meta.storedPaths.count) of K = \(paths) paths in \(store ?? "") (\(outcome.computed) computed now); merge all \(s.count) shards with twoscale merge\n"
            }
            return
        }
        let spectra = try MonteCarlo.layeredSpectra(outcome.rows, blockDimensions: meta.layers)
        // The Markov FIM's model-level results (generic rank, certified bracket) need the model; the output
        // FIM has neither.
        let markov = fisherModel.fisher == .markov ? try (runModel ?? makeModel(architecture: architecture)) as? MarkovFisher : nil
        let progress = PhaseProgress(label: "ed", threads: request.threads)
        if markov != nil { progress.phase("generic rank and certified bracket (\(CertifiedBracket.defaultDraws) uniform draws, \(CertifiedBracket.traceDraws) of Tr F)") }
        var measurement = try await progress.observing {
            try await PlainReport.measure(spectra: spectra, meta: meta, request: request, model: markov)
        }
        measurement.seconds = Date().timeIntervalSince(start)
        if let w = NetworkReport.essWarning(measurement.degeneracy) { Console.warn(w) }
        if let w = NetworkReport.bracketWarning(measurement.bracketCheck) { Console.warn(w) }
        try output.emit(measurement) { NetworkReport.text(measurement) }
    }

    /// A run of an estimator whose samples depend on ε (smc): end to end in this process, no store.
    func runEndToEnd(_ estimator: any NetworkEstimator.Type, architecture: Architecture, box: ClosedRange<Double>,
                     request: MeasurementRequest, paths: Int, inner: Int, plainOnly: [String], start: Date) async throws {
        let kind = estimator.kind
        if let flag = plainOnly.first {
            throw TwoScaleError.usage("\(flag) works with the \(EstimatorRegistry.defaultKind(needsStoredSpectra: true)) estimator (uniform-path spectra); use --estimator \(EstimatorRegistry.defaultKind(needsStoredSpectra: true)), or drop \(flag) (the \(kind) estimator's samples depend on ε, see docs/ESTIMATORS.md)")
        }
        guard let markov = try makeModel(architecture: architecture) as? MarkovFisher else {
            throw TwoScaleError.usage("--estimator \(kind) needs the Markov FIM (--fisher markov)")
        }
        let budget = EstimatorBudget(paths: paths, inner: inner, settings: try estimation.settings([.sweeps: sweeps]))
        var problem = EstimatorProblem(model: markov, box: box, seed: seed, budget: budget,
                                       configuration: configuration(architecture: architecture, box: box, inputs: Self.inputCount(markov)))
        problem.checkpoint = checkpoint
        // Under mpirun the ranks share the estimator's independent items (`MPISharing`); rank 0 reports.
        var world: MPIWorld?
        if let env = TwoScaleMain.launch.mpi {
            let started = try Self.startWorld(env)
            world = started
            problem.sharing = MPISharing(world: started)
        }
        let lead = problem.sharing.isLead
        let progress = PhaseProgress(label: "ed", threads: request.threads)
        let report: @Sendable (String) -> Void = { if lead { progress.phase($0) } }
        var target: PrecisionTarget?
        var estimate: NetworkEstimate
        if let w = targetWidth {
            guard world == nil else { throw TwoScaleError.usage("--target-width runs in one process: start it without mpirun") }
            let run = try await progress.observing {
                try await PrecisionTarget.run(estimator, problem: problem, request: request, width: w, maxPaths: maxPaths, progress: report)
            }
            (estimate, target) = (run.estimate, run.target)
        } else {
            // With checkpoints, Ctrl-C stops at once: every snapshot on disk is whole, and the same command continues.
            let interruption = (world == nil ? checkpoint : nil).map { dir in
                Interruption.install(notice: "twoscale: interrupted; the samplers' progress is saved in \(dir), each to its last snapshot: "
                                     + "run the same command to continue")
            }
            // _exit, not exit: exit's handlers (OpenBLAS's among them) would tear down libraries that the
            // still-running sampler threads are using, and a thread inside BLAS then crashes.
            interruption?.onInterrupt { _exit(130) }
            defer { interruption?.remove() }
            estimate = try await progress.observing { try await estimator.estimate(problem, request: request, progress: report) }
        }
        defer { world?.finalize() }
        guard lead else { return }
        estimate.seconds = Date().timeIntervalSince(start)
        for w in NetworkReport.warnings(estimate) { Console.warn(w) }
        try output.emit(estimate, extra: try target.map { [("precision_target", try JSONValue(encoding: $0))] } ?? []) {
            NetworkReport.text(estimate, architecture: architecture, narrowing: target == nil) + (target.map { "\n" + $0.summary + "\n" } ?? "")
        }
    }

    /// A word before a run far above the default budget: its particles (K, and K·J where islands or inner
    /// draws multiply them) against the default's, whose run takes seconds to minutes on 2 cores; nil
    /// within 10× of the default.
    static func costNote(paths: Int, inner: Int, defaults d: (paths: Int, inner: Int)) -> String? {
        let ratio = Swift.max(Double(paths) / Double(d.paths), Double(paths) * Double(inner) / (Double(d.paths) * Double(d.inner)))
        guard ratio > 10 else { return nil }
        return "K = \(paths), J = \(inner) is about \(Fmt.num(ratio.rounded(), 6))× the default budget's particles (K = \(d.paths), "
            + "J = \(d.inner)), and the run takes about that many times the default run's time (seconds to minutes on 2 cores; "
            + "docs/SCALING.md)"
    }

    /// The requested features that only the plain estimator provides (its uniform paths are what the
    /// spectra store holds, what shards and MPI ranks split, and what the Abbas ED and the output FIM are
    /// computed from), named as the user gave them. Without `--estimator`, any of them selects plain (with
    /// a note); with `--estimator smc`, any of them is an error.
    static func plainOnlyFeatures(store: Bool, shard: Bool, resume: Bool, abbas: Bool, outputFisher: Bool) -> [String] {
        [(store, "--store"), (shard, "--shard"), (resume, "--resume"), (abbas, "--abbas-n"),
         (outputFisher, "--fisher output")].filter(\.0).map(\.1)
    }

    /// `--shard i/n`, or `--shard auto`: i and n from the SLURM job array task this process runs in.
    static func parseShard(_ text: String, paths: Int) throws -> Shard {
        let auto = text.trimmingCharacters(in: .whitespaces).lowercased() == "auto"
        let s: Shard
        if auto {
            let task = try SlurmArrayTask(environment: ProcessInfo.processInfo.environment)
            s = try Shard(index: task.index, count: task.count)
        } else {
            s = try Shard(parsing: text)
        }
        guard s.count <= paths else {
            throw TwoScaleError.invalid("--shard", auto ? "auto (shard \(s) from SLURM's array variables)" : s.description,
                                        allowed: "n must not exceed the number of paths K = \(paths)" + (auto ? ": submit an array of at most K tasks" : ""))
        }
        return s
    }

    /// The run in this process. With a store, Ctrl-C stops cleanly: the Monte Carlo task is cancelled
    /// (finished paths are saved, paths in progress are dropped and recomputed on resume) and the message
    /// says how to resume.
    func runHere(_ runner: SpectraRun, plannedBytes: Double, threads: Int) async throws -> SpectraRun.Outcome {
        let progress = RunProgress(label: "ed", storeBytes: plannedBytes, threads: threads)
        let interruption = store != nil ? Interruption.install() : nil
        defer { interruption?.remove() }
        let work = Task { [store, resume] in
            try await runner.execute(store: store, resume: resume, progress: progress.update)
        }
        interruption?.onInterrupt { work.cancel() }
        do {
            return try await work.value
        } catch {
            guard let i = interruption, i.requested, let dir = store else { throw error }
            let done = (try? SpectraStore.open(directory: dir).completedPaths().count) ?? 0
            Console.error("twoscale: interrupted; \(done) of \(runner.meta.storedPaths.count) paths are saved in \(dir). "
                + "Continue with the same command and --resume (e.g. twoscale ed … --store \(dir) --resume).")
            throw ExitCode(130)
        }
    }

    /// The run as one rank of an MPI job (`DistributedSpectraRun`): the outcome on rank 0, nil on the
    /// others. No SIGINT handler: the launcher stops the job (Ctrl-C on mpirun, scancel), and the store
    /// written so far resumes like that of a killed run.
    /// Starts MPI for this rank. The MPI library is a property of the machine, not of the command line:
    /// every rank that cannot load it says so.
    static func startWorld(_ env: MPIEnvironment) throws -> MPIWorld {
        do {
            return try MPIWorld.start()
        } catch let e as TwoScaleError {
            Console.error("twoscale: MPI rank \(env.rank)" + (env.size.map { " of \($0)" } ?? "") + ": \(e.message)")
            throw ExitCode(e.exitCode)
        }
    }

    func runOnRanks(_ env: MPIEnvironment, prepare: @escaping (_ lead: Bool) throws -> SpectraRun, plannedBytes: Double,
                    threads: Int) async throws -> (SpectraRun.Outcome, StoreMeta)? {
        let world = try Self.startWorld(env)
        let progress = RunProgress(label: "ed (\(world.size) MPI ranks)", storeBytes: plannedBytes, threads: threads * world.size)
        var meta: StoreMeta?
        do {
            let outcome = try await DistributedSpectraRun(world: world, say: { Console.error($0) }).execute(store: store, resume: resume, prepare: { lead in
                let runner = try prepare(lead)
                meta = runner.meta
                return runner
            }, progress: { progress.update($0) })
            guard let outcome, let meta else { return nil }
            return (outcome, meta)
        } catch let e as SilentExit {
            throw ExitCode(e.status)
        }
    }
}
