import Foundation
import TwoScaleCore

/// `merge`'s result: the merged store, how many shards went in, K and d.
public struct StoreMergeSummary: Sendable, Equatable, Encodable {
    public var store: String
    public var shards: Int
    public var paths: Int
    public var dimension: Int
    public var seconds: Double

    /// Merges the shard stores in `directories` into a new store at `out` (`SpectraStore.merge`).
    public static func merge(_ directories: [String], into out: String) throws -> StoreMergeSummary {
        let start = Date()
        let store = try SpectraStore.merge(directories, into: out)
        return StoreMergeSummary(store: out, shards: directories.count, paths: store.meta.paths, dimension: store.meta.dimension,
                                 seconds: Date().timeIntervalSince(start))
    }
}

/// `ed`'s result for one shard (`Setting.shard`): which shard was written where, its share of the K paths, and how many of
/// them this run computed (the rest were already in a resumed store).
public struct ShardRunSummary: Sendable, Equatable, Encodable {
    public var store: String
    public var shard: String
    public var paths: Int
    public var totalPaths: Int
    public var computed: Int
    public var dimension: Int
    public var seconds: Double

    public init(store: String, meta: StoreMeta, computed: Int, seconds: Double) {
        self.store = store
        shard = meta.shard?.description ?? "1/1"
        paths = meta.storedPaths.count
        totalPaths = meta.paths
        self.computed = computed
        dimension = meta.dimension
        self.seconds = seconds
    }
}
