import Foundation
import SpectraStore
import TwoScaleCore

/// `twoscale study`'s result: the grid, how many cells this run computed, the Fisher-side measures per
/// (data set, architecture), and the statistics (`StudyAnalysis`).
public struct StudyResult: Sendable, Encodable {
    public var grid: String
    public var folder: String
    public var datasets: [String]
    public var architectures: Int
    public var models: Int
    public var seeds: Int
    public var cells: Int
    /// Cells computed by this run (the rest were read from the folder).
    public var computed: Int
    public var bootstrap: Int
    public var seconds: Double
    /// One row per (data set, architecture).
    public var fisher: [FisherCell]
    /// The pre-registered primary test of the paper's claim (`StudyPrimary`).
    public var primary: StudyPrimary
    public var taus: [StudyRow]
    public var partial: [StudyPartialRow]
    /// The family-wise δ of the certified brackets read together: each lower end fails with probability at
    /// most δ = 0.01, so all brackets of one data set hold at once with probability ≥ 1 − architectures·δ
    /// (union bound), and all of the study's with ≥ 1 − `bracketDelta`.
    public var bracketDeltaPerDataset: Double
    public var bracketDelta: Double
    /// Per data set, the pairs of architectures whose certified brackets are disjoint: ordered with certainty,
    /// all of them at once with probability ≥ 1 − `bracketDeltaPerDataset`.
    public var certainPairs: [CertainPairs]
}

/// The pairs of one data set's architectures whose 2sED brackets do not overlap, so that the two are ordered
/// whatever the estimates' error: among equal-size pairs (one size group, the paper's claim) and among all.
public struct CertainPairs: Sendable, Equatable, Encodable {
    public var dataset: String
    public var equalSize: Int
    public var equalSizePairs: Int
    public var all: Int
    public var allPairs: Int

    /// Counts them over `cells` (one per architecture, in `groups`' order: the group of each).
    public static func count(dataset: String, groups: [String], cells: [FisherCell]) -> CertainPairs {
        var r = CertainPairs(dataset: dataset, equalSize: 0, equalSizePairs: 0, all: 0, allPairs: 0)
        for i in cells.indices {
            for j in cells.indices where j > i {
                let a = cells[i].bracket, b = cells[j].bracket
                let disjoint = a.count == 2 && b.count == 2 && (a[1] < b[0] || b[1] < a[0])
                r.allPairs += 1
                if disjoint { r.all += 1 }
                guard i < groups.count, j < groups.count, groups[i] == groups[j] else { continue }
                r.equalSizePairs += 1
                if disjoint { r.equalSize += 1 }
            }
        }
        return r
    }
}

/// What `study` prints for its plan (`Setting.plan`): the grid's cells, done and to do, without running anything.
public struct StudyPlan: Sendable, Encodable {
    public struct Architecture: Sendable, Encodable {
        public var group: String
        public var architecture: String
        public var parameters: Int
    }
    public var grid: String
    public var folder: String
    public var fisherCells: Int
    public var trainingCells: Int
    public var fisherDone: Int
    public var trainingDone: Int
    public var architectures: [Architecture]

    enum CodingKeys: String, CodingKey {
        case grid, folder, architectures
        case fisherCells = "fisher_cells", trainingCells = "training_cells", fisherDone = "fisher_done", trainingDone = "training_done"
    }
}

/// What `study` prints for one shard i/n (`Setting.shard`): the cells this shard computed and where the study stands.
public struct StudyShardSummary: Sendable, Encodable {
    public var grid: String
    public var folder: String
    public var shard: String
    public var computed: Int
    public var cells: Int
    public var done: Int
    public var seconds: Double

    /// Computes `shard`'s missing cells of `folder`'s study.
    public static func run(_ folder: StudyFolder, shard: Shard, threads: Int,
                           progress: (StudyRunner.Progress) -> Void = { _ in }) async throws -> StudyShardSummary {
        let clock = ContinuousClock(), t0 = clock.now
        let computed = try await StudyRunner.compute(folder, threads: threads, shard: shard, progress: progress)
        let c = try StudyRunner.counts(folder)
        return StudyShardSummary(grid: folder.grid.name, folder: folder.path, shard: shard.description, computed: computed,
                                 cells: c.fisher + c.training, done: c.fisherDone + c.trainingDone, seconds: (clock.now - t0) / .seconds(1))
    }
}

extension StudyPlan {
    /// The plan of `folder`'s study: its cells, done and to do.
    public init(_ folder: StudyFolder) throws {
        let c = try StudyRunner.counts(folder)
        grid = folder.grid.name
        self.folder = folder.path
        (fisherCells, trainingCells, fisherDone, trainingDone) = (c.fisher, c.training, c.fisherDone, c.trainingDone)
        architectures = try folder.grid.architectures.map {
            Architecture(group: $0.group, architecture: $0.architecture.notation, parameters: $0.architecture.parameterCount)
        }
    }
}

extension StudyResult {
    /// Runs what is missing of `folder`'s study (`StudyRunner.run`), then its statistics with `replicates`
    /// bootstrap replicates.
    public static func run(_ folder: StudyFolder, threads: Int, replicates: Int,
                           progress: (StudyRunner.Progress) -> Void = { _ in }) async throws -> StudyResult {
        let g = folder.grid
        let clock = ContinuousClock(), t0 = clock.now
        let counts = try StudyRunner.counts(folder)
        let cells = try await StudyRunner.run(folder, threads: threads, progress: progress)
        let (rows, partial) = try await StudyAnalysis.analyze(grid: g, cells: cells, replicates: replicates, threads: threads)
        let primary = try StudyPrimary.run(grid: g, cells: cells, replicates: replicates)
        let groups = try g.architectures.map(\.group)
        let archs = groups.count
        let total = counts.fisher + counts.training
        return StudyResult(grid: g.name, folder: folder.path, datasets: g.datasets.map(\.name), architectures: archs,
                           models: archs * g.trainingSettings.count, seeds: g.seeds, cells: total,
                           computed: total - counts.fisherDone - counts.trainingDone, bootstrap: replicates,
                           seconds: (clock.now - t0) / .seconds(1), fisher: cells.fisher.flatMap { $0 }, primary: primary, taus: rows, partial: partial,
                           bracketDeltaPerDataset: CertifiedBracket.defaultDelta * Double(archs),
                           bracketDelta: CertifiedBracket.defaultDelta * Double(archs * g.datasets.count),
                           certainPairs: zip(g.datasets, cells.fisher).map { d, f in
                               CertainPairs.count(dataset: d.name, groups: groups, cells: f)
                           })
    }
}
