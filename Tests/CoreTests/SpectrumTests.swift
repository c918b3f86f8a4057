import Foundation
import Testing
@testable import TwoScaleCore

@Suite struct SpectrumTests {
    @Test func clampsRoundOffAndCountsIt() throws {
        let s = try Spectrum(eigenvalues: [4, 1, -1e-12, 0, -3e-9])
        #expect(s.clamped == 2)
        #expect(s.roots == [2, 1])
        #expect(s.trace == 5)
    }

    @Test func rejectsClearlyNegative() {
        #expect(throws: TwoScaleError.self) { try Spectrum(eigenvalues: [1, -1e-6]) }
        #expect(throws: TwoScaleError.self) { try Spectrum(eigenvalues: [1, .nan]) }
        #expect(throws: TwoScaleError.self) { try Spectrum(eigenvalues: [.infinity]) }
    }

    @Test func roundOffIsRelativeToTheWholeMatrix() throws {
        // A nearly-zero block of a matrix whose largest eigenvalue is 1: −2e-14 is round-off there.
        #expect(throws: TwoScaleError.self) { try Spectrum(eigenvalues: [4.3e-9, -2e-14]) }
        let s = try Spectrum(eigenvalues: [4.3e-9, -2e-14], scale: 1)
        #expect(s.clamped == 1 && s.roots.count == 1)
        #expect(Spectrum.largestMagnitude([[1, -3], [2]]) == 3)
    }

    @Test func thresholdIsRelative() throws {
        // exactly at −1e-8·λ_max is still round-off; just beyond is an error.
        #expect(try Spectrum(eigenvalues: [100, -1e-6]).clamped == 1)
        #expect(throws: TwoScaleError.self) { try Spectrum(eigenvalues: [100, -1.01e-6]) }
    }
}
