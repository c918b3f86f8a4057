import Foundation

/// The spectra of a Monte Carlo run over a layered (Markovian) model, docs/METHOD.md §13: the expensive part of
/// every network measurement, independent of ε, ζ and the normalisation.
///
/// For paths `k = 0..<K` (θ^k ~ U(Θ)) and layers `m = 0..<L` (0-based here; docs/METHOD.md numbers them 1..L):
/// * `own[m][k]`: the spectrum of `F_m(θ^k)`;
/// * `inner[m][k][j]` for `m ≥ 1`: the spectrum of `F_m` at the j-th fresh draw of `θ_m` with
///   `θ_{<m} = θ^k_{<m}` fixed (`inner[0]` is empty).
///
/// A single-block model (the output FIM, or a toy model) has `L = 1` and no inner draws.
public struct LayeredSpectra: Sendable {
    public let dimension: Int
    public let layerDimensions: [Int]
    public var own: [[Spectrum]]
    public var inner: [[[Spectrum]]]

    public init(dimension: Int, layerDimensions: [Int], own: [[Spectrum]], inner: [[[Spectrum]]]) throws {
        guard !layerDimensions.isEmpty, layerDimensions.count == own.count, inner.count == own.count else {
            throw TwoScaleError.failure("spectra: layer counts disagree (\(layerDimensions.count) layers, \(own.count) own, \(inner.count) inner)")
        }
        guard layerDimensions.reduce(0, +) == dimension else {
            throw TwoScaleError.failure("spectra: layer dimensions \(layerDimensions) do not add up to d = \(dimension)")
        }
        let k = own[0].count
        guard k > 0, own.allSatisfy({ $0.count == k }) else {
            throw TwoScaleError.failure("spectra: every layer needs the same number (> 0) of paths")
        }
        guard inner[0].isEmpty else { throw TwoScaleError.failure("spectra: layer 1 has no inner draws") }
        for m in 1..<own.count {
            guard inner[m].count == k, let j = inner[m].first?.count, j > 0, inner[m].allSatisfy({ $0.count == j }) else {
                throw TwoScaleError.failure("spectra: layer \(m + 1) needs J > 0 inner draws for each of the \(k) paths")
            }
        }
        self.dimension = dimension
        self.layerDimensions = layerDimensions
        self.own = own
        self.inner = inner
    }

    public var paths: Int { own[0].count }
    public var layers: Int { own.count }
    public var innerDraws: Int { layers > 1 ? inner[1][0].count : 0 }

    /// `mean_k Σ_m Tr F_m(θ^k)` over the K uniform paths (docs/METHOD.md §3). The inner draws are not
    /// used: each holds one block at a partly redrawn θ, not the whole trace at one θ.
    public var meanTrace: Double {
        var s = 0.0
        for m in 0..<layers { for sp in own[m] { s += sp.trace } }
        return s / Double(paths)
    }

    /// Eigenvalues clamped from slightly negative to zero, over all spectra.
    public var clampedCount: Int {
        own.joined().reduce(0) { $0 + $1.clamped } + inner.joined().joined().reduce(0) { $0 + $1.clamped }
    }
}
