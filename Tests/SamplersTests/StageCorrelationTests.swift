import Foundation
@testable import Samplers
import Testing

/// `StageSum.correlated`: stage 1's variance and the later stages' joined at the Cauchy–Schwarz bound
/// `(√V₁ + √V_later)²`, the later part being what the sum holds beyond stage 1's.
@Suite struct StageCorrelationTests {
    @Test func handCases() {
        // V₁ = 4, later 9: (2 + 3)² = 25, against the sum's 13.
        #expect(StageSum.correlated(first: 4, total: 13) == 25)
        // Either part zero: nothing to correlate, the sum itself.
        #expect(StageSum.correlated(first: 0, total: 7) == 7)
        #expect(StageSum.correlated(first: 7, total: 7) == 7)
        // A sum below stage 1's (rounding) leaves stage 1's.
        #expect(StageSum.correlated(first: 7, total: 6.9) == 7)
    }

    /// The bound is the largest variance two parts of these variances can have together: perfectly
    /// correlated draws A and B = (σ_B/σ_A)·A reach it, independent ones only the sum.
    @Test func perfectlyCorrelatedPartsReachTheBound() {
        let a = (0..<1000).map { Foundation.sin(Double($0)) }
        let b = a.map { 1.5 * $0 }
        func variance(_ x: [Double]) -> Double {
            let m = x.reduce(0, +) / Double(x.count)
            return x.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(x.count)
        }
        let va = variance(a), vb = variance(b), vsum = variance(zip(a, b).map { $0 + $1 })
        #expect(Swift.abs(StageSum.correlated(first: va, total: va + vb) - vsum) < 1e-12 * vsum)
    }
}
