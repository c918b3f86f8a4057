import Bounds
import Foundation
import ToyModels
import TwoScaleCore
import XCTest

final class GeneralizationBoundTests: XCTestCase {
    func bound(gamma: Double = 1, zeta: Double = 2.0 / 3.0, C: Double = 1, H: Double = 1, K: Double = 1) throws -> GeneralizationBound {
        try GeneralizationBound(gamma: gamma, zeta: zeta, constants: BoundConstants(C: C, H: H, K: K))
    }

    /// The reference values of docs/METHOD.md §15.
    func testEpsilonReferenceValues() throws {
        let cases: [(Double, Double, Double)] = [
            (1e3, 1, 0.154793), (1e4, 1, 0.072712), (1e5, 1, 0.033338), (1e6, 1, 0.015054), (1e4, 0.5, 0.094295),
        ]
        for (n, g, want) in cases {
            XCTAssertEqual(try GeneralizationBound.epsilon(n: n, gamma: g), want, accuracy: 6e-7, "n = \(n), γ = \(g)")
        }
        // Independent formula: (log n/(γn))^(3/8) = exp(3/8·(log log n − log γ − log n)).
        let e = try GeneralizationBound.epsilon(n: 12345, gamma: 0.3)
        XCTAssertEqual(e, exp(0.375 * (log(log(12345.0)) - log(0.3) - log(12345.0))), accuracy: 1e-14)
        XCTAssertEqual(try bound(C: 2.5).deviation(n: 1000), 2.5 * 0.154793, accuracy: 2e-6)
    }

    func assertUsageError(_ body: () throws -> Void, contains text: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            try body()
            XCTFail("no error", file: file, line: line)
        } catch let e as TwoScaleError {
            XCTAssertEqual(e.kind, .usage, file: file, line: line)
            XCTAssertTrue(e.message.contains(text), "message '\(e.message)' lacks '\(text)'", file: file, line: line)
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
        }
    }

    func testValidation() throws {
        assertUsageError({ _ = try self.bound(gamma: 0) }, contains: "\(Setting.gamma)")
        assertUsageError({ _ = try self.bound(gamma: 1.5) }, contains: "\(Setting.gamma)")
        assertUsageError({ _ = try self.bound(gamma: -.infinity) }, contains: "\(Setting.gamma)")
        assertUsageError({ _ = try GeneralizationBound.epsilon(n: 1, gamma: 1) }, contains: "≥ 2")
        // log 2/(0.1·2) > 1: ε_n ≥ 1, and the message names n.
        assertUsageError({ _ = try GeneralizationBound.epsilon(n: 2, gamma: 0.1) }, contains: "n = 2")
        XCTAssertNil(GeneralizationBound.epsilonIfValid(n: 10, gamma: 0.1))   // log 10 = 2.30 > 1
        XCTAssertNotNil(GeneralizationBound.epsilonIfValid(n: 100, gamma: 0.1))
        assertUsageError({ _ = try self.bound(zeta: 1) }, contains: "\(Setting.zeta)")
        assertUsageError({ _ = try self.bound(zeta: -0.1) }, contains: "\(Setting.zeta)")
        XCTAssertNotNil(try bound(zeta: 0.5).zetaWarning)
        XCTAssertNil(try bound(zeta: 0.6667).zetaWarning)
        XCTAssertNil(try bound(zeta: 0.9).zetaWarning)
        assertUsageError({ _ = try BoundConstants(C: 0) }, contains: "\(Setting.constantC)")
        assertUsageError({ _ = try BoundConstants(H: -1) }, contains: "\(Setting.constantH)")
        assertUsageError({ _ = try BoundConstants(K: .nan) }, contains: "\(Setting.constantK)")
    }

    /// F̂ = I (equal constant λ): d_ζ(ε) = d(1 + log(1 + ε^(1−ζ))/|log ε|) in closed form.
    func testLogTailOfConstantToyModelByHand() throws {
        XCTAssertEqual(try ToyModel(family: .constant, lambdas: [1]).twoScaleDimension(eps: 0.01, zeta: 2.0 / 3, normalization: .trace),
                       1.0423674, accuracy: 1e-7)
        let d = 5.0, zeta = 0.7, gamma = 0.5, H = 3.0, K = 0.8
        let model = try ToyModel(family: .constant, lambdas: [2.5], dimension: 5)
        let b = try bound(gamma: gamma, zeta: zeta, C: 1, H: H, K: K)
        for n in [50, 1000, 123_456, 10_000_000] {
            let p = try b.point(n: n) { try model.twoScaleDimension(eps: $0, zeta: zeta, normalization: .trace) }
            let eps = pow(log(Double(n)) / (gamma * Double(n)), 0.375)
            let dz = d * (1 + log(1 + pow(eps, 1 - zeta)) / abs(log(eps)))
            let tail = log(H) - dz * log(eps) - K / gamma * log(Double(n))
            XCTAssertEqual(p.epsN, eps, accuracy: 1e-14)
            XCTAssertEqual(p.dZeta, dz, accuracy: 1e-12 * dz)
            XCTAssertEqual(p.logTail, tail, accuracy: 1e-11 * max(1, abs(tail)))
            XCTAssertEqual(p.deviation, eps, accuracy: 1e-15)
        }
    }

    /// The tail stays finite where the raw power would overflow (d ~ 10⁴).
    func testLogTailLargeDimensionIsFinite() throws {
        let b = try bound()
        let p = try b.point(n: 100) { _ in 20_000 }
        XCTAssertTrue(p.logTail.isFinite)
        XCTAssertGreaterThan(p.logTail, 700)  // e^700 and beyond: the raw power is not representable
    }

    func bruteForce(_ b: GeneralizationBound, delta: Double, range: ClosedRange<Int>, source: TwoScaleSource) throws -> Int? {
        for n in range {
            guard let e = GeneralizationBound.epsilonIfValid(n: Double(n), gamma: b.gamma) else { continue }
            if b.logTail(n: n, epsN: e, dZeta: try source(e)) < log(delta) { return n }
        }
        return nil
    }

    /// The grid + bisection search agrees with a scan over every integer.
    func testSmallestNMatchesBruteForce() throws {
        let model = try ToyModel(family: .constant, lambdas: [4, 0.01, 1, 0.3])
        let range = 2...20_000
        var found = 0
        for (gamma, zeta, H, K, delta) in [(0.5, 0.8, 1e4, 1.5, 1e-2), (0.7, 0.7, 1e8, 3.0, 1e-5), (1.0, 0.95, 1e3, 2.5, 0.05),
                                           (0.4, 2.0 / 3, 1e2, 1.2, 0.1), (0.5, 0.8, 5.0, 1.0, 0.01), (1.0, 2.0 / 3, 1.0, 1.0, 0.05)] {
            let b = try bound(gamma: gamma, zeta: zeta, H: H, K: K)
            let src: TwoScaleSource = { try model.twoScaleDimension(eps: $0, zeta: zeta, normalization: .trace) }
            let want = try bruteForce(b, delta: delta, range: range, source: src)
            let grid = try SampleSizeSearch.smallestN(bound: b, delta: delta, range: range, source: src, exhaustiveLimit: 0)
            let exhaustive = try SampleSizeSearch.smallestN(bound: b, delta: delta, range: range, source: src, exhaustiveLimit: 1 << 30)
            XCTAssertEqual(grid.method, "grid+bisection")
            XCTAssertEqual(exhaustive.method, "exhaustive")
            XCTAssertEqual(grid.n, want, "γ \(gamma) H \(H) K \(K) δ \(delta)")
            XCTAssertEqual(exhaustive.n, want)
            if let w = want {
                found += 1
                XCTAssertLessThan(grid.evaluations, 1200)
                XCTAssertGreaterThan(w, 2)  // a real crossing, not the first point
            }
        }
        XCTAssertEqual(found, 5)  // the last case never crosses in range
    }

    /// A tail that never falls below δ in range gives nil; one below everywhere gives the range start.
    func testSmallestNEdges() throws {
        let b = try bound(H: 1e30, K: 0.01)
        let src: TwoScaleSource = { _ in 3 }
        XCTAssertNil(try SampleSizeSearch.smallestN(bound: b, delta: 0.05, range: 2...1_000_000, source: src).n)
        let easy = try bound(H: 1e-30)
        XCTAssertEqual(try SampleSizeSearch.smallestN(bound: easy, delta: 0.05, range: 10...1_000_000, source: src).n, 10)
        XCTAssertThrowsError(try SampleSizeSearch.smallestN(bound: easy, delta: 1.5, range: 2...10, source: src))
    }

    /// A strongly non-monotone tail (d_ζ oscillating in ε): short ranges are scanned exhaustively, so the
    /// default search is exact there.
    func testNonMonotoneTail() throws {
        let b = try bound(H: 10)
        let src: TwoScaleSource = { eps in 2 + 1.5 * sin(40 / eps) }
        let want = try bruteForce(b, delta: 0.05, range: 2...3000, source: src)
        XCTAssertNotNil(want)
        let r = try SampleSizeSearch.smallestN(bound: b, delta: 0.05, range: 2...3000, source: src)
        XCTAssertEqual(r.method, "exhaustive")
        XCTAssertEqual(r.n, want)
    }
}
