import Foundation
import RandomStreams
import Testing
import TwoScaleCore

/// `Parallel`, the one bounded-concurrency helper: results and completions independent of the thread
/// count, every item completed once, at most `threads` at once, errors stop the run.
@Suite struct ParallelTests {
    /// A unit of work whose result depends only on its index (its own stream).
    static func work(_ i: Int) -> Double {
        var rng = Xoshiro256(seed: 5, stream: [UInt64(i)])
        return (0..<100).map { _ in rng.normal() }.reduce(0, +)
    }

    @Test func mapIsIndependentOfTheThreadCount() async throws {
        let one = try await Parallel.map(37, threads: 1) { Self.work($0) }
        for t in [2, 3, 8, 100] {
            #expect(try await Parallel.map(37, threads: t) { Self.work($0) } == one)
        }
        #expect(try await Parallel.map(0, threads: 4) { Self.work($0) }.isEmpty)
    }

    @Test func forEachCompletesEveryItemOnceWithinTheBound() async throws {
        let expected = (0..<41).map(Self.work)
        for t in [1, 2, 5, 64] {
            let running = Counter()
            var seen = [Double?](repeating: nil, count: 41)
            var completions = 0
            try await Parallel.forEach(41, threads: t, { i in
                running.enter()
                defer { running.leave() }
                return Self.work(i)
            }, completed: { i, v in
                #expect(seen[i] == nil)
                seen[i] = v
                completions += 1
            })
            #expect(completions == 41)
            #expect(seen.map { $0! } == expected)
            #expect(running.peak <= t)
        }
        var none = 0
        try await Parallel.forEach(0, threads: 3, { Self.work($0) }, completed: { _, _ in none += 1 })
        #expect(none == 0)
    }

    struct Stop: Error {}

    @Test func errorsStopTheRun() async throws {
        await #expect(throws: Stop.self) {
            try await Parallel.forEach(20, threads: 2, { i in
                if i == 3 { throw Stop() }
                return i
            }, completed: { _, _ in })
        }
        let completed = Counter()
        await #expect(throws: Stop.self) {
            try await Parallel.forEach(20, threads: 2, { $0 }, completed: { _, _ in
                completed.enter()
                if completed.peak == 2 { throw Stop() }
            })
        }
        #expect(completed.peak == 2)
    }
}

/// Counts concurrent entries and remembers the peak.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var now = 0
    private(set) var peak = 0
    func enter() { lock.lock(); now += 1; peak = Swift.max(peak, now); lock.unlock() }
    func leave() { lock.lock(); now -= 1; lock.unlock() }
}
