import Foundation
import Networks
import TwoScaleCore

/// A Monte Carlo run (`twoscale ed`) shared out over the ranks of an MPI job, writing exactly the store
/// and result of the same run in one process.
///
/// * **Rank 0 owns the store.** It alone checks the settings, creates or resumes the store (reading the
///   paths already done) and broadcasts the list of paths still to do (`MPI_Ibcast`). No other rank
///   touches the store folder.
/// * **The split.** Rank r computes the paths at positions r, r + P, r + 2P, … of that list (P ranks),
///   so any number of ranks can continue any store, and a store begun by one process (or by another
///   number of ranks) resumes the same way.
/// * **Gathering.** Every finished path goes to rank 0 at once (`MPI_Isend`: a header `[k, n]`, then
///   its `n` flattened eigenvalues in messages of at most 2²⁷ values), which writes it to `partial/`
///   atomically, exactly as a one-process run writes the paths it computes. When every path is in,
///   rank 0 assembles the final files from the rows in path order — the same bytes whatever the number
///   of ranks, the order of arrival or the interruptions. Everything beyond the independent paths (the
///   trace normalisation's mean over paths, the bootstrap, the report) is computed on rank 0 from the
///   gathered spectra: no rank reads another's files.
/// * **Failure.** An error on any rank after the broadcast (a failing path, a full disk on rank 0, a
///   rank that cannot read the data) prints one message naming the rank and calls `MPI_Abort`, which
///   stops every rank. The store then holds `meta.json` and the paths finished so far — never final
///   files — and `--resume` continues it with any number of ranks. An error rank 0 finds before the
///   broadcast (a usage error, a store made with other settings) is printed once by rank 0, and every
///   rank exits with its status without a word.
public struct DistributedSpectraRun: Sendable {
    public let world: MPIWorld

    public init(world: MPIWorld) {
        self.world = world
    }

    /// Eigenvalues per data message: far below MPI's 2³¹ − 1 element count limit.
    static let chunk = 1 << 27

    /// `TWOSCALE_FAULT_PATH=k`: a test hook; the rank computing path k fails there, as a real fault would.
    static let faultPath: Int? = ProcessInfo.processInfo.environment["TWOSCALE_FAULT_PATH"].flatMap { Int($0) }

    /// Runs on every rank. `prepare` builds the run (checks, model, store description): on rank 0 first,
    /// before anything is shared (its argument is `true`: check what concerns the store folder); on the
    /// other ranks (argument `false`) only after rank 0 succeeded and only if they have paths to compute.
    /// Returns the outcome on rank 0 and nil on the others; MPI is then finalised. An error rank 0 meets
    /// before sharing out the paths is thrown with MPI still up: print it, then call
    /// `MPIWorld.meetBeforeLeaving()` (the other ranks wait in `MPI_Finalize` meanwhile, then throw
    /// `SilentExit`: leave with that status, without a word).
    public func execute(store: String?, resume: Bool, prepare: (_ lead: Bool) async throws -> SpectraRun,
                        progress: @escaping @Sendable (SpectraRun.Progress) -> Void = { _ in }) async throws -> SpectraRun.Outcome? {
        if world.rank == 0 {
            let runner: SpectraRun
            let plan: SpectraRun.Plan
            do {
                runner = try await prepare(true)
                plan = try runner.plan(store: store, resume: resume)
            } catch {
                // The other ranks leave with this status; MPI stays up until the caller has printed the
                // message and finalised (they wait for that in MPI_Finalize).
                let status = (error as? TwoScaleError)?.exitCode ?? 1
                _ = try? world.broadcast([Int64(status)])
                throw error
            }
            do {
                _ = try world.broadcast([0] + plan.todo.map { Int64($0) })
            } catch {
                fatal(error, store: store)
            }
            return try await lead(runner: runner, plan: plan, store: store, progress: progress)
        }
        let message: [Int64]
        do {
            message = try world.broadcast([])
        } catch {
            fatal(error, store: store)
        }
        guard let status = message.first else { fatal(TwoScaleError.failure("empty broadcast from rank 0 (internal error)"), store: store) }
        guard status == 0 else {
            world.finalize()
            throw SilentExit(status: Int32(truncatingIfNeeded: status))
        }
        let todo = message.dropFirst().map { Int($0) }
        let mine = Self.share(of: world.rank, ranks: world.size, todo: todo)
        if !mine.isEmpty {
            do {
                let runner = try await prepare(false)
                _ = try await MonteCarlo.run(model: runner.model, design: runner.design, paths: mine, threads: runner.threads,
                                             keepResults: false) { k, s in
                    try Self.checkFault(k)
                    let flat = s.flattened
                    try world.send([Int64(k), Int64(flat.count)], to: 0, tag: .header)
                    var o = 0
                    while o < flat.count {
                        let e = Swift.min(o + Self.chunk, flat.count)
                        try world.send(Array(flat[o..<e]), to: 0, tag: .data)
                        o = e
                    }
                }
            } catch {
                fatal(error, store: store)
            }
        }
        world.finalize()
        return nil
    }

    /// The paths rank `r` of `ranks` computes: positions r, r + P, … of `todo`.
    public static func share(of r: Int, ranks: Int, todo: [Int]) -> [Int] {
        guard r < todo.count else { return [] }
        return stride(from: r, to: todo.count, by: ranks).map { todo[$0] }
    }

    static func checkFault(_ k: Int) throws {
        if k == faultPath {
            throw TwoScaleError.failure("path \(k) failed: injected fault (TWOSCALE_FAULT_PATH=\(k) is set; a test hook)")
        }
    }

    /// Rank 0: computes its share and receives the others', writing each path as it arrives; then
    /// finalises MPI and assembles the store.
    private func lead(runner: SpectraRun, plan: SpectraRun.Plan, store: String?,
                      progress: @escaping @Sendable (SpectraRun.Progress) -> Void) async throws -> SpectraRun.Outcome {
        if let f = plan.finished {
            world.finalize()
            return f
        }
        let collector = Collector(found: plan.done.count, total: runner.meta.storedPaths.count, progress: progress)
        collector.report()
        let mine = Self.share(of: 0, ranks: world.size, todo: plan.todo)
        var owner: [Int: Int] = [:]
        for (i, k) in plan.todo.enumerated() { owner[k] = i % world.size }
        let expected = plan.todo.count - mine.count
        async let received: Void = receive(expected: expected, owner: owner, runner: runner, plan: plan,
                                           collector: collector, store: store)
        do {
            _ = try await MonteCarlo.run(model: runner.model, design: runner.design, paths: mine, threads: runner.threads,
                                         keepResults: false) { k, s in
                try Self.checkFault(k)
                try plan.store?.writePartial(path: k, s)
                collector.add(k, s)
            }
        } catch {
            fatal(error, store: store)
        }
        await received
        world.finalize()
        return try runner.finish(plan, fresh: collector.taken())
    }

    /// Receives `expected` paths from the other ranks on a thread of its own (so that it answers at
    /// once even while every core computes paths), lazily polling for headers.
    private func receive(expected: Int, owner: [Int: Int], runner: SpectraRun, plan: SpectraRun.Plan,
                         collector: Collector, store: String?) async {
        guard expected > 0 else { return }
        let world = self.world
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                do {
                    var seen = Set<Int>()
                    var pause: UInt32 = 50
                    while seen.count < expected {
                        guard let (source, n) = try world.probe(tag: .header) else {
                            usleep(pause)
                            pause = Swift.min(pause * 2, 2000)
                            continue
                        }
                        pause = 50
                        let h = try world.receiveInts(count: n, from: source, tag: .header)
                        guard h.count == 2, let k = Int(exactly: h[0]), owner[k] == source, !seen.contains(k), h[1] >= 2 else {
                            throw TwoScaleError.failure("unexpected message \(h) from MPI rank \(source) (internal error)")
                        }
                        let len = Int(h[1])
                        var flat: [Double] = []
                        flat.reserveCapacity(len)
                        while flat.count < len {
                            flat += try world.receiveDoubles(count: Swift.min(Self.chunk, len - flat.count), from: source, tag: .data)
                        }
                        let s: PathSpectra
                        do {
                            s = try PathSpectra(flattened: flat, meta: runner.meta, source: "path \(k)")
                        } catch {
                            throw TwoScaleError.failure("the spectra of path \(k) sent by MPI rank \(source) do not fit the store's layers (internal error)")
                        }
                        try plan.store?.writePartial(path: k, s)
                        seen.insert(k)
                        collector.add(k, s)
                    }
                } catch {
                    fatal(error, store: store)
                }
                done.resume()
            }
            thread.name = "twoscale.mpi.receive"
            thread.start()
        }
    }

    /// Stops the whole job with one message naming this rank.
    private func fatal(_ error: any Error, store: String?) -> Never {
        let e = error as? TwoScaleError
        let text = e?.message ?? "\(error)"
        let after = store.map {
            "the paths finished so far are kept in \($0); continue with the same command and --resume (any number of ranks)"
        } ?? "nothing is saved (no --store)"
        world.abort(code: e?.exitCode ?? 1,
                    message: "twoscale: MPI rank \(world.rank) of \(world.size): \(text)\ntwoscale: stopping the MPI job; \(after)")
    }
}

/// Leave with this status without a message (another rank has printed it).
public struct SilentExit: Error, Sendable {
    public let status: Int32
}

/// Rank 0's paths as they come in (its own and received), and the progress they make.
private final class Collector: @unchecked Sendable {
    private let lock = NSLock()
    private var rows: [Int: PathSpectra] = [:]
    private let found: Int
    private let total: Int
    private let start = Date()
    private let progress: @Sendable (SpectraRun.Progress) -> Void

    init(found: Int, total: Int, progress: @escaping @Sendable (SpectraRun.Progress) -> Void) {
        self.found = found
        self.total = total
        self.progress = progress
    }

    func report() {
        lock.lock(); defer { lock.unlock() }
        progress(SpectraRun.Progress(done: found + rows.count, total: total, computed: rows.count,
                                     elapsed: Date().timeIntervalSince(start)))
    }

    func add(_ k: Int, _ s: PathSpectra) {
        lock.lock(); defer { lock.unlock() }
        rows[k] = s
        progress(SpectraRun.Progress(done: found + rows.count, total: total, computed: rows.count,
                                     elapsed: Date().timeIntervalSince(start)))
    }

    func taken() -> [Int: PathSpectra] {
        lock.lock(); defer { lock.unlock() }
        return rows
    }
}
