import Estimation
import Fisher
import Foundation
import SpectraStore
import TwoScaleCore

/// The Fisher rank as a run's report gives it: total rank (largest over the draws) and smallest, the
/// draws, the per-block ranks, the threshold rule, and the ε → 0 limit ζd + (1 − ζ)·r of the 2sED.
/// With the generic rank (`GenericRank`: Markov FIM, a model at hand) r is its closed-form bound when a
/// witness proves it (`d_zeta_limit_kind` `exact`), else the largest rank seen over the draws and the
/// witnesses (`lower_bound`); without it (output FIM, `analyze`) r is the draws' rank, a lower bound.
/// JSON keys: `rank`, `rank_min`, `rank_draws`, `rank_blocks`, `rank_threshold`, `d_zeta_limit`,
/// `d_zeta_limit_kind`, `rank_generic` (the bound, or null), `rank_witness` (null without a generic rank),
/// `rank_proved`, `rank_generic_blocks` (per block `layer`, `parameters`, `bound`, `witness`; or null).
public struct RankReport: Sendable, Equatable, Encodable {
    /// What `d_zeta_limit` is: the limit itself, or a lower bound of it.
    public enum LimitKind: String, Sendable, Equatable, Encodable {
        case exact
        case lowerBound = "lower_bound"
    }

    /// The ranks over the draws.
    public var source: FisherRank
    /// The closed-form bound and its witness (nil where no model is at hand).
    public var generic: GenericRank?
    /// The rank r the limit uses.
    public var limitRank: Int
    public var dZetaLimit: Double
    public var limitKind: LimitKind

    public init(_ r: FisherRank, generic: GenericRank? = nil, zeta: Double, dimension: Int) {
        source = r
        self.generic = generic
        if let g = generic, g.proved {
            limitRank = g.bound
            limitKind = .exact
        } else {
            limitRank = Swift.max(r.rank, generic?.witness ?? 0)
            limitKind = .lowerBound
        }
        dZetaLimit = zeta * Double(dimension) + (1 - zeta) * Double(limitRank)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ResultKey.self)
        try c.encode(source.rank, forKey: ResultKey("rank"))
        try c.encode(source.rankMin, forKey: ResultKey("rank_min"))
        try c.encode(source.draws, forKey: ResultKey("rank_draws"))
        try c.encode(source.blocks, forKey: ResultKey("rank_blocks"))
        try c.encode(FisherRank.thresholdNote, forKey: ResultKey("rank_threshold"))
        try c.encode(dZetaLimit, forKey: ResultKey("d_zeta_limit"))
        try c.encode(limitKind, forKey: ResultKey("d_zeta_limit_kind"))
        try c.encode(generic?.bound, forKey: ResultKey("rank_generic"))
        try c.encode(generic?.witness, forKey: ResultKey("rank_witness"))
        try c.encode(generic?.proved ?? false, forKey: ResultKey("rank_proved"))
        try c.encode(generic?.blocks, forKey: ResultKey("rank_generic_blocks"))
    }
}

/// The Abbas et al. effective dimension at one sample size.
public struct AbbasPoint: Sendable, Equatable, Encodable {
    public var n: Double
    public var kappa: Double
    public var ed: Double
}

/// What both network measurements (plain and smc) report about their run, written in one place.
protocol NetworkRunReport {
    var ess: [Double] { get }
    var seconds: Double { get }
    var layers: [Int] { get }
    var paths: Int { get }
    var inner: Int { get }
    var settings: NetworkRunConfiguration { get }
    var zeta: Double { get }
    var normalization: Normalization { get }
    var scale: Double { get }
    var meanTrace: Double { get }
}

extension NetworkRunReport {
    /// `ess`, `seconds`, `layers`, `paths`, `inner`.
    func encodeDesign(_ c: inout KeyedEncodingContainer<ResultKey>) throws {
        try c.encode(ess, forKey: ResultKey("ess"))
        try c.encode(seconds, forKey: ResultKey("seconds"))
        try c.encode(layers, forKey: ResultKey("layers"))
        try c.encode(paths, forKey: ResultKey("paths"))
        try c.encode(inner, forKey: ResultKey("inner"))
    }

    /// `settings`, `zeta`, `normalization`, `scale` (c), `mean_trace`.
    func encodeScale(_ c: inout KeyedEncodingContainer<ResultKey>) throws {
        try c.encode(settings, forKey: ResultKey("settings"))
        try c.encode(zeta, forKey: ResultKey("zeta"))
        try c.encode(normalization.rawValue, forKey: ResultKey("normalization"))
        try c.encode(scale, forKey: ResultKey("scale"))
        try c.encode(meanTrace, forKey: ResultKey("mean_trace"))
    }
}

/// The 2sED of a network run measured from its stored (or just computed) spectra by the plain
/// estimator: `ed`'s and `analyze`'s result (docs/METHOD.md §13; the JSON keys are the snake-case
/// names of the fields, in this order).
public struct PlainReport: Sendable, Encodable, NetworkRunReport, NetworkEstimateReport {
    /// One ε of the grid (`EpsilonEstimate`) in `ed`'s plain keys: the estimates with their bootstrap intervals
    /// and the bracket, the stage weights' `ess` and `ess_min`.
    public struct PointKeys: Encodable {
        let p: EpsilonEstimate

        public init(_ p: EpsilonEstimate) { self.p = p }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: ResultKey.self)
            try p.encodeEstimates(into: &c)
            try c.encode(p.ess, forKey: ResultKey("ess"))
            try c.encode(p.ess.min(), forKey: ResultKey("ess_min"))
        }
    }

    public var dimension: Int
    public var points: [EpsilonEstimate]
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
    /// The certified bracket (`ed` computes it for the Markov FIM) and what its check found.
    public var bracket: CertifiedBracket?
    public var bracketCheck: BracketCheck?

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ResultKey.self)
        try c.encode(dimension, forKey: ResultKey("dimension"))
        try c.encode(points.map(PointKeys.init), forKey: ResultKey("points"))
        try encodeDesign(&c)
        try encodeScale(&c)
        try c.encode(clamped, forKey: ResultKey("clamped"))
        try c.encode(bootstrap, forKey: ResultKey("bootstrap"))
        try c.encodeIfPresent(bracket, forKey: ResultKey("bracket"))
        try c.encodeIfPresent(bracketCheck, forKey: ResultKey("bracket_check"))
        try rank.encode(to: encoder)
        try c.encodeIfPresent(gamma, forKey: ResultKey("gamma"))
        try c.encodeIfPresent(abbas, forKey: ResultKey("abbas"))
    }

    /// Measures `spectra` (a run described by `meta`) as `request` asks. The bootstrap is seeded by the
    /// run's own seed, so `ed` and a later `analyze` of its store give the same intervals.
    /// `model`: the run's Markov FIM (`ed`'s, or `analyze`'s rebuilt from the store's settings), which gives
    /// the generic rank (`GenericRank`) and the certified bracket (`CertifiedBracket`, at the spectra's c);
    /// nil where it is not at hand or for the output FIM, whose limit then keeps the draws' rank as a lower
    /// bound and which has no bracket.
    public static func measure(spectra: LayeredSpectra, meta: StoreMeta, request r: MeasurementRequest,
                               model: MarkovFisher? = nil) async throws -> PlainReport {
        let c = meta.configuration
        let generic = try model.map { try GenericRank(model: $0, box: c.box, seed: c.seed) }
        let est = try LayeredEstimator(spectra: spectra, normalization: r.normalization)
        let pts = try await est.points(eps: r.eps, zeta: r.zeta, bootstrap: r.bootstrap, seed: meta.configuration.seed, threads: r.threads)
        let stages = Swift.max(0, spectra.layers - 1)
        let ess = (0..<stages).map { m in pts.map { $0.ess[m] }.min() ?? 0 }
        let points = pts.map { p in
            var q = p
            if !r.lower { (q.dZetaLower, q.ci95Lower) = (nil, nil) }
            return q
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
        var measurement = PlainReport(
            dimension: spectra.dimension, points: points, ess: ess, layers: meta.layers, paths: meta.paths, inner: meta.inner,
            settings: meta.configuration, zeta: r.zeta, normalization: r.normalization, scale: est.scale,
            meanTrace: spectra.meanTrace, clamped: spectra.clampedCount, bootstrap: r.bootstrap,
            rank: RankReport(rank, generic: generic, zeta: r.zeta, dimension: spectra.dimension),
            gamma: abbas == nil ? nil : r.gamma, abbas: abbas,
            degeneracy: WeightDegeneracy.check(ess: ess, paths: spectra.paths))
        if let model {
            // Markov's end on stage 1 only: the later stages' islands per ε would cost a long plain grid dearly.
            measurement.attach(try await model.certifiedBracket(box: c.box, eps: r.eps, zeta: r.zeta,
                                                                normalization: r.normalization, seed: c.seed,
                                                                laterStages: false, threads: r.threads))
        }
        return measurement
    }
}

extension PlainReport {
    /// Puts the certified bracket beside every point (`EpsilonEstimate.attach`).
    public mutating func attach(_ b: CertifiedBracket) {
        bracket = b
        bracketCheck = EpsilonEstimate.attach(b, to: &points)
    }
}
