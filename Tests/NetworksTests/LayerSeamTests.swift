@testable import Fisher
import Foundation
@testable import Networks
import RandomStreams
@testable import SpectraStore
import TestSupport
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// A parameter-free layer defined only here, `y = c·x`: it exercises the model seam the way a new layer
/// type would (the network, the trainer and both Fisher routes must take it without any change). A
/// parameter-free layer implements `Layer` alone: sizes, notation, forward, the input's gradient and its
/// path-norm step.
struct ScaleLayer: Layer {
    let size: Int
    let c: Double
    var inputSize: Int { size }
    var outputSize: Int { size }
    var description: String { "scale \(c)" }
    var notationTerm: String { "scale" }
    func forward(_ x: Matrix, parameters θ: [Double]) -> Matrix { Matrix(rows: x.rows, cols: x.cols, data: x.data.map { c * $0 }) }
    func inputGradient(_ g: Matrix, input x: Matrix, parameters θ: [Double]) -> Matrix {
        Matrix(rows: g.rows, cols: g.cols, data: g.data.map { c * $0 })
    }
    /// Every path through the layer carries the weight c.
    func pathNormStep(_ v: Matrix, parameters θ: [Double]) -> Matrix {
        Matrix(rows: v.rows, cols: v.cols, data: v.data.map { c * c * $0 })
    }
}

final class LayerSeamTests: XCTestCase {
    typealias R = FisherReference

    /// Dense layer against loops: forward, the two vector–Jacobian products (exact for a linear map),
    /// and the per-sample gradient rows, whose Gram must equal `addGradientGram`.
    func testDenseLayerAgainstLoops() throws {
        for bias in [false, true] {
            let layer = DenseLayer(inputs: 3, outputs: 4, bias: bias)
            var rng = Xoshiro256(seed: 3)
            let theta = (0..<layer.parameterCount).map { _ in rng.uniform(-1, 1) }
            let x = R.gaussianData(5, 3, seed: 9)
            let z = layer.forward(x, parameters: theta)
            for s in 0..<5 {
                for i in 0..<4 {
                    var v = bias ? theta[12 + i] : 0
                    for j in 0..<3 { v += theta[i * 3 + j] * x[s, j] }
                    XCTAssertEqual(z[s, i], v, accuracy: 1e-14)
                }
            }
            // ⟨G, Z⟩ is linear in x and in θ: its gradients are the VJPs.
            let g = R.gaussianData(5, 4, seed: 10)
            let dx = layer.inputGradient(g, input: x, parameters: theta)
            var dtheta = [Double](repeating: .nan, count: layer.parameterCount)
            dtheta.withUnsafeMutableBufferPointer { layer.parameterGradient(g, input: x, into: $0) }
            for s in 0..<5 {
                for j in 0..<3 {
                    var v = 0.0
                    for i in 0..<4 { v += g[s, i] * theta[i * 3 + j] }
                    XCTAssertEqual(dx[s, j], v, accuracy: 1e-13)
                }
            }
            for i in 0..<4 {
                for j in 0..<3 {
                    var v = 0.0
                    for s in 0..<5 { v += g[s, i] * x[s, j] }
                    XCTAssertEqual(dtheta[i * 3 + j], v, accuracy: 1e-13)
                }
                if bias { XCTAssertEqual(dtheta[12 + i], (0..<5).map { g[$0, i] }.reduce(0, +), accuracy: 1e-13) }
            }
            // Per-sample gradient rows (q = 2 directions per sample) and their Gram.
            let q = 2, n = 3
            let xs = R.gaussianData(n, 3, seed: 12), b = R.gaussianData(n * q, 4, seed: 13)
            let d = layer.parameterCount
            var rows = [Double](repeating: 0, count: n * q * d)
            rows.withUnsafeMutableBufferPointer {
                layer.writeGradientRows(backward: b, patches: layer.patches(xs), first: 0, q: q, into: $0.baseAddress!, stride: d, offset: 0)
            }
            var gram = Matrix(rows: n * q, cols: n * q)
            layer.addGradientGram(into: &gram, backward: b, inputGram: layer.inputGram(xs), q: q, alpha: 0.5)
            for r in 0..<(n * q) {
                // Row r is ∂(β_r · z(x_{r/q}))/∂θ.
                for i in 0..<4 {
                    for j in 0..<3 { XCTAssertEqual(rows[r * d + i * 3 + j], b[r, i] * xs[r / q, j], accuracy: 1e-14) }
                    if bias { XCTAssertEqual(rows[r * d + 12 + i], b[r, i], accuracy: 1e-14) }
                }
                for c in r..<(n * q) {
                    let dot = (0..<d).map { rows[r * d + $0] * rows[c * d + $0] }.reduce(0, +)
                    XCTAssertEqual(gram[r, c], 0.5 * dot, accuracy: 1e-12)
                }
            }
        }
    }

    /// Dense-3 → scale(0.5) → dense-3 with tanh: a network whose stack holds a layer type the library
    /// does not know.
    func scaledNetwork(bias: Bool) throws -> Network {
        let a = try Architecture(stack: [DenseLayer(inputs: 3, outputs: 4, bias: bias), ScaleLayer(size: 4, c: 0.5),
                                         DenseLayer(inputs: 4, outputs: 3, bias: bias)])
        var rng = Xoshiro256(seed: 21)
        return Network.uniform(architecture: a, activation: .tanh, box: -1...1, rng: &rng)
    }

    func testNewLayerTypeInTheGradient() throws {
        let net = try scaledNetwork(bias: true)
        XCTAssertEqual(net.architecture.parametricLayers, [0, 2])
        XCTAssertEqual(net.blocks.map(\.count), [16, 0, 15])
        let x = R.gaussianData(6, 3, seed: 4), y = [0, 2, 1, 1, 0, 2]
        let g = net.crossEntropyGradient(inputs: x, labels: y)
        let fd = R.jacobian(net, 0..<net.architecture.parameterCount) { [$0.crossEntropy(inputs: x, labels: y).loss] }[0]
        for (a, b) in zip(g.gradient, fd) { XCTAssertEqual(a, b, accuracy: 1e-8) }
    }

    func testNewLayerTypeInTheOutputFisher() throws {
        for bias in [false, true] {
            let net = try scaledNetwork(bias: bias)
            for n in [2, 12] {  // N(K−1) = 4 < d: Gram route; 24 > d: direct route
                let data = R.gaussianData(n, 3, seed: 5)
                let model = try OutputFisher(architecture: net.architecture, activation: .tanh, data: data)
                let want = try R.eigenvalues(R.outputFisher(net, inputs: data))
                let got = try model.blockEigenvalues(net, block: 0, inputs: data)
                R.assertSpectra(FisherKernels.padded(got, to: want.count), want, rel: 1e-7, "bias \(bias), N = \(n)")
            }
        }
    }

    /// Markov FIM: block 0 is the first dense layer on the data; block 1 (the softmax layer) reads
    /// `0.5·(tanh(W_1 x) + v)`, i.e. half the second block input of the plain dense network.
    func testNewLayerTypeInTheMarkovFisher() throws {
        let net = try scaledNetwork(bias: false)
        let data = R.gaussianData(5, 3, seed: 6)
        let model = try MarkovFisher(architecture: net.architecture, activation: .tanh, data: data, sigma2: 0.4,
                                     noiseSamples: 3, noiseSeed: 8)
        XCTAssertEqual(model.blockDimensions, [12, 12])
        let plainArch = try Architecture(sizes: [3, 4, 3])
        let plain = try Network(architecture: plainArch, activation: .tanh, blocks: [net.blocks[0], net.blocks[2]])
        let plainModel = try MarkovFisher(architecture: plainArch, activation: .tanh, data: data, sigma2: 0.4,
                                          noiseSamples: 3, noiseSeed: 8)
        let x1 = try model.blockInputs(net, block: 1), p1 = try plainModel.blockInputs(plain, block: 1)
        XCTAssertEqual(x1.rows, 15)
        for (a, b) in zip(x1.data, p1.data) { XCTAssertEqual(a, 0.5 * b, accuracy: 1e-15) }
        // Both blocks against the finite-difference references.
        let b0 = try model.blockEigenvalues(net, block: 0, inputs: try model.blockInputs(net, block: 0))
        R.assertSpectra(b0, try R.eigenvalues(R.gaussianLayerFisher(plain, layer: 0, inputs: data, sigma2: 0.4)), rel: 1e-7, "block 0")
        let b1 = try model.blockEigenvalues(net, block: 1, inputs: x1)
        R.assertSpectra(b1, try R.eigenvalues(R.softmaxLayerFisher(net, inputs: x1)), rel: 1e-7, "block 1")
        // The Monte Carlo design redraws the parametric layer of block 1 (layer 2), not the scale layer.
        let design = try MonteCarloDesign(paths: 1, inner: 1, activation: .tanh)
        let redrawn = design.innerNetwork(net, block: 1, path: 0, draw: 0)
        XCTAssertEqual(redrawn.blocks[0], net.blocks[0])
        XCTAssertNotEqual(redrawn.blocks[2], net.blocks[2])
        XCTAssertEqual(redrawn.blocks[2].count, 12)
    }

    func testStackIsChecked() {
        XCTAssertThrowsError(try Architecture(stack: [DenseLayer(inputs: 3, outputs: 4, bias: false), DenseLayer(inputs: 5, outputs: 2, bias: false)]))
        XCTAssertThrowsError(try Architecture(stack: [DenseLayer(inputs: 3, outputs: 4, bias: false), ScaleLayer(size: 4, c: 1)]))
        XCTAssertThrowsError(try Architecture(stack: [DenseLayer(inputs: 3, outputs: 4, bias: true), DenseLayer(inputs: 4, outputs: 2, bias: false)]))
        XCTAssertThrowsError(try Architecture(stack: [DenseLayer(inputs: 3, outputs: 1, bias: false)]))
    }
}
