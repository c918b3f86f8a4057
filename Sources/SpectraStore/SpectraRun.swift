import Fisher
import Foundation
import TwoScaleCore

/// A Monte Carlo run backed (optionally) by a spectra store: creates the store, or resumes it, computes
/// the missing paths of `meta.storedPaths` (the shard's, or all K), writes each as it completes, and
/// assembles the final files. Without a store the spectra stay in memory.
public struct SpectraRun: Sendable {
    public var model: any FisherModel
    public var design: MonteCarloDesign
    /// The store's description (settings, K, J, shard): built by the caller from its flags.
    public var meta: StoreMeta
    public var threads: Int

    public init(model: any FisherModel, design: MonteCarloDesign, meta: StoreMeta, threads: Int) throws {
        guard meta.layers == model.blockDimensions else {
            throw TwoScaleError.failure("store layers \(meta.layers) differ from the model's blocks \(model.blockDimensions)")
        }
        guard meta.paths == design.paths, meta.inner == (meta.layers.count > 1 ? design.inner : 0) else {
            throw TwoScaleError.failure("store K = \(meta.paths), J = \(meta.inner) differ from the design (K = \(design.paths), J = \(design.inner))")
        }
        self.model = model
        self.design = design
        self.meta = meta
        self.threads = threads
    }

    /// Progress: paths done (including those found in a resumed store), the total, and how many of the
    /// done ones were computed by this run.
    public struct Progress: Sendable {
        public var done: Int
        public var total: Int
        public var computed: Int
        public var elapsed: Double

        public init(done: Int, total: Int, computed: Int, elapsed: Double) {
            self.done = done
            self.total = total
            self.computed = computed
            self.elapsed = elapsed
        }
    }

    /// What a run produced.
    public struct Outcome: Sendable {
        /// Rows in `meta.storedPaths` order.
        public var rows: [PathSpectra]
        /// Paths computed by this run (the rest came from the store).
        public var computed: Int
        public var store: SpectraStore?
    }

    /// Where a run starts: the store (created, or resumed), the paths already in it and the paths still
    /// to compute (in `meta.storedPaths` order). `finished` is set when a resumed store is complete.
    public struct Plan: Sendable {
        public var store: SpectraStore?
        public var done: [Int: PathSpectra]
        public var todo: [Int]
        public var finished: Outcome?
    }

    /// Opens the store for a run: with `store`, an existing store is refused unless `resume` (then its
    /// settings must match `meta`; completed paths are skipped, and a finished store is simply read back).
    /// Without a store every path is to do.
    public func plan(store directory: String?, resume: Bool) throws -> Plan {
        var store: SpectraStore?
        var done: [Int: PathSpectra] = [:]
        if let dir = directory {
            if resume, FileManager.default.fileExists(atPath: dir + "/meta.json") {
                let s = try SpectraStore.resume(directory: dir, expected: meta)
                if s.isAssembled {
                    // Finals are written atomically before partial/ is removed: all present means complete;
                    // a leftover partial/ (killed just before its removal) goes now.
                    let rows = try s.loadRows()
                    try? FileManager.default.removeItem(atPath: s.partialDirectory)
                    return Plan(store: s, done: [:], todo: [], finished: Outcome(rows: rows, computed: 0, store: s))
                }
                done = try s.completedPaths()
                store = s
            } else {
                store = try SpectraStore.create(directory: dir, meta: meta)
            }
        }
        return Plan(store: store, done: done, todo: meta.storedPaths.filter { done[$0] == nil }, finished: nil)
    }

    /// Ends a run: `fresh` holds the spectra of every path of `plan.todo`; the rows (in `meta.storedPaths`
    /// order) are assembled into the store's final files.
    public func finish(_ plan: Plan, fresh: [Int: PathSpectra]) throws -> Outcome {
        if let f = plan.finished { return f }
        let rows = meta.storedPaths.compactMap { plan.done[$0] ?? fresh[$0] }
        guard rows.count == meta.storedPaths.count else {
            throw TwoScaleError.failure("internal error: \(meta.storedPaths.count - rows.count) paths neither stored nor computed")
        }
        try plan.store?.assemble(rows)
        return Outcome(rows: rows, computed: plan.todo.count, store: plan.store)
    }

    /// Runs the design (see `plan` for the store's handling).
    /// `afterPath` is called after each computed path has been saved (a hook for progress or tests: if
    /// it throws, the run stops there and the store stays resumable).
    public func execute(store directory: String?, resume: Bool,
                        progress: (Progress) -> Void = { _ in },
                        afterPath: (Int) throws -> Void = { _ in }) async throws -> Outcome {
        let plan = try plan(store: directory, resume: resume)
        if let f = plan.finished { return f }
        let store = plan.store, todo = plan.todo, total = meta.storedPaths.count
        let start = Date()
        var computed = 0
        let found = plan.done.count
        progress(Progress(done: found, total: total, computed: 0, elapsed: 0))
        let fresh = try await MonteCarlo.run(model: model, design: design, paths: todo, threads: threads) { k, s in
            try store?.writePartial(path: k, s)
            computed += 1
            progress(Progress(done: found + computed, total: total, computed: computed,
                              elapsed: Date().timeIntervalSince(start)))
            try afterPath(k)
        }
        return try finish(plan, fresh: Dictionary(uniqueKeysWithValues: zip(todo, fresh)))
    }
}
