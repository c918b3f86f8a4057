import Foundation

/// How one run's independent Monte Carlo items are shared out: over the threads of this process
/// (`LocalSharing`), or also over the ranks of an MPI job (`MPISharing`, in Cluster). Every participant
/// calls `map` with the same arguments in the same order and gets every item's result back, in order, so
/// what follows is computed alike everywhere; each item draws from its own random stream, so the results
/// do not depend on who computed them.
public protocol WorkSharing: Sendable {
    /// `body(i)` for `i in 0..<count`, every result on every participant.
    func map<T: Codable & Sendable>(_ count: Int, threads: Int, _ body: @escaping @Sendable (Int) throws -> T) async throws -> [T]
    /// Whether this participant reports (progress, output): one process, or MPI rank 0.
    var isLead: Bool { get }
}

/// All items in this process, on up to `threads` tasks (`Parallel.map`).
public struct LocalSharing: WorkSharing {
    public init() {}
    public func map<T: Codable & Sendable>(_ count: Int, threads: Int, _ body: @escaping @Sendable (Int) throws -> T) async throws -> [T] {
        try await Parallel.map(count, threads: threads, body)
    }
    public var isLead: Bool { true }
}
