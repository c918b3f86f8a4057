import Foundation
import Samplers

/// A checkpoint store in memory that fails, as a killed process would, at its `killAt`-th save.
public final class MemoryCheckpoints: SamplerCheckpoints, @unchecked Sendable {
    public struct Killed: Error {}
    private let lock = NSLock()

    public init() {}
    public var snapshots: [String: Data] = [:]
    /// Every save in order: the sampler's name and the snapshot.
    public var log: [(name: String, data: Data)] = []
    public var killAt: Int?

    public func load(_ name: String) throws -> Data? { lock.withLock { snapshots[name] } }

    public func save(_ name: String, final: Bool, _ make: () throws -> Data) throws {
        let data = try make()
        try lock.withLock {
            if let k = killAt, log.count + 1 >= k { throw Killed() }
            snapshots[name] = data
            log.append((name, data))
        }
    }
}
