import Foundation
import SpectraStore
import TwoScaleCore
import TwoScaleFormats

/// A study's folder: the grid it was started with (`grid.json`) and one JSON file per finished cell
/// (`cells/fisher-D-A.json`, `cells/train-D-A-S-R.json`, written atomically). A run computes only
/// the cells whose file is missing, so an interrupted study resumes where it stopped; a folder started
/// with another grid, or by a version whose cells mean other numbers (`cellMethod`, in `method.txt`), is
/// refused.
public struct StudyFolder: Sendable {
    public let path: String
    public let grid: StudyGrid

    /// What a cell's numbers mean, raised whenever a cell's computation changes their meaning, so that a
    /// folder never mixes the two: 2 since the certified bracket holds for the true c (its interval inside),
    /// 3 since its first block's upper end is sampled where that is smaller, 4 since that end is paired with the
    /// second block's supremum (not its mean), 5 since the reported interval also reads stage 1's decorrelation
    /// (`ReportedInterval.minimumDecorrelation`), 6 since the sampled interval takes stage 1's variance to
    /// Student's t and its correlation with the later stages at the Cauchy–Schwarz bound (every smc cell's
    /// `ci95` widens), 7 since the lower 2sED's reported interval with one hidden layer also stands where stage
    /// 1 decorrelated and its islands are quiet, whatever the outer weights, and islands of several later stages
    /// are sized without a stall rule, 8 since a later stage's islands are sized only while every later stage
    /// before it passed the rule (`StagedSMC.sizesStage`; point estimates move), 9 since an MLP's bracket of three
    /// blocks or more takes the tilted chain (`TiltedChain`; upper ends move) and smc moves the handed-over units
    /// (point estimates move); a folder without `method.txt` is method 1.
    public static let cellMethod = 9

    /// Opens (or starts) `path` for `grid`.
    public init(path: String, grid: StudyGrid) throws {
        self.path = path
        self.grid = grid
        let fm = FileManager.default
        try? fm.createDirectory(atPath: cellsPath, withIntermediateDirectories: true)
        var dir: ObjCBool = false
        guard fm.fileExists(atPath: cellsPath, isDirectory: &dir), dir.boolValue else {
            throw TwoScaleError.failure("study: cannot create the folder \(cellsPath)")
        }
        let gridFile = (path as NSString).appendingPathComponent("grid.json")
        let encoded = try StudyFolder.encoder.encode(grid)
        if let existing = fm.contents(atPath: gridFile) {
            guard let old = try? JSONDecoder().decode(StudyGrid.self, from: existing), old == grid else {
                throw TwoScaleError.failure("study: \(path) holds a study of another grid (\(gridFile)); give a new \(Setting.studyFolder) or the same grid")
            }
        } else {
            try AtomicFile.write(encoded, to: gridFile)
        }
        let methodFile = (path as NSString).appendingPathComponent("method.txt")
        if let existing = fm.contents(atPath: methodFile) {
            let method = Int(String(decoding: existing, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            guard method == Self.cellMethod else {
                throw TwoScaleError.failure("study: \(path)'s cells were computed by method \(method.map(String.init) ?? "?") (\(methodFile)), this version computes method \(Self.cellMethod); give a new \(Setting.studyFolder) rather than mix them")
            }
        } else if (try? fm.contentsOfDirectory(atPath: cellsPath))?.isEmpty == false {
            throw TwoScaleError.failure("study: \(path)'s cells were computed by method 1 (no \(methodFile)), this version computes method \(Self.cellMethod); give a new \(Setting.studyFolder) rather than mix them")
        } else {
            try AtomicFile.write(Data("\(Self.cellMethod)\n".utf8), to: methodFile)
        }
    }

    static var encoder: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .prettyPrinted]
        return e
    }

    var cellsPath: String { (path as NSString).appendingPathComponent("cells") }

    public func fisherPath(dataset d: Int, architecture a: Int) -> String {
        (cellsPath as NSString).appendingPathComponent("fisher-\(grid.datasets[d].name)-\(a).json")
    }

    public func trainingPath(dataset d: Int, architecture a: Int, setting s: Int, seed r: Int) -> String {
        (cellsPath as NSString).appendingPathComponent("train-\(grid.datasets[d].name)-\(a)-\(s)-\(r).json")
    }

    public func write<T: Encodable>(_ cell: T, to file: String) throws {
        try AtomicFile.write(try StudyFolder.encoder.encode(cell), to: file)
    }

    /// A finished cell, or nil when its file is missing. A file that does not decode is an error
    /// (delete it to recompute the cell).
    public func read<T: Decodable>(_ type: T.Type, at file: String) throws -> T? {
        guard let data = FileManager.default.contents(atPath: file) else { return nil }
        do { return try JSONDecoder().decode(T.self, from: data) } catch {
            throw TwoScaleError.failure("study: \(file) is not a finished cell (\(StudyGrid.describe(error))); delete it to recompute")
        }
    }
}

/// All of a study's cells, in grid order.
public struct StudyCells: Sendable {
    /// `fisher[d][a]`.
    public var fisher: [[FisherCell]]
    /// `training[d][a][s][r]`.
    public var training: [[[[TrainingCell]]]]
}

/// Runs what is missing of a study, then reads every cell.
public enum StudyRunner {
    public struct Progress: Sendable {
        public var done: Int
        public var total: Int
        public var label: String
    }

    /// Counts of a study's cells: (Fisher cells, training cells), and those already finished.
    public static func counts(_ folder: StudyFolder) throws -> (fisher: Int, training: Int, fisherDone: Int, trainingDone: Int) {
        let g = folder.grid, fm = FileManager.default
        let archs = try g.architectures.count
        var fd = 0, td = 0
        for d in g.datasets.indices {
            for a in 0..<archs {
                if fm.fileExists(atPath: folder.fisherPath(dataset: d, architecture: a)) { fd += 1 }
                for s in g.trainingSettings.indices {
                    for r in 0..<g.seeds where fm.fileExists(atPath: folder.trainingPath(dataset: d, architecture: a, setting: s, seed: r)) { td += 1 }
                }
            }
        }
        let n = g.datasets.count * archs
        return (n, n * g.trainingSettings.count * g.seeds, fd, td)
    }

    /// Computes every missing cell and returns all cells (`compute`, then `read`).
    public static func run(_ folder: StudyFolder, threads: Int, load: (StudyDataset) throws -> StudyData = StudyData.load,
                           progress: (Progress) -> Void = { _ in }) async throws -> StudyCells {
        _ = try await compute(folder, threads: threads, load: load, progress: progress)
        return try read(folder)
    }

    /// Computes the missing cells of `shard` (all of them without one): training cells `threads` at once,
    /// each Fisher cell with `threads` threads of its own. Cells are numbered per data set, Fisher cells
    /// first, then training cells by architecture, hyperparameters and seed; shard `i/n` takes the cells
    /// whose number is `i − 1` modulo n, so shards run side by side (or as a job array) into one folder.
    /// `progress` is called after each cell. Returns the number of cells computed.
    public static func compute(_ folder: StudyFolder, threads: Int, shard: Shard? = nil,
                               load: (StudyDataset) throws -> StudyData = StudyData.load,
                               progress: (Progress) -> Void = { _ in }) async throws -> Int {
        let g = folder.grid
        let runner = try StudyCellRunner(grid: g, threads: threads)
        let archs = try g.architectures
        let c = try counts(folder)
        let total = c.fisher + c.training
        var done = c.fisherDone + c.trainingDone, computed = 0
        var number = 0
        func mine() -> Bool {
            defer { number += 1 }
            guard let shard else { return true }
            return number % shard.count == shard.index - 1
        }
        let fm = FileManager.default
        for (di, d) in g.datasets.enumerated() {
            var missingFisher: [Int] = []
            for a in archs.indices where mine() && !fm.fileExists(atPath: folder.fisherPath(dataset: di, architecture: a)) { missingFisher.append(a) }
            var jobs: [(a: Int, s: Int, r: Int)] = []
            for a in archs.indices {
                for s in g.trainingSettings.indices {
                    for r in 0..<g.seeds where mine() && !fm.fileExists(atPath: folder.trainingPath(dataset: di, architecture: a, setting: s, seed: r)) {
                        jobs.append((a, s, r))
                    }
                }
            }
            guard !missingFisher.isEmpty || !jobs.isEmpty else { continue }
            let data = try load(d)
            for a in missingFisher {
                let cell = try await runner.fisher(dataset: di, architecture: a, data: data)
                try folder.write(cell, to: folder.fisherPath(dataset: di, architecture: a))
                done += 1
                computed += 1
                progress(Progress(done: done, total: total, label: "\(d.name) \(archs[a].architecture.notation): 2sED, bracket, Abbas ED, generic rank"))
            }
            let work = jobs
            try await Parallel.forEach(work.count, threads: threads, { i in
                try runner.train(dataset: di, architecture: work[i].a, setting: work[i].s, seed: work[i].r, data: data)
            }, completed: { i, cell in
                let j = work[i]
                try folder.write(cell, to: folder.trainingPath(dataset: di, architecture: j.a, setting: j.s, seed: j.r))
                done += 1
                computed += 1
                progress(Progress(done: done, total: total, label: "\(d.name) \(archs[j.a].architecture.notation) lr \(cell.learningRate) batch \(cell.batchSize) seed \(j.r + 1)"))
            })
        }
        return computed
    }

    /// Reads every cell; an error names the first missing one.
    public static func read(_ folder: StudyFolder) throws -> StudyCells {
        let g = folder.grid
        let archs = try g.architectures
        var fisher: [[FisherCell]] = [], training: [[[[TrainingCell]]]] = []
        for di in g.datasets.indices {
            fisher.append(try archs.indices.map { a in
                let f = folder.fisherPath(dataset: di, architecture: a)
                guard let c = try folder.read(FisherCell.self, at: f) else { throw TwoScaleError.failure("study: cell \(f) is missing; run the study") }
                guard c.hasPairs else { throw TwoScaleError.failure("study: \(f) is damaged (an interval or bracket that is not a pair of numbers); delete it to recompute") }
                return c
            })
            training.append(try archs.indices.map { a in
                try g.trainingSettings.indices.map { s in
                    try (0..<g.seeds).map { r in
                        let f = folder.trainingPath(dataset: di, architecture: a, setting: s, seed: r)
                        guard let c = try folder.read(TrainingCell.self, at: f) else { throw TwoScaleError.failure("study: cell \(f) is missing; run the study") }
                        return c
                    }
                }
            })
        }
        return StudyCells(fisher: fisher, training: training)
    }
}
