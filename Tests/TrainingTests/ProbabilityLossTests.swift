import Foundation
import Networks
import RandomStreams
import Training
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics
import XCTest

/// The bounded loss ℓ = 1 − p_θ(y|x): values and gradients against independent code and finite
/// differences, and its Lipschitz constants on random perturbations of the logits.
final class ProbabilityLossTests: XCTestCase {
    /// Independent of the library's loss code: softmax of the forward pass, then 1 − ⟨q, p⟩ per row.
    func referenceRisk(_ net: Network, _ x: Matrix, targets q: Matrix) -> (mean: Double, values: [Double]) {
        let p = Softmax.probabilities(net.forward(x).logits)
        let v = (0..<x.rows).map { i in 1 - (0..<q.cols).reduce(0) { $0 + q[i, $1] * p[i, $1] } }
        return (v.reduce(0, +) / Double(v.count), v)
    }

    func oneHot(_ y: [Int], classes k: Int) -> Matrix {
        var q = Matrix(rows: y.count, cols: k)
        for (i, c) in y.enumerated() { q[i, c] = 1 }
        return q
    }

    /// Central differences of `f` at θ, the largest error against `g` and the largest |fd|.
    func compare(_ net: Network, gradient g: [Double], _ f: (Network) -> Double) -> (err: Double, scale: Double) {
        var n = net
        let theta = net.parameters
        let h = 1e-6
        var maxErr = 0.0, maxG = 0.0
        for i in theta.indices {
            var p = theta
            p[i] += h
            n.setParameters(p)
            let up = f(n)
            p[i] -= 2 * h
            n.setParameters(p)
            let fd = (up - f(n)) / (2 * h)
            maxErr = max(maxErr, abs(fd - g[i]))
            maxG = max(maxG, abs(fd))
        }
        return (maxErr, maxG)
    }

    func testEmpiricalRiskAndGradientMatchFiniteDifferences() throws {
        for (sizes, bias, act, seed) in [([3, 4, 3], true, Activation.tanh, UInt64(1)), ([2, 5, 4, 2], false, .sigmoid, 2),
                                         ([4, 3], true, .linear, 3)] {
            let arch = try Architecture(sizes: sizes, bias: bias)
            var rng = Xoshiro256(seed: seed, stream: [11])
            let net = Network.uniform(architecture: arch, activation: act, box: -1.5...1.5, rng: &rng)
            var x = Matrix(rows: 9, cols: arch.inputSize)
            for i in x.data.indices { x.data[i] = rng.normal() }
            let y = (0..<9).map { _ in rng.index(arch.classes) }
            let data = Dataset(inputs: x, labels: y, classes: arch.classes, source: "test")
            let r = try ProbabilityLoss.empirical(net, on: data, gradient: true)
            let ref = referenceRisk(net, x, targets: oneHot(y, classes: arch.classes))
            XCTAssertEqual(r.risk, ref.mean, accuracy: 1e-14)
            XCTAssertTrue((0...1).contains(r.risk))
            let g = try XCTUnwrap(r.gradient)
            XCTAssertEqual(g.count, arch.parameterCount)
            let c = compare(net, gradient: g) { referenceRisk($0, x, targets: oneHot(y, classes: arch.classes)).mean }
            XCTAssertGreaterThan(c.scale, 1e-3, "\(sizes)")
            XCTAssertLessThan(c.err, 1e-8 * max(1, c.scale), "\(sizes) \(act)")
            // Chunked evaluation gives the same risk and gradient.
            let chunked = try ProbabilityLoss.empirical(net, on: data, gradient: true, chunk: 4)
            XCTAssertEqual(chunked.risk, r.risk, accuracy: 1e-15)
            for (a, b) in zip(try XCTUnwrap(chunked.gradient), g) { XCTAssertEqual(a, b, accuracy: 1e-15) }
        }
    }

    func testPopulationRiskAndGradientMatchFiniteDifferences() throws {
        let task = try TeacherTask.random(architecture: Architecture(sizes: [3, 4, 3], bias: true), activation: .tanh, seed: 5)
        var rng = Xoshiro256(seed: 6)
        let pop = task.population(count: 40, rng: &rng)
        let net = Network.uniform(architecture: try Architecture(sizes: [3, 5, 3], bias: true), activation: .tanh,
                                  box: -1...1, rng: &rng)
        let r = try ProbabilityLoss.population(net, on: pop, gradient: true)
        let ref = referenceRisk(net, pop.inputs, targets: pop.labelProbabilities)
        XCTAssertEqual(r.risk, ref.mean, accuracy: 1e-14)
        let sd = (ref.values.reduce(0) { $0 + ($1 - ref.mean) * ($1 - ref.mean) } / 39).squareRoot()
        XCTAssertEqual(r.standardError, sd / 40.0.squareRoot(), accuracy: 1e-14)
        let c = compare(net, gradient: try XCTUnwrap(r.gradient)) { referenceRisk($0, pop.inputs, targets: pop.labelProbabilities).mean }
        XCTAssertGreaterThan(c.scale, 1e-3)
        XCTAssertLessThan(c.err, 1e-8 * max(1, c.scale))
        let chunked = try ProbabilityLoss.population(net, on: pop, gradient: true, chunk: 7)
        XCTAssertEqual(chunked.risk, r.risk, accuracy: 1e-15)
        for (a, b) in zip(try XCTUnwrap(chunked.gradient), try XCTUnwrap(r.gradient)) { XCTAssertEqual(a, b, accuracy: 1e-15) }
        // Without a gradient: the same risk, no gradient.
        let plain = try ProbabilityLoss.population(net, on: pop)
        XCTAssertEqual(plain.risk, r.risk)
        XCTAssertNil(plain.gradient)
    }

    /// ∇_θ(1 − p_y) = p_y ∇_θ CE_y, sample by sample.
    func testGradientIsProbabilityTimesCrossEntropyGradient() throws {
        let arch = try Architecture(sizes: [4, 6, 3], bias: true)
        var rng = Xoshiro256(seed: 8)
        let net = Network.uniform(architecture: arch, activation: .tanh, box: -1...1, rng: &rng)
        for _ in 0..<5 {
            var x = Matrix(rows: 1, cols: 4)
            for i in x.data.indices { x.data[i] = rng.normal() }
            let y = rng.index(3)
            let ours = try ProbabilityLoss.empirical(net, on: Dataset(inputs: x, labels: [y], classes: 3, source: "one"), gradient: true)
            let ce = net.crossEntropyGradient(inputs: x, labels: [y])
            let py = exp(-ce.loss)
            XCTAssertEqual(ours.risk, 1 - py, accuracy: 1e-14)
            for (a, b) in zip(try XCTUnwrap(ours.gradient), ce.gradient) { XCTAssertEqual(a, py * b, accuracy: 1e-14) }
        }
    }

    /// |Δℓ| ≤ ½‖Δz‖_∞, ≤ (1/(2√2))‖Δz‖₂, ≤ ½‖Δp‖₁ and ≤ ‖Δp‖_∞ on random logits and perturbations of every
    /// scale, and the constants are sharp (ratios reach them at p_y = ½).
    func testLipschitzConstantsOnRandomLogitPerturbations() {
        var rng = Xoshiro256(seed: 12)
        var worstMax = 0.0, worstL2 = 0.0, worstL1p = 0.0
        for trial in 0..<20_000 {
            let k = [2, 3, 5, 10][trial % 4]
            let spread = [0.1, 1, 4, 20][(trial / 4) % 4]
            let eps = [1e-4, 1e-2, 0.3, 3, 30][(trial / 16) % 5]
            let z = (0..<k).map { _ in spread * rng.normal() }
            let dz = (0..<k).map { _ in rng.uniform(-eps, eps) }
            let z2 = zip(z, dz).map { $0 + $1 }
            let y = rng.index(k)
            let p = Softmax.probabilities(Matrix(rows: 1, cols: k, data: z)).data
            let p2 = Softmax.probabilities(Matrix(rows: 1, cols: k, data: z2)).data
            let dl = abs(ProbabilityLoss.loss(logits: z2, label: y) - ProbabilityLoss.loss(logits: z, label: y))
            let nMax = dz.map(abs).max()!, nL2 = dz.reduce(0) { $0 + $1 * $1 }.squareRoot()
            let dpL1 = zip(p, p2).reduce(0) { $0 + abs($1.0 - $1.1) }
            let dpMax = zip(p, p2).map { abs($0 - $1) }.max()!
            XCTAssertLessThanOrEqual(dl, ProbabilityLoss.lipschitzLogitsMax * nMax * (1 + 1e-9) + 1e-15)
            XCTAssertLessThanOrEqual(dl, ProbabilityLoss.lipschitzLogitsL2 * nL2 * (1 + 1e-9) + 1e-15)
            XCTAssertLessThanOrEqual(dl, ProbabilityLoss.lipschitzProbabilityL1 * dpL1 * (1 + 1e-9) + 1e-15)
            XCTAssertLessThanOrEqual(dl, ProbabilityLoss.lipschitzProbabilityMax * dpMax * (1 + 1e-9) + 1e-15)
            worstMax = max(worstMax, dl / nMax)
            worstL2 = max(worstL2, dl / nL2)
            if dpL1 > 1e-5 { worstL1p = max(worstL1p, dl / dpL1) }
        }
        XCTAssertLessThanOrEqual(worstMax, 0.5 * (1 + 1e-9))
        XCTAssertLessThanOrEqual(worstL2, 1 / (2 * 2.0.squareRoot()) * (1 + 1e-9))
        XCTAssertLessThanOrEqual(worstL1p, 0.5 * (1 + 1e-9))
        XCTAssertGreaterThan(worstL1p, 0.49)  // two classes: |Δp_y| = ½‖Δp‖₁ exactly
        // Sharpness: z = (0, 0), y = 0, Δz = t(1, −1): Δp_0 = σ(2t) − ½ ≈ t/2 = ½‖Δz‖_∞ = (1/(2√2))‖Δz‖₂.
        let t = 1e-5
        let dl = abs(ProbabilityLoss.loss(logits: [t, -t], label: 0) - ProbabilityLoss.loss(logits: [0, 0], label: 0))
        XCTAssertEqual(dl / t, 0.5, accuracy: 1e-6)
        XCTAssertEqual(dl / (t * 2.0.squareRoot()), ProbabilityLoss.lipschitzLogitsL2, accuracy: 1e-6)
        XCTAssertGreaterThan(dl / t, 0.25 + 0.2)  // a claimed ¼ would fail
    }

    func testBadInputThrowsTypedErrors() throws {
        let arch = try Architecture(sizes: [2, 3])
        let net = Network.zeros(architecture: arch, activation: .tanh)
        let x = Matrix(rows: 2, cols: 2)
        XCTAssertThrowsError(try ProbabilityLoss.empirical(net, on: Dataset(inputs: x, labels: [0, 3], source: "bad"))) {
            XCTAssertTrue($0 is TwoScaleError)
        }
        XCTAssertThrowsError(try ProbabilityLoss.empirical(net, on: Dataset(inputs: x, source: "unlabelled"))) {
            XCTAssertTrue($0 is TwoScaleError)
        }
        XCTAssertThrowsError(try ProbabilityLoss.empirical(net, on: Dataset(inputs: Matrix(rows: 2, cols: 3), labels: [0, 1], source: "wide"))) {
            XCTAssertTrue($0 is TwoScaleError)
        }
        let pop = PopulationSample(inputs: x, labelProbabilities: Matrix(rows: 2, cols: 2, repeating: 0.5))
        XCTAssertThrowsError(try ProbabilityLoss.population(net, on: pop)) { XCTAssertTrue($0 is TwoScaleError) }
    }
}
