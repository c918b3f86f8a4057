@testable import Fisher
import Foundation
@testable import Networks
import RandomStreams
import TestSupport
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// The tangent majorant of a Gaussian unit's log-factor (`UnitTangent`, docs/METHOD.md §19, "The first block,
/// sampled"): exact at its tangent point, its slopes the derivatives there (central differences), and above the
/// unit's log-factor at every weight tried, on both of its routes (rows ≥ parameters and fewer rows).
final class UnitTangentTests: XCTestCase {
    typealias R = FisherReference

    func model(_ arch: String, _ act: Activation, rows: Int, seed: UInt64, bias: Bool = false) throws -> MarkovFisher {
        let q = Int(arch.split(separator: "-")[0])!
        return try MarkovFisher(architecture: try Architecture(parsing: arch, bias: bias), activation: act, data: R.gaussianData(rows, q, seed: seed),
                                sigma2: 0.3, noiseSamples: 1, noiseSeed: 7)
    }

    /// `Σ_k log(1 + s√λ_k)` over the eigenvalues of `σ⁻²/S Σ_i a_i x̃_i x̃_iᵀ`, computed directly (from `ỹ_i = √a_i x̃_i`).
    func logFactor(_ m: MarkovFisher, _ x: UnitInputs, weights a: [Double], scale s: Double) throws -> Double {
        let xa = x.patches
        var y = xa
        for i in 0..<xa.rows { for j in 0..<xa.cols { y[i, j] = xa[i, j] * a[i].squareRoot() } }
        // The smaller Gram: the larger one's zero eigenvalues come out near 1e-16, whose roots would count.
        let eig = try SymmetricEigen.eigenvalues(BLAS.gram(y, transpose: xa.rows >= xa.cols, alpha: 1 / (m.sigma2 * Double(xa.rows))))
        return eig.reduce(0) { $0 + Foundation.log1p(s * Swift.max(0, $1).squareRoot()) }
    }

    func testExactAtItsPointWithTheDerivativesThere() throws {
        for (arch, rows, bias) in [("5-3-2", 30, true), ("12-3-2", 6, false), ("4-2-2", 4, false)] {
            let m = try model(arch, .relu, rows: rows, seed: 3, bias: bias)
            let x = m.unitInputs(m.firstBlockInputs, block: 0)
            for s in [0.5, 5, 50] {
                let t = try m.unitTangent(inputs: x, scale: s)
                let a0 = [Double](repeating: 0.5, count: x.patches.rows)
                let exact = try logFactor(m, x, weights: a0, scale: s)
                XCTAssertEqual(t.logBound(weights: a0), exact, accuracy: 1e-9 * Swift.max(1, exact), "\(arch) s = \(s)")
                for i in [0, x.patches.rows / 2, x.patches.rows - 1] {
                    let h = 1e-5
                    var up = a0, down = a0
                    up[i] += h
                    down[i] -= h
                    let fd = (try logFactor(m, x, weights: up, scale: s) - (try logFactor(m, x, weights: down, scale: s))) / (2 * h)
                    XCTAssertEqual(t.slopes[i], fd, accuracy: 1e-5 * Swift.max(1, Swift.abs(fd)), "\(arch) s = \(s) row \(i)")
                }
            }
        }
    }

    /// Above `log g(w)` at 2 000 uniform weights on relu, tanh and sigmoid units, both routes, two boxes.
    func testAboveTheFactorAtEveryWeight() throws {
        var rng = Xoshiro256(seed: 5, stream: [1])
        for (arch, rows, bias) in [("5-3-2", 30, true), ("12-3-2", 6, false)] {
            for act in [Activation.relu, .tanh, .sigmoid] {
                let m = try model(arch, act, rows: rows, seed: 8, bias: bias)
                let x = m.unitInputs(m.firstBlockInputs, block: 0)
                for box: ClosedRange<Double> in [-1...1, -0.5...2] {
                    for s in [1.0, 30] {
                        let t = try m.unitTangent(inputs: x, scale: s)
                        var least = Double.infinity
                        for _ in 0..<2000 {
                            let w = (0..<x.patches.cols).map { _ in rng.uniform(box.lowerBound, box.upperBound) }
                            let z = BLAS.product(x.patches, Matrix(rows: w.count, cols: 1, data: w))
                            let a = z.data.map { let d = act.derivative($0); return d * d }
                            let g = LogSpace.logDetSqrt(roots: try m.unitRoots(w, inputs: x), scale: s)
                            least = Swift.min(least, t.logBound(weights: a) - g)
                        }
                        XCTAssertGreaterThanOrEqual(least, -1e-9, "\(arch) \(act) \(box) s = \(s)")
                    }
                }
            }
        }
    }

    /// Rank-deficient inputs, where the computed factor keeps round-off roots and the tangent leaves directions
    /// out: a duplicated feature and a constant one beside the bias (rows ≥ parameters), and repeated rows (fewer
    /// rows than parameters). The tangent stays above the computed `log g(w)` at 2 000 weights, at scales up to
    /// 10⁶, where a round-off root would show.
    func testAboveTheFactorOnRankDeficientInputs() throws {
        var rng = Xoshiro256(seed: 9, stream: [2])
        let g = R.gaussianData(30, 4, seed: 2)
        var wide = Matrix(rows: 30, cols: 6)
        for i in 0..<30 {
            for j in 0..<4 { wide[i, j] = g[i, j] }
            wide[i, 4] = g[i, 0]
            wide[i, 5] = 1
        }
        let few = R.gaussianData(3, 12, seed: 4)
        var repeated = Matrix(rows: 6, cols: 12)
        for i in 0..<6 { for j in 0..<12 { repeated[i, j] = few[i % 3, j] } }
        for (arch, data, bias) in [("6-3-2", wide, true), ("12-3-2", repeated, false)] {
            let m = try MarkovFisher(architecture: try Architecture(parsing: arch, bias: bias), activation: .relu, data: data,
                                     sigma2: 0.3, noiseSamples: 1, noiseSeed: 7)
            let x = m.unitInputs(m.firstBlockInputs, block: 0)
            for s in [1.0, 1e3, 1e6] {
                let t = try m.unitTangent(inputs: x, scale: s)
                var least = Double.infinity
                for _ in 0..<2000 {
                    let w = (0..<x.patches.cols).map { _ in rng.uniform(-1, 1) }
                    let logG = LogSpace.logDetSqrt(roots: try m.unitRoots(w, inputs: x), scale: s)
                    least = Swift.min(least, m.tangentLogBound(t, weights: w, inputs: x) - logG)
                }
                XCTAssertGreaterThanOrEqual(least, -1e-9, "\(arch) s = \(s)")
            }
        }
    }
}
