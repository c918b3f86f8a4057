import Foundation
import PropertyBased
@testable import RandomStreams
import Testing
@testable import TwoScaleCore

/// Random spectra: `draws` draws of `d` eigenvalues, some exactly zero, magnitudes over 8 decades.
func randomSpectra(seed: UInt64, d: Int, draws: Int, rank: Int? = nil) throws -> [Spectrum] {
    var rng = Xoshiro256(seed: seed)
    return try (0..<draws).map { _ in
        try Spectrum(eigenvalues: (0..<d).map { i in
            if let r = rank, i >= r { return 0 }
            return rng.uniform() < 0.1 ? 0 : pow(10, rng.uniform(-4, 4))
        })
    }
}

@Suite struct SpectralPropertyTests {
    @Test func atLeastZetaD() async {
        await propertyCheck(count: 300, input: Gen.int(in: 1...40), Gen.double(in: 0...0.999), Gen.double(in: 1e-6...0.999)) { d, z, e in
            let sp = try! randomSpectra(seed: UInt64(d * 7919) &+ UInt64(z * 1e6), d: d, draws: 5)
            let v = try! TwoScale.dimension(spectra: sp, dimension: d, eps: [e], zeta: z)[0]
            #expect(v.isFinite)
            #expect(v >= z * Double(d) - 1e-12)
        }
    }

    @Test func scaleInvariance() async {
        await propertyCheck(count: 200, input: Gen.int(in: 1...20), Gen.double(in: -6...6), Gen.double(in: 1e-4...0.9)) { d, logS, e in
            let sp = try! randomSpectra(seed: UInt64(d) &* 31 &+ UInt64(abs(logS) * 1000), d: d, draws: 4)
            let s = pow(10, logS)
            let scaled = try! sp.map { try Spectrum(eigenvalues: $0.eigenvalues.map { $0 * s }) }
            let a = try! TwoScale.dimension(spectra: sp, dimension: d, eps: [e], zeta: 0.6)[0]
            let b = try! TwoScale.dimension(spectra: scaled, dimension: d, eps: [e], zeta: 0.6)[0]
            #expect(abs(a - b) <= 1e-9 * max(1, abs(a)))
        }
    }

    @Test func strictlyIncreasingInZeta() async {
        await propertyCheck(count: 200, input: Gen.int(in: 1...20), Gen.double(in: 1e-5...0.95)) { d, e in
            let sp = try! randomSpectra(seed: UInt64(d) &+ UInt64(e * 1e9), d: d, draws: 3)
            let zs = stride(from: 0.0, to: 0.99, by: 0.07).map { $0 }
            let v = zs.map { try! TwoScale.dimension(spectra: sp, dimension: d, eps: [e], zeta: $0)[0] }
            for (a, b) in zip(v, v.dropFirst()) { #expect(b > a) }
        }
    }

    @Test func upperBoundBySqrtDeterminant() async {
        // d_ζ ≤ d + log E det(I + F̂^{1/2}) / |log ε|.
        await propertyCheck(count: 200, input: Gen.int(in: 1...20), Gen.double(in: 0...0.99), Gen.double(in: 1e-6...0.99)) { d, z, e in
            let sp = try! randomSpectra(seed: UInt64(d) &* 101 &+ UInt64(z * 1e7), d: d, draws: 4)
            let v = try! TwoScale.dimension(spectra: sp, dimension: d, eps: [e], zeta: z)[0]
            let c = Double(d) / (sp.reduce(0) { $0 + $1.trace } / Double(sp.count))
            let logE = LogSpace.logMeanExp(sp.map { $0.logDetSqrt(scale: c.squareRoot()) })
            #expect(v <= Double(d) + logE / abs(log(e)) + 1e-9)
        }
    }

    @Test func divergesAsEpsilonToOne() throws {
        let sp = try randomSpectra(seed: 5, d: 6, draws: 3)
        let v = try TwoScale.dimension(spectra: sp, dimension: 6, eps: [0.9, 0.99, 0.9999, 1 - 1e-9], zeta: 2.0 / 3.0)
        #expect(v[1] > v[0] && v[2] > v[1] && v[3] > v[2])
        #expect(v[3] > 1e6)
    }

    @Test func smallEpsilonLimitSeesTheRank() throws {
        // ε → 0: d_ζ → ζd + (1−ζ)·r with r the a.e. rank (here 3 of 8).
        let sp = try randomSpectra(seed: 9, d: 8, draws: 5, rank: 3)
        let z = 2.0 / 3.0
        let target = z * 8 + (1 - z) * 3
        let eps = [1e-10, 1e-50, 1e-150, 1e-300]
        let v = try TwoScale.dimension(spectra: sp, dimension: 8, eps: eps, zeta: z)
        let errs = v.map { abs($0 - target) }
        for (a, b) in zip(errs, errs.dropFirst()) { #expect(b < a) }
        #expect(errs.last! < 0.02)
    }

    @Test func logSumExpAgreesWithDirectSumAndNeverOverflows() async {
        await propertyCheck(count: 300, input: Gen.double(in: -50...50).array(of: 1...20)) { xs in
            let direct = log(xs.reduce(0) { $0 + exp($1) })
            #expect(abs(LogSpace.logSumExp(xs) - direct) < 1e-12 * max(1, abs(direct)))
        }
        let big = [1e5, 1e5 + 1, 1e5 - 3]
        #expect(abs(LogSpace.logSumExp(big) - (1e5 + 1 + log(1 + exp(-1) + exp(-4)))) < 1e-9)
        #expect(LogSpace.logSumExp([Double]()) == -.infinity)
    }
}
