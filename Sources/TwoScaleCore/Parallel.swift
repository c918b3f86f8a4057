import Foundation

/// Bounded structured concurrency: the one scheduler every parallel loop of twoscale uses (Monte Carlo
/// paths, ε points, gap trials, Fisher blocks, toy and smc draws), so that a result never depends on the
/// thread count (each item must draw its randomness from its own stream).
public enum Parallel {
    /// `body(i)` for `i in 0..<count`, at most `threads` at once, returned in index order. Work is
    /// handed out item by item, so uneven items balance; the first error cancels the rest.
    public static func map<T: Sendable>(_ count: Int, threads: Int,
                                        _ body: @escaping @Sendable (Int) throws -> T) async throws -> [T] {
        let width = Swift.max(1, Swift.min(threads, count))
        if width == 1 {
            let observer = WorkProgress.observer
            observer?.report(0, count)
            return try (0..<count).map { i in
                if Task.isCancelled { throw CancellationError() }
                let v = try body(i)
                observer?.report(i + 1, count)
                return v
            }
        }
        var out = [T?](repeating: nil, count: count)
        try await forEach(count, threads: width, body) { i, v in out[i] = v }
        return out.map { $0! }
    }

    /// `body(i)` for `i in 0..<count`, at most `threads` at once (items handed out in index order, one
    /// by one as workers free up), with `completed(i, value)` called for each item as soon as it
    /// finishes: in completion order, one at a time, on the caller's task — so it may write files,
    /// send messages or report progress (Monte Carlo paths go to the store this way, so an interrupted
    /// run keeps every finished item). Nothing is kept here; the caller stores what it needs by index.
    /// If `body` or `completed` throws, the items still running are cancelled and the error is rethrown.
    /// The items always run as child tasks (also for `threads == 1`), so the caller's task only waits.
    public static func forEach<T: Sendable>(_ count: Int, threads: Int,
                                            _ body: @escaping @Sendable (Int) throws -> T,
                                            completed: (Int, T) throws -> Void) async throws {
        guard count > 0 else { return }
        let width = Swift.max(1, Swift.min(threads, count))
        let observer = WorkProgress.observer
        observer?.report(0, count)
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var next = 0, done = 0
            while next < width { let i = next; group.addTask { (i, try body(i)) }; next += 1 }
            while let (i, v) = try await group.next() {
                try completed(i, v)
                done += 1
                observer?.report(done, count)
                if next < count { let j = next; group.addTask { (j, try body(j)) }; next += 1 }
            }
        }
    }
}
