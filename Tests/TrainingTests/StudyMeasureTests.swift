import Foundation
import Networks
import RandomStreams
import Testing
@testable import Training
import TwoScaleCore
import TwoScaleNumerics

/// The network measures against closed forms.
@Suite struct StudyMeasureTests {
    /// W_1 = [[1, 2], [3, 4]]: W_1ᵀW_1 = [[10, 14], [14, 20]], λ_max = 15 + √221; W_2 = [[1, 1], [0, 2]]:
    /// W_2 W_2ᵀ = [[2, 2], [2, 4]], λ_max = 3 + √5. Non-square: [[3, 0, 0], [0, 0, 4]] has singular values
    /// 3, 4; its transpose's shape (3×2, the other Gram) [[1, 0], [0, 2], [0, 0]] has 1, 2.
    @Test func spectralNormsOfDenseLayers() throws {
        let net = try Network(architecture: Architecture(sizes: [2, 2, 2]), activation: .relu,
                              weights: [Matrix(rows: 2, cols: 2, data: [1, 2, 3, 4]), Matrix(rows: 2, cols: 2, data: [1, 1, 0, 2])])
        let s1 = (15 + 221.0.squareRoot()).squareRoot(), s2 = (3 + 5.0.squareRoot()).squareRoot()
        let s = try ComplexityMeasures.spectralNorms(net)
        #expect(s.count == 2 && abs(s[0] - s1) < 1e-13 && abs(s[1] - s2) < 1e-13)
        #expect(abs(try ComplexityMeasures.logProductOfSpectralNorms(net) - log(s1 * s2)) < 1e-13)
        #expect(abs(try ComplexityMeasures.productOfSpectralNorms(net) - s1 * s2) < 1e-12)
        let wide = try Network(architecture: Architecture(sizes: [3, 2, 3, 2]), activation: .relu,
                               weights: [Matrix(rows: 2, cols: 3, data: [3, 0, 0, 0, 0, 4]), Matrix(rows: 3, cols: 2, data: [1, 0, 0, 2, 0, 0]),
                                         Matrix(rows: 2, cols: 3, data: [0, 0, 0, 0, 0, 0])])
        let w = try ComplexityMeasures.spectralNorms(wide)
        #expect(abs(w[0] - 4) < 1e-13 && abs(w[1] - 2) < 1e-13 && w[2] == 0)
        #expect(try ComplexityMeasures.logProductOfSpectralNorms(wide) == -.infinity)
    }

    /// A convolution's norm is its reshaped kernel matrix's: filters (1, 1, 0, 0) and (0, 0, 2, −2) are
    /// orthogonal rows with norms √2, √8, so ‖K‖₂ = √8; pooling adds nothing. The dense W = [[1, 2],
    /// [−3, 0.5]]: WᵀW = [[10, 0.5], [0.5, 4.25]], λ_max = (14.25 + √(5.75² + 1))/2.
    @Test func spectralNormOfAConvolutionKernelMatrix() throws {
        let a = try Architecture(parsing: "3x3x1-conv2k2-maxpool2-2")
        let net = try Network(architecture: a, activation: .relu,
                              weights: [Matrix(rows: 2, cols: 4, data: [1, 1, 0, 0, 0, 0, 2, -2]), Matrix(rows: 2, cols: 2, data: [1, 2, -3, 0.5])])
        let s = try ComplexityMeasures.spectralNorms(net)
        #expect(s.count == 2)
        #expect(abs(s[0] - 8.0.squareRoot()) < 1e-13)
        #expect(abs(s[1] - ((14.25 + (5.75 * 5.75 + 1).squareRoot()) / 2).squareRoot()) < 1e-13)
    }

    /// 2-2-2 ReLU without biases, W_1 = [[1, 2], [3, 4]], W_2 = [[1, 1], [0, 2]]. At x = (1, 0.5):
    /// W_1 x = (2, 5) > 0, logits z = (7, 10), p = softmax(z). The network is 2-homogeneous in θ, so
    /// ⟨θ, ∇_θ ℓ⟩ = 2 ⟨p − e_y, z⟩ = 2·3 p_1 for y = 0 and −2·3 p_0 for y = 1; at x = (−1, 0.5), W_1 x =
    /// (0, −1): the hidden layer and z are 0, and so is the inner product. Over these three samples
    /// (1/n) Σ ⟨θ, ∇ℓ_i⟩² = 12 (p_0² + p_1²), and Jiang's μ = (2 + 1)² times that.
    @Test func fisherRaoByHand() throws {
        let net = try Network(architecture: Architecture(sizes: [2, 2, 2]), activation: .relu,
                              weights: [Matrix(rows: 2, cols: 2, data: [1, 2, 3, 4]), Matrix(rows: 2, cols: 2, data: [1, 1, 0, 2])])
        let x = Matrix(rows: 3, cols: 2, data: [1, 0.5, 1, 0.5, -1, 0.5])
        let e3 = exp(3.0), p0 = 1 / (1 + e3), p1 = e3 / (1 + e3)
        let expected = 12 * (p0 * p0 + p1 * p1)
        let fr = try ComplexityMeasures.fisherRao(net, inputs: x, labels: [0, 1, 1])
        #expect(abs(fr.meanSquaredInnerProduct - expected) < 1e-13)
        #expect(fr.depth == 2)
        #expect(abs(fr.jiang - 9 * expected) < 1e-12)
        #expect(throws: TwoScaleError.self) { try ComplexityMeasures.fisherRao(net, inputs: x, labels: [0, 2, 1]) }
        #expect(throws: TwoScaleError.self) { try ComplexityMeasures.fisherRao(net, inputs: x, labels: [0, 1]) }
    }

    /// With biases and tanh (no homogeneity), ⟨θ, ∇ℓ_i⟩ is the derivative of ℓ_i((1 + h)θ) at h = 0: by
    /// central finite differences of the loss alone, sample by sample.
    @Test func fisherRaoAgainstFiniteDifferences() throws {
        var rng = Xoshiro256(seed: 17)
        let a = try Architecture(sizes: [3, 4, 3], bias: true)
        let net = Network.uniform(architecture: a, activation: .tanh, box: -1...1, rng: &rng)
        let x = Matrix(rows: 6, cols: 3, data: (0..<18).map { _ in rng.uniform(-2, 2) })
        let y = (0..<6).map { _ in rng.index(3) }
        let theta = net.parameters, h = 1e-5
        var sum = 0.0
        for i in 0..<6 {
            func loss(_ s: Double) -> Double {
                var p = net
                p.setParameters(theta.map { $0 * s })
                return p.crossEntropy(inputs: x.rows(i..<(i + 1)), labels: [y[i]]).loss
            }
            let d = (loss(1 + h) - loss(1 - h)) / (2 * h)
            sum += d * d
        }
        let fr = try ComplexityMeasures.fisherRao(net, inputs: x, labels: y)
        #expect(abs(fr.meanSquaredInnerProduct - sum / 6) < 1e-7 * max(1, sum / 6))
        #expect(fr.depth == 2)
    }

    /// One dense 2→2 layer without bias, W = [[0.5, −0.2], [1, 0.8]], one sample x = (1, 1), y = 1: the
    /// logit margin is Δ = 1.8 − 0.3 = 1.5 and, under u_ij ~ N(0, α² w_ij²) (ε = 0), it is N(Δ, α² s²) with
    /// s² = Σ_j (w_0j² + w_1j²) x_j² = 1.93, so the expected error is Φ(−Δ/(α s)) and the largest α with
    /// error ≤ 0.1 is α* = Δ / (s z_0.9), z_0.9 = 1.28155…: α* ≈ 0.8425. Monte Carlo with 2000 draws
    /// finds it within 10%, and the criterion holds at α' and fails just above.
    @Test func magnitudeFlatnessClosedForm() throws {
        let net = try Network(architecture: Architecture(sizes: [2, 2]), activation: .relu,
                              weights: [Matrix(rows: 2, cols: 2, data: [0.5, -0.2, 1, 0.8])])
        let x = Matrix(rows: 1, cols: 2, data: [1, 1])
        let f = try MagnitudeFlatness(threshold: 0.1, epsilon: 0, draws: 2000, seed: 6)
        let r = try f.measure(net, inputs: x, labels: [1])
        let expected = 1.5 / (1.93.squareRoot() * 1.2815515655446004)
        #expect(!r.saturated)
        #expect(abs(r.alpha / expected - 1) < 0.1, "α' = \(r.alpha), α* = \(expected)")
        #expect(abs(r.measure - 1 / (r.alpha * r.alpha)) < 1e-12)
        #expect(f.expectedIncrease(net, inputs: x, labels: [1], alpha: r.alpha) <= 0.1)
        #expect(f.expectedIncrease(net, inputs: x, labels: [1], alpha: r.alpha * 1.0001) > 0.1)
        // Misclassified already at θ (y = 0): the error can only fall, so the search saturates.
        let s = try MagnitudeFlatness(draws: 5, maxAlpha: 4, seed: 1).measure(net, inputs: x, labels: [0])
        #expect(s.saturated && s.alpha == 4)
    }
}
