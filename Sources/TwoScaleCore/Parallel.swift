import Foundation

/// Bounded structured concurrency with results in input order: the one scheduler every parallel loop
/// of twoscale uses, so that a result never depends on the thread count (each item must draw its
/// randomness from its own stream).
public enum Parallel {
    /// `body(i)` for `i in 0..<count`, at most `threads` at once, returned in index order. Work is
    /// handed out item by item, so uneven items balance; the first error cancels the rest.
    public static func map<T: Sendable>(_ count: Int, threads: Int,
                                        _ body: @escaping @Sendable (Int) throws -> T) async throws -> [T] {
        let width = Swift.max(1, Swift.min(threads, count))
        if width == 1 { return try (0..<count).map { i in
            if Task.isCancelled { throw CancellationError() }
            return try body(i)
        } }
        var out = [T?](repeating: nil, count: count)
        try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var next = 0
            while next < width { let i = next; group.addTask { (i, try body(i)) }; next += 1 }
            while let (i, v) = try await group.next() {
                out[i] = v
                if next < count { let j = next; group.addTask { (j, try body(j)) }; next += 1 }
            }
        }
        return out.map { $0! }
    }
}
