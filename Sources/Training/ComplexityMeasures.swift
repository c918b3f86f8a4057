import Foundation
import Networks
import TwoScaleCore
import TwoScaleNumerics

/// Classic complexity measures of a (trained) network, as Jiang et al. define them ("Fantastic
/// generalization measures", ICLR 2020, Appendix C), for the measure study of issue 41. Biases are
/// parameters of θ where a measure uses θ, but never "weight matrices".
public enum ComplexityMeasures {
    /// The spectral norm `‖W_m‖₂` (largest singular value) of every parametric layer's weight matrix, in
    /// layer order: `√λ_max(W Wᵀ)` (or of `WᵀW`, the smaller Gram) by LAPACK. A dense layer's W is its
    /// n_out × n_in matrix. For a convolution it is the *reshaped kernel matrix* (filters × k²·C_in, one
    /// row per filter, as `LayerStructure` lays it out), not the operator norm of the convolution on
    /// images, which differs (it depends on the image size, stride and padding, and can be up to k/s
    /// times larger). Pooling layers have no weights and are skipped.
    public static func spectralNorms(_ net: Network) throws -> [Double] {
        try net.weights.map { w in
            let g = BLAS.gram(w, transpose: w.rows > w.cols)
            let top = try SymmetricEigen.eigenvalues(g).last ?? 0
            return Swift.max(0, top).squareRoot()
        }
    }

    /// `log Π_m ‖W_m‖₂ = Σ_m log ‖W_m‖₂`, the product of spectral norms on the scale one ranks (−∞ when a
    /// weight matrix is 0). Jiang's "log.prod.of.spec" is `log Π_m ‖W_m‖₂²`, twice this: the same ranks.
    public static func logProductOfSpectralNorms(_ net: Network) throws -> Double {
        try spectralNorms(net).reduce(0) { $0 + Foundation.log($1) }
    }

    /// `Π_m ‖W_m‖₂` (may overflow to +∞ for deep networks; rank `logProductOfSpectralNorms` instead).
    public static func productOfSpectralNorms(_ net: Network) throws -> Double {
        Foundation.exp(try logProductOfSpectralNorms(net))
    }

    /// The Fisher–Rao norm on a labelled set (x_i, y_i), i = 1…n, with ℓ the cross-entropy of the
    /// softmax output and ∇_θ over every parameter (weights and biases), by backpropagation one sample
    /// at a time (`Network.crossEntropyGradient`).
    public static func fisherRao(_ net: Network, inputs x: Matrix, labels: [Int]) throws -> FisherRaoNorm {
        let a = net.architecture
        guard x.rows >= 1, labels.count == x.rows else {
            throw TwoScaleError.usage("the Fisher–Rao norm needs at least one sample and one label per sample (\(x.rows) rows, \(labels.count) labels)")
        }
        guard x.cols == a.inputSize else { throw TwoScaleError.usage("the Fisher–Rao norm: inputs have \(x.cols) columns, the network reads \(a.inputSize)") }
        guard labels.allSatisfy({ (0..<a.classes).contains($0) }) else { throw TwoScaleError.usage("the Fisher–Rao norm: a label is outside 0..<\(a.classes)") }
        guard x.data.allSatisfy(\.isFinite) else { throw TwoScaleError.usage("the Fisher–Rao norm: an input is not finite") }
        let theta = net.parameters
        var sum = 0.0
        for i in 0..<x.rows {
            let g = net.crossEntropyGradient(inputs: x.rows(i..<(i + 1)), labels: [labels[i]]).gradient
            var inner = 0.0
            for j in theta.indices { inner += theta[j] * g[j] }
            sum += inner * inner
        }
        return FisherRaoNorm(meanSquaredInnerProduct: sum / Double(x.rows), depth: a.parametricLayers.count)
    }
}

/// The Fisher–Rao norm (Liang, Poggio, Rakhlin & Stokes, AISTATS 2019) as Jiang et al. give it
/// (Appendix C, "fisher-rao"):
///
///     μ_fr = ((d + 1)² / n) Σ_i ⟨θ, ∇_θ ℓ(f_θ(x_i), y_i)⟩²,
///
/// d the depth — here the number of parametric (weight) layers — and y_i the data's labels (the
/// empirical version, not labels drawn from the model). `meanSquaredInnerProduct` is the sum without
/// the depth factor, `(1/n) Σ_i ⟨θ, ∇ℓ_i⟩²`, which is Liang et al.'s ⟨θ, I(θ) θ⟩ with the empirical
/// Fisher: for a bias-free ReLU network of L weight layers, ⟨θ, ∇ℓ⟩ = L ⟨∂ℓ/∂f, f⟩ already holds the
/// depth (Euler's theorem), so Jiang's factor counts it once more; the two rank differently across depths.
public struct FisherRaoNorm: Sendable, Equatable {
    public let meanSquaredInnerProduct: Double
    /// d: the parametric layers.
    public let depth: Int
    /// Jiang's μ_fr = (d + 1)² · `meanSquaredInnerProduct`.
    public var jiang: Double { Double((depth + 1) * (depth + 1)) * meanSquaredInnerProduct }
}
