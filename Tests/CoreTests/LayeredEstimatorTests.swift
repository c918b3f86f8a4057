import Foundation
@testable import RandomStreams
import Testing
@testable import TwoScaleCore

/// A random layered design: K paths, J inner draws, L layers of the given sizes.
func randomLayered(seed: UInt64, sizes: [Int], K: Int, J: Int, shareInner: Bool = false) throws -> LayeredSpectra {
    var rng = Xoshiro256(seed: seed)
    func spec(_ d: Int) throws -> Spectrum { try Spectrum(eigenvalues: (0..<d).map { _ in pow(10, rng.uniform(-2, 1)) }) }
    let own = try sizes.map { d in try (0..<K).map { _ in try spec(d) } }
    var inner: [[[Spectrum]]] = [[]]
    for m in 1..<sizes.count {
        let shared = try (0..<J).map { _ in try spec(sizes[m]) }
        inner.append(try (0..<K).map { _ in shareInner ? shared : try (0..<J).map { _ in try spec(sizes[m]) } })
    }
    return try LayeredSpectra(dimension: sizes.reduce(0, +), layerDimensions: sizes, own: own, inner: inner)
}

@Suite struct LayeredEstimatorTests {
    @Test func oneLayerEqualsPlainEstimator() throws {
        let ls = try randomLayered(seed: 1, sizes: [7], K: 9, J: 0)
        let est = try LayeredEstimator(spectra: ls, normalization: .trace)
        let eps = [1e-3, 0.05, 0.4]
        let p = try est.points(eps: eps, zeta: 0.7)
        let plain = try TwoScale.dimension(spectra: ls.own[0], dimension: 7, eps: eps, zeta: 0.7)
        for (a, b) in zip(p, plain) {
            #expect(abs(a.dZeta - b) < 1e-12 && abs(a.dZetaJoint - b) < 1e-12 && abs((a.dZetaLower ?? .nan) - b) < 1e-12)
        }
    }

    @Test func nestedAndLowerMatchBruteForce() throws {
        // Direct (linear-space) evaluation of the formulas of docs/METHOD.md §13 on a small design.
        let ls = try randomLayered(seed: 3, sizes: [3, 2, 4], K: 5, J: 4)
        let est = try LayeredEstimator(spectra: ls, normalization: .trace)
        let e = 0.1, z = 2.0 / 3.0
        let s = pow(e, z - 1) * est.scale.squareRoot()
        let A = ls.own.map { $0.map { exp($0.logDetSqrt(scale: s)) } }  // e^{A_m(k)}
        let I = ls.inner.map { $0.map { d in d.map { exp($0.logDetSqrt(scale: s)) }.reduce(0, +) / Double(d.count) } }
        let K = 5
        var nested = log(A[0].reduce(0, +) / Double(K)), lower = nested
        for m in 1..<3 {
            let w = (0..<K).map { k in (0..<m).reduce(1.0) { $0 * A[$1][k] } }
            let ws = w.reduce(0, +)
            nested += log((0..<K).reduce(0) { $0 + w[$1] / ws * I[m][$1] })
            lower += (0..<K).reduce(0) { $0 + w[$1] / ws * log(I[m][$1]) }
        }
        let joint = log((0..<K).reduce(0) { acc, k in acc + A[0][k] * A[1][k] * A[2][k] } / Double(K))
        let p = try est.points(eps: [e], zeta: z)[0]
        let f = { (x: Double) in z * 9 + x / abs(log(e)) }
        #expect(abs(p.dZeta - f(nested)) < 1e-10)
        #expect(abs((p.dZetaLower ?? .nan) - f(lower)) < 1e-10)
        #expect(abs(p.dZetaJoint - f(joint)) < 1e-10)
        #expect(p.ess.count == 2 && p.ess.allSatisfy { $0 >= 1 && $0 <= 5 + 1e-9 })
    }

    @Test func lowerNeverAboveNested() throws {
        for seed in 1...20 {
            let ls = try randomLayered(seed: UInt64(seed), sizes: [4, 3, 5], K: 6, J: 3)
            for p in try LayeredEstimator(spectra: ls, normalization: .trace).points(eps: [1e-4, 0.01, 0.3], zeta: 0.7) {
                #expect((p.dZetaLower ?? .nan) <= p.dZeta + 1e-12)
                #expect((p.dZetaLower ?? .nan) >= 0.7 * 12 - 1e-12)
            }
        }
    }

    @Test func innerIndependentOfPathGivesLowerEqualNested() throws {
        let ls = try randomLayered(seed: 8, sizes: [4, 3, 2], K: 5, J: 6, shareInner: true)
        for p in try LayeredEstimator(spectra: ls, normalization: .trace).points(eps: [1e-3, 0.2], zeta: 0.67) {
            #expect(abs((p.dZetaLower ?? .nan) - p.dZeta) < 1e-10)
        }
    }

    @Test func bootstrapIntervalIsReproducibleAndCoversEstimate() throws {
        let ls = try randomLayered(seed: 11, sizes: [5, 4], K: 30, J: 5)
        let est = try LayeredEstimator(spectra: ls, normalization: .trace)
        let a = try est.points(eps: [0.05], zeta: 0.67, bootstrap: 200, seed: 3)[0]
        let b = try est.points(eps: [0.05], zeta: 0.67, bootstrap: 200, seed: 3)[0]
        #expect(a == b)
        let ci = try #require(a.ci95)
        #expect(ci.lowerBound <= a.dZeta + 0.5 && ci.upperBound >= a.dZeta - 0.5 && ci.lowerBound < ci.upperBound)
    }
}
