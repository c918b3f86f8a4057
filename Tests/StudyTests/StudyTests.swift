import Foundation
import NetworkEstimators
import Networks
import RandomStreams
import SpectraStore
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics
import XCTest
@testable import Study

final class StudyGridTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        ShippedEstimators.install()
    }

    static var repositoryRoot: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent() }

    /// The committed grid follows the design: ≥ 30 architectures, MLPs and CNNs, groups within 3%,
    /// two training hyperparameters varied, ≥ 5 seeds, two data sets.
    func testCommittedGridFollowsTheDesign() throws {
        let g = try StudyGrid.read(path: Self.repositoryRoot.appendingPathComponent("study/zoo-grid.json").path)
        let archs = try g.architectures
        XCTAssertGreaterThanOrEqual(archs.count, 30)
        XCTAssertTrue(archs.contains { $0.architecture.notation.contains("conv") })
        XCTAssertGreaterThanOrEqual(archs.filter { !$0.architecture.notation.contains("conv") }.count, 10)
        XCTAssertGreaterThanOrEqual(Set(archs.map { $0.architecture.parametricLayers.count }).count, 3)
        XCTAssertGreaterThanOrEqual(g.learningRates.count, 2)
        XCTAssertGreaterThanOrEqual(g.batchSizes.count, 2)
        XCTAssertGreaterThanOrEqual(g.seeds, 5)
        XCTAssertEqual(g.sizeTolerance, 0.03)
        XCTAssertTrue(g.datasets.contains { $0.train == "fashion-mnist" })
        XCTAssertGreaterThanOrEqual(g.datasets.count, 2)
        for group in g.groups {
            let counts = archs.filter { $0.group == group.name }.map { Double($0.architecture.parameterCount) }
            let median = StudyGrid.median(counts)
            XCTAssertLessThanOrEqual(counts.map { abs($0 - median) / median }.max() ?? 1, 0.03, group.name)
        }
    }

    /// The teacher-task grid has the same architectures and training as the main one.
    func testTeacherGridMatchesTheMainGrid() throws {
        let main = try StudyGrid.read(path: Self.repositoryRoot.appendingPathComponent("study/zoo-grid.json").path)
        let t = try StudyGrid.read(path: Self.repositoryRoot.appendingPathComponent("study/zoo-teacher-grid.json").path)
        XCTAssertEqual(t.groups, main.groups)
        XCTAssertEqual(t.learningRates, main.learningRates)
        XCTAssertEqual(t.batchSizes, main.batchSizes)
        XCTAssertEqual(t.seeds, main.seeds)
        XCTAssertEqual(t.fisher, main.fisher)
        XCTAssertTrue(t.datasets.allSatisfy { $0.train == $0.test && $0.train.hasPrefix("synthetic:teacher:") })
    }

    func testGridRefusesAGroupOfUnequalSizes() throws {
        var g = StudyTestGrid.make()
        g.sizeTolerance = 0.03
        g.groups = [StudyGroup(name: "A", architectures: ["6-3-2", "6-2-4-2", "6-4-2"])]
        XCTAssertThrowsError(try g.check()) { e in
            XCTAssertTrue("\(e)".contains("more than 3.0% from group A's median"), "\(e)")
        }
        g.groups = [StudyGroup(name: "A", architectures: ["6-3-2", "6-3-2", "6-4-2"])]
        g.sizeTolerance = 0.5
        XCTAssertThrowsError(try g.check()) { XCTAssertTrue("\($0)".contains("listed twice"), "\($0)") }
        g = StudyTestGrid.make()
        g.batchSizes = [4, 4]
        XCTAssertThrowsError(try g.check())
        g = StudyTestGrid.make()
        g.seeds = 1
        XCTAssertThrowsError(try g.check())
        XCTAssertNoThrow(try StudyTestGrid.make().check())
    }

    /// Padding and pooling against a hand computation: a 2×2 image padded by 1 and pooled by 2.
    func testPadPoolByHand() throws {
        let data = Dataset(inputs: Matrix(rows: 1, cols: 4, data: [1, 2, 3, 4]), labels: [0], classes: 2, source: "t", shape: [2, 2, 1])
        let out = try StudyData.padPool(data, pad: 1, pool: 2, shape: (2, 2, 1))
        // Padded 4×4: zeros around [[1, 2], [3, 4]]; each 2×2 window holds one of the four values.
        XCTAssertEqual(out.inputs.data, [0.25, 0.5, 0.75, 1.0])
        XCTAssertEqual(out.shape, [2, 2, 1])
        let odd = try StudyData.padPool(Dataset(inputs: Matrix(rows: 1, cols: 9, data: Array(1...9).map(Double.init)), labels: [1], classes: 2, source: "t", shape: [3, 3, 1]),
                                        pad: 0, pool: 3, shape: (3, 3, 1))
        XCTAssertEqual(odd.inputs.data, [5])
        XCTAssertThrowsError(try StudyData.padPool(data, pad: 0, pool: 3, shape: (2, 2, 1)))
    }
}

/// A tiny grid on CSV data written by the test (6 features, 2 classes).
enum StudyTestGrid {
    static func make(train: String = "csv:/nonexistent", test: String = "csv:/nonexistent") -> StudyGrid {
        StudyGrid(name: "tiny", seed: 3, seeds: 2,
                  datasets: [StudyDataset(name: "toy", train: train, test: test, trainSamples: 40, testSamples: 30, pad: 0, pool: 1)],
                  groups: [StudyGroup(name: "A", architectures: ["6-3-2", "6-2-4-2", "6-4-2"])],
                  learningRates: [0.01, 0.03], batchSizes: [8, 20], epochs: 2,
                  fisher: StudyFisherSettings(samples: 5, sigma2: 0.1, noiseSamples: 1, box: [-1, 1], zeta: 2.0 / 3.0, gamma: 1,
                                              paths: 16, inner: 8, abbasPaths: 4),
                  sizeTolerance: 0.5)
    }

    /// Writes `n` rows of 6 features and a label (the sign of a fixed linear score) to a CSV file.
    static func csv(_ path: String, rows n: Int, seed: UInt64) throws {
        var rng = Xoshiro256(seed: seed, stream: [7])
        var lines: [String] = []
        for _ in 0..<n {
            let x = (0..<6).map { _ in rng.uniform(-1, 1) }
            let y = x[0] + 0.5 * x[1] - x[2] + 0.3 * rng.normal() > 0 ? 1 : 0
            lines.append((x.map { String($0) } + [String(y)]).joined(separator: ","))
        }
        try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }
}

final class StudyRunTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        ShippedEstimators.install()
    }

    func tempDir() throws -> String {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("study-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: d) }
        return d
    }

    func grid(in dir: String) throws -> StudyGrid {
        try StudyTestGrid.csv(dir + "/train.csv", rows: 40, seed: 1)
        try StudyTestGrid.csv(dir + "/test.csv", rows: 30, seed: 2)
        let g = StudyTestGrid.make(train: "csv:\(dir)/train.csv", test: "csv:\(dir)/test.csv")
        try g.check()
        return g
    }

    /// A study runs end to end, resumes without recomputing, and gives the same cells at 1 and 2 threads.
    func testRunsResumesAndIgnoresThreads() async throws {
        let dir = try tempDir()
        let g = try grid(in: dir)
        let one = try StudyFolder(path: dir + "/one", grid: g)
        var calls = 0
        let first = try await StudyResult.run(one, threads: 1, replicates: 200) { _ in calls += 1 }
        XCTAssertEqual(first.cells, 3 + 3 * 4 * 2)
        XCTAssertEqual(first.computed, first.cells)
        XCTAssertEqual(calls, first.cells)
        XCTAssertEqual(first.taus.count, StudyMeasure.allCases.count * StudyTarget.allCases.count)
        // The family-wise δ, counted by hand: 3 architectures' brackets on 1 data set, 0.01 each.
        XCTAssertEqual(first.datasets.count, 1)
        XCTAssertEqual(first.architectures, 3)
        XCTAssertEqual(first.bracketDeltaPerDataset, 0.03, accuracy: 1e-15)
        XCTAssertEqual(first.bracketDelta, 0.03, accuracy: 1e-15)
        // The certain pairs, against a count from the cells themselves.
        let pairs = try XCTUnwrap(first.certainPairs.first)
        XCTAssertEqual(pairs.allPairs, 3)
        let b = first.fisher.map(\.bracket)
        let disjoint = [(0, 1), (0, 2), (1, 2)].filter { b[$0.0][1] < b[$0.1][0] || b[$0.1][1] < b[$0.0][0] }.count
        XCTAssertEqual(pairs.all, disjoint)
        // Partial τ given r, and given d and r together, for the 2sED and the lower 2sED, per target.
        XCTAssertEqual(Set(first.partial.map(\.control)), ["generic_rank", "parameters+generic_rank"])
        XCTAssertEqual(first.partial.count, 2 * 2 * StudyTarget.allCases.count)
        // Every cell records the interval ed reports and its source, which the bootstrap redraws from.
        for f in first.fisher {
            XCTAssertNotNil(f.intervalSource)
            XCTAssertEqual(f.interval?.count, 2)
        }
        for row in first.taus where row.note == nil {
            let t = try XCTUnwrap(row.tau), lo = try XCTUnwrap(row.tauLow), hi = try XCTUnwrap(row.tauHigh)
            XCTAssertTrue(t.isFinite && lo <= t + 1e-12 && t <= hi + 1e-12, "\(row.measure)")
        }
        // Depth varies (2 and 3 weight layers), so the ranking of every architecture measure is defined.
        XCTAssertNotNil(first.taus.first { $0.measure == "depth" && $0.target == "train_loss" }?.tau)
        // Resume: nothing is computed again, and the statistics are the same.
        let again = try await StudyResult.run(one, threads: 1, replicates: 200)
        XCTAssertEqual(again.computed, 0)
        let enc = JSONEncoder()
        enc.outputFormatting = .sortedKeys
        XCTAssertEqual(try enc.encode(again.taus), try enc.encode(first.taus))
        // Two threads: the same bytes in every cell.
        let two = try StudyFolder(path: dir + "/two", grid: g)
        _ = try await StudyResult.run(two, threads: 2, replicates: 200)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir + "/one/cells").sorted()
        XCTAssertEqual(files, try FileManager.default.contentsOfDirectory(atPath: dir + "/two/cells").sorted())
        for f in files {
            var a = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/one/cells/" + f))) as! [String: Any]
            var b = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/two/cells/" + f))) as! [String: Any]
            a["seconds"] = nil
            b["seconds"] = nil
            XCTAssertEqual(NSDictionary(dictionary: a), NSDictionary(dictionary: b), f)
        }
        // A folder of another grid is refused.
        var other = g
        other.epochs = 3
        XCTAssertThrowsError(try StudyFolder(path: dir + "/one", grid: other)) { XCTAssertTrue("\($0)".contains("another grid"), "\($0)") }
        // A folder whose cells another method computed is refused: an older version's (no method.txt, cells
        // present) and a different method number; the folder's own method opens.
        XCTAssertEqual(try String(contentsOfFile: dir + "/one/method.txt", encoding: .utf8), "\(StudyFolder.cellMethod)\n")
        XCTAssertNoThrow(try StudyFolder(path: dir + "/one", grid: g))
        try FileManager.default.removeItem(atPath: dir + "/one/method.txt")
        XCTAssertThrowsError(try StudyFolder(path: dir + "/one", grid: g)) { XCTAssertTrue("\($0)".contains("method 1"), "\($0)") }
        try "1\n".write(toFile: dir + "/one/method.txt", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try StudyFolder(path: dir + "/one", grid: g)) { XCTAssertTrue("\($0)".contains("computed by method 1"), "\($0)") }
        // The previous method's folder is refused too (its smc cells' ci95 are narrower), and keeps its method.txt.
        try "\(StudyFolder.cellMethod - 1)\n".write(toFile: dir + "/one/method.txt", atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try StudyFolder(path: dir + "/one", grid: g)) {
            XCTAssertTrue("\($0)".contains("computed by method \(StudyFolder.cellMethod - 1)"), "\($0)")
        }
        XCTAssertEqual(try String(contentsOfFile: dir + "/one/method.txt", encoding: .utf8), "\(StudyFolder.cellMethod - 1)\n")
    }

    /// Shards 1/2 and 2/2 into one folder compute every cell once, the same cells as one unsharded run,
    /// and the run without a shard then computes nothing.
    func testShardsShareOneFolder() async throws {
        let dir = try tempDir()
        let g = try grid(in: dir)
        let sharded = try StudyFolder(path: dir + "/sharded", grid: g)
        let a = try await StudyShardSummary.run(sharded, shard: try Shard(parsing: "1/2"), threads: 1)
        let b = try await StudyShardSummary.run(sharded, shard: try Shard(parsing: "2/2"), threads: 2)
        XCTAssertEqual(a.computed + b.computed, a.cells)
        XCTAssertEqual(a.computed, (a.cells + 1) / 2)
        XCTAssertEqual(b.done, b.cells)
        let again = try await StudyShardSummary.run(sharded, shard: try Shard(parsing: "1/2"), threads: 1)
        XCTAssertEqual(again.computed, 0)
        let rest = try await StudyResult.run(sharded, threads: 1, replicates: 200)
        XCTAssertEqual(rest.computed, 0)
        let whole = try StudyFolder(path: dir + "/whole", grid: g)
        _ = try await StudyRunner.compute(whole, threads: 2)
        for f in try FileManager.default.contentsOfDirectory(atPath: dir + "/whole/cells") {
            var x = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/whole/cells/" + f))) as! [String: Any]
            var y = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/sharded/cells/" + f))) as! [String: Any]
            x["seconds"] = nil
            y["seconds"] = nil
            XCTAssertEqual(NSDictionary(dictionary: x), NSDictionary(dictionary: y), f)
        }
    }

    /// The Fisher cell's numbers are the smc estimator's: the 2sED lies in its bracket, the lower 2sED
    /// is at most the bracket's top, the generic rank is the closed form of a bias-free MLP on full-rank data.
    func testFisherCellIsConsistent() async throws {
        let dir = try tempDir()
        let g = try grid(in: dir)
        let data = try StudyData.load(g.datasets[0])
        let cell = try await (try StudyCellRunner(grid: g, threads: 2)).fisher(dataset: 0, architecture: 0, data: data)
        XCTAssertEqual(cell.architecture, "6-3-2")
        XCTAssertEqual(cell.parameters, 24)
        XCTAssertLessThanOrEqual(cell.bracket[0], cell.dZeta)
        XCTAssertLessThanOrEqual(cell.dZeta, cell.bracket[1])
        XCTAssertLessThanOrEqual(cell.dZetaLower, cell.bracket[1] + 1e-9)
        // 6-3-2 without biases on N = 5 inputs of rank 5: stage 1 3 units × min(5, 6) = 15, softmax (2 − 1) × min(5, 3) = 3.
        XCTAssertEqual(cell.genericRank, 18)
        XCTAssertTrue(cell.genericRankProved)
        XCTAssertEqual(cell.eps, pow(log(40.0) / 40.0, 3.0 / 8.0), accuracy: 1e-12)
        // The Abbas ED divides by log κ, κ = γn/(2π log n) = 1.73 here, so it may exceed d at small n.
        XCTAssertGreaterThan(cell.abbasED, 0)
        XCTAssertTrue(cell.abbasED.isFinite)
    }
}

final class StudyAnalysisTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        ShippedEstimators.install()
    }

    /// Pairs with disjoint brackets, by hand: in group A, [0, 1] lies apart from [2, 3] and [2.5, 4], which
    /// overlap; in group B, [5, 6] and [1, 2]; a bracket that merely touches another ([1, 2] beside [0, 1] or
    /// [2, 3]) is not disjoint.
    func testCertainPairsByHand() {
        // A damaged cell (a bracket that is not a pair) is told apart before the analysis indexes it.
        var damaged = FisherCell(dataset: "d", architecture: "a", parameters: 1, n: 1, eps: 0.1, dZeta: 1, ci95: [0, 2],
                                 bracket: [0, 2], dZetaLower: 1, bracketLower: [0, 2], ess: [], paths: 1, abbasED: 0, genericRank: 1,
                                 genericRankProved: false, seconds: 0)
        XCTAssertTrue(damaged.hasPairs)
        damaged.bracket = []
        XCTAssertFalse(damaged.hasPairs)
        damaged.bracket = [0, 2]
        damaged.intervalLower = [1]
        XCTAssertFalse(damaged.hasPairs)

        func cell(_ lo: Double, _ hi: Double) -> FisherCell {
            FisherCell(dataset: "d", architecture: "a", parameters: 1, n: 1, eps: 0.1, dZeta: (lo + hi) / 2, ci95: [lo, hi],
                       bracket: [lo, hi], dZetaLower: lo, bracketLower: [lo, hi], ess: [], paths: 1, abbasED: 0, genericRank: 1,
                       genericRankProved: false, seconds: 0)
        }
        let r = CertainPairs.count(dataset: "d", groups: ["A", "A", "A", "B", "B"],
                                   cells: [cell(0, 1), cell(2, 3), cell(2.5, 4), cell(5, 6), cell(1, 2)])
        XCTAssertEqual(r.equalSizePairs, 3 + 1)
        XCTAssertEqual(r.equalSize, 2 + 1, "A: (0,1) and (0,2); B: (3,4)")
        XCTAssertEqual(r.allPairs, 10)
        XCTAssertEqual(r.all, 7, "(0,1) (0,2) (0,3) (1,3) (2,3) (2,4) (3,4); (1,2) overlap, (0,4) and (1,4) touch")
    }

    /// Cells made by hand: a training loss that falls exactly as d_zeta rises gives oriented τ = +1 with a
    /// degenerate interval for d_zeta (its brackets, redrawn from, do not overlap), and a measure that ranks
    /// the loss the wrong way gives −1, with a difference of 2 whose Holm-corrected p-value is small.
    func testKnownRankingsGiveKnownTaus() async throws {
        try await knownRankings(bracketHalfWidth: 1.4)
    }

    /// The same cells with brackets wider than the 2sEDs' spacing: the estimate's τ is still +1, but the
    /// bootstrap redraws each 2sED uniformly on its bracket, so neighbours can swap and the interval opens.
    func testOverlappingBracketsWidenTheInterval() async throws {
        try await knownRankings(bracketHalfWidth: 2, overlapping: true)
    }

    func knownRankings(bracketHalfWidth h: Double, overlapping: Bool = false) async throws {
        var g = StudyTestGrid.make()
        g.seeds = 2
        g.groups = [StudyGroup(name: "A", architectures: ["6-3-2", "6-4-2", "6-5-2", "6-6-2", "6-7-2", "6-8-2"])]
        g.sizeTolerance = 0.9
        g.learningRates = [0.01]
        g.batchSizes = [8]
        let archs = try g.architectures.map(\.architecture)
        var fisher: [FisherCell] = [], training: [[[TrainingCell]]] = []
        for (a, arch) in archs.enumerated() {
            let dz = Double(10 + 3 * a)
            fisher.append(FisherCell(dataset: "toy", architecture: arch.notation, parameters: arch.parameterCount, n: 40, eps: 0.5,
                                     dZeta: dz, ci95: [dz - 1, dz + 1], bracket: [dz - h, dz + h], dZetaLower: dz - 0.5,
                                     bracketLower: [dz - 3, dz + 2], ess: [10], paths: 16, abbasED: Double(20 - a),
                                     genericRank: 18 + 6 * a, genericRankProved: true, seconds: 0))
            training.append([(0..<2).map { r in
                // Loss falls with a; the path norm rises with the loss (so with the 2sED it ranks the wrong way).
                let loss = 1.0 - 0.1 * Double(a)  // the same for every seed: every bootstrap draw keeps the order
                return TrainingCell(dataset: "toy", architecture: arch.notation, learningRate: 0.01, batchSize: 8, seed: r,
                                    trainLoss: loss, trainError: 0.1, testLoss: loss, testError: 0.1 + 0.01 * Double(a),
                                    logPathNorm: loss * 3, logSpectralProduct: Double(a), fisherRao: 1, flatness: Double(a * a),
                                    flatnessSaturated: false, distanceFromInit: 1, seconds: 0)
            }])
        }
        let cells = StudyCells(fisher: [fisher], training: [training])
        let (rows, partial) = try await StudyAnalysis.analyze(grid: g, cells: cells, replicates: 2000, threads: 2)
        func row(_ m: StudyMeasure, _ t: StudyTarget) -> StudyRow { rows.first { $0.measure == m.rawValue && $0.target == t.rawValue }! }
        let dz = row(.dZeta, .trainLoss)
        XCTAssertEqual(dz.tau ?? .nan, 1, accuracy: 1e-12)
        XCTAssertEqual(dz.tauHigh ?? .nan, 1, accuracy: 1e-12)
        if overlapping {
            // Neighbours 3 apart on brackets ±2 swap with probability 1/32 per pair, so τ falls below 1 in
            // many replicates: 5 neighbouring pairs of 6 architectures, P(no swap) ≈ (31/32)^5 ≈ 0.85.
            XCTAssertLessThan(dz.tauLow ?? .nan, 1)
            // Anywhere in the brackets: the 5 neighbouring pairs may each swap, −2 each of the 15 pairs' +15.
            XCTAssertEqual(dz.tauBracketLow ?? .nan, 5.0 / 15, accuracy: 1e-12)
            XCTAssertEqual(dz.tauBracketHigh ?? .nan, 1, accuracy: 1e-12)
            return
        }
        XCTAssertEqual(dz.tauBracketLow ?? .nan, 1, accuracy: 1e-12)
        XCTAssertEqual(dz.tauLow ?? .nan, 1, accuracy: 1e-12)
        XCTAssertEqual(dz.psiArchitecture ?? .nan, 1, accuracy: 1e-12)
        XCTAssertNil(dz.psiLearningRate)  // one learning rate: no group varies it
        let path = row(.logPathNorm, .trainLoss)
        XCTAssertEqual(path.tau ?? .nan, -1, accuracy: 1e-12)
        XCTAssertEqual(path.diff ?? .nan, 2, accuracy: 1e-12)
        XCTAssertLessThan(path.pHolm ?? 1, 0.05)
        // The abbas ED falls with a: oriented τ = −1 against the loss too.
        XCTAssertEqual(row(.abbasED, .trainLoss).tau ?? .nan, -1, accuracy: 1e-12)
        // A measure constant over the models (the Fisher–Rao norm here, the depth) has no τ, and says so.
        XCTAssertNil(row(.fisherRao, .trainLoss).tau)
        XCTAssertNotNil(row(.fisherRao, .trainLoss).note)
        XCTAssertNil(row(.depth, .gap).tau)
        // Gap rises with a, as d_zeta does: oriented τ = +1 (orientation +1 for the gap).
        XCTAssertEqual(row(.dZeta, .gap).tau ?? .nan, 1, accuracy: 1e-12)
        // Holm's p-values are at least the raw ones.
        for r in rows where r.p != nil { XCTAssertGreaterThanOrEqual(r.pHolm! + 1e-15, r.p!) }
        // The generic rank ranks the models as d_zeta does: the partial τ is undefined and says why.
        let p = partial.first { $0.measure == "d_zeta" && $0.target == "train_loss" }!
        XCTAssertNil(p.tau)
        XCTAssertNotNil(p.note)
    }
}

final class StudyTeacherTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        ShippedEstimators.install()
    }

    /// A teacher task's test side is the population risk with the teacher's exact label probabilities:
    /// the test samples follow the training ones in the same source, and the error of a network there is
    /// 1 − mean_x p*(ŷ(x)|x), computed here by hand.
    func testTeacherTaskUsesExactLabelExpectations() throws {
        let spec = "synthetic:teacher:6-4-3"
        let d = StudyDataset(name: "t", train: spec, test: spec, trainSamples: 20, testSamples: 50, pad: 0, pool: 1)
        let data = try StudyData.load(d)
        XCTAssertEqual(data.train.count, 20)
        XCTAssertEqual(data.test.count, 50)
        let all = try DataSource.load(spec, samples: 70)
        XCTAssertEqual(Array(data.test.inputs.data), Array(all.inputs.data[(20 * 6)...]))
        let pop = try XCTUnwrap(data.population)
        let teacher = Network.teacher(architecture: try Architecture(parsing: "6-4-3", flag: "t"), activation: .relu, seed: 1)
        var rng = Xoshiro256(seed: 9, stream: [1])
        let student = Network.uniform(architecture: try Architecture(parsing: "6-4-3", flag: "t"), activation: .relu, box: -1...1, rng: &rng)
        let pStar = Softmax.probabilities(teacher.forward(data.test.inputs).logits)
        let logits = student.forward(data.test.inputs).logits
        var error = 0.0
        for i in 0..<50 {
            let row = (0..<3).map { logits.data[i * 3 + $0] }
            let yHat = row.indices.max { row[$0] < row[$1] }!
            error += 1 - pStar.data[i * 3 + yHat]
        }
        XCTAssertEqual(pop.risk(of: student).zeroOne, error / 50, accuracy: 1e-12)
        // Padding or pooling a teacher task is refused.
        XCTAssertThrowsError(try StudyData.load(StudyDataset(name: "t", train: spec, test: spec, trainSamples: 20, testSamples: 50, pad: 1, pool: 1)))
        // A data set with distinct sources has no population.
        XCTAssertNil(try StudyTeacherTests.csvData().population)
    }

    static func csvData() throws -> StudyData {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("study-t-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try StudyTestGrid.csv(dir + "/a.csv", rows: 20, seed: 1)
        try StudyTestGrid.csv(dir + "/b.csv", rows: 20, seed: 2)
        return try StudyData.load(StudyDataset(name: "c", train: "csv:\(dir)/a.csv", test: "csv:\(dir)/b.csv", trainSamples: 20, testSamples: 20, pad: 0, pool: 1))
    }
}

/// The pre-registered primary test on cells made by hand: two groups of four architectures, two templates,
/// two seeds; the decision follows the within-group orders and the brackets' overlap.
final class StudyPrimaryTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        ShippedEstimators.install()
    }

    /// `loss(a, t, seed)` per architecture; 2sED 10 + spacing·a within each group, brackets ± halfWidth.
    func cells(spacing: Double, halfWidth: Double, loss: (Int, Int, Int) -> Double) throws -> (StudyGrid, StudyCells) {
        var g = StudyTestGrid.make()
        g.groups = [StudyGroup(name: "A", architectures: ["6-3-2", "6-4-2", "6-5-2", "6-6-2"]),
                    StudyGroup(name: "B", architectures: ["6-7-2", "6-8-2", "6-9-2", "6-10-2"])]
        g.learningRates = [0.01, 0.03]
        g.batchSizes = [8]
        let archs = try g.architectures.map(\.architecture)
        var fisher: [FisherCell] = [], training: [[[TrainingCell]]] = []
        for (a, arch) in archs.enumerated() {
            let dz = 10 + spacing * Double(a % 4)
            fisher.append(FisherCell(dataset: "toy", architecture: arch.notation, parameters: arch.parameterCount, n: 40, eps: 0.5,
                                     dZeta: dz, ci95: [dz - 1, dz + 1], bracket: [dz - halfWidth, dz + halfWidth], dZetaLower: dz,
                                     bracketLower: [dz - halfWidth, dz + halfWidth], ess: [1], paths: 16, abbasED: 1,
                                     genericRank: 1, genericRankProved: true, seconds: 0))
            training.append(g.trainingSettings.indices.map { t in
                (0..<g.seeds).map { r in
                    TrainingCell(dataset: "toy", architecture: arch.notation, learningRate: g.trainingSettings[t].learningRate,
                                 batchSize: 8, seed: r, trainLoss: loss(a, t, r), trainError: 0, testLoss: 0, testError: 0,
                                 logPathNorm: 0, logSpectralProduct: 0, fisherRao: 0, flatness: 0, flatnessSaturated: false,
                                 distanceFromInit: 0, seconds: 0)
                }
            })
        }
        return (g, StudyCells(fisher: [fisher], training: [training]))
    }

    func testDecisions() throws {
        // The loss falls with the 2sED in every group and template, brackets disjoint: τ = +1, supported.
        let (g1, c1) = try cells(spacing: 3, halfWidth: 1) { a, t, r in 2 - 0.1 * Double(a % 4) + 0.01 * Double(t) + 0.001 * Double(r) }
        let p1 = try StudyPrimary.run(grid: g1, cells: c1, replicates: 400)
        XCTAssertEqual(p1.rows[0].tau, 1, accuracy: 1e-12)
        XCTAssertEqual(p1.rows[0].cells, 4, "2 groups × 2 templates")
        XCTAssertEqual(p1.rows[0].decision, .supported)
        XCTAssertEqual(p1.decision, .supported)
        // The loss rises with the 2sED: τ = −1, refuted.
        let (g2, c2) = try cells(spacing: 3, halfWidth: 1) { a, t, r in 1 + 0.1 * Double(a % 4) + 0.001 * Double(r) }
        let p2 = try StudyPrimary.run(grid: g2, cells: c2, replicates: 400)
        XCTAssertEqual(p2.rows[0].tau, -1, accuracy: 1e-12)
        XCTAssertEqual(p2.rows[0].decision, .refuted)
        // The same orders, but every bracket overlaps all others: the redraws order the 2sEDs at random, so
        // the interval spans 0 however clean the point estimate is.
        let (g3, c3) = try cells(spacing: 0.1, halfWidth: 5) { a, t, r in 2 - 0.1 * Double(a % 4) + 0.001 * Double(r) }
        let p3 = try StudyPrimary.run(grid: g3, cells: c3, replicates: 400)
        XCTAssertEqual(p3.rows[0].tau, 1, accuracy: 1e-12)
        XCTAssertLessThan(p3.rows[0].tauLow, 0)
        XCTAssertEqual(p3.rows[0].decision, .inconclusive)
        XCTAssertEqual(p3.decision, .inconclusive)
        XCTAssertThrowsError(try StudyPrimary.run(grid: g3, cells: c3, replicates: 5))
    }
}

/// The primary test's interval against a known truth: simulated studies of three groups of 12
/// architectures, two templates, two seeds, whose 2sED x_a is known exactly (brackets of width 0) and whose
/// seed losses are −ρ·x_a + u_a + 0.3·t + σ·e. Per (group, template) the oriented τ_b of x against the
/// seed-mean losses is a U-statistic, so its expectation is the bivariate normal's (2/π)·arcsin(corr),
/// corr = ρ / √(ρ² + 1 + σ²/2); the mean over cells has the same expectation.
final class StudyPrimaryCoverageTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        ShippedEstimators.install()
    }

    /// A real effect (ρ = 0.8, τ ≈ 0.40): covered, and found in most studies.
    func testTheIntervalCoversTheKnownTau() throws {
        let (covered, decisions) = try simulate(rho: 0.8)
        XCTAssertGreaterThanOrEqual(covered, 89, "the 1% binomial quantile of 100 draws at 95%")
        XCTAssertGreaterThan(decisions[.supported] ?? 0, 80, "a real τ of about 0.40 is found in most studies")
    }

    /// No effect (ρ = 0, τ = 0): covered, and the claim "supported" in at most a few studies (at most 2.5%
    /// expected; 6 of 100 is its 1% binomial quantile).
    func testNoEffectIsRarelySupported() throws {
        let (covered, decisions) = try simulate(rho: 0)
        XCTAssertGreaterThanOrEqual(covered, 89)
        XCTAssertLessThanOrEqual(decisions[.supported] ?? 0, 6)
    }

    func simulate(rho: Double) throws -> (covered: Int, decisions: [StudyPrimary.Decision: Int]) {
        let sigma = 0.7, seeds = 2
        let truth = 2 / Double.pi * asin(rho / (rho * rho + 1 + sigma * sigma / Double(seeds)).squareRoot())
        var g = StudyTestGrid.make()
        g.seeds = seeds
        let names = (0..<3).map { k in (0..<12).map { "6-\(3 + k * 12 + $0)-2" } }
        g.groups = names.enumerated().map { StudyGroup(name: "G\($0.offset)", architectures: $0.element) }
        g.learningRates = [0.01, 0.03]
        g.batchSizes = [8]
        let archs = try g.architectures.map(\.architecture)
        var covered = 0, decisions: [StudyPrimary.Decision: Int] = [:]
        let studies = 100
        for s in 0..<studies {
            var rng = Xoshiro256(seed: UInt64(1000 + s), stream: [0x5052])
            var fisher: [FisherCell] = [], training: [[[TrainingCell]]] = []
            for arch in archs {
                let x = rng.normal(), u = rng.normal()
                fisher.append(FisherCell(dataset: "toy", architecture: arch.notation, parameters: arch.parameterCount, n: 40, eps: 0.5,
                                         dZeta: x, ci95: [x, x], bracket: [x, x], dZetaLower: x, bracketLower: [x, x], ess: [1],
                                         paths: 16, abbasED: 1, genericRank: 1, genericRankProved: true, seconds: 0))
                training.append(g.trainingSettings.indices.map { t in
                    (0..<seeds).map { r in
                        TrainingCell(dataset: "toy", architecture: arch.notation, learningRate: g.trainingSettings[t].learningRate,
                                     batchSize: 8, seed: r, trainLoss: -rho * x + u + 0.3 * Double(t) + sigma * rng.normal(),
                                     trainError: 0, testLoss: 0, testError: 0, logPathNorm: 0, logSpectralProduct: 0, fisherRao: 0,
                                     flatness: 0, flatnessSaturated: false, distanceFromInit: 0, seconds: 0)
                    }
                })
            }
            g.seed = UInt64(7 + s)
            let p = try StudyPrimary.run(grid: g, cells: StudyCells(fisher: [fisher], training: [training]), replicates: 400)
            if p.rows[0].tauLow <= truth && truth <= p.rows[0].tauHigh { covered += 1 }
            decisions[p.rows[0].decision, default: 0] += 1
        }
        return (covered, decisions)
    }
}
