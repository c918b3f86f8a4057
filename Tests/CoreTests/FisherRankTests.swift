import Foundation
@testable import RandomStreams
import Testing
import TwoScaleNumerics
@testable import TwoScaleCore

@Suite struct FisherRankTests {
    /// `V Vᵀ` for a random n×r matrix V: rank r exactly, and LAPACK leaves n − r eigenvalues at
    /// round-off size (some of them positive), which the threshold must not count.
    func lowRankSpectrum(n: Int, r: Int, seed: UInt64) throws -> Spectrum {
        var rng = Xoshiro256(seed: seed)
        let v = (0..<(n * r)).map { _ in rng.uniform(-1, 1) }
        var a = Matrix(rows: n, cols: n)
        for i in 0..<n { for j in 0..<n { var s = 0.0; for k in 0..<r { s += v[i * r + k] * v[j * r + k] }; a[i, j] = s } }
        return try Spectrum(eigenvalues: try SymmetricEigen.eigenvalues(a))
    }

    @Test func thresholdRankOfDenseLowRankMatrices() throws {
        var sawRoundOff = false
        for (n, r, seed) in [(12, 5, UInt64(1)), (30, 7, 2), (40, 39, 3), (25, 1, 4), (16, 16, 5)] {
            let s = try lowRankSpectrum(n: n, r: r, seed: seed)
            #expect(FisherRank.rank(s, parameters: n) == r, "n = \(n), r = \(r): \(s.roots.count) positive roots")
            if s.roots.count > r { sawRoundOff = true }
        }
        #expect(sawRoundOff, "the fixtures should include positive round-off eigenvalues")
    }

    @Test func blocksTotalsAndLimit() throws {
        // Two draws of a two-block model: ranks (2, 1) and (3, 0).
        let d1 = [Spectrum(roots: [1, 2]), Spectrum(roots: [0.5])]
        let d2 = [Spectrum(roots: [1, 2, 3]), Spectrum(roots: [])]
        let r = try FisherRank(perDraw: [d1, d2], parameters: [4, 2], layers: [1, 2])
        #expect(r.blocks.map(\.rank) == [3, 1] && r.blocks.map(\.rankMin) == [2, 0])
        #expect(r.blocks[0].rankMean == 2.5 && r.rank == 3 && r.rankMin == 3 && r.draws == 2)
        #expect(abs(r.limit(zeta: 0.5, dimension: 6) - 4.5) < 1e-15)
        #expect(throws: TwoScaleError.self) { try FisherRank(perDraw: [d1, [d1[0]]], parameters: [4, 2], layers: [1, 2]) }
    }

    /// The plain estimator's d_ζ(ε) approaches ζd + (1 − ζ)·(largest rank) as ε → 0: exact spectra
    /// (no round-off), three paths of ranks 3, 5 and 4 in d = 8.
    @Test func estimatorTendsToTheRankLimit() throws {
        let own = [[Spectrum(roots: [1, 0.3, 2]), Spectrum(roots: [0.7, 1, 1.5, 0.2, 3]), Spectrum(roots: [1, 1, 1, 1])]]
        let ls = try LayeredSpectra(dimension: 8, layerDimensions: [8], own: own, inner: [[]])
        let rank = try FisherRank(spectra: ls, wholeNetwork: true)
        #expect(rank.rank == 5 && rank.rankMin == 3)
        let est = try LayeredEstimator(spectra: ls, normalization: .none)
        let z = 2.0 / 3.0
        let limit = rank.limit(zeta: z, dimension: 8)
        // d_ζ − limit = [log((1/3)·Π_i (√c r_i) + lower-order terms)] / |log ε| → 0 like 1/|log ε|.
        let gaps = try [1e-3, 1e-30, 1e-300].map { abs(try est.points(eps: [$0], zeta: z)[0].dZeta - limit) }
        #expect(gaps[0] > gaps[1] && gaps[1] > gaps[2] && gaps[2] < 0.01, "\(gaps)")
        // The exact leading term: (1 − ζ)·5 + log(Π roots of the rank-5 path / 3)/|log ε|.
        let e = 1e-300, lead = log(0.7 * 1 * 1.5 * 0.2 * 3 / 3) / abs(log(e))
        #expect(abs(try est.points(eps: [e], zeta: z)[0].dZeta - (limit + lead)) < 1e-6)
    }
}
