import Foundation
import Testing
@testable import TwoScaleCore
@testable import TwoScaleFormats

/// `F̂ = I` in dimension d: every draw has d unit eigenvalues.
func identitySpectra(d: Int, draws: Int = 3) throws -> [Spectrum] {
    try (0..<draws).map { _ in try Spectrum(eigenvalues: [Double](repeating: 1, count: d)) }
}

/// Closed form for `F̂ = I` (docs/METHOD.md §5): `d(1 + log(1+ε^(1−ζ))/|log ε|)`... written with ζd + d·log(1+ε^(ζ−1))/|log ε|.
func identityClosedForm(d: Int, zeta: Double, eps: Double) -> Double {
    Double(d) * zeta + Double(d) * log1p(pow(eps, zeta - 1)) / abs(log(eps))
}

@Suite struct TwoScaleReferenceTests {
    @Test func referenceValues() throws {
        let a = try TwoScale.dimension(spectra: identitySpectra(d: 1), dimension: 1, eps: [0.01], zeta: 2.0 / 3.0)
        #expect(abs(a[0] - 1.0423674) < 5e-8)
        let b = try TwoScale.dimension(spectra: identitySpectra(d: 10), dimension: 10, eps: [0.05], zeta: 0.8)
        #expect(abs(b[0] - 11.461381) < 5e-7)
    }

    @Test func identityClosedFormMatchesPaperForm() {
        // docs/METHOD.md §5: F̂ = I gives d(1 + log(1+ε^(1−ζ))/|log ε|); check it against ζd + d log(1+ε^(ζ−1))/|log ε|.
        for (d, z, e) in [(1, 2.0 / 3.0, 0.01), (10, 0.8, 0.05), (7, 0.3, 0.4)] {
            let method = Double(d) * (1 + log1p(pow(e, 1 - z)) / abs(log(e)))
            #expect(abs(method - identityClosedForm(d: d, zeta: z, eps: e)) < 1e-12)
        }
    }

    @Test func zeroFisherGivesZetaD() throws {
        let zero = try (0..<4).map { _ in try Spectrum(eigenvalues: [0, 0, 0, 0, 0]) }
        for z in [0.0, 0.5, 2.0 / 3.0, 0.99] {
            let v = try TwoScale.dimension(spectra: zero, dimension: 5, eps: [1e-6, 0.1, 0.9], zeta: z)
            for x in v { #expect(x == z * 5) }
        }
    }

    @Test func dimensionAboveDIsPossible() throws {
        // docs/METHOD.md §5: d_ζ ≤ d is NOT true. F̂ = I, ε = 0.5, ζ = 2/3 gives more than d.
        let v = try TwoScale.dimension(spectra: identitySpectra(d: 3), dimension: 3, eps: [0.5], zeta: 2.0 / 3.0)
        #expect(v[0] > 3)
    }

    @Test func notMonotoneInEpsilon() throws {
        // docs/METHOD.md §5: d_ζ is not monotone in ε. Spectrum (1e-6, 1), ζ = 0: it falls, then rises towards ε → 1.
        let grid = LogGrid.points(from: 1e-5, to: 0.99, count: 300)
        let sp = [try Spectrum(eigenvalues: [1e-6, 1])]
        let v = try TwoScale.dimension(spectra: sp, dimension: 2, eps: grid, zeta: 0)
        let diffs = zip(v.dropFirst(), v).map { $0 - $1 }
        #expect(diffs.contains { $0 > 0 } && diffs.contains { $0 < 0 })
    }

    @Test func rejectsBadScales() throws {
        let s = try identitySpectra(d: 1)
        for e in [0.0, 1.0, -0.1, 1.5, Double.nan] {
            #expect(throws: TwoScaleError.self) { try TwoScale.dimension(spectra: s, dimension: 1, eps: [e], zeta: 0.5) }
        }
        for z in [-0.1, 1.0, 1.2, Double.nan] {
            #expect(throws: TwoScaleError.self) { try TwoScale.dimension(spectra: s, dimension: 1, eps: [0.1], zeta: z) }
        }
    }

    @Test func abbasEDIdentity() throws {
        // F̂ = I: ED(n) = 2 log (1+κ)^{d/2} / log κ = d log(1+κ)/log κ.
        let n = 10_000.0, g = 1.0
        let kappa = g * n / (2 * Double.pi * log(n))
        let sp = try identitySpectra(d: 4)
        let ed = try AbbasED.dimension(spectra: sp.map { [$0] }, scale: 1, n: n, gamma: g)
        #expect(abs(ed - 4 * log1p(kappa) / log(kappa)) < 1e-12)
        #expect(throws: TwoScaleError.self) { try AbbasED.kappa(n: 10, gamma: 1) }  // κ < 1
        #expect(throws: TwoScaleError.self) { try AbbasED.kappa(n: 1e4, gamma: 0) }
        #expect(throws: TwoScaleError.self) { try AbbasED.kappa(n: 1, gamma: 1) }
    }
}
