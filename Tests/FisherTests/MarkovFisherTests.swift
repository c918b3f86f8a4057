@testable import Fisher
import Foundation
@testable import Networks
import TestSupport
import TwoScaleCore
import TwoScaleNumerics
import XCTest

final class MarkovFisherTests: XCTestCase {
    typealias R = FisherReference

    func testParameterCounts() throws {
        XCTAssertEqual(try Architecture(parsing: "54-16-7").parameterCount, 976)
        XCTAssertEqual(try Architecture(parsing: "54-13-11-9-7").parameterCount, 1007)
        XCTAssertEqual(try Architecture(parsing: "54-10-2-10-25-7").parameterCount, 1005)
        let data = R.gaussianData(3, 54, seed: 1)
        let model = try MarkovFisher(architecture: try Architecture(parsing: "54-13-11-9-7"), activation: .relu,
                                     data: data, sigma2: 0.1, noiseSamples: 1, noiseSeed: 1)
        XCTAssertEqual(model.blockDimensions, [702, 143, 99, 63])
    }

    /// Every block of the Markov FIM against a dense finite-difference Fisher on the same samples.
    func testBlocksAgainstFiniteDifferences() throws {
        let cases: [([Int], Bool, Activation)] = [
            ([3, 4, 3], false, .tanh), ([3, 4, 3], true, .sigmoid), ([4, 3, 2, 3], false, .linear),
            ([4, 3, 2, 3], true, .relu), ([4, 3, 2, 3], true, .tanh),
        ]
        for (i, (sizes, bias, act)) in cases.enumerated() {
            let net = try R.net(sizes, bias: bias, act, seed: UInt64(i + 1))
            let data = R.gaussianData(5, sizes[0], seed: UInt64(10 + i))
            let model = try MarkovFisher(architecture: net.architecture, activation: act, data: data,
                                         sigma2: 0.3, noiseSamples: 2, noiseSeed: 5)
            for m in 0..<net.architecture.layers {
                let x = try model.blockInputs(net, block: m)
                XCTAssertEqual(x.rows, m == 0 ? 5 : 10)
                let got = try model.blockEigenvalues(net, block: m, inputs: x)
                let dense = m == net.architecture.layers - 1
                    ? R.softmaxLayerFisher(net, inputs: x)
                    : R.gaussianLayerFisher(net, layer: m, inputs: x, sigma2: 0.3)
                R.assertSpectra(got, try R.eigenvalues(dense), "\(sizes) bias \(bias) \(act) block \(m)")
                XCTAssertEqual(got.count, model.blockDimensions[m])
                XCTAssertEqual(got, got.sorted())
            }
        }
    }

    /// The Gram route and the direct route give the same spectrum (S < p and S > p).
    func testGramAndDirectRoutesAgree() throws {
        for (sizes, bias, n) in [([6, 5, 4], true, 3), ([6, 5, 4], false, 20), ([3, 8, 3], false, 4)] {
            let net = try R.net(sizes, bias: bias, .tanh, seed: 3)
            let data = R.gaussianData(n, sizes[0], seed: 4)
            let model = try MarkovFisher(architecture: net.architecture, activation: .tanh, data: data,
                                         sigma2: 0.5, noiseSamples: 1, noiseSeed: 9)
            let x0 = try model.blockInputs(net, block: 0)
            R.assertSpectra(try model.gaussianEigenvalues(net, layer: 0, inputs: x0, route: .gram),
                            try model.gaussianEigenvalues(net, layer: 0, inputs: x0, route: .direct), rel: 1e-10, "gaussian routes \(sizes)")
            let x1 = try model.blockInputs(net, block: 1)
            R.assertSpectra(try model.softmaxEigenvalues(net, inputs: x1, route: .gram),
                            try model.softmaxEigenvalues(net, inputs: x1, route: .direct), rel: 1e-10, "softmax routes \(sizes)")
        }
    }

    /// Common random numbers: the noise in the block inputs depends on the seed and the sample, never on θ.
    func testCommonRandomNumbers() throws {
        let arch = try Architecture(sizes: [3, 4, 2, 3])
        let data = R.gaussianData(4, 3, seed: 2)
        let model = try MarkovFisher(architecture: arch, activation: .linear, data: data, sigma2: 0.25, noiseSamples: 3, noiseSeed: 42)
        let a = try R.net([3, 4, 2, 3], bias: false, .linear, seed: 1)
        let b = try R.net([3, 4, 2, 3], bias: false, .linear, seed: 2)
        func noise(_ net: Network) throws -> [Double] {
            let x1 = try model.blockInputs(net, block: 1)
            let mean = net.preActivation(layer: 0, input: data)  // linear activation
            var v: [Double] = []
            for i in 0..<x1.rows { for k in 0..<x1.cols { v.append(x1[i, k] - mean[i / 3, k]) } }
            return v
        }
        let va = try noise(a), vb = try noise(b)
        for (x, y) in zip(va, vb) { XCTAssertEqual(x, y, accuracy: 1e-12) }
        let rms = (va.map { $0 * $0 }.reduce(0, +) / Double(va.count)).squareRoot()
        XCTAssertGreaterThan(rms, 0.1)
        XCTAssertLessThan(rms, 1.5)
        // Block 2 = W_2 (W_1 x + v_1) + v_2 exactly, for both networks with the same v.
        for net in [a, b] {
            let x1 = try model.blockInputs(net, block: 1)
            let x2 = try model.blockInputs(net, block: 2)
            let v2 = x2.data.enumerated().map { $1 - net.preActivation(layer: 1, input: x1).data[$0] }
            let again = try model.blockInputs(net, block: 2)
            XCTAssertEqual(x2, again)
            let other = try MarkovFisher(architecture: arch, activation: .linear, data: data, sigma2: 0.25, noiseSamples: 3, noiseSeed: 42)
            XCTAssertEqual(try other.blockInputs(net, block: 2), x2)
            XCTAssertEqual(v2.count, 24)
        }
        let seed2 = try MarkovFisher(architecture: arch, activation: .linear, data: data, sigma2: 0.25, noiseSamples: 3, noiseSeed: 43)
        XCTAssertNotEqual(try seed2.blockInputs(a, block: 1), try model.blockInputs(a, block: 1))
    }

    func testValidation() throws {
        let arch = try Architecture(sizes: [3, 4, 3])
        let data = R.gaussianData(4, 3, seed: 2)
        XCTAssertThrowsError(try MarkovFisher(architecture: arch, activation: .relu, data: data, sigma2: 0, noiseSamples: 1, noiseSeed: 1))
        XCTAssertThrowsError(try MarkovFisher(architecture: arch, activation: .relu, data: data, sigma2: .nan, noiseSamples: 1, noiseSeed: 1))
        XCTAssertThrowsError(try MarkovFisher(architecture: arch, activation: .relu, data: data, sigma2: 1, noiseSamples: 0, noiseSeed: 1))
        XCTAssertThrowsError(try MarkovFisher(architecture: arch, activation: .relu, data: R.gaussianData(4, 2, seed: 1), sigma2: 1, noiseSamples: 1, noiseSeed: 1))
    }

    func testSoftmaxFactor() {
        let ps: [[Double]] = [[0.2, 0.3, 0.5], [1 - 2e-17, 1e-17, 1e-17], [0.25, 0.25, 0.25, 0.25], [0, 0, 1.0], [0.7, 0.1, 0.05, 0.15, 0]]
        for p in ps {
            let k = p.count
            var lam = [Double](repeating: 0, count: k * (k - 1))
            p.withUnsafeBufferPointer { pp in lam.withUnsafeMutableBufferPointer { SoftmaxCovariance.factor(pp.baseAddress!, k, into: $0.baseAddress!) } }
            for a in 0..<k {
                for b in 0..<k {
                    var v = 0.0
                    for j in 0..<(k - 1) { v += lam[a * (k - 1) + j] * lam[b * (k - 1) + j] }
                    XCTAssertEqual(v, (a == b ? p[a] : 0) - p[a] * p[b], accuracy: 1e-15, "p = \(p)")
                }
            }
        }
        // helmertProject's running sums against the product QᵀΛ with the explicit basis.
        for p in ps where p.count >= 3 {
            let k = p.count, q = Self.helmert(k)
            var lam = [Double](repeating: 0, count: k * (k - 1)), m = lam, running = lam
            p.withUnsafeBufferPointer { pp in lam.withUnsafeMutableBufferPointer { SoftmaxCovariance.factor(pp.baseAddress!, k, into: $0.baseAddress!) } }
            lam.withUnsafeBufferPointer { pl in
                m.withUnsafeMutableBufferPointer { pm in
                    running.withUnsafeMutableBufferPointer { SoftmaxCovariance.helmertProject(pl.baseAddress!, k, into: pm.baseAddress!, running: $0.baseAddress!) }
                }
            }
            for a in 0..<(k - 1) {
                for j in 0..<(k - 1) {
                    let product = (0..<k).reduce(0.0) { $0 + q[$1 * (k - 1) + a] * lam[$1 * (k - 1) + j] }
                    XCTAssertEqual(m[a * (k - 1) + j], product, accuracy: 1e-15, "p = \(p)")
                }
            }
        }
        let q = Self.helmert(5)
        for a in 0..<4 {
            XCTAssertEqual((0..<5).map { q[$0 * 4 + a] }.reduce(0, +), 0, accuracy: 1e-15)
            for b in 0..<4 {
                XCTAssertEqual((0..<5).map { q[$0 * 4 + a] * q[$0 * 4 + b] }.reduce(0, +), a == b ? 1 : 0, accuracy: 1e-15)
            }
        }
    }

    /// The `K × (K−1)` Helmert basis of `1^⊥`, row-major (column j − 1: `(1, …, 1, −j, 0, …)/√(j(j+1))`
    /// with j ones): the explicit Q that `SoftmaxCovariance.helmertProject` applies by running sums.
    static func helmert(_ k: Int) -> [Double] {
        var q = [Double](repeating: 0, count: k * (k - 1))
        for j in 1..<k {
            let s = 1 / (Double(j) * Double(j + 1)).squareRoot()
            for c in 0..<j { q[c * (k - 1) + (j - 1)] = s }
            q[j * (k - 1) + (j - 1)] = -Double(j) * s
        }
        return q
    }
}
