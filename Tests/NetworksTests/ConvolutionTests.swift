@testable import Fisher
import Foundation
@testable import Networks
import RandomStreams
@testable import SpectraStore
import TestSupport
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// Tiny CNNs (6×6×1 input, a 2-filter 3×3 convolution, pooling, a dense softmax layer) against dense
/// references: loops for the layers, central finite differences for gradients and Fisher scores.
final class ConvolutionTests: XCTestCase {
    typealias R = FisherReference

    func image(_ x: Matrix, _ s: Int, _ shape: ImageShape, _ r: Int, _ c: Int, _ ch: Int) -> Double {
        guard r >= 0, r < shape.height, c >= 0, c < shape.width else { return 0 }
        return x[s, (r * shape.width + c) * shape.channels + ch]
    }

    /// Forward pass against the convolution sum, for strides, padding, channels and biases.
    func testForwardAgainstLoops() throws {
        for (side, stride, padding, cin, bias) in [(6, 1, 0, 1, false), (6, 1, 1, 2, true), (7, 2, 1, 3, false), (6, 3, 0, 1, true)] {
            let shape = ImageShape(height: side, width: side, channels: cin)
            let conv = try ConvolutionLayer(input: shape, filters: 2, kernel: 3, stride: stride, padding: padding, bias: bias)
            var rng = Xoshiro256(seed: 1)
            let theta = (0..<conv.parameterCount).map { _ in rng.uniform(-1, 1) }
            let x = R.gaussianData(2, shape.size, seed: 2)
            let z = conv.forward(x, parameters: theta)
            XCTAssertEqual(z.cols, conv.output.size)
            for s in 0..<2 {
                for orow in 0..<conv.output.height {
                    for ocol in 0..<conv.output.width {
                        for f in 0..<2 {
                            var v = bias ? theta[2 * 9 * cin + f] : 0
                            for i in 0..<3 { for j in 0..<3 { for c in 0..<cin {
                                v += theta[f * 9 * cin + (i * 3 + j) * cin + c]
                                    * image(x, s, shape, orow * stride + i - padding, ocol * stride + j - padding, c)
                            } } }
                            XCTAssertEqual(z[s, (orow * conv.output.width + ocol) * 2 + f], v, accuracy: 1e-13, "s\(stride) p\(padding)")
                        }
                    }
                }
            }
        }
    }

    func testPoolingAgainstLoops() throws {
        let shape = ImageShape(height: 4, width: 4, channels: 2)
        let x = R.gaussianData(3, shape.size, seed: 3)
        for kind in [PoolingLayer.Kind.average, .max] {
            let pool = try PoolingLayer(kind, input: shape, size: 2)
            let y = pool.forward(x, parameters: [])
            for s in 0..<3 { for r in 0..<2 { for c in 0..<2 { for ch in 0..<2 {
                let window = (0..<2).flatMap { i in (0..<2).map { j in self.image(x, s, shape, 2 * r + i, 2 * c + j, ch) } }
                let want = kind == .max ? window.max()! : window.reduce(0, +) / 4
                XCTAssertEqual(y[s, (r * 2 + c) * 2 + ch], want, accuracy: 1e-15)
            } } } }
        }
        XCTAssertThrowsError(try PoolingLayer(.max, input: ImageShape(height: 5, width: 4, channels: 1), size: 2))
        XCTAssertThrowsError(try ConvolutionLayer(input: ImageShape(height: 2, width: 2, channels: 1), filters: 1, kernel: 3, bias: false))
        XCTAssertThrowsError(try ConvolutionLayer(input: ImageShape(height: 6, width: 6, channels: 1), filters: 1, kernel: 3, stride: 2, bias: false))
    }

    /// 6×6×1 → conv 2×3×3 (pad 1) → pool 2 → conv 2×3×3 → dense 2→3 softmax: 18 + 36 + 6 (+5) parameters.
    func tinyCNN(bias: Bool, pool: PoolingLayer.Kind, activation: Activation, seed: UInt64 = 5) throws -> Network {
        let c1 = try ConvolutionLayer(input: ImageShape(height: 6, width: 6, channels: 1), filters: 2, kernel: 3, padding: 1, bias: bias)
        let p = try PoolingLayer(pool, input: c1.output, size: 2)
        let c2 = try ConvolutionLayer(input: p.output, filters: 2, kernel: 3, bias: bias)
        let a = try Architecture(stack: [c1, p, c2, DenseLayer(inputs: c2.output.size, outputs: 3, bias: bias)])
        var rng = Xoshiro256(seed: seed)
        return Network.uniform(architecture: a, activation: activation, box: -1...1, rng: &rng)
    }

    func testGradientAgainstFiniteDifferences() throws {
        for (bias, pool) in [(false, PoolingLayer.Kind.average), (true, .max)] {
            let net = try tinyCNN(bias: bias, pool: pool, activation: .tanh)
            let x = R.gaussianData(4, 36, seed: 7), y = [0, 1, 2, 1]
            let g = net.crossEntropyGradient(inputs: x, labels: y)
            let fd = R.jacobian(net, 0..<net.architecture.parameterCount) { [$0.crossEntropy(inputs: x, labels: y).loss] }[0]
            for (i, (a, b)) in zip(g.gradient, fd).enumerated() { XCTAssertEqual(a, b, accuracy: 1e-7, "bias \(bias) \(pool) θ_\(i)") }
        }
    }

    /// Output FIM: both routes (N(K−1) = 6 < d; 40 > d) against Jᵀ(diag p − ppᵀ)J from finite differences,
    /// with the backward signals in one chunk and one sample at a time, on the model's data (the first
    /// layer's patches computed once) and on other inputs of the same size.
    func testOutputFisherAgainstFiniteDifferences() throws {
        for (bias, pool) in [(false, PoolingLayer.Kind.average), (true, .max)] {
            let net = try tinyCNN(bias: bias, pool: pool, activation: .tanh)
            for n in [3, 20] {
                let data = R.gaussianData(n, 36, seed: 8), other = R.gaussianData(n, 36, seed: 18)
                var model = try OutputFisher(architecture: net.architecture, activation: .tanh, data: data)
                for (inputs, name) in [(data, "data"), (other, "other inputs")] {
                    let want = try R.eigenvalues(R.outputFisher(net, inputs: inputs))
                    for chunk in [1 << 19, 1] {
                        model.backwardChunkValues = chunk
                        model.chunkValues = chunk == 1 ? 1 : 1 << 22
                        for route in [OutputFisher.Route.gram, .direct] {
                            let got = try model.eigenvalues(net, inputs: inputs, route: route)
                            R.assertSpectra(FisherKernels.padded(Array(got.suffix(Swift.min(got.count, want.count))), to: want.count), want,
                                            rel: 1e-7, "bias \(bias) \(pool) N \(n) \(route) \(name) chunk \(chunk)")
                        }
                    }
                }
            }
        }
    }

    /// Markov FIM: every block against the finite-difference score references; the convolution's block
    /// is one block per filter (never the full block) and sums over output pixels.
    func testMarkovBlocksAgainstFiniteDifferences() throws {
        for (bias, pool) in [(false, PoolingLayer.Kind.max), (true, .average)] {
            let net = try tinyCNN(bias: bias, pool: pool, activation: .tanh)
            let data = R.gaussianData(4, 36, seed: 9)
            let model = try MarkovFisher(architecture: net.architecture, activation: .tanh, data: data, sigma2: 0.3,
                                         noiseSamples: 2, noiseSeed: 4)
            XCTAssertEqual(model.blockDimensions, net.architecture.parametricLayers.map { net.architecture.parameters(layer: $0) })
            for b in 0..<3 {
                let layer = net.architecture.parametricLayers[b]
                let x = try model.blockInputs(net, block: b)
                XCTAssertEqual(x.rows, b == 0 ? 4 : 8)
                let got = try model.blockEigenvalues(net, block: b, inputs: x)
                let ref = b == 2 ? R.softmaxLayerFisher(net, inputs: x)
                                 : R.gaussianLayerFisher(net, layer: layer, inputs: x, sigma2: 0.3)
                R.assertSpectra(got, try R.eigenvalues(ref), rel: 1e-7, "bias \(bias) block \(b)")
                // The trace shortcut of the smc estimator agrees with the spectrum.
                XCTAssertEqual(try model.blockTrace(net, block: b, inputs: x), got.reduce(0, +), accuracy: 1e-9 * Swift.max(1, got.reduce(0, +)))
            }
        }
    }

    /// A convolution whose kernel is the whole (unpadded) image is the dense layer with the same block.
    func testWholeImageKernelIsDense() throws {
        for bias in [false, true] {
            let shape = ImageShape(height: 3, width: 3, channels: 2)
            let conv = try ConvolutionLayer(input: shape, filters: 4, kernel: 3, bias: bias)
            let cnn = try Architecture(stack: [conv, DenseLayer(inputs: 4, outputs: 3, bias: bias)])
            let mlp = try Architecture(sizes: [18, 4, 3], bias: bias)
            XCTAssertEqual(cnn.layerParameterCounts, mlp.layerParameterCounts)
            var rng = Xoshiro256(seed: 11)
            let a = Network.uniform(architecture: cnn, activation: .relu, box: -1...1, rng: &rng)
            let b = try Network(architecture: mlp, activation: .relu, blocks: a.blocks)
            let data = R.gaussianData(7, 18, seed: 12)
            XCTAssertEqual(a.forward(data).logits, b.forward(data).logits)
            XCTAssertEqual(a.crossEntropyGradient(inputs: data, labels: [0, 1, 2, 0, 1, 2, 0]).gradient,
                           b.crossEntropyGradient(inputs: data, labels: [0, 1, 2, 0, 1, 2, 0]).gradient)
            let ma = try MarkovFisher(architecture: cnn, activation: .relu, data: data, sigma2: 0.2, noiseSamples: 2, noiseSeed: 3)
            let mb = try MarkovFisher(architecture: mlp, activation: .relu, data: data, sigma2: 0.2, noiseSamples: 2, noiseSeed: 3)
            for m in 0..<2 {
                XCTAssertEqual(try ma.blockEigenvalues(a, block: m, inputs: ma.blockInputs(a, block: m)),
                               try mb.blockEigenvalues(b, block: m, inputs: mb.blockInputs(b, block: m)))
            }
            let oa = try OutputFisher(architecture: cnn, activation: .relu, data: data)
            let ob = try OutputFisher(architecture: mlp, activation: .relu, data: data)
            R.assertSpectra(try oa.blockEigenvalues(a, block: 0, inputs: data), try ob.blockEigenvalues(b, block: 0, inputs: data),
                            rel: 1e-12, "output FIM, bias \(bias)")
        }
    }

    /// The plain Monte Carlo design and the store pipeline take a CNN unchanged.
    func testMonteCarloRunsOnACNN() async throws {
        let net = try tinyCNN(bias: false, pool: .average, activation: .relu)
        let data = R.gaussianData(5, 36, seed: 13)
        let model = try MarkovFisher(architecture: net.architecture, activation: .relu, data: data, sigma2: 0.1,
                                     noiseSamples: 1, noiseSeed: 1)
        let design = try MonteCarloDesign(paths: 3, inner: 2, activation: .relu)
        let one = try await MonteCarlo.run(model: model, design: design, paths: [0, 1, 2], threads: 1)
        let two = try await MonteCarlo.run(model: model, design: design, paths: [0, 1, 2], threads: 2)
        XCTAssertEqual(one, two)
        let spectra = try MonteCarlo.layeredSpectra(one, blockDimensions: model.blockDimensions)
        XCTAssertEqual(spectra.layerDimensions, [18, 36, 6])
    }
}
