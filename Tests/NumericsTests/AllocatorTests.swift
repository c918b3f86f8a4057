#if os(Linux)
import Foundation
import Testing
@testable import TwoScaleNumerics

/// Allocator: a thread's arena keeps the memory it frees. The same rounds of allocating, touching and
/// freeing 144 MiB in blocks of 6 MiB (more than two 64 MiB heaps of a thread's arena) fault their pages in
/// again on every round with glibc's top pad at 0, and only in the first round under `Allocator.keepFreedMemory()`.
@Suite(.serialized) struct AllocatorTests {
    final class Box: @unchecked Sendable {
        var faults = 0
        let done = DispatchSemaphore(value: 0)
    }

    static let blockCount = 24

    /// The minor page faults of a new thread over `rounds` rounds, after one round that maps the memory.
    static func faultsAfterFirstRound(rounds: Int) -> Int {
        let box = Box()
        let thread = Thread {
            func round() {
                let blocks = (0..<Self.blockCount).map { _ in malloc(6 << 20)! }
                for b in blocks { memset(b, 1, 6 << 20) }
                for b in blocks.reversed() { free(b) }
            }
            // The thread's own minor faults: field 10 of /proc/thread-self/stat, after the name in parentheses.
            func minorFaults() -> Int {
                let stat = (try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)) ?? ""
                let fields = stat[(stat.lastIndex(of: ")") ?? stat.startIndex)...].split(separator: " ")
                return fields.count > 8 ? Int(fields[8]) ?? -1 : -1
            }
            round()
            let before = minorFaults()
            for _ in 0..<rounds { round() }
            box.faults = minorFaults() - before
            box.done.signal()
        }
        thread.start()
        box.done.wait()
        return box.faults
    }

    /// A new thread may be given an arena another thread left, or the main one (whose trim threshold alone
    /// keeps its memory), so the control is tried on up to 6 new threads until one shows the faults.
    @Test func aThreadKeepsTheHeapsItFreed() {
        var controls: [Int] = []
        while controls.count < 6, controls.allSatisfy({ $0 <= 10 * 2_000 }) {
            // The control: the same thresholds without the pad. A round touches 36 864 pages; those in the
            // thread's later heaps are faulted in again each round.
            #expect(Allocator.keepFreedMemory(topPad: 0))
            controls.append(Self.faultsAfterFirstRound(rounds: 10))
            #expect(Allocator.keepFreedMemory())
            let kept = Self.faultsAfterFirstRound(rounds: 10)
            #expect(kept < 2_000, "kept: \(kept) faults over 10 rounds (controls \(controls))")
        }
        #expect(controls.contains { $0 > 10 * 2_000 }, "controls: \(controls) faults over 10 rounds")
    }
}
#endif
