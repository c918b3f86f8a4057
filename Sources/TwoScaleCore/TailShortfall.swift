import Foundation

/// The check that a later stage's 2sED term is not expected to sit further below its limit than the
/// interval reaches. That term is the log of a mean of K outer weights `Ẑ_m^k` (docs/ESTIMATORS.md §3);
/// when their logs spread over many nats² (outer ESS ≈ 1), the mean has rarely seen the tail that carries
/// the expectation, and under a lognormal model of that spread it falls short by
/// `LogNormalSpread.shortfall(s², K)` nats, while the interval (whose width the same model sets, §5) is
/// centred on the estimate and does not include that bias. Raising K shrinks it only like `s√(2 log K)`;
/// where most of the spread is the islands' own noise, larger islands shrink the spread itself (measured
/// in docs/ESTIMATORS.md, §3). The
/// model's tail is an assumption (the islands' own noise need not be lognormal), so this is a warning
/// with a size, not a correction of the estimate.
public struct TailShortfall: Sendable, Equatable {
    public var eps: Double
    /// The expected shortfall of the 2sED estimate under the model, in units of d_ζ (Σ_m over the later
    /// stages' shortfalls in nats, divided by |log ε|).
    public var shortfall: Double
    /// The half-width of the 2sED's 95% interval there.
    public var halfWidth: Double
    /// The largest outer log-weight variance among the stages (nats²), and K.
    public var logVariance: Double
    public var paths: Int
    /// The share of that stage's spread that is its islands' own noise (`EpsilonEstimate.islandNoise`),
    /// which says which budget to raise: J when it is at least a half, K otherwise; nil when unknown.
    public var islandNoiseShare: Double?

    public init(eps: Double, shortfall: Double, halfWidth: Double, logVariance: Double, paths: Int,
                islandNoiseShare: Double? = nil) {
        self.eps = eps
        self.shortfall = shortfall
        self.halfWidth = halfWidth
        self.logVariance = logVariance
        self.paths = paths
        self.islandNoiseShare = islandNoiseShare
    }

    /// Whether larger islands, rather than more outer particles, are the budget to raise
    /// (`WeightDegeneracy.islandsFirst`, on the widest stage's share; false when it is unknown).
    public var islandsFirst: Bool { islandNoiseShare.map(WeightDegeneracy.islandsFirst) ?? false }

    /// The point of an ε grid from the stages' shortfalls (nats) and log-weight variances.
    public init(point p: EpsilonEstimate, paths: Int) {
        let widest = p.logVariance.indices.max { p.logVariance[$0] < p.logVariance[$1] }
        self.init(eps: p.eps, shortfall: p.tailShortfall.reduce(0, +) / Swift.abs(Foundation.log(p.eps)),
                  halfWidth: p.ci95.map { ($0.upperBound - $0.lowerBound) / 2 } ?? 0, logVariance: widest.map { p.logVariance[$0] } ?? 0,
                  paths: paths, islandNoiseShare: widest.flatMap { $0 < p.islandNoise.count ? p.islandNoise[$0] : nil })
    }

    /// The grid point with the largest shortfall beyond the half-width; nil when every shortfall lies
    /// within its interval (then the bias is small against the error the interval already shows).
    public static func check(_ points: [TailShortfall]) -> TailShortfall? {
        points.filter { $0.shortfall > $0.halfWidth }.max { $0.shortfall < $1.shortfall }
    }
}

/// JSON (`ed`'s `tail_shortfall`, present when the check fires): `eps`, `shortfall` (d_ζ units),
/// `half_width`, `log_var` (nats², the widest stage's), `paths` (K), `island_noise_share` (null when unknown).
extension TailShortfall: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ResultKey.self)
        try c.encode(eps, forKey: ResultKey("eps"))
        try c.encode(shortfall, forKey: ResultKey("shortfall"))
        try c.encode(halfWidth, forKey: ResultKey("half_width"))
        try c.encode(logVariance, forKey: ResultKey("log_var"))
        try c.encode(paths, forKey: ResultKey("paths"))
        try c.encode(islandNoiseShare, forKey: ResultKey("island_noise_share"))
    }
}
