import Foundation
import TwoScaleCore

/// What to measure from a network's Fisher spectra (`ed` and `analyze`): the ε grid and ζ, whether to
/// add the lower 2sED, the normalisation, the bootstrap, and the Abbas et al. ED's sample sizes and γ.
public struct MeasurementRequest: Sendable, Equatable {
    public var eps: [Double]
    public var zeta: Double
    public var lower: Bool
    public var normalization: Normalization
    /// Percentile-bootstrap resamples over paths for the intervals (0: none).
    public var bootstrap: Int
    /// Sample sizes n of the Abbas ED (empty: not computed).
    public var abbasN: [Double]
    public var gamma: Double
    /// Parallel tasks; results do not depend on it.
    public var threads: Int

    public init(eps: [Double], zeta: Double, lower: Bool = false, normalization: Normalization = .trace, bootstrap: Int = 200,
                abbasN: [Double] = [], gamma: Double = 1, threads: Int = 1) {
        self.eps = eps
        self.zeta = zeta
        self.lower = lower
        self.normalization = normalization
        self.bootstrap = bootstrap
        self.abbasN = abbasN
        self.gamma = gamma
        self.threads = threads
    }
}

/// The Fisher rank as a run's report gives it: total rank (largest over the draws) and smallest, the
/// draws, the per-block ranks, the threshold rule, and the ε → 0 limit ζd + (1 − ζ)·rank of the 2sED.
public struct RankReport: Sendable, Equatable, Encodable {
    public var rank: Int
    public var rankMin: Int
    public var rankDraws: Int
    public var rankBlocks: [FisherRank.Block]
    public var rankThreshold: String
    public var dZetaLimit: Double
    /// The ranks it was made from (for the readable summary).
    public var source: FisherRank

    enum CodingKeys: String, CodingKey { case rank, rankMin, rankDraws, rankBlocks, rankThreshold, dZetaLimit }

    public init(_ r: FisherRank, zeta: Double, dimension: Int) {
        source = r
        rank = r.rank
        rankMin = r.rankMin
        rankDraws = r.draws
        rankBlocks = r.blocks
        rankThreshold = FisherRank.thresholdNote
        dZetaLimit = r.limit(zeta: zeta, dimension: dimension)
    }
}

/// The Abbas et al. effective dimension at one sample size.
public struct AbbasPoint: Sendable, Equatable, Encodable {
    public var n: Double
    public var kappa: Double
    public var ed: Double
}

/// The 2sED of a network run measured from its stored (or just computed) spectra by the plain
/// estimator: `ed`'s and `analyze`'s result (docs/METHOD.md §13; the JSON keys are the snake-case
/// names of the fields, in this order).
public struct NetworkMeasurement: Sendable, Encodable {
    /// One ε of the grid.
    public struct Point: Sendable, Equatable, Encodable {
        public var eps: Double
        public var zeta: Double
        /// Nested 2sED (the estimate the report leads with), the joint one, and the lower one (`--lower`).
        public var dZeta: Double
        public var dZetaJoint: Double
        public var dZetaLower: Double?
        /// 95% percentile-bootstrap intervals (nil without bootstrap).
        public var ci95: ClosedRange<Double>?
        public var ci95Joint: ClosedRange<Double>?
        public var ci95Lower: ClosedRange<Double>?
        /// Effective sample size of the outer weights per stage m ≥ 2, and its minimum (nil for one block).
        public var ess: [Double]
        public var essMin: Double?
        /// Whether the lower 2sED was asked for (its keys are written, null intervals included).
        var lower: Bool

        enum CodingKeys: String, CodingKey {
            case eps, zeta, dZeta, dZetaJoint, dZetaLower, ci95, ci95Joint, ci95Lower, ess, essMin
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(eps, forKey: .eps)
            try c.encode(zeta, forKey: .zeta)
            try c.encode(dZeta, forKey: .dZeta)
            try c.encode(dZetaJoint, forKey: .dZetaJoint)
            if lower { try c.encode(dZetaLower, forKey: .dZetaLower) }
            try c.encode(ci95, forKey: .ci95)
            try c.encode(ci95Joint, forKey: .ci95Joint)
            if lower { try c.encode(ci95Lower, forKey: .ci95Lower) }
            try c.encode(ess, forKey: .ess)
            try c.encode(essMin, forKey: .essMin)
        }
    }

    public var dimension: Int
    public var points: [Point]
    /// Per stage m ≥ 2: the smallest ESS over the grid.
    public var ess: [Double]
    /// Wall-clock seconds of the whole command (set by the caller, which knows what it timed).
    public var seconds: Double = 0
    /// Parameters per Fisher block, K and J.
    public var layers: [Int]
    public var paths: Int
    public var inner: Int
    /// The run's configuration (the store's meta.json fields).
    public var settings: NetworkRunConfiguration
    public var zeta: Double
    public var normalization: Normalization
    /// The normalisation constant c and the mean trace it comes from.
    public var scale: Double
    public var meanTrace: Double
    /// Round-off negative eigenvalues set to 0.
    public var clamped: Int
    public var bootstrap: Int
    public var rank: RankReport
    public var gamma: Double?
    public var abbas: [AbbasPoint]?
    /// The degenerate stage, when the outer weights' ESS is too small (WeightDegeneracy's rule).
    public var degeneracy: WeightDegeneracy?

    enum CodingKeys: String, CodingKey {
        case dimension, points, ess, seconds, layers, paths, inner, settings, zeta, normalization, scale, meanTrace, clamped, bootstrap
        case gamma, abbas
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(dimension, forKey: .dimension)
        try c.encode(points, forKey: .points)
        try c.encode(ess, forKey: .ess)
        try c.encode(seconds, forKey: .seconds)
        try c.encode(layers, forKey: .layers)
        try c.encode(paths, forKey: .paths)
        try c.encode(inner, forKey: .inner)
        try c.encode(settings, forKey: .settings)
        try c.encode(zeta, forKey: .zeta)
        try c.encode(normalization.rawValue, forKey: .normalization)
        try c.encode(scale, forKey: .scale)
        try c.encode(meanTrace, forKey: .meanTrace)
        try c.encode(clamped, forKey: .clamped)
        try c.encode(bootstrap, forKey: .bootstrap)
        try rank.encode(to: encoder)
        try c.encodeIfPresent(gamma, forKey: .gamma)
        try c.encodeIfPresent(abbas, forKey: .abbas)
    }

    /// Measures `spectra` (a run described by `meta`) as `request` asks. The bootstrap is seeded by the
    /// run's own seed, so `ed` and a later `analyze` of its store give the same intervals.
    public static func measure(spectra: LayeredSpectra, meta: StoreMeta, request r: MeasurementRequest) async throws -> NetworkMeasurement {
        let est = try LayeredEstimator(spectra: spectra, normalization: r.normalization)
        let pts = try await est.points(eps: r.eps, zeta: r.zeta, bootstrap: r.bootstrap, seed: meta.configuration.seed, threads: r.threads)
        let stages = Swift.max(0, spectra.layers - 1)
        let ess = (0..<stages).map { m in pts.map { $0.ess[m] }.min() ?? 0 }
        let points = pts.map { p in
            Point(eps: p.eps, zeta: p.zeta, dZeta: p.dZeta, dZetaJoint: p.dZetaJoint, dZetaLower: r.lower ? p.dZetaLower : nil,
                  ci95: p.ci95, ci95Joint: p.ci95Joint, ci95Lower: r.lower ? p.ci95Lower : nil, ess: p.ess, essMin: p.ess.min(),
                  lower: r.lower)
        }
        var abbas: [AbbasPoint]?
        if !r.abbasN.isEmpty {
            let perPath = (0..<spectra.paths).map { k in spectra.own.map { $0[k] } }
            abbas = try r.abbasN.map { n in
                let ed = try AbbasED.dimension(spectra: perPath, scale: est.scale, n: n, gamma: r.gamma)
                guard ed.isFinite else { throw TwoScaleError.failure("Abbas ED at n = \(n) is not finite") }
                return AbbasPoint(n: n, kappa: try AbbasED.kappa(n: n, gamma: r.gamma), ed: ed)
            }
        }
        let rank = try FisherRank(spectra: spectra, wholeNetwork: meta.configuration.fisher == .output)
        return NetworkMeasurement(
            dimension: spectra.dimension, points: points, ess: ess, layers: meta.layers, paths: meta.paths, inner: meta.inner,
            settings: meta.configuration, zeta: r.zeta, normalization: r.normalization, scale: est.scale,
            meanTrace: spectra.meanTrace, clamped: spectra.clampedCount, bootstrap: r.bootstrap,
            rank: RankReport(rank, zeta: r.zeta, dimension: spectra.dimension),
            gamma: abbas == nil ? nil : r.gamma, abbas: abbas,
            degeneracy: WeightDegeneracy.check(ess: ess, paths: spectra.paths))
    }
}
