import Foundation
#if canImport(Glibc)
import Glibc
#endif
import TwoScaleCore

/// Open MPI's C library, opened at run time with `dlopen` (not linked): a machine without MPI builds
/// and runs twoscale unchanged, and only a process started by an MPI launcher loads it.
///
/// It binds the dozen functions twoscale uses and Open MPI's predefined handles, which in Open MPI's ABI
/// are the addresses of exported objects (`MPI_COMM_WORLD` is `&ompi_mpi_comm_world`, `MPI_DOUBLE`
/// `&ompi_mpi_double`, …) — the same for Open MPI 4.x and 5.x (`libmpi.so.40`). Constants of that ABI:
/// `MPI_SUCCESS` 0, `MPI_ANY_SOURCE` −1, `MPI_THREAD_SERIALIZED` 2; `MPI_Status` starts with
/// `int MPI_SOURCE, MPI_TAG, MPI_ERROR` (24 bytes in all; 64 are reserved). MPICH-ABI libraries (MPICH,
/// Intel MPI), whose handles are integers, are recognised and refused with a message.
final class MPILibrary: @unchecked Sendable {
    typealias Handle = UnsafeMutableRawPointer
    typealias Request = UnsafeMutablePointer<UnsafeMutableRawPointer?>

    let path: String
    let commWorld: Handle
    let double: Handle
    let int64: Handle

    typealias InitThread = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int32, UnsafeMutablePointer<Int32>) -> Int32
    typealias CommQuery = @convention(c) (Handle, UnsafeMutablePointer<Int32>) -> Int32
    typealias Ibcast = @convention(c) (UnsafeMutableRawPointer?, Int32, Handle, Int32, Handle, Request) -> Int32
    typealias Isend = @convention(c) (UnsafeRawPointer?, Int32, Handle, Int32, Int32, Handle, Request) -> Int32
    typealias Test = @convention(c) (Request, UnsafeMutablePointer<Int32>, UnsafeMutableRawPointer?) -> Int32
    typealias Iprobe = @convention(c) (Int32, Int32, Handle, UnsafeMutablePointer<Int32>, UnsafeMutableRawPointer?) -> Int32
    typealias GetCount = @convention(c) (UnsafeRawPointer, Handle, UnsafeMutablePointer<Int32>) -> Int32
    typealias Recv = @convention(c) (UnsafeMutableRawPointer?, Int32, Handle, Int32, Int32, Handle, UnsafeMutableRawPointer?) -> Int32
    typealias Abort = @convention(c) (Handle, Int32) -> Int32
    typealias Finalize = @convention(c) () -> Int32

    let initThread: InitThread
    let commRank: CommQuery
    let commSize: CommQuery
    let ibcast: Ibcast
    let isend: Isend
    let test: Test
    let iprobe: Iprobe
    let getCount: GetCount
    let recv: Recv
    let abort: Abort
    let finalize: Finalize

    /// The libraries tried, in order: `TWOSCALE_LIBMPI` when set, then Open MPI's runtime library.
    static func candidates(_ env: [String: String]) -> [String] {
        if let p = env["TWOSCALE_LIBMPI"], !p.isEmpty { return [p] }
        return ["libmpi.so.40", "libmpi.so"]
    }

    /// Opens the first loadable candidate and binds every symbol; errors say what is missing and how to
    /// install it.
    static func load(_ env: [String: String]) throws -> MPILibrary {
        var reasons: [String] = []
        for name in candidates(env) {
            // RTLD_GLOBAL: Open MPI's own plugins (MCA components) resolve symbols of libmpi when it opens them.
            guard let h = dlopen(name, RTLD_NOW | RTLD_GLOBAL) else {
                reasons.append(dlerror().map { String(cString: $0) } ?? "\(name): cannot be opened")
                continue
            }
            return try MPILibrary(handle: h, path: name)
        }
        throw TwoScaleError.failure("this process was started as an MPI rank, but Open MPI's library cannot be loaded ("
            + reasons.joined(separator: "; ")
            + "). Install Open MPI (Debian: apt-get install openmpi-bin libopenmpi-dev; ./scripts/setup.sh does it), "
            + "or set TWOSCALE_LIBMPI to the path of its libmpi.so; to run without MPI, start twoscale without mpirun")
    }

    private init(handle h: UnsafeMutableRawPointer, path: String) throws {
        self.path = path
        func symbol(_ name: String) throws -> UnsafeMutableRawPointer {
            guard let p = dlsym(h, name) else {
                if dlsym(h, "MPI_Init") != nil, name.hasPrefix("ompi_") {
                    throw TwoScaleError.failure("\(path) is an MPI library but not Open MPI (it has no \(name)); twoscale's run-time MPI binding supports Open MPI 4.x and 5.x — point TWOSCALE_LIBMPI at Open MPI's libmpi.so.40")
                }
                throw TwoScaleError.failure("\(path) lacks the symbol \(name); it is not a usable Open MPI library (twoscale supports Open MPI 4.x and 5.x)")
            }
            return p
        }
        func fn<F>(_ name: String, _: F.Type) throws -> F { unsafeBitCast(try symbol(name), to: F.self) }
        commWorld = try symbol("ompi_mpi_comm_world")
        double = try symbol("ompi_mpi_double")
        int64 = try symbol("ompi_mpi_int64_t")
        initThread = try fn("MPI_Init_thread", InitThread.self)
        commRank = try fn("MPI_Comm_rank", CommQuery.self)
        commSize = try fn("MPI_Comm_size", CommQuery.self)
        ibcast = try fn("MPI_Ibcast", Ibcast.self)
        isend = try fn("MPI_Isend", Isend.self)
        test = try fn("MPI_Test", Test.self)
        iprobe = try fn("MPI_Iprobe", Iprobe.self)
        getCount = try fn("MPI_Get_count", GetCount.self)
        recv = try fn("MPI_Recv", Recv.self)
        abort = try fn("MPI_Abort", Abort.self)
        finalize = try fn("MPI_Finalize", Finalize.self)
    }
}

/// `MPI_COMM_WORLD` of this job: rank, size and the few operations a distributed run needs.
///
/// Every wait is *lazy*: a non-blocking operation (`MPI_Ibcast`, `MPI_Isend`, `MPI_Iprobe`) polled with
/// short sleeps (50 µs growing to 2 ms), never a blocking MPI call, which in Open MPI spins a core at
/// 100% — a rank waiting for others would otherwise steal the core of a rank still computing (ranks
/// often share cores: `--oversubscribe`, or several ranks per node with threads). MPI is initialised at
/// `MPI_THREAD_SERIALIZED`: calls may come from any thread (Swift tasks move between threads), one at a
/// time, which a lock guarantees.
public final class MPIWorld: @unchecked Sendable {
    public let rank: Int
    public let size: Int
    /// The library that was loaded (for messages).
    public let library: String
    private let lib: MPILibrary
    private let lock = NSLock()
    private var done = false

    /// Message tags: a path's header `[k, n]` and its `n` values (worker → rank 0); a worker's failure
    /// `[status]` and its last message `[status]` (worker → rank 0); rank 0's `[kind, status]` control
    /// messages (stop computing; leave); a rank's share of a `MPISharing.map` (worker → rank 0).
    enum Tag: Int32 { case header = 11, data = 12, failed = 13, done = 14, control = 15, share = 16 }

    /// Whether this process has started MPI (it can be initialised once only), and the world if so.
    private static let state = StartState()

    private final class StartState: @unchecked Sendable {
        let lock = NSLock()
        var attempted = false
        var world: MPIWorld?
    }

    /// Loads Open MPI and initialises it (`MPI_Init_thread`, serialized). Once per process.
    public static func start(_ env: [String: String] = ProcessInfo.processInfo.environment) throws -> MPIWorld {
        state.lock.lock()
        defer { state.lock.unlock() }
        guard !state.attempted else { throw TwoScaleError.failure("MPI can be started once per process (internal error)") }
        state.attempted = true
        let world = try initialise(env)
        state.world = world
        return world
    }

    /// Before a rank leaves with an error that every rank meets alike (one about the command line, which
    /// all ranks share): starts MPI unless this process already did, and finalises it. `MPI_Finalize`
    /// waits for every rank, so no rank leaves before rank 0 has printed the message — a launcher stops
    /// the whole job, output included, as soon as the first rank exits with a non-zero status. Does
    /// nothing where MPI cannot be loaded.
    public static func meetBeforeLeaving(_ env: [String: String] = ProcessInfo.processInfo.environment) {
        state.lock.lock()
        let world: MPIWorld?
        if state.attempted {
            world = state.world
        } else {
            state.attempted = true
            world = try? initialise(env)
            state.world = world
        }
        state.lock.unlock()
        world?.finalize()
    }

    private static func initialise(_ env: [String: String]) throws -> MPIWorld {
        let lib = try MPILibrary.load(env)
        var provided: Int32 = -1
        let rc = lib.initThread(nil, nil, 2, &provided)  // MPI_THREAD_SERIALIZED
        guard rc == 0 else { throw TwoScaleError.failure("MPI_Init_thread failed (error \(rc)) in \(lib.path)") }
        var r: Int32 = 0, s: Int32 = 0
        _ = lib.commRank(lib.commWorld, &r)
        _ = lib.commSize(lib.commWorld, &s)
        let world = MPIWorld(lib: lib, rank: Int(r), size: Int(s))
        guard provided >= 2 else {
            world.abort(code: 1, message: "twoscale: the MPI library \(lib.path) provides thread level \(provided); twoscale needs MPI_THREAD_SERIALIZED (2) or more")
        }
        return world
    }

    private init(lib: MPILibrary, rank: Int, size: Int) {
        self.lib = lib
        self.rank = rank
        self.size = size
        library = lib.path
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// An MPI call that fails leaves MPI in an unknown state: the job ends at once. (Open MPI's default
    /// error handler aborts before the call returns; this covers libraries that return instead.)
    private func check(_ rc: Int32, _ what: String) throws {
        guard rc == 0 else { abort(code: 1, message: "twoscale: MPI rank \(rank) of \(size): \(what) failed (MPI error \(rc)); stopping the job") }
    }

    /// Polls `request` until it completes, sleeping between tests.
    private func wait(_ request: MPILibrary.Request, _ what: String) throws {
        var pause: UInt32 = 50
        while true {
            var flag: Int32 = 0
            let rc = locked { lib.test(request, &flag, nil) }
            try check(rc, what)
            if flag != 0 { return }
            usleep(pause)
            pause = Swift.min(pause * 2, 2000)
        }
    }

    /// Broadcasts whole numbers from rank 0 to every rank (a collective: every rank calls it; rank 0's
    /// `values` are sent, the others' ignored) and returns them on every rank.
    public func broadcast(_ values: [Int64]) throws -> [Int64] {
        var count: [Int64] = [Int64(values.count)]
        try broadcastBuffer(&count)
        guard rank != 0 else {
            var v = values
            if count[0] > 0 { try broadcastBuffer(&v) }
            return values
        }
        guard count[0] >= 0, count[0] <= Int64(Int32.max) else {
            throw TwoScaleError.failure("MPI rank \(rank) of \(size): a broadcast of \(count[0]) values (internal error)")
        }
        var v = [Int64](repeating: 0, count: Int(count[0]))
        if !v.isEmpty { try broadcastBuffer(&v) }
        return v
    }

    private func broadcastBuffer(_ v: inout [Int64]) throws {
        let request = MPILibrary.Request.allocate(capacity: 1)
        defer { request.deallocate() }
        request.pointee = nil
        let n = Int32(v.count)
        try v.withUnsafeMutableBytes { buf in
            let rc = locked { lib.ibcast(buf.baseAddress, n, lib.int64, 0, lib.commWorld, request) }
            try check(rc, "MPI_Ibcast")
            try wait(request, "MPI_Ibcast")
        }
    }

    /// Sends doubles to `destination` under `tag` and waits until the buffer is free again.
    func send(_ values: [Double], to destination: Int, tag: Tag) throws {
        try sendRaw(values, type: lib.double, to: destination, tag: tag)
    }

    func send(_ values: [Int64], to destination: Int, tag: Tag) throws {
        try sendRaw(values, type: lib.int64, to: destination, tag: tag)
    }

    private func sendRaw<T>(_ values: [T], type: MPILibrary.Handle, to destination: Int, tag: Tag) throws {
        guard values.count <= Int(Int32.max) else { throw TwoScaleError.failure("MPI: message of \(values.count) values (internal error)") }
        let request = MPILibrary.Request.allocate(capacity: 1)
        defer { request.deallocate() }
        request.pointee = nil
        try values.withUnsafeBytes { buf in
            let rc = locked { lib.isend(buf.baseAddress, Int32(values.count), type, Int32(destination), tag.rawValue, lib.commWorld, request) }
            try check(rc, "MPI_Isend")
            try wait(request, "MPI_Isend")
        }
    }

    /// A message waiting under `tag` from `source` (any rank when nil): its sender and its length in
    /// int64 values, or nil.
    func probe(tag: Tag, from source: Int? = nil) throws -> (source: Int, count: Int)? {
        let status = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
        defer { status.deallocate() }
        var flag: Int32 = 0, count: Int32 = 0
        let rc = locked { () -> Int32 in
            let r = lib.iprobe(Int32(source ?? -1), tag.rawValue, lib.commWorld, &flag, status)  // -1: MPI_ANY_SOURCE
            if r == 0, flag != 0 { return lib.getCount(status, lib.int64, &count) }
            return r
        }
        try check(rc, "MPI_Iprobe")
        guard flag != 0 else { return nil }
        return (Int(status.load(fromByteOffset: 0, as: Int32.self)), Int(count))
    }

    /// The next message waiting from any rank under any tag: sender, tag and length in int64 values.
    /// Messages of one sender come out in the order it sent them, whatever their tags.
    func probeAny() throws -> (source: Int, tag: Int32, count: Int)? {
        let status = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
        defer { status.deallocate() }
        var flag: Int32 = 0, count: Int32 = 0
        let rc = locked { () -> Int32 in
            let r = lib.iprobe(-1, -1, lib.commWorld, &flag, status)  // MPI_ANY_SOURCE, MPI_ANY_TAG
            if r == 0, flag != 0 { return lib.getCount(status, lib.int64, &count) }
            return r
        }
        try check(rc, "MPI_Iprobe")
        guard flag != 0 else { return nil }
        return (Int(status.load(fromByteOffset: 0, as: Int32.self)), status.load(fromByteOffset: 4, as: Int32.self), Int(count))
    }

    /// Receives `count` int64 values from `source` under `tag` (after `probe` saw the message).
    func receiveInts(count: Int, from source: Int, tag: Tag) throws -> [Int64] {
        var v = [Int64](repeating: 0, count: count)
        let rc = v.withUnsafeMutableBytes { buf in
            locked { lib.recv(buf.baseAddress, Int32(count), lib.int64, Int32(source), tag.rawValue, lib.commWorld, nil) }
        }
        try check(rc, "MPI_Recv")
        return v
    }

    /// Receives exactly `count` doubles from `source` under `tag`, once one is waiting (lazily).
    func receiveDoubles(count: Int, from source: Int, tag: Tag) throws -> [Double] {
        let status = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 8)
        defer { status.deallocate() }
        var pause: UInt32 = 50
        while true {
            var flag: Int32 = 0
            let rc = locked { lib.iprobe(Int32(source), tag.rawValue, lib.commWorld, &flag, status) }
            try check(rc, "MPI_Iprobe")
            if flag != 0 { break }
            usleep(pause)
            pause = Swift.min(pause * 2, 2000)
        }
        var v = [Double](repeating: 0, count: count)
        let rc = v.withUnsafeMutableBytes { buf in
            locked { lib.recv(buf.baseAddress, Int32(count), lib.double, Int32(source), tag.rawValue, lib.commWorld, nil) }
        }
        try check(rc, "MPI_Recv")
        return v
    }

    /// Ends the whole job: prints `message` on stderr, then `MPI_Abort`, which makes the launcher stop
    /// every rank (the launcher's exit status is `code`).
    public func abort(code: Int32, message: String) -> Never {
        let line = message.hasSuffix("\n") ? message : message + "\n"
        FileHandle.standardError.write(Data(line.utf8))
        // Taken and never given back: no other thread of this rank calls MPI from now on (concurrent
        // calls are not allowed at MPI_THREAD_SERIALIZED, and MPI is torn down under them).
        lock.lock()
        _ = lib.abort(lib.commWorld, code)
        exit(code)  // MPI_Abort does not return; this is only reached if the library misbehaves
    }

    /// `MPI_Finalize` (once; later calls do nothing). Every rank calls it before leaving; it waits for
    /// the others.
    public func finalize() {
        let first = locked { () -> Bool in
            defer { done = true }
            return !done
        }
        if first { _ = lib.finalize() }
    }
}
