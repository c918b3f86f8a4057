import Benchmarks
import Bounds
import Fisher
import Experiments
import Foundation
import Estimation
import NetworkEstimators
import Networks
import RandomStreams
import SpectraStore
import ToyModels
import Training
@testable import TwoScaleCLI
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics
import XCTest

/// Every command's numbers come from a library function that returns a typed result; the CLI only
/// parses flags, calls it and prints. Each test here calls the library directly, as a program using
/// twoscale as a package would, and checks that the command's `--json` output is that result (timing
/// keys aside).
final class LibraryParityTests: ScratchDirectoryTestCase {
    override class var scratchTag: String { "parity" }

    override class func setUp() {
        super.setUp()
        ShippedEstimators.install()
    }

    /// The library result as the CLI would print it (setting markers spelled as flags), without timings.
    func tree(_ value: some Encodable) throws -> JSONValue {
        withoutTimingKeys(JSONContract.stamped(FlagSpelling.render(
            try JSONValue.parse(Data(try JSONValue(encoding: value).serialized().utf8), source: "library"))))
    }

    func cli(_ args: [String]) async throws -> JSONValue {
        withoutTimingKeys(try await runJSON(args + ["--json"]))
    }

    func testToy() async throws {
        let model = try ToyModel(family: .poisson, dimension: 20, box: (0.05, 0.95))
        var r = try ToyMeasurement.measure(model: model, eps: [1e-3, 0.1], zeta: 2.0 / 3.0, normalization: .trace, greedyMax: 1000)
        try await r.runMonteCarlo(method: .smc, paths: 32, seed: 5, trials: 2, traceDraws: 200, bootstrap: 200, threads: 2)
        let json = try await cli(["toy", "--family", "poisson", "--dim", "20", "--box", "0.05:0.95", "--eps", "1e-3,0.1",
                                  "--zeta", "0.6666666666666666", "--greedy-max", "1000", "--mc", "--paths", "32", "--seed", "5",
                                  "--trials", "2", "--trace-draws", "200"])
        XCTAssertEqual(json, try tree(r))
    }

    /// ed (plain), analyze of its store, and ed --shard, from the library's spectra run.
    func testEdAnalyzeAndShard() async throws {
        let arch = try Architecture(parsing: "5-3-2")
        let data = try DataSource.load("synthetic:gaussian", samples: 12, labels: .none, standardize: false, seed: 3,
                                       inputSize: 5, inputShape: nil)
        let model = try MarkovFisher(architecture: arch, activation: .relu, data: data.inputs, sigma2: 0.1, noiseSamples: 1, noiseSeed: 3)
        let design = try MonteCarloDesign(paths: 6, inner: 3, box: -1...1, seed: 3, activation: .relu)
        let config = NetworkRunConfiguration(fisher: .markov, arch: "5-3-2", bias: false, activation: .relu, box: -1...1, seed: 3,
                                             data: "synthetic:gaussian", samples: 12, labels: "none", standardize: false,
                                             sigma2: 0.1, noiseSamples: 1)
        let meta = try StoreMeta(layers: model.blockDimensions, paths: 6, inner: 3, configuration: config)
        let outcome = try await SpectraRun(model: model, design: design, meta: meta, threads: 2).execute(store: nil, resume: false)
        let spectra = try MonteCarlo.layeredSpectra(outcome.rows, blockDimensions: meta.layers)
        let request = MeasurementRequest(eps: [1e-3, 0.1], zeta: 0.6, lower: true, bootstrap: 50, abbasN: [100], threads: 2)
        let m = try await PlainReport.measure(spectra: spectra, meta: meta, request: request, model: model)
        XCTAssertNotNil(m.bracket)
        XCTAssertEqual(m.rank.generic?.proved, true)
        let flags = ["--arch", "5-3-2", "--samples", "12", "--paths", "6", "--inner", "3", "--sigma2", "0.1", "--seed", "3"]
        let measure = ["--eps", "1e-3,0.1", "--zeta", "0.6", "--lower", "--bootstrap", "50", "--abbas-n", "100"]
        let store = dir + "/s"
        let ed = try await cli(["ed"] + flags + measure + ["--store", store])
        XCTAssertEqual(ed, try tree(m))
        // analyze rebuilds the model from the store's settings: the same generic rank and bracket as ed.
        let analyze = try await cli(["analyze", store] + measure)
        XCTAssertEqual(analyze, try tree(m))
        // Without the model (the spectra alone): the draws' rank, as a lower bound of the limit's, and no bracket.
        let spectraOnly = try await PlainReport.measure(spectra: spectra, meta: meta, request: request)
        XCTAssertNil(spectraOnly.bracket)
        XCTAssertEqual(try tree(spectraOnly)["d_zeta_limit_kind"]?.stringValue, "lower_bound")

        var sharded = meta
        sharded.shard = try Shard(index: 2, count: 3)
        let shard = ShardRunSummary(store: dir + "/sh", meta: sharded, computed: 2, seconds: 0)
        let shardJSON = try await cli(["ed"] + flags + ["--eps", "0.1", "--shard", "2/3", "--store", dir + "/sh"])
        XCTAssertEqual(shardJSON, try tree(shard))
    }

    func testEdSMC() async throws {
        let arch = try Architecture(parsing: "4-3-2")
        let data = try DataSource.load("synthetic:gaussian", samples: 10, labels: .none, standardize: false, seed: 2,
                                       inputSize: 4, inputShape: nil)
        let model = try MarkovFisher(architecture: arch, activation: .relu, data: data.inputs, sigma2: 0.1, noiseSamples: 1, noiseSeed: 2)
        let smc = try MarkovSMC(model: model, box: -1...1, seed: 2, paths: 8, inner: 8, traceDraws: 100)
        let r = try await smc.run(eps: [0.01], zeta: 0.6, normalization: .trace, lower: true, threads: 2)
        let config = NetworkRunConfiguration(fisher: .markov, arch: "4-3-2", bias: false, activation: .relu, box: -1...1, seed: 2,
                                             data: "synthetic:gaussian", samples: 10, labels: "none", standardize: false,
                                             sigma2: 0.1, noiseSamples: 1)
        let m = SMCReport(result: r, architecture: arch, settings: config, zeta: 0.6, normalization: .trace,
                                      paths: 8, inner: 8)
        let json = try await cli(["ed", "--arch", "4-3-2", "--samples", "10", "--paths", "8", "--inner", "8", "--sigma2", "0.1",
                                  "--seed", "2", "--estimator", "smc", "--trace-draws", "100", "--eps", "0.01", "--zeta", "0.6", "--lower"])
        XCTAssertEqual(json, try tree(m))
        // The two checks' keys: absent when they do not fire (as here), present with their fields when they do.
        XCTAssertNil(m.lowerAboveNested)
        XCTAssertNil(m.tailShortfall)
        XCTAssertNil(json["lower_above_nested"])
        XCTAssertNil(json["tail_shortfall"])
        var fired = m
        fired.lowerAboveNested = LowerAboveNested(eps: 0.01, nested: 10, nestedInterval: 9...11, lower: 13, lowerInterval: 12...14)
        fired.tailShortfall = TailShortfall(eps: 0.01, shortfall: 3.5, halfWidth: 1.25, logVariance: 121.5, paths: 8)
        let t = try tree(fired)
        let order = t["lower_above_nested"]
        XCTAssertEqual(order?["eps"]?.doubleValue, 0.01)
        XCTAssertEqual(order?["d_zeta"]?.doubleValue, 10)
        XCTAssertEqual(order?["ci95"]?.arrayValue?.compactMap(\.doubleValue), [9, 11])
        XCTAssertEqual(order?["d_zeta_lower"]?.doubleValue, 13)
        XCTAssertEqual(order?["ci95_lower"]?.arrayValue?.compactMap(\.doubleValue), [12, 14])
        XCTAssertEqual(order?["excess"]?.doubleValue, 3)
        XCTAssertEqual(order?["gap"]?.doubleValue, 1)
        let tail = t["tail_shortfall"]
        XCTAssertEqual(tail?["shortfall"]?.doubleValue, 3.5)
        XCTAssertEqual(tail?["half_width"]?.doubleValue, 1.25)
        XCTAssertEqual(tail?["log_var"]?.doubleValue, 121.5)
        XCTAssertEqual(tail?["paths"]?.doubleValue, 8)
        XCTAssertEqual(tail?["island_noise_share"], .null, "unknown share: the key with null")
    }

    func testFisher() async throws {
        let arch = try Architecture(parsing: "4-3-2")
        var rng = Xoshiro256(seed: 7, stream: [0x5745_4947])  // fisher's stream for a random θ
        let net = Network.uniform(architecture: arch, activation: .tanh, box: -1...1, rng: &rng)
        let data = try DataSource.load("synthetic:gaussian", samples: 9, labels: .none, standardize: false, seed: 7,
                                       inputSize: 4, inputShape: nil)
        let model = try MarkovFisher(architecture: arch, activation: .tanh, data: data.inputs, sigma2: 0.2, noiseSamples: 2, noiseSeed: 7)
        var r = try await FisherMeasurement.measure(model, at: net, samples: 9, sigma2: 0.2, noiseSamples: 2)
        (r.activation, r.data, r.box, r.seed) = (.tanh, "synthetic:gaussian", [-1, 1], 7)
        let json = try await cli(["fisher", "--arch", "4-3-2", "--data", "synthetic:gaussian", "--samples", "9", "--sigma2", "0.2",
                                  "--noise-samples", "2", "--activation", "tanh", "--seed", "7"])
        XCTAssertEqual(json, try tree(r))
    }

    func testBound() async throws {
        let bound = try GeneralizationBound(gamma: 0.5, zeta: 0.7, constants: try BoundConstants(C: 1, H: 2, K: 1))
        let model = try ToyModel(family: .constant, lambdas: [4, 0.01])
        var r = try BoundEvaluation.evaluate(
            bound: bound, ns: [100, 10_000], delta: (0.05, 2...1_000_000_000_000), dimension: 2,
            values: { e in let d = try model.twoScaleDimension(eps: e, zeta: 0.7, normalization: .trace); return (d, d) },
            source: "toy constant, d = 2, box [0.0, 1.0]^d, normalisation trace", method: "exact (toy model quadrature)",
            conservative: true)
        r.assumptions = TheoremAssumptions.check(.toy, zeta: 0.7)
        let json = try await cli(["bound", "--n", "100,10000", "--gamma", "0.5", "--zeta", "0.7", "--H", "2", "--family", "constant",
                                  "--lambdas", "4,0.01", "--delta", "0.05"])
        XCTAssertEqual(json, try tree(r))
    }

    func testTrainAndGap() async throws {
        let arch = try Architecture(parsing: "4-5-3")
        let data = try DataSource.load("synthetic:teacher:4-3-3", samples: 40, labels: .last, standardize: false, seed: 4,
                                       inputSize: 4, inputShape: nil)
        let cfg = try TrainingConfig(architecture: arch, activation: .relu,
                                     optimizer: try OptimizerSettings(kind: .sgd, learningRate: 0.05, momentum: 0.5),
                                     batchSize: 8, epochs: 2, seed: 4)
        let run = try TrainingRun.run(Trainer(config: cfg), train: data, holdout: nil, checkpoints: dir + "/cp", weightsOut: nil)
        let json = try await cli(["train", "--arch", "4-5-3", "--data", "synthetic:teacher:4-3-3", "--samples", "40", "--optimizer", "sgd",
                                  "--lr", "0.05", "--momentum", "0.5", "--batch", "8", "--epochs", "2", "--seed", "4",
                                  "--checkpoints", dir + "/cp2"])
        XCTAssertEqual(json, try tree(run))
        XCTAssertEqual(try String(contentsOfFile: dir + "/cp/index.json", encoding: .utf8),
                       try String(contentsOfFile: dir + "/cp2/index.json", encoding: .utf8))

        let task = try TeacherTask.random(architecture: try Architecture(parsing: "4-3-3"), activation: .relu, seed: 4)
        let gcfg = try TrainingConfig(architecture: arch, activation: .relu, optimizer: try OptimizerSettings(kind: .adam, learningRate: 0.01),
                                      batchSize: 8, epochs: 2, seed: 4)
        let experiment = try GapExperiment(task: task, student: arch, studentActivation: .relu, training: gcfg, sampleSizes: [20, 60],
                                           trials: 2, randomDraws: 3, box: -1...1, populationSize: 500, seed: 4)
        let study = try await GapStudy.run(experiment, loss: .zeroOne, gamma: 1, constants: try BoundConstants(C: 1, H: 1, K: 1),
                                           tail: nil, threads: 2)
        let gap = try await cli(["gap", "--teacher", "4-3-3", "--student", "4-5-3", "--n", "20,60", "--trials", "2", "--random-draws", "3",
                                 "--population", "500", "--batch", "8", "--epochs", "2", "--seed", "4"])
        XCTAssertEqual(gap, try tree(study))
    }

    /// compare's two architectures, teacher data, training and ε_n (30 samples, batch 10, one epoch).
    func compareFixture() throws -> (archs: [Architecture], data: Dataset, training: TrainingConfig, epsN: Double) {
        let archs = try ["4-4-3", "4-2-2-3"].map { try Architecture(parsing: $0) }
        let data = try DataSource.load("synthetic:teacher:4-3-3", samples: 30, labels: .last, standardize: false, seed: 1,
                                       inputSize: 4, inputShape: nil)
        let training = try TrainingConfig(architecture: archs[0], activation: .relu,
                                          optimizer: try OptimizerSettings(kind: .adam, learningRate: 1e-3), batchSize: 10, epochs: 1, seed: 1)
        return (archs, data, training, try GeneralizationBound.epsilon(n: 30, gamma: 1))
    }

    func testCompare() async throws {
        let (archs, data, training, epsN) = try compareFixture()
        let settings = ArchitectureComparison.Settings(activation: .relu, sigma2: 0.1, noiseSamples: 1,
                                                       budget: EstimatorBudget(paths: 4, inner: 2), box: -1...1,
                                                       seed: 1, eps: epsN, zeta: 2.0 / 3.0, threads: 2, training: training)
        let study = try await ComparisonStudy.run(archs, seeds: 2, comparison: ArchitectureComparison(settings: settings),
                                                  fisherInputs: data.prefix(10).inputs, train: data, holdout: nil, epsN: epsN, n: 30,
                                                  flatTolerance: 0.05)
        let json = try await cli(["compare", "--archs", "4-4-3,4-2-2-3", "--data", "synthetic:teacher:4-3-3", "--samples", "30",
                                  "--fisher-samples", "10", "--paths", "4", "--inner", "2", "--batch", "10", "--epochs", "1",
                                  "--seeds", "2", "--threads", "2"])
        XCTAssertEqual(json, try tree(study))
    }

    /// `compare --estimator smc`: the CLI prints the library's study, and each architecture's 2sEDs and
    /// interval half-widths are those of the smc estimator run directly on the same Markov FIM and seed.
    func testCompareSMC() async throws {
        let (archs, data, training, epsN) = try compareFixture()
        let settings = ArchitectureComparison.Settings(activation: .relu, sigma2: 0.1, noiseSamples: 1,
                                                       budget: EstimatorBudget(paths: 8, inner: 8, settings: EstimatorSettings([.traceDraws: 50])), box: -1...1,
                                                       seed: 1, eps: epsN, zeta: 2.0 / 3.0, threads: 2, training: training,
                                                       estimator: .smc)
        let fisher = data.prefix(10).inputs
        let study = try await ComparisonStudy.run(archs, seeds: 1, comparison: ArchitectureComparison(settings: settings),
                                                  fisherInputs: fisher, train: data, holdout: nil, epsN: epsN, n: 30, flatTolerance: 0.05)
        let json = try await cli(["compare", "--archs", "4-4-3,4-2-2-3", "--data", "synthetic:teacher:4-3-3", "--samples", "30",
                                  "--fisher-samples", "10", "--estimator", "smc", "--paths", "8", "--inner", "8", "--trace-draws", "50",
                                  "--batch", "10", "--epochs", "1", "--seeds", "1", "--threads", "2"])
        XCTAssertEqual(json, try tree(study))
        XCTAssertEqual(json["estimator"]?.stringValue, "smc")
        XCTAssertEqual(json["trace_draws"]?.doubleValue, 50)
        let points = try XCTUnwrap(json["points"]?.arrayValue)
        var brackets: [ClosedRange<Double>] = []
        for (a, p) in zip(archs, points) {
            let model = try MarkovFisher(architecture: a, activation: .relu, data: fisher, sigma2: 0.1, noiseSamples: 1, noiseSeed: 1)
            let smc = try MarkovSMC(model: model, box: -1...1, seed: 1, paths: 8, inner: 8, traceDraws: 50)
            let run = try await smc.run(eps: [epsN], zeta: 2.0 / 3.0, normalization: .trace, lower: true, threads: 1)
            let r = run.points[0]
            // The certified bracket (c's interval from its own trace draws), from the same seed; the estimate lies inside it.
            let b = try await model.certifiedBracket(box: -1...1, eps: [epsN], zeta: 2.0 / 3.0, normalization: .trace, seed: 1, threads: 1).points[0]
            XCTAssertEqual(p["d_zeta_bracket"]?.arrayValue?.compactMap(\.doubleValue), [b.dZeta.lowerBound, b.dZeta.upperBound])
            XCTAssertEqual(p["d_zeta_lower_bracket"]?.arrayValue?.compactMap(\.doubleValue), [b.dZetaLower.lowerBound, b.dZetaLower.upperBound])
            XCTAssertTrue(b.dZeta.contains(r.dZeta), "\(r.dZeta) in \(b.dZeta)")
            brackets.append(b.dZeta)
            let lower = try XCTUnwrap(r.ci95Lower)
            XCTAssertEqual(p["d_zeta"]?.doubleValue, r.dZeta)
            XCTAssertEqual(p["d_zeta_joint"]?.doubleValue, r.dZeta)
            XCTAssertEqual(p["d_zeta_lower"]?.doubleValue, r.dZetaLower)
            XCTAssertEqual(try XCTUnwrap(p["d_zeta_ci95_halfwidth"]?.doubleValue), (r.interval95.upperBound - r.interval95.lowerBound) / 2, accuracy: 1e-12)
            XCTAssertEqual(try XCTUnwrap(p["d_zeta_lower_ci95_halfwidth"]?.doubleValue), (lower.upperBound - lower.lowerBound) / 2, accuracy: 1e-12)
            let bound = try XCTUnwrap(r.bound)
            XCTAssertEqual(p["d_zeta_upper"]?.doubleValue, bound.dZeta)
            XCTAssertEqual(p["d_zeta_lower_upper"]?.doubleValue, bound.dZetaLower)
            XCTAssertEqual(p["d_zeta_upper_sd"]?.doubleValue, 0, "one seed")
        }
        // One pair, certain exactly when the two brackets are disjoint.
        let pairs = try XCTUnwrap(json["pairs"]?.arrayValue)
        XCTAssertEqual(pairs.count, 1)
        let disjoint = brackets[0].upperBound < brackets[1].lowerBound || brackets[1].upperBound < brackets[0].lowerBound
        XCTAssertEqual(pairs[0]["certain"], .bool(disjoint))
        XCTAssertEqual(pairs[0]["a"]?.stringValue, "4-4-3")
        XCTAssertEqual(json["bracket_delta"]?.doubleValue, 0.02)
        XCTAssertEqual(json["island_sweeps"]?.doubleValue, 4)
        XCTAssertEqual(json["island_kernel"]?.stringValue, "random-walk")
        XCTAssertEqual(json["island_leapfrog"]?.doubleValue, 0)
        XCTAssertNil(json["island_metric"])
        // plain reports no interval half-widths (its bootstrap does not cover; docs/ESTIMATORS.md).
        let plain = try await cli(["compare", "--archs", "4-4-3,4-2-2-3", "--data", "synthetic:teacher:4-3-3", "--samples", "30",
                                   "--fisher-samples", "10", "--paths", "4", "--inner", "2", "--batch", "10", "--epochs", "1", "--seeds", "1"])
        XCTAssertEqual(plain["estimator"]?.stringValue, "plain")
        XCTAssertNil(plain["points"]?.arrayValue?.first?["d_zeta_ci95_halfwidth"])
        // A budget the smc samplers cannot adapt with is a usage error before any data is read.
        let bad = await runCLICapturingErrors(["compare", "--archs", "4-4-3,4-2-2-3", "--data", "synthetic:teacher:4-3-3",
                                               "--samples", "30", "--estimator", "smc", "--inner", "4"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertTrue(bad.err.contains("--inner"), bad.err)
    }

    func testMerge() async throws {
        let flags = ["--arch", "3-2-2", "--samples", "5", "--paths", "4", "--inner", "2", "--sigma2", "0.1", "--eps", "0.1"]
        for i in 1...2 { _ = try await cli(["ed"] + flags + ["--shard", "\(i)/2", "--store", dir + "/p\(i)"]) }
        let json = try await cli(["merge", dir + "/p1", dir + "/p2", "--out", dir + "/m1"])
        let summary = try StoreMergeSummary.merge([dir + "/p1", dir + "/p2"], into: dir + "/m2")
        var expected = try tree(summary)
        if case var .object(kv) = expected, let i = kv.firstIndex(where: { $0.0 == "store" }) {
            kv[i].1 = .string(dir + "/m1")
            expected = .object(kv)
        }
        XCTAssertEqual(json, expected)
        XCTAssertEqual(try String(contentsOfFile: dir + "/m1/meta.json", encoding: .utf8),
                       try String(contentsOfFile: dir + "/m2/meta.json", encoding: .utf8))
    }

    /// bench's toy workloads: the same result keys and check values (the figures themselves are timings).
    func testBenchToyKeys() async throws {
        let json = try await runJSON(["bench", "toy", "--json"])
        let suite = try JSONValue(encoding: BenchmarkSuite(threads: 1, benchmarks: try ReferenceWorkloads.measureToy()))
        func keys(_ v: JSONValue) -> [[String]] {
            (v["benchmarks"]?.arrayValue ?? []).map { b in if case let .object(kv) = b { return kv.map(\.0) } else { return [] } }
        }
        XCTAssertEqual(keys(json), keys(suite))
        XCTAssertEqual(json["benchmarks"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["toy-constant", "toy-bernoulli"])
    }
}
