import CBLASBuffers
import Foundation
import RandomStreams
import Testing
@testable import TwoScaleNumerics

/// CBLASBuffers: OpenBLAS's work buffers kept per thread. A thread gets back the buffers it returned and
/// holds nested ones apart; another thread gets buffers of its own; and where the process routes OpenBLAS
/// through them, an eigenproblem leaves a buffer kept on the calling thread with unchanged eigenvalues.
@Suite struct BLASBuffersTests {
    final class Box<T>: @unchecked Sendable {
        var value: T?
        let done = DispatchSemaphore(value: 0)
        init() {}
    }

    /// Runs `body` on a thread of its own and waits for it.
    static func onNewThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let box = Box<T>()
        let thread = Thread { box.value = body(); box.done.signal() }
        thread.start()
        box.done.wait()
        return box.value!
    }

    @Test func buffersAreReusedOnTheirThreadAndKeptApartAcrossThreads() throws {
        let (a, b, c, kept, d, keptThere) = Self.onNewThread { () -> (UInt, UInt, UInt, Int, UInt, Int) in
            let a = blas_memory_alloc(1), b = blas_memory_alloc(1)
            blas_memory_free(b)
            blas_memory_free(a)
            let c = blas_memory_alloc(1)
            blas_memory_free(c)
            let kept = BLASBuffers.keptOnThisThread
            // Another thread, while this one lives and keeps its buffers: none of them.
            let (d, keptThere) = Self.onNewThread { () -> (UInt, Int) in
                let d = blas_memory_alloc(1)
                blas_memory_free(d)
                return (UInt(bitPattern: d), BLASBuffers.keptOnThisThread)
            }
            return (UInt(bitPattern: a), UInt(bitPattern: b), UInt(bitPattern: c), kept, d, keptThere)
        }
        #expect(a != 0 && b != 0 && a != b, "nested buffers on one thread must differ")
        #expect(c == a || c == b, "a returned buffer must be handed out again on its thread")
        #expect(kept == 2)
        #expect(d != 0 && d != a && d != b)
        #expect(keptThere == 1)
    }

    @Test func nestingBeyondTheKeptBuffersFallsBackToTheLibrary() {
        let kept = Self.onNewThread { () -> Int in
            let held = (0..<6).map { _ in blas_memory_alloc(1) }
            for p in held.reversed() { blas_memory_free(p) }
            return BLASBuffers.keptOnThisThread
        }
        #expect(kept == 4)
    }

    /// OpenBLAS's table of buffers is finite (it ends the process when it runs out): each thread's kept
    /// buffers must go back to it when the thread ends, as worker threads come and go.
    @Test func threadsThatEndGiveTheirBuffersBack() {
        var firsts = Set<UInt>()
        for _ in 0..<400 {
            firsts.insert(Self.onNewThread { () -> UInt in
                let p = blas_memory_alloc(1)
                blas_memory_free(p)
                return UInt(bitPattern: p)
            })
        }
        // Given back, the library hands the same few buffers out again.
        #expect(firsts.count <= 8)
    }

    @Test func eigenvaluesAreTheSameWhereverTheBuffersComeFrom() throws {
        var rng = Xoshiro256(seed: 11)
        let n = 40
        let x = (0..<(n * n)).map { _ in rng.uniform(-1, 1) }
        var m = Matrix(rows: n, cols: n)
        for i in 0..<n { for j in 0..<n { m[i, j] = x[i * n + j] + x[j * n + i] } }
        let a = m
        let here = try SymmetricEigen.eigenvalues(a)
        let (there, kept) = Self.onNewThread { () -> ([Double], Int) in
            ((try? SymmetricEigen.eigenvalues(a)) ?? [], BLASBuffers.keptOnThisThread)
        }
        #expect(there == here)
        // Through this process's OpenBLAS (dsytrd calls dsymv, which takes a buffer) where it is routed here.
        #expect(kept == (BLASBuffers.perThread ? 1 : 0))
        _ = try #require(here.first)
    }
}
