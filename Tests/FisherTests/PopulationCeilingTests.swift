@testable import Fisher
import Foundation
@testable import Networks
import RandomStreams
import TestSupport
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// The population Fisher's upper end (docs/METHOD.md §19, "The population Fisher"): inputs `N(0, I)` and
/// the hidden noise averaged. The population is stood in for by a model on many Gaussian inputs, one noise
/// draw each, whose Fisher matrix is the population's up to sampling error.
final class PopulationCeilingTests: XCTestCase {
    func gaussian(_ n: Int, _ q: Int, seed: UInt64) -> Matrix {
        var rng = Xoshiro256(seed: seed, stream: [41])
        return Matrix(rows: n, cols: q, data: (0..<(n * q)).map { _ in rng.normal() })
    }

    func model(_ arch: String, _ act: Activation, inputs n: Int, bias: Bool = false, seed: UInt64 = 1) throws -> MarkovFisher {
        let a = try Architecture(parsing: arch, bias: bias)
        return try MarkovFisher(architecture: a, activation: act, data: gaussian(n, a.stack[0].inputSize, seed: seed), sigma2: 0.5,
                                noiseSamples: 1, noiseSeed: seed + 7)
    }

    /// The 1-1-2 networks (relu and tanh, d = 3) on 600 Gaussian inputs: `log Z` by midpoint quadrature over
    /// θ (c = 1) lies below the population upper end at three ε, which is not vacuous (within 1 nat; it is
    /// 0.3–0.8 above).
    func testPopulationUpperEndHoldsOnATinyNetwork() throws {
        for act in [Activation.relu, .tanh] {
            let m = try model("1-1-2", act, inputs: 600)
            let ceilings = try m.populationCeilings(box: -1...1)
            XCTAssertNotNil(ceilings[1].mean)
            for e in [1e-3, 0.05, 0.4] {
                let s = ScaleParameters.t(eps: e, zeta: 2.0 / 3)
                let exact = try tinyNetworkQuadrature(m, scale: s, nw: 40, nv: 12).logZ
                let upper = ceilings.reduce(0) { $0 + $1.upperLogBound(scale: s) }
                XCTAssertGreaterThanOrEqual(upper, exact - 0.05, "\(act) ε = \(e)")
                XCTAssertLessThan(upper, exact + 1, "\(act) ε = \(e)")
            }
        }
    }

    /// At random and vertex weights, every block's log-determinant of the Fisher matrix on 4 000 Gaussian inputs
    /// lies below its population majorant; and the majorant's mean over the previous layer's weights (by
    /// Monte Carlo, the earlier layers fixed) below its `MeanCeiling`: relu, tanh and sigmoid, with biases.
    func testPopulationMajorantsHold() throws {
        let scales = [0.3, 3, 30, 300]
        var rng = Xoshiro256(seed: 5, stream: [42])
        for act in [Activation.relu, .tanh, .sigmoid] {
            let m = try model("3-4-3-3", act, inputs: 4000, bias: true, seed: 2)
            let box: ClosedRange<Double> = act == .sigmoid ? -0.5...1.5 : -1...1
            let ceilings = try m.populationCeilings(box: box)
            for trial in 0..<6 {
                var net = Network.uniform(architecture: m.architecture, activation: m.activation, box: box, rng: &rng)
                if trial % 2 == 1 {
                    for l in net.blocks.indices { for i in net.blocks[l].indices {
                        net.blocks[l][i] = rng.uniform() < 0.5 ? box.lowerBound : box.upperBound } }
                }
                for b in m.blockDimensions.indices {
                    let x = try m.blockInputs(net, block: b)
                    let roots = try Spectrum(eigenvalues: try m.blockEigenvalues(net, block: b, inputs: x)).roots
                    for s in scales {
                        let g = LogSpace.logDetSqrt(roots: roots, scale: s)
                        XCTAssertLessThanOrEqual(g, ceilings[b].logBound(scale: s) + 0.05, "\(act) block \(b) s = \(s)")
                    }
                }
            }
            // The mean of block 1's majorant over the first layer's weights.
            let layer = m.architecture.parametricLayers[0]
            let st = m.architecture.structure(layer: m.architecture.parametricLayers[1])
            let mean = try XCTUnwrap(ceilings[1].mean)
            var logs = [[Double]](repeating: [], count: scales.count)
            var net = Network.uniform(architecture: m.architecture, activation: m.activation, box: box, rng: &rng)
            for _ in 0..<400 {
                for i in net.blocks[layer].indices { net.blocks[layer][i] = rng.uniform(box.lowerBound, box.upperBound) }
                let x = try m.blockInputs(net, block: 1)
                let xa = m.architecture.parametric(layer: m.architecture.parametricLayers[1]).patches(x)
                let eig = try SymmetricEigen.eigenvalues(BLAS.gram(xa, transpose: true, alpha: 1 / Double(x.rows)))
                for (k, s) in scales.enumerated() {
                    logs[k].append(Double(st.units) * eig.reduce(0) { $0 + Foundation.log1p(s * (mean.factor * Swift.max(0, $1)).squareRoot()) })
                }
            }
            for (k, s) in scales.enumerated() {
                XCTAssertLessThanOrEqual(LogSpace.logMeanExp(logs[k]), mean.logBound(scale: s) + 0.05, "\(act) mean s = \(s)")
            }
        }
    }

    /// `E_θ Tr F` of the population by Monte Carlo (2 000 draws, each on 64 fresh inputs and noise): the
    /// deterministic bound lies above it, within 10% for relu on a symmetric box (exact there but for the
    /// softmax block); c's interval from the population draws holds `d / E Tr F`.
    func testPopulationTraceAndScale() async throws {
        for (act, bias) in [(Activation.relu, false), (.relu, true), (.tanh, true)] {
            let m = try model("3-4-3", act, inputs: 8, bias: bias, seed: 3)
            let box: ClosedRange<Double> = -1...1
            var traces: [Double] = []
            for k in 0..<2000 {
                var rng = Xoshiro256(seed: 9, stream: [43, UInt64(k)])
                let x = Matrix(rows: 64, cols: 3, data: (0..<192).map { _ in rng.normal() })
                let batch = try MarkovFisher(architecture: m.architecture, activation: act, data: x, sigma2: 0.5, noiseSamples: 1,
                                             noiseSeed: rng.next())
                traces.append(try batch.uniformTrace(box: box, rng: &rng))
            }
            let mean = traces.reduce(0, +) / Double(traces.count)
            let sd = (traces.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(traces.count - 1)).squareRoot()
            let se = sd / Double(traces.count).squareRoot()
            let bound = m.populationMeanTraceBound(box: box)
            XCTAssertGreaterThanOrEqual(bound, mean - 4 * se, "\(act) bias \(bias)")
            if act == .relu { XCTAssertLessThanOrEqual(bound, 1.1 * mean, "\(act) bias \(bias)") }
            let c = try await m.populationScaleRange(.trace, box: box, seed: 4, draws: 2000, delta: 0.01, threads: 2)
            let d = Double(m.architecture.parameterCount)
            XCTAssertLessThanOrEqual(c.range.lowerBound, d / (mean - 4 * se), "\(act) bias \(bias)")
            XCTAssertGreaterThanOrEqual(c.range.upperBound, d / (mean + 4 * se), "\(act) bias \(bias)")
        }
    }

    /// The population's tilted chain (docs/METHOD.md §19, "Upper end, tilted"): `log E_θ Π_{m≥1} M_m(θ)` over 1 500
    /// uniform draws of every weight, each M_m the later block's majorant at the Π of 4 000 Gaussian inputs (one noise
    /// draw each, the population's stand-in), lies below the chain's sum (within three standard errors and the
    /// stand-in's 0.05) on MLPs of three and four blocks (relu, tanh, sigmoid), at four scales. The sum is never above
    /// the untilted one and is below it somewhere. A later block's untilted bound in the mean is still
    /// `√(bound on E act(z)² at E z² ≤ κ T + σ²)` per unit (no cross term with the averaged noise), with the
    /// sub-Gaussian scale `max|act'| √T ℓ/π`: the draws here cannot see a wrong scale (a fifth of it passes them).
    func testPopulationTiltedChain() throws {
        let cases: [(String, Activation, ClosedRange<Double>)] = [
            ("5-4-3-3", .relu, -1...1), ("4-5-4-3-3", .relu, -1...1), ("5-4-3-3", .tanh, -1...1), ("5-4-3-3", .sigmoid, -0.5...1.5),
        ]
        let scales = [0.3, 3, 30, 300]
        var rng = Xoshiro256(seed: 31, stream: [44])
        var checked = 0, tighter = 0
        for (arch, act, box) in cases {
            let m = try model(arch, act, inputs: 4000, bias: true, seed: 3)
            let ceilings = try m.populationCeilings(box: box)
            let chain = try XCTUnwrap(TiltedChain(ceilings: ceilings), arch)
            let L = m.blockDimensions.count
            let width = box.upperBound - box.lowerBound, meanW = (box.lowerBound + box.upperBound) / 2
            for b in 2..<L {
                let q = Double(m.architecture.structure(layer: m.architecture.parametricLayers[b - 1]).unitDimension)
                let trace = try XCTUnwrap(ceilings[b - 1].inputTrace)
                let ez2 = (width * width / 12 + q * meanW * meanW) * trace
                let expected = (act.secondMomentBound(ez2, symmetricRelu: act == .relu && box.lowerBound == -box.upperBound) + m.sigma2).squareRoot()
                let bound = try XCTUnwrap(ceilings[b].mean)
                for mean in bound.means { XCTAssertEqual(mean, expected, accuracy: 1e-12 * expected, "\(arch) \(act) block \(b)") }
                // F_j is Lipschitz in unit j's weights with constant max|act'| · λ_max(Π)^{1/2}, λ_max(Π) ≤ T.
                let spread = m.derivativeBound * trace.squareRoot() * width / Double.pi
                for l in bound.spreads { XCTAssertEqual(l, spread, accuracy: 1e-12 * spread, "\(arch) \(act) block \(b)") }
            }
            tighter += try LaterMajorants.checkChain(chain, m, ceilings: ceilings, box: box, scales: scales, draws: 1500, slack: 0.05,
                                                     rng: &rng, "\(arch) \(act)")
            checked += scales.count
        }
        XCTAssertEqual(checked, 16)
        XCTAssertGreaterThan(tighter, 0, "the tilt should tighten some case")
    }

    /// The population Fisher is refused where the law is unknown: a CNN.
    func testPopulationNeedsAnMLP() throws {
        let m = try MarkovFisher(architecture: try Architecture(parsing: "4x4x1-conv2k3-3"), activation: .relu,
                                 data: gaussian(3, 16, seed: 1), sigma2: 0.5, noiseSamples: 1, noiseSeed: 1)
        XCTAssertThrowsError(try m.populationCeilings(box: -1...1))
    }
}
