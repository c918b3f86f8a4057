@testable import Fisher
import Foundation
@testable import Networks
import TestSupport
import TwoScaleCore
import TwoScaleNumerics
import XCTest

final class OutputFisherTests: XCTestCase {
    typealias R = FisherReference

    /// Gram spectrum = top of the dense `JᵀΛJ` spectrum (J by finite differences); the rest are zeros.
    func testAgainstFiniteDifferences() throws {
        let cases: [([Int], Bool, Activation, Int)] = [
            ([3, 4, 3], false, .tanh, 4), ([3, 4, 3], true, .sigmoid, 2), ([4, 3, 2, 3], false, .relu, 3),
            ([4, 3, 2, 3], true, .linear, 12), ([2, 3, 3], true, .tanh, 30),
        ]
        for (i, (sizes, bias, act, n)) in cases.enumerated() {
            let net = try R.net(sizes, bias: bias, act, seed: UInt64(20 + i))
            let data = R.gaussianData(n, sizes[0], seed: UInt64(30 + i))
            let model = try OutputFisher(architecture: net.architecture, activation: act, data: data)
            let got = try model.blockEigenvalues(net, block: 0, inputs: try model.blockInputs(net, block: 0))
            let d = net.architecture.parameterCount
            let r = min(d, n * (sizes.last! - 1))
            XCTAssertEqual(got.count, r)
            let dense = try R.eigenvalues(R.outputFisher(net, inputs: data))
            XCTAssertEqual(dense.count, d)
            R.assertSpectra(got, Array(dense.suffix(r)), "\(sizes) bias \(bias) \(act) N=\(n)")
            let scale = dense.last ?? 1
            for z in dense.prefix(d - r) { XCTAssertLessThan(abs(z), 1e-6 * scale) }
        }
    }

    /// The direct route accumulates F = Σ_chunks M_cᵀM_c/N: one sample per chunk gives the spectrum of
    /// the dense finite-difference reference too (and the same as a single chunk).
    func testDirectRouteInChunks() throws {
        let net = try R.net([3, 4, 3], bias: true, .tanh, seed: 41)
        let data = R.gaussianData(40, 3, seed: 42)  // N(K−1) = 80 > d = 31: direct route
        var model = try OutputFisher(architecture: net.architecture, activation: .tanh, data: data)
        let whole = try model.eigenvalues(net, inputs: data, route: .automatic)
        model.chunkValues = 1
        let chunked = try model.eigenvalues(net, inputs: data, route: .automatic)
        let dense = try R.eigenvalues(R.outputFisher(net, inputs: data))
        R.assertSpectra(chunked, dense, "one sample per chunk")
        // The Gram route with its backward signals one sample at a time.
        model.backwardChunkValues = 1
        R.assertSpectra(Array(try model.eigenvalues(net, inputs: data, route: .gram).suffix(31)), dense, "Gram route, one sample per chunk")
        R.assertSpectra(whole, dense, "one chunk")
    }

    /// A spectrum matrix beyond 4 GiB is refused with a message, not a failed allocation.
    func testTooLargeIsRefused() throws {
        let a = try Architecture(parsing: "2-30000-2", bias: false)
        XCTAssertThrowsError(try OutputFisher(architecture: a, activation: .relu, data: R.gaussianData(30000, 2, seed: 1))) { e in
            XCTAssertTrue((e as? TwoScaleError)?.message.contains("\(Setting.samples)") ?? false, "\(e)")
        }
        // A Gram that fits (18 000 sides) whose convolution rows would not: 18 000 × 73 728 > 2³⁰ values.
        let cnn = try Architecture(parsing: "8x8x64-conv128k3-10", bias: false)
        XCTAssertThrowsError(try OutputFisher(architecture: cnn, activation: .relu, data: R.gaussianData(2000, 8 * 8 * 64, seed: 1))) { e in
            let message = (e as? TwoScaleError)?.message ?? ""
            XCTAssertTrue(message.contains("\(Setting.samples)") && message.contains("gradient rows"), "\(e)")
        }
    }

    func testGramAndDirectRoutesAgree() throws {
        for (sizes, n) in [([3, 4, 3], 3), ([4, 3, 2, 3], 10)] {
            let net = try R.net(sizes, bias: true, .tanh, seed: 5)
            let data = R.gaussianData(n, sizes[0], seed: 6)
            let model = try OutputFisher(architecture: net.architecture, activation: .tanh, data: data)
            R.assertSpectra(try model.eigenvalues(net, inputs: data, route: .gram),
                            try model.eigenvalues(net, inputs: data, route: .direct), rel: 1e-10, "\(sizes)")
        }
    }

    func testTraceMatchesMarkovSoftmaxLayerForOneLayer() throws {
        // With one layer (no hidden), the output FIM is the Markov softmax block.
        let net = try R.net([5, 4], bias: true, .relu, seed: 8)
        let data = R.gaussianData(7, 5, seed: 9)
        let out = try OutputFisher(architecture: net.architecture, activation: .relu, data: data)
        let markov = try MarkovFisher(architecture: net.architecture, activation: .relu, data: data, sigma2: 1, noiseSamples: 1, noiseSeed: 1)
        let a = try out.blockEigenvalues(net, block: 0, inputs: data)
        let b = try markov.blockEigenvalues(net, block: 0, inputs: data)
        R.assertSpectra(a, Array(b.suffix(a.count)), rel: 1e-10, "one layer")
    }
}
