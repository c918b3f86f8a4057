import Foundation

/// The numerical rank of Fisher spectra, per block, and the ε → 0 limit of the 2sED it fixes.
///
/// An eigenvalue λ of block m (d_m parameters) counts towards the rank when `λ > d_m·2⁻⁵²·λ_max`, with
/// `λ_max` the block's largest eigenvalue at that θ — the usual numerical-rank threshold: below it an
/// eigenvalue is indistinguishable from round-off in a d_m-dimensional eigenproblem. (Round-off
/// negatives are already clamped to 0 by `Spectrum`; tiny positive round-off survives in
/// `Spectrum.roots` and is what this threshold removes.)
///
/// The limit: for ε → 0 with `t = ε^(ζ−1)`, `log det(I + t√c F^{1/2}) = r(θ)(1 − ζ)|log ε| + O(1)`, and
/// the θ-average is dominated by the largest rank that has positive probability, so
/// `d_ζ(ε) → ζd + (1 − ζ)·r` with `r` the generic (maximal) rank. Over a finite set of draws the largest
/// rank seen is a lower bound of r; `rankMin` shows whether it varies with θ. For the Markov FIM,
/// `GenericRank` (Fisher) proves r where it can: a closed-form bound and a witness θ that attains it.
public struct FisherRank: Sendable, Equatable, Encodable {
    /// One block (a layer of the Markov FIM, or the whole output FIM).
    public struct Block: Sendable, Equatable, Encodable {
        /// 1-based layer, or 0 for a whole-network block.
        public var layer: Int
        public var parameters: Int
        /// Largest and smallest rank over the draws, and the mean.
        public var rank: Int
        public var rankMin: Int
        public var rankMean: Double

        enum CodingKeys: String, CodingKey {
            case layer, parameters, rank
            case rankMin = "rank_min"
            case rankMean = "rank_mean"
        }
    }

    public var blocks: [Block]
    /// Largest total rank over the draws (the `r` of the limit), and the smallest.
    public var rank: Int
    public var rankMin: Int
    /// Parameter draws the ranks were taken over.
    public var draws: Int

    enum CodingKeys: String, CodingKey {
        case blocks, rank
        case rankMin = "rank_min"
        case draws
    }

    /// The threshold rule in words (for reports).
    public static let thresholdNote = "eigenvalues above d_m·2^-52·λ_max of their block (d_m parameters, λ_max its largest eigenvalue at that θ); largest rank over the draws"

    /// The rank of one block's spectrum under the threshold above.
    public static func rank(_ s: Spectrum, parameters d: Int) -> Int {
        let top = s.roots.max() ?? 0
        let tol = Double(d) * Double.ulpOfOne * top * top
        return s.roots.reduce(0) { $0 + ($1 * $1 > tol ? 1 : 0) }
    }

    /// Ranks from spectra `perDraw[k][m]` (draw k, block m) with `parameters[m]` parameters per block;
    /// `layers[m]` labels the blocks (1-based layers, 0 for a whole-network block).
    public init(perDraw: [[Spectrum]], parameters: [Int], layers: [Int]) throws {
        guard !perDraw.isEmpty, parameters.count == layers.count, perDraw.allSatisfy({ $0.count == parameters.count }) else {
            throw TwoScaleError.failure("rank: every draw needs one spectrum per block (\(parameters.count) blocks)")
        }
        let r = perDraw.map { draw in zip(draw, parameters).map { Self.rank($0, parameters: $1) } }
        blocks = parameters.indices.map { m in
            let v = r.map { $0[m] }
            return Block(layer: layers[m], parameters: parameters[m], rank: v.max() ?? 0, rankMin: v.min() ?? 0,
                         rankMean: Double(v.reduce(0, +)) / Double(v.count))
        }
        let totals = r.map { $0.reduce(0, +) }
        rank = totals.max() ?? 0
        rankMin = totals.min() ?? 0
        draws = perDraw.count
    }

    /// Ranks over the K paths of stored layered spectra (the paths' own spectra).
    public init(spectra: LayeredSpectra, wholeNetwork: Bool) throws {
        try self.init(perDraw: (0..<spectra.paths).map { k in spectra.own.map { $0[k] } },
                      parameters: spectra.layerDimensions,
                      layers: wholeNetwork ? [0] : Array(1...spectra.layers))
    }

    /// `ζd + (1 − ζ)·r`: the value the 2sED tends to as ε → 0.
    public func limit(zeta: Double, dimension: Int) -> Double {
        zeta * Double(dimension) + (1 - zeta) * Double(rank)
    }

    /// One line for tables: `rank r of d (per block r_1 + r_2 …)`.
    public func summary(dimension: Int) -> String {
        let per = blocks.count > 1 ? " (per layer " + blocks.map { "\($0.rank)/\($0.parameters)" }.joined(separator: " + ") + ")" : ""
        let varies = rankMin < rank ? ", \(rankMin) at the least over \(draws) draws" : ""
        return "Fisher rank \(rank) of \(dimension)\(per)\(varies)"
    }
}
