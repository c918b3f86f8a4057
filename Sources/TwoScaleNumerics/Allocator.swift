import CBLASBuffers
import CGSL

/// The process's allocator, set once by the executable before any work starts.
///
/// glibc's malloc maps blocks of 128 KiB and more on their own (a threshold it raises as such blocks are
/// freed) and hands the free top of an arena back to the kernel once it passes a trim threshold. twoscale's
/// Monte Carlo items allocate and free scratch matrices of the same sizes over and over, so with the defaults
/// each item faulted its scratch in afresh (system time, most of it on the main thread's arena). Blocks below
/// 32 MiB (glibc's largest threshold) now come from the arenas, and up to `trimBytes` of free memory stays
/// mapped at each arena's top (docs/PERFORMANCE.md, "Threads on a 16-core machine"). A thread's own arena
/// grows in heaps of at most 64 MiB, and glibc unmaps such a heap as soon as it falls wholly free whatever
/// the trim threshold, unless the top pad is as large: `topPadBytes` keeps it (docs/PERFORMANCE.md, "The
/// serial part of smc").
public enum Allocator {
    /// Free bytes an arena keeps at its top before returning them to the kernel.
    public static let trimBytes: Int32 = 256 << 20
    /// Extra bytes each growth of an arena asks for (address space only until touched), and the free bytes
    /// a thread's arena keeps rather than unmapping a heap.
    public static let topPadBytes: Int32 = 64 << 20

    /// Sets the thresholds and the pad (`topPad`: 0 for none, the allocator test's control); returns
    /// false where glibc refused them (results never depend on it).
    @discardableResult
    public static func keepFreedMemory(topPad: Int32 = topPadBytes) -> Bool {
        twoscale_keep_freed_memory(trimBytes, topPad) != 0
    }
}

/// OpenBLAS's work buffers (the CBLASBuffers target): kept per thread where the executable exports them.
public enum BLASBuffers {
    /// Whether this process's OpenBLAS takes its buffers per thread (an executable that exports CBLASBuffers'
    /// two functions: `twoscale`, and the test bundle), or from the library's own table under its mutex.
    /// Results are the same either way.
    public static var perThread: Bool { twoscale_blas_buffers_active() != 0 }
    /// How many buffers the calling thread keeps.
    public static var keptOnThisThread: Int { Int(twoscale_blas_buffers_kept()) }
}
