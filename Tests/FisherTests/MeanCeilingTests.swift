@testable import Fisher
import Foundation
@testable import Networks
import RandomStreams
import TestSupport
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// The bracket's upper end in the mean (`MeanCeiling`, docs/METHOD.md §19): it bounds the mean of a later
/// block's majorant over the previous layer's weights, whatever the layers before; it is what the upper end
/// takes where it is smaller than the supremum; and its concentration constant cannot be made smaller.
final class MeanCeilingTests: XCTestCase {
    typealias R = FisherReference

    func model(_ arch: String, _ act: Activation, data: Matrix, bias: Bool = false, r: Int = 2, sigma2: Double = 0.3) throws -> MarkovFisher {
        try MarkovFisher(architecture: try Architecture(parsing: arch, bias: bias), activation: act, data: data, sigma2: sigma2,
                         noiseSamples: r, noiseSeed: 7)
    }

    /// `log E exp(C Σ_i log(1 + s√(f λ_i(Π_m))))` over `draws` uniform draws of block m − 1's weights, the
    /// layers before fixed as in `net`, with the standard error of the mean (relative, on the natural scale).
    func monteCarlo(_ m: MarkovFisher, _ net: Network, block: Int, box: ClosedRange<Double>, scales: [Double], draws: Int,
                    rng: inout Xoshiro256) throws -> [(logMean: Double, relativeSE: Double)] {
        let ceiling = try m.blockCeilings(box: box)[block]
        let factor = block == m.blockDimensions.count - 1 ? 1 / Double(m.architecture.classes)
                                                          : (m.activation == .sigmoid ? 1.0 / 16 : 1) / m.sigma2
        let layer = m.architecture.parametricLayers[block - 1]
        var net = net
        var logs = [[Double]](repeating: [], count: scales.count)
        for _ in 0..<draws {
            for i in net.blocks[layer].indices { net.blocks[layer][i] = rng.uniform(box.lowerBound, box.upperBound) }
            let x = try m.blockInputs(net, block: block)
            let xa = m.architecture.parametric(layer: m.architecture.parametricLayers[block]).patches(x)
            let pi = BLAS.gram(xa, transpose: true, alpha: 1 / Double(x.rows))
            let eig = try SymmetricEigen.eigenvalues(pi)
            for (k, s) in scales.enumerated() {
                logs[k].append(Double(ceiling.copies) * eig.reduce(0) { $0 + Foundation.log1p(s * (factor * Swift.max(0, $1)).squareRoot()) })
            }
        }
        return logs.map { l in
            let top = l.max()!
            let w = l.map { Foundation.exp($0 - top) }
            let mean = w.reduce(0, +) / Double(w.count)
            let variance = w.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(w.count - 1)
            return (top + Foundation.log(mean), (variance / Double(w.count)).squareRoot() / mean)
        }
    }

    /// On MLPs with relu, tanh, sigmoid and linear units, with and without biases, on boxes around 0 and on
    /// one side of it, at five scales: every later block's `MeanCeiling` lies above the Monte Carlo mean of its
    /// majorant over the previous layer's weights (within three standard errors), for the data (block 1) and
    /// for random and vertex weights of the layers before (blocks ≥ 2), and never above the supremum.
    func testMeanCeilingBoundsTheMajorantsMean() throws {
        let cases: [(MarkovFisher, ClosedRange<Double>)] = [
            (try model("5-4-3", .relu, data: R.gaussianData(6, 5, seed: 1)), -1...1),
            (try model("5-4-3-3", .relu, data: R.gaussianData(6, 5, seed: 8), bias: true), -1...1),
            (try model("5-4-3-3", .tanh, data: R.gaussianData(6, 5, seed: 2), bias: true), -1...1),
            (try model("5-4-3-3", .sigmoid, data: R.gaussianData(3, 5, seed: 4)), -0.5...2),
            (try model("5-3-2-3", .linear, data: R.gaussianData(4, 5, seed: 5), bias: true), 0...1),
            (try model("4-3-5-3", .relu, data: R.gaussianData(5, 4, seed: 6), bias: true), -0.5...2),
        ]
        let scales = [0.3, 3, 30, 300, 1e4]
        var rng = Xoshiro256(seed: 21, stream: [2])
        var checked = 0
        for (m, box) in cases {
            let ceilings = try m.blockCeilings(box: box)
            XCTAssertNil(ceilings[0].mean, "the first block has no previous layer")
            for b in 1..<m.blockDimensions.count {
                guard let mean = ceilings[b].mean else { XCTFail("\(m.architecture) block \(b): an MLP block has a mean ceiling"); continue }
                for s in scales { XCTAssertLessThanOrEqual(ceilings[b].upperLogBound(scale: s), ceilings[b].logBound(scale: s)) }
                for trial in 0..<(b == 1 ? 1 : 3) {
                    var net = Network.uniform(architecture: m.architecture, activation: m.activation, box: box, rng: &rng)
                    if trial == 1 {  // a vertex of the box
                        for l in net.blocks.indices { for i in net.blocks[l].indices {
                            net.blocks[l][i] = rng.uniform() < 0.5 ? box.lowerBound : box.upperBound } }
                    }
                    let mc = try monteCarlo(m, net, block: b, box: box, scales: scales, draws: 3000, rng: &rng)
                    for (s, e) in zip(scales, mc) {
                        let bound = mean.logBound(scale: s)
                        XCTAssertLessThanOrEqual(e.logMean - 3 * e.relativeSE, bound + 1e-9, "\(m.architecture) \(m.activation) block \(b) s = \(s)")
                        checked += 1
                    }
                }
            }
        }
        XCTAssertEqual(checked, 5 + 5 * 4 * 5)
    }

    /// The one-unit model's F (its root mean square output over 12 inputs) at 200 000 uniform draws of its six
    /// weights (antithetic: w and −w).
    func oneUnitValues(_ m: MarkovFisher) -> [Double] {
        let x = m.data, v = m.noise[0]
        var rng = Xoshiro256(seed: 4, stream: [3])
        var values: [Double] = []
        for _ in 0..<100_000 {
            let w = (0..<6).map { _ in rng.uniform(-1, 1) }
            for sign in [1.0, -1.0] {
                var sum = 0.0
                for i in 0..<12 {
                    var z = 0.0
                    for k in 0..<6 { z += sign * w[k] * x[i, k] }
                    let h = Swift.max(0, z) + v.data[i]
                    sum += h * h
                }
                values.append((sum / 12).squareRoot())
            }
        }
        return values
    }

    /// Where the proof can be checked closely: one relu unit of six weights (on twelve inputs) feeding eight
    /// Gaussian units, so block 1's Π is 1 × 1 and the majorant is `(1 + s√f F)^8`, F the unit's root mean
    /// square output; its mean over the unit's weights by 200 000 uniform draws (antithetic: w and −w). The
    /// bound holds at every scale and lies far below the supremum at the large ones, and F's moment
    /// generating function lies below the log-Sobolev one.
    func testMeanCeilingAgainstOneUnit() throws {
        let m = try model("6-1-8-3", .relu, data: R.gaussianData(12, 6, seed: 3), r: 1, sigma2: 0.5)
        let box: ClosedRange<Double> = -1...1
        let ceiling = try m.blockCeilings(box: box)[1]
        let mean = try XCTUnwrap(ceiling.mean)
        XCTAssertEqual(mean.copies, 8)
        XCTAssertEqual(mean.ones, 0)
        XCTAssertEqual(mean.factor, 1 / 0.5)
        let values = oneUnitValues(m)
        for s in [1.0, 10, 100, 1e3] {
            let alpha = s * mean.factor.squareRoot()
            let exact = LogSpace.logMeanExp(values.map { 8 * Foundation.log1p(alpha * $0) })
            XCTAssertLessThanOrEqual(exact, mean.logBound(scale: s) + 1e-9, "s = \(s)")
            // Hölder's q-th moments, `(1/q) log E M^q`: bounded at q = 2 and 5, and rising with q.
            for q in [2.0, 5] {
                let moment = LogSpace.logMeanExp(values.map { q * 8 * Foundation.log1p(alpha * $0) }) / q
                XCTAssertLessThanOrEqual(moment, mean.logBound(scale: s, power: q) + 1e-9, "s = \(s), q = \(q)")
                XCTAssertGreaterThan(mean.logBound(scale: s, power: q), mean.logBound(scale: s), "s = \(s), q = \(q)")
            }
            if s >= 100 { XCTAssertLessThan(mean.logBound(scale: s), ceiling.logBound(scale: s) - 1, "s = \(s): the mean is not the supremum") }
        }
        // The concentration itself, on this unit's F: log E e^{λ(F − EF)} ≤ λ² L² / 2 at every λ tried.
        let average = values.reduce(0, +) / Double(values.count)
        for lambda in [-3.0, -0.3, 0.1, 1, 3] {
            let mgf = LogSpace.logMeanExp(values.map { lambda * ($0 - average) })
            XCTAssertLessThanOrEqual(mgf, lambda * lambda * mean.spreads[0] * mean.spreads[0] / 2 + 1e-3, "λ = \(lambda)")
        }
    }

    /// The log-Sobolev scale `Lℓ/π` against linear functions `F = a·w` of weights uniform on `[lo, hi]^3`,
    /// whose log-moment generating function is exact (`Σ_i log(sinh(x_i)/x_i)`, `x_i = λ a_i ℓ/2`): it bounds
    /// it at every λ, and a third of its constant (the scale over √3) does not.
    func testAWrongConcentrationConstantFails() {
        let a = [0.7, -1.9, 0.4], width = 2.5
        let lipschitz = a.reduce(0) { $0 + $1 * $1 }.squareRoot()
        let spread = MeanCeiling.spread(lipschitz: lipschitz, width: width), wrong = spread / 3.0.squareRoot()
        var failed = 0
        for lambda in [0.01, 0.1, 0.5, 1, 3, 10, 100] {
            let exact = a.reduce(0) { total, ai in
                let x = Swift.abs(lambda * ai * width / 2)
                return total + Foundation.log(Foundation.sinh(x) / x)
            }
            XCTAssertLessThanOrEqual(exact, lambda * lambda * spread * spread / 2, "λ = \(lambda)")
            if exact > lambda * lambda * wrong * wrong / 2 { failed += 1 }
        }
        XCTAssertGreaterThanOrEqual(failed, 3, "a third of the log-Sobolev constant should fail at small λ")
    }

    /// The moment bound's arithmetic: with no spread it is exactly `C log(1 + α μ̄)`; it grows with the spread;
    /// and against a two-point law of known spread (F = μ ± σ, sub-Gaussian with scale σ) it lies above
    /// the exact `log E (1 + αF)^C`.
    func testMomentBound() {
        XCTAssertEqual(MeanCeiling.logMoment(copies: 6, alpha: 3, mean: 2, spread: 0), 6 * Foundation.log(7), accuracy: 1e-12)
        XCTAssertGreaterThan(MeanCeiling.logMoment(copies: 6, alpha: 3, mean: 2, spread: 0.5), 6 * Foundation.log(7))
        for (c, alpha, mu, sigma) in [(1.0, 0.5, 1.0, 0.3), (6, 3, 2, 0.5), (25, 10, 4, 1.5)] {
            let exact = Foundation.log((Foundation.pow(1 + alpha * (mu + sigma), c) + Foundation.pow(1 + alpha * (mu - sigma), c)) / 2)
            XCTAssertGreaterThanOrEqual(MeanCeiling.logMoment(copies: c, alpha: alpha, mean: mu, spread: sigma), exact)
        }
        // Hölder's q-th moment through `logBound(scale:power:)`, on the two-point law F = 2 ± 0.5 (C = 6, α = 3):
        // `(1/q) log E (1 + αF)^{qC}` lies below the bound at q = 2 and 20, and at q = 20 above the bound at q = 1,
        // so a bound that ignored q would fail.
        let two = MeanCeiling(copies: 6, factor: 1, ones: 0, means: [2], spreads: [0.5], maxima: [2.5])
        for q in [2.0, 20] {
            let exact = Foundation.log((Foundation.pow(8.5, 6 * q) + Foundation.pow(6.5, 6 * q)) / 2) / q
            XCTAssertLessThanOrEqual(exact, two.logBound(scale: 3, power: q) + 1e-9, "q = \(q)")
            if q == 20 { XCTAssertGreaterThan(exact, two.logBound(scale: 3) + 0.2) }
        }
    }
}
