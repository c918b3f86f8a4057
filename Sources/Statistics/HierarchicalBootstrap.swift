import Foundation
import RandomStreams
import TwoScaleCore

/// A study's measurements as the hierarchical bootstrap reads them: per architecture (a model of the
/// zoo: one hyperparameter setting), per seed, one value of each variable (a measure, a target, a
/// control). `values[a][s][v]`. Architectures may have different numbers of seeds; every seed row has
/// the same variables. Checked: at least 3 architectures, every architecture at least one seed, no
/// ragged rows, every value finite.
public struct SeedTable: Sendable, Equatable {
    public let values: [[[Double]]]
    /// Variables per seed row.
    public let variables: Int

    public init(_ values: [[[Double]]]) throws {
        guard values.count >= 3 else {
            throw TwoScaleError.usage("a rank statistic over architectures needs at least 3 architectures (got \(values.count))")
        }
        guard let first = values.first?.first, !first.isEmpty else {
            throw TwoScaleError.usage("the seed table's first architecture has no seed or no variable")
        }
        for (a, seeds) in values.enumerated() {
            guard !seeds.isEmpty else { throw TwoScaleError.usage("architecture \(a + 1) has no seed") }
            for (s, row) in seeds.enumerated() {
                guard row.count == first.count else {
                    throw TwoScaleError.usage("ragged data: architecture \(a + 1), seed \(s + 1) has \(row.count) values, not \(first.count)")
                }
                guard row.allSatisfy(\.isFinite) else {
                    throw TwoScaleError.usage("architecture \(a + 1), seed \(s + 1) holds a value that is not finite")
                }
            }
        }
        self.values = values
        variables = first.count
    }

    /// The table of variables given one by one, each per architecture a list of per-seed values
    /// (`columns[v][a][s]`): the per-seed lists of one architecture must have the same length in every
    /// variable (the seeds are shared), else the data are ragged.
    public init(columns: [[[Double]]]) throws {
        guard let base = columns.first else { throw TwoScaleError.usage("the seed table has no variable") }
        for (v, c) in columns.enumerated() {
            guard c.count == base.count else {
                throw TwoScaleError.usage("ragged data: variable \(v + 1) has \(c.count) architectures, variable 1 has \(base.count)")
            }
            for a in c.indices where c[a].count != base[a].count {
                throw TwoScaleError.usage("ragged data: architecture \(a + 1) has \(c[a].count) seeds in variable \(v + 1), \(base[a].count) in variable 1")
            }
        }
        try self.init(base.indices.map { a in base[a].indices.map { s in columns.map { $0[a][s] } } })
    }

    public var architectures: Int { values.count }

    /// The same models and seeds with `design`'s clusters and redraws (`ResamplingDesign`), checked
    /// against this table's models and variables.
    public func designed(_ design: ResamplingDesign) throws -> SeedTable {
        guard design.cluster.count == values.count else {
            throw TwoScaleError.usage("the resampling design has \(design.cluster.count) models, the table \(values.count)")
        }
        guard design.redraws.count == variables else {
            throw TwoScaleError.usage("the resampling design has redraws for \(design.redraws.count) variables, the table has \(variables)")
        }
        var t = self
        t.design = design
        return t
    }

    /// How the models hang together (nil: every model its own unit, as the two-level bootstrap has it).
    public private(set) var design: ResamplingDesign?

    /// The seed means, `[variable][architecture]`.
    public func means() -> [[Double]] {
        (0..<variables).map { v in values.map { seeds in seeds.reduce(0) { $0 + $1[v] } / Double(seeds.count) } }
    }
}

/// The two-level (hierarchical) bootstrap of a statistic over architectures: replicate r draws, with
/// replacement, as many architectures as there are, then within each drawn architecture as many seeds
/// as it has, again with replacement, and averages each variable over the drawn seeds; the statistic is
/// computed on those per-architecture means. Replicate r draws from `Xoshiro256(seed:, stream: ["HBST",
/// r])` alone, so the replicates do not depend on the thread count or on which thread ran them.
public struct HierarchicalBootstrap: Sendable {
    public let replicates: Int
    public let seed: UInt64
    public let threads: Int
    /// Coverage of the percentile interval (0.95: the 2.5% and 97.5% quantiles).
    public let level: Double

    static let stream: UInt64 = 0x4842_5354  // "HBST"
    /// Replicates per unit of parallel work.
    static let chunk = 64

    public init(replicates: Int = 2000, seed: UInt64, threads: Int = 1, level: Double = 0.95) throws {
        guard replicates >= 20 else { throw TwoScaleError.invalid("replicates", "\(replicates)", allowed: "at least 20 bootstrap replicates") }
        guard threads >= 1 else { throw TwoScaleError.invalid("threads", "\(threads)", allowed: "at least 1") }
        guard level > 0, level < 1 else { throw TwoScaleError.invalid("level", "\(level)", allowed: "a coverage in (0, 1)") }
        self.replicates = replicates
        self.seed = seed
        self.threads = threads
        self.level = level
    }

    /// Replicate r's per-architecture means, `[variable][architecture]` (architectures in draw order).
    /// With a `ResamplingDesign`, the three-level resampling of `resampleClusters`.
    public func resample(_ t: SeedTable, replicate r: Int) -> [[Double]] {
        var rng = Xoshiro256(seed: seed, stream: [Self.stream, UInt64(r)])
        if let d = t.design { return Self.resampleClusters(t, design: d, rng: &rng) }
        let count = t.architectures, nv = t.variables
        var out = [[Double]](repeating: [Double](repeating: 0, count: count), count: nv)
        for i in 0..<count {
            let seeds = t.values[rng.index(count)]
            let n = seeds.count
            var sum = [Double](repeating: 0, count: nv)
            for _ in 0..<n {
                let row = seeds[rng.index(n)]
                for v in 0..<nv { sum[v] += row[v] }
            }
            for v in 0..<nv { out[v][i] = sum[v] / Double(n) }
        }
        return out
    }

    /// Three levels, for models that share values: first every cluster's estimated variables are redrawn
    /// once from their own uncertainty (`Redraw`: one value per cluster and replicate, shared by the
    /// cluster's models and by every copy of the cluster drawn, as the one true value would be); then as
    /// many clusters (architectures) as there are are drawn with replacement, per drawn cluster as many of
    /// its models (training templates) as it has, and per drawn model its seeds, each with replacement.
    /// A model's row holds its seed means, with the cluster's redrawn values in place of the estimates.
    static func resampleClusters(_ t: SeedTable, design d: ResamplingDesign, rng: inout Xoshiro256) -> [[Double]] {
        let nv = t.variables
        var out = [[Double]](repeating: [], count: nv)
        var sum = [Double](repeating: 0, count: nv)
        let redrawn: [[Double]?] = d.redraws.map { laws in laws.map { $0.map { $0.draw(&rng) } } }
        for _ in 0..<d.members.count {
            let c = rng.index(d.members.count)
            let models = d.members[c]
            for _ in 0..<models.count {
                let seeds = t.values[models[rng.index(models.count)]]
                let n = seeds.count
                for v in 0..<nv { sum[v] = 0 }
                for _ in 0..<n {
                    let row = seeds[rng.index(n)]
                    for v in 0..<nv { sum[v] += row[v] }
                }
                for v in 0..<nv { out[v].append(redrawn[v]?[c] ?? sum[v] / Double(n)) }
            }
        }
        return out
    }

    /// The statistic on every replicate, in replicate order (computed `chunk` replicates per task, at most
    /// `threads` tasks at once).
    public func map<T: Sendable>(_ t: SeedTable, _ statistic: @escaping @Sendable ([[Double]]) -> T) async throws -> [T] {
        let n = replicates
        let me = self
        let chunks = (n + Self.chunk - 1) / Self.chunk
        let parts = try await Parallel.map(chunks, threads: threads) { c in
            (c * Self.chunk..<Swift.min(n, (c + 1) * Self.chunk)).map { statistic(me.resample(t, replicate: $0)) }
        }
        return parts.flatMap { $0 }
    }

    /// The estimate on the full data with the percentile interval and the SD of the replicates where the
    /// statistic is defined (nil: undefined, e.g. τ of a replicate that drew one architecture only).
    public func interval(estimate: Double, draws: [Double?]) throws -> BootstrapInterval {
        let defined = draws.compactMap { $0 }
        guard defined.count >= Swift.max(2, draws.count / 2) else {
            throw TwoScaleError.failure("the bootstrap statistic is undefined in \(draws.count - defined.count) of \(draws.count) replicates")
        }
        let sorted = defined.sorted()
        let mean = defined.reduce(0, +) / Double(defined.count)
        let sd = (defined.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(defined.count - 1)).squareRoot()
        let tail = (1 - level) / 2
        return BootstrapInterval(estimate: estimate, lower: Quantiles.quantile(sorted, tail), upper: Quantiles.quantile(sorted, 1 - tail),
                                 sd: sd, replicates: defined.count, undefined: draws.count - defined.count)
    }
}

/// A statistic on the full data with its bootstrap percentile interval and bootstrap standard deviation.
public struct BootstrapInterval: Sendable, Equatable {
    /// The statistic on the full data (seed means per architecture).
    public let estimate: Double
    /// The percentile interval: the (1 − level)/2 and (1 + level)/2 quantiles of the replicates (type 7).
    public let lower: Double
    public let upper: Double
    /// The replicates' sample standard deviation.
    public let sd: Double
    /// Replicates where the statistic is defined (used), and where it is not (left out).
    public let replicates: Int
    public let undefined: Int

    public func contains(_ x: Double) -> Bool { lower <= x && x <= upper }
}

/// How a study's models hang together for the bootstrap: the cluster (architecture) of each model, whose
/// models share every architecture-level value, and per variable, where that variable is an estimate with
/// its own uncertainty (a 2sED), how to redraw it per cluster (`redraws[v]![c]`; nil: the data's values).
public struct ResamplingDesign: Sendable, Equatable {
    /// Model → cluster, clusters numbered 0..<count in any order.
    public let cluster: [Int]
    public let redraws: [[Redraw]?]
    /// Per cluster its models, in model order.
    public let members: [[Int]]

    public init(cluster: [Int], redraws: [[Redraw]?]) throws {
        let count = (cluster.max() ?? -1) + 1
        guard count >= 3, cluster.allSatisfy({ $0 >= 0 }) else {
            throw TwoScaleError.usage("a clustered bootstrap needs at least 3 clusters, numbered from 0 (got \(Swift.max(count, 0)))")
        }
        var members = [[Int]](repeating: [], count: count)
        for (m, c) in cluster.enumerated() { members[c].append(m) }
        guard members.allSatisfy({ !$0.isEmpty }) else { throw TwoScaleError.usage("a cluster of the resampling design has no model") }
        for r in redraws.compactMap({ $0 }) where r.count != count {
            throw TwoScaleError.usage("a redrawn variable has \(r.count) redraws, the design \(count) clusters")
        }
        self.cluster = cluster
        self.redraws = redraws
        self.members = members
    }
}

/// One estimate's own uncertainty, to redraw it from: a normal law (a sampled interval: mean the estimate,
/// sd its half-width / 1.96) or uniform on a certified bracket (all that is known there).
public enum Redraw: Sendable, Equatable {
    case normal(mean: Double, sd: Double)
    case uniform(lo: Double, hi: Double)
    /// The estimate itself (no uncertainty to carry).
    case fixed(Double)

    public func draw(_ rng: inout Xoshiro256) -> Double {
        switch self {
        case let .normal(mean, sd): return mean + sd * rng.normal()
        case let .uniform(lo, hi): return rng.uniform(lo, hi)
        case let .fixed(x): return x
        }
    }

    /// The same law after multiplying the quantity by `factor` (the study orients measures by ±1).
    public func scaled(_ factor: Double) -> Redraw {
        switch self {
        case let .normal(mean, sd): return .normal(mean: factor * mean, sd: abs(factor) * sd)
        case let .uniform(lo, hi): return .uniform(lo: Swift.min(factor * lo, factor * hi), hi: Swift.max(factor * lo, factor * hi))
        case let .fixed(x): return .fixed(factor * x)
        }
    }
}
