import Foundation
import Networks
import RandomStreams
import Training
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// Backpropagation against central finite differences of the mean cross-entropy.
final class GradientTests: XCTestCase {
    func loss(_ net: Network, _ x: Matrix, _ y: [Int]) -> Double {
        // Independent of the gradient code: log-softmax of the forward pass.
        let lp = Softmax.logProbabilities(net.forward(x).logits)
        return -(0..<x.rows).reduce(0) { $0 + lp[$1, y[$1]] } / Double(x.rows)
    }

    func check(sizes: [Int], bias: Bool, activation: Activation, seed: UInt64) throws {
        let arch = try Architecture(sizes: sizes, bias: bias)
        var rng = Xoshiro256(seed: seed, stream: [9])
        var net = Network.uniform(architecture: arch, activation: activation, box: -1...1, rng: &rng)
        let b = 7
        var x = Matrix(rows: b, cols: arch.inputSize)
        for i in x.data.indices { x.data[i] = rng.normal() }
        let y = (0..<b).map { _ in rng.index(arch.classes) }
        let g = net.crossEntropyGradient(inputs: x, labels: y)
        XCTAssertEqual(g.loss, loss(net, x, y), accuracy: 1e-12)
        XCTAssertEqual(g.gradient.count, arch.parameterCount)
        let theta = net.parameters
        let h = 1e-6
        var maxErr = 0.0, maxG = 0.0
        for i in theta.indices {
            var p = theta
            p[i] += h
            net.setParameters(p)
            let up = loss(net, x, y)
            p[i] -= 2 * h
            net.setParameters(p)
            let down = loss(net, x, y)
            let fd = (up - down) / (2 * h)
            maxErr = max(maxErr, abs(fd - g.gradient[i]))
            maxG = max(maxG, abs(fd))
        }
        net.setParameters(theta)
        XCTAssertGreaterThan(maxG, 1e-3)
        XCTAssertLessThan(maxErr, 1e-7 * max(1, maxG), "\(sizes) bias \(bias) \(activation)")
    }

    func testGradientMatchesFiniteDifferences() throws {
        var seed: UInt64 = 1
        for act in Activation.allCases {
            for bias in [false, true] {
                try check(sizes: [4, 5, 3], bias: bias, activation: act, seed: seed)
                try check(sizes: [3, 4, 6, 2], bias: bias, activation: act, seed: seed + 100)
                seed += 1
            }
        }
        try check(sizes: [6, 3], bias: true, activation: .relu, seed: 77)  // no hidden layer
    }

    func testAccuracyCountAndChunkedLoss() throws {
        let arch = try Architecture(sizes: [3, 4, 3])
        var rng = Xoshiro256(seed: 5)
        let net = Network.uniform(architecture: arch, activation: .tanh, box: -1...1, rng: &rng)
        var x = Matrix(rows: 50, cols: 3)
        for i in x.data.indices { x.data[i] = rng.normal() }
        let y = (0..<50).map { _ in rng.index(3) }
        let whole = net.crossEntropy(inputs: x, labels: y)
        let chunked = net.crossEntropy(inputs: x, labels: y, chunk: 7)
        XCTAssertEqual(whole.loss, chunked.loss, accuracy: 1e-13)
        XCTAssertEqual(whole.accuracy, chunked.accuracy)
        let logits = net.forward(x).logits
        let hits = (0..<50).filter { i in (0..<3).max { logits[i, $0] < logits[i, $1] } == y[i] }.count
        XCTAssertEqual(whole.accuracy, Double(hits) / 50)
        XCTAssertEqual(net.crossEntropyGradient(inputs: x, labels: y).correct, hits)
    }
}
