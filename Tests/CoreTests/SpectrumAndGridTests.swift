import Foundation
@testable import Sampling
import Testing
@testable import TwoScaleCore
@testable import TwoScaleFormats

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

@Suite struct JSONTests {
    @Test func deterministicOrderedOutput() throws {
        let v = JSONValue.object([("b", .int(1)), ("a", .numbers([0.1, 2, 1e-7])), ("s", .string("x\"y\n"))])
        let text = try v.serialized()
        #expect(text == "{\n  \"b\": 1,\n  \"a\": [0.1, 2, 1e-07],\n  \"s\": \"x\\\"y\\n\"\n}\n")
        #expect(try JSONValue.parse(Data(text.utf8), source: "t") == v)
    }

    @Test func refusesNonFinite() {
        #expect(throws: TwoScaleError.self) { try JSONValue.double(.nan).serialized() }
        #expect(throws: TwoScaleError.self) { try JSONValue.array([.double(.infinity)]).serialized() }
    }

    @Test func parserReportsLine() {
        do {
            _ = try JSONValue.parse(Data("{\n\"a\": [1,\n 2,,]\n}".utf8), source: "w.json")
            Issue.record("no error")
        } catch let e as TwoScaleError {
            #expect(e.message.hasPrefix("w.json:3"))
        } catch { Issue.record("\(error)") }
    }
}

@Suite struct RandomTests {
    @Test func streamsAreReproducibleAndDistinct() {
        var a = Xoshiro256(seed: 1, stream: [2, 3])
        var b = Xoshiro256(seed: 1, stream: [2, 3])
        var c = Xoshiro256(seed: 1, stream: [3, 2])
        let xa = (0..<5).map { _ in a.next() }
        #expect(xa == (0..<5).map { _ in b.next() })
        #expect(xa != (0..<5).map { _ in c.next() })
    }

    @Test func normalMoments() {
        var r = Xoshiro256(seed: 42)
        let n = 200_000
        var s = 0.0, s2 = 0.0
        for _ in 0..<n { let z = r.normal(); s += z; s2 += z * z }
        #expect(abs(s / Double(n)) < 0.01)
        #expect(abs(s2 / Double(n) - 1) < 0.01)
    }
}
