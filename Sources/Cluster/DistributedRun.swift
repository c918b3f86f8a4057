import Foundation
import SpectraStore
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
///   atomically, exactly as a one-process run writes the paths it computes. When every rank has said it
///   is done, rank 0 assembles the final files from the rows in path order — the same bytes whatever the
///   number of ranks, the order of arrival or the interruptions. Everything beyond the independent paths
///   (the trace normalisation's mean over paths, the bootstrap, the report) is computed on rank 0 from
///   the gathered spectra: no rank reads another's files.
/// * **Failure.** A rank whose work fails (a failing path, a full disk on rank 0, data a node cannot
///   read) prints one message naming itself and tells rank 0, which tells every other rank to stop
///   (their paths in progress are cancelled at the next inner draw), keeps saving the paths still
///   arriving, and — once every rank has answered — says how many paths are saved and how to continue;
///   then every rank leaves through `MPI_Finalize` and mpirun exits with the failure's status. The store
///   then holds `meta.json` and the finished paths — never final files — and `Setting.resume` continues it
///   with any number of ranks. This orderly stop replaces `MPI_Abort`, whose teardown in Open MPI 4.1's
///   mpirun can hang or crash; `MPI_Abort` remains for MPI itself failing. An error rank 0 finds before
///   the broadcast (a usage error, a store made with other settings) is printed once by rank 0, and
///   every rank exits with its status without a word.
public struct DistributedSpectraRun: Sendable {
    public let world: MPIWorld
    /// Where this rank's messages go (one line each; setting markers are the caller's to spell): the
    /// command line passes its console; by default stderr, with markers read as the settings' names.
    let sayLine: @Sendable (String) -> Void

    public init(world: MPIWorld, say: @escaping @Sendable (String) -> Void = { text in
        FileHandle.standardError.write(Data(Setting.plain(text.hasSuffix("\n") ? text : text + "\n").utf8))
    }) {
        self.world = world
        sayLine = say
    }

    /// Eigenvalues per data message: far below MPI's 2³¹ − 1 element count limit.
    static let chunk = 1 << 27

    /// Control messages from rank 0: `[kind, status]`.
    enum Control: Int64 { case stop = 1, leave = 2 }

    /// A test seam: the rank computing path k fails there, as a real fault would. Debug builds and the test
    /// suite's optimised build (`TWOSCALE_TEST_SEAMS`, scripts/test.sh) take k from `TWOSCALE_FAULT_PATH`;
    /// release builds never read it.
    #if DEBUG || TWOSCALE_TEST_SEAMS
    static let faultPath: Int? = ProcessInfo.processInfo.environment["TWOSCALE_FAULT_PATH"].flatMap { Int($0) }
    #else
    static let faultPath: Int? = nil
    #endif

    /// Runs on every rank. `prepare` builds the run (checks, model, store description): on rank 0 first,
    /// before anything is shared (its argument is `true`: check what concerns the store folder); on the
    /// other ranks (argument `false`) only after rank 0 succeeded and only if they have paths to compute.
    /// Returns the outcome on rank 0 and nil on the others; MPI is then finalised. After a failure every
    /// rank has finalised MPI and rank 0 throws `SilentExit` with the failure's status (the messages are
    /// printed). An error rank 0 meets before sharing out the paths is thrown with MPI still up: print
    /// it, then call `MPIWorld.meetBeforeLeaving()` (the other ranks wait in `MPI_Finalize` meanwhile,
    /// then throw `SilentExit`: leave with that status, without a word).
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
            _ = try world.broadcast([0] + plan.todo.map { Int64($0) })
            return try await lead(runner: runner, plan: plan, store: store, progress: progress)
        }
        let message = try world.broadcast([])
        guard let status = message.first else {
            world.abort(code: 1, message: "twoscale: MPI rank \(world.rank) of \(world.size): empty broadcast from rank 0 (internal error)")
        }
        guard status == 0 else {
            world.finalize()
            throw SilentExit(status: Int32(truncatingIfNeeded: status))
        }
        let todo = message.dropFirst().map { Int($0) }
        try await follow(mine: Self.share(of: world.rank, ranks: world.size, todo: todo), prepare: prepare)
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

    static func status(of error: any Error) -> Int32 { (error as? TwoScaleError)?.exitCode ?? 1 }

    func say(_ text: String) { sayLine(text) }

    func failureLine(_ error: any Error) -> String {
        "twoscale: MPI rank \(world.rank) of \(world.size): " + ((error as? TwoScaleError)?.message ?? "\(error)")
    }

    // MARK: the other ranks

    /// A rank other than 0: computes its share, sending each path to rank 0; stops when rank 0 says so;
    /// reports its own failure; then says it is done and waits for rank 0's word to leave.
    private func follow(mine: [Int], prepare: (_ lead: Bool) async throws -> SpectraRun) async throws {
        let world = self.world
        let runner: SpectraRun?
        var failure: (any Error)?
        do {
            runner = mine.isEmpty ? nil : try await prepare(false)
        } catch {
            runner = nil
            failure = error
        }
        let work = Task { () async throws -> Void in
            guard let runner else { return }
            try Task.checkCancellation()
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
        }
        // Rank 0's control messages, on a thread of its own (it must answer while every core computes).
        let stopped = Flag()
        let leave = Latch<Int64>()
        let listener = Thread {
            var pause: UInt32 = 50
            while true {
                guard let (_, n) = try? world.probe(tag: .control, from: 0) else {
                    usleep(pause)
                    pause = Swift.min(pause * 2, 2000)
                    continue
                }
                pause = 50
                let m = (try? world.receiveInts(count: n, from: 0, tag: .control)) ?? []
                if m.first == Control.stop.rawValue {
                    stopped.set()
                    work.cancel()
                } else {
                    leave.set(m.count > 1 ? m[1] : 1)
                    return
                }
            }
        }
        listener.name = "twoscale.mpi.control"
        listener.start()
        if failure == nil, case let .failure(e) = await work.result, !(e is CancellationError && stopped.isSet) {
            failure = e
        }
        if let e = failure {
            say(failureLine(e))
            try world.send([Int64(Self.status(of: e))], to: 0, tag: .failed)
        }
        try world.send([Int64(0)], to: 0, tag: .done)
        _ = await leave.wait()
    }

    // MARK: rank 0

    /// Rank 0: computes its share and receives the others', writing each path as it arrives; on a
    /// failure anywhere, stops every rank; then finalises MPI and assembles the store.
    private func lead(runner: SpectraRun, plan: SpectraRun.Plan, store: String?,
                      progress: @escaping @Sendable (SpectraRun.Progress) -> Void) async throws -> SpectraRun.Outcome {
        let world = self.world
        let collector = Collector(found: plan.done.count, total: runner.meta.storedPaths.count, progress: progress)
        if plan.finished == nil { collector.report() }
        let mine = Self.share(of: 0, ranks: world.size, todo: plan.todo)
        let owner = Dictionary(uniqueKeysWithValues: plan.todo.enumerated().map { ($0.element, $0.offset % world.size) })
        let state = LeadState(workers: Set(1..<world.size))

        let own = Task { () async throws -> Void in
            _ = try await MonteCarlo.run(model: runner.model, design: runner.design, paths: mine, threads: runner.threads,
                                         keepResults: false) { k, s in
                try Self.checkFault(k)
                try plan.store?.writePartial(path: k, s)
                collector.add(k, s)
            }
        }
        // A failure on any rank: the first one counts; every rank still computing is told to stop.
        let fail = { @Sendable (rank: Int, status: Int32, line: String?) in
            guard let pending = state.fail(rank: rank, status: status) else { return }
            if let line { self.say(line) }
            own.cancel()
            for r in pending.sorted() { try? world.send([Control.stop.rawValue, Int64(status)], to: r, tag: .control) }
        }
        // The other ranks' messages, on a thread of its own (it must answer while every core computes):
        // paths, failures, and each rank's last word.
        let allDone = Latch<Void>()
        let receiver = Thread {
            var pause: UInt32 = 50
            while !state.allDone {
                // One message at a time, whatever its tag, so that each rank's messages are handled in
                // the order it sent them (its last word after its last path).
                guard let (source, tag, n) = try? world.probeAny() else {
                    usleep(pause)
                    pause = Swift.min(pause * 2, 2000)
                    continue
                }
                pause = 50
                switch MPIWorld.Tag(rawValue: tag) {
                case .header:
                    let h = (try? world.receiveInts(count: n, from: source, tag: .header)) ?? []
                    guard h.count == 2, let k = Int(exactly: h[0]), owner[k] == source, h[1] >= 2, h[1] <= Int64(Int32.max) * 64 else {
                        world.abort(code: 1, message: "twoscale: MPI rank 0 of \(world.size): unexpected message \(h) from rank \(source) (internal error)")
                    }
                    let len = Int(h[1])
                    var flat: [Double] = []
                    flat.reserveCapacity(len)
                    while flat.count < len {
                        flat += (try? world.receiveDoubles(count: Swift.min(Self.chunk, len - flat.count), from: source, tag: .data)) ?? []
                    }
                    do {
                        let s: PathSpectra
                        do {
                            s = try PathSpectra(flattened: flat, meta: runner.meta, source: "path \(k)")
                        } catch {
                            throw TwoScaleError.failure("the spectra of path \(k) sent by MPI rank \(source) do not fit the store's layers (internal error)")
                        }
                        try plan.store?.writePartial(path: k, s)
                        collector.add(k, s)
                    } catch {
                        fail(0, Self.status(of: error), state.failed ? nil : self.failureLine(error))
                    }
                case .failed:
                    let m = (try? world.receiveInts(count: n, from: source, tag: .failed)) ?? []
                    fail(source, Int32(truncatingIfNeeded: m.first ?? 1), nil)
                case .done:
                    _ = try? world.receiveInts(count: n, from: source, tag: .done)
                    state.done(source)
                default:
                    world.abort(code: 1, message: "twoscale: MPI rank 0 of \(world.size): unexpected message (tag \(tag)) from rank \(source) (internal error)")
                }
            }
            allDone.set(())
        }
        receiver.name = "twoscale.mpi.receive"
        receiver.start()

        if case let .failure(e) = await own.result, !(e is CancellationError && state.failed) {
            fail(0, Self.status(of: e), failureLine(e))
        }
        await allDone.wait()
        let failure = state.failure
        for r in 1..<world.size { try world.send([Control.leave.rawValue, Int64(failure?.status ?? 0)], to: r, tag: .control) }
        if let f = failure {
            let saved = plan.done.count + collector.count
            let total = runner.meta.storedPaths.count
            let after = store.map {
                "\(saved) of \(total) paths are saved in \($0); continue with the same command and \(Setting.resume) (any number of ranks)"
            } ?? "nothing is saved (no \(Setting.store))"
            say("twoscale: the MPI job stopped after a failure on rank \(f.rank); \(after)")
            world.finalize()
            throw SilentExit(status: f.status)
        }
        world.finalize()
        return try runner.finish(plan, fresh: collector.taken())
    }
}

/// Rank 0's view of the others: who has said its last word, and the first failure.
private final class LeadState: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: Set<Int>
    private(set) var failure: (rank: Int, status: Int32)?

    init(workers: Set<Int>) { pending = workers }

    /// Records a failure; returns the ranks to stop if it is the first, nil otherwise.
    func fail(rank: Int, status: Int32) -> Set<Int>? {
        lock.lock(); defer { lock.unlock() }
        guard failure == nil else { return nil }
        failure = (rank, status)
        return pending
    }

    var failed: Bool {
        lock.lock(); defer { lock.unlock() }
        return failure != nil
    }

    func done(_ rank: Int) {
        lock.lock(); defer { lock.unlock() }
        pending.remove(rank)
    }

    var allDone: Bool {
        lock.lock(); defer { lock.unlock() }
        return pending.isEmpty
    }
}

/// A one-shot value that an async task can wait for and a thread can set.
private final class Latch<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T?
    private var waiter: CheckedContinuation<T, Never>?

    func set(_ v: T) {
        lock.lock()
        guard value == nil else { lock.unlock(); return }
        value = v
        let w = waiter
        waiter = nil
        lock.unlock()
        w?.resume(returning: v)
    }

    func wait() async -> T {
        await withCheckedContinuation { (c: CheckedContinuation<T, Never>) in
            lock.lock()
            if let v = value {
                lock.unlock()
                c.resume(returning: v)
            } else {
                waiter = c
                lock.unlock()
            }
        }
    }
}

/// A flag set once, from any thread.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
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

    var count: Int {
        lock.lock(); defer { lock.unlock() }
        return rows.count
    }

    func taken() -> [Int: PathSpectra] {
        lock.lock(); defer { lock.unlock() }
        return rows
    }
}
