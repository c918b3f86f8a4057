import Foundation
import Sampling
import TwoScaleCore
import TwoScaleNumerics

/// The Markov Fisher matrix seen as independent *units* (docs/ESTIMATORS.md): given the block's input
/// samples, a Gaussian layer's block is one block per neuron, depending on that neuron's weights only;
/// the softmax layer is one unit holding all its weights. Unit parameters are laid out as the network's:
/// a neuron's row `w_k` then its bias; the softmax unit's rows `w_c` (each followed by `b_c` with biases).
extension MarkovFisher {
    /// Number of units of block m and the parameters of each.
    public func units(block m: Int) -> (count: Int, dimension: Int) {
        let st = architecture.structure(layer: architecture.parametricLayers[m])
        return m == blockDimensions.count - 1 ? (1, st.parameterCount) : (st.units, st.unitDimension)
    }

    /// The block's input patches with the bias column appended (what every unit of block m reads).
    public func unitInputs(_ x: Matrix, block m: Int) -> Matrix {
        architecture.stack[architecture.parametricLayers[m]].patches(x)
    }

    /// √ of the nonzero eigenvalues of the unit's Fisher block at parameters `w`, for block m with
    /// augmented inputs `xa` (from `unitInputs`).
    public func unitRoots(_ w: [Double], block m: Int, inputs xa: Matrix) throws -> [Double] {
        let positions = architecture.structure(layer: architecture.parametricLayers[m]).positions
        let eig = m == blockDimensions.count - 1 ? try softmaxUnitEigenvalues(w, inputs: xa)
                                                 : try neuronEigenvalues(w, inputs: xa, samples: xa.rows / positions)
        return try Spectrum(eigenvalues: eig).roots
    }

    /// `σ⁻² E[act'(w·x)² x xᵀ]` for one neuron (its Gram route, as in `gaussianEigenvalues`). The
    /// samples are the rows of `xa` (a unit shared over positions: use `unitRoots`, which divides by
    /// the number of samples, not of patches).
    func neuronEigenvalues(_ w: [Double], inputs xa: Matrix, samples: Int? = nil) throws -> [Double] {
        let s = xa.rows, p = xa.cols
        precondition(w.count == p)
        var y = [Double](repeating: 0, count: s * p)
        var rows = 0
        xa.data.withUnsafeBufferPointer { px in
            y.withUnsafeMutableBufferPointer { py in
                for i in 0..<s {
                    let xr = px.baseAddress! + i * p
                    var z = 0.0
                    for j in 0..<p { z += w[j] * xr[j] }
                    let d = activation.derivative(z)
                    if d == 0 { continue }
                    let a = Swift.abs(d)
                    let yr = py.baseAddress! + rows * p
                    for j in 0..<p { yr[j] = a * xr[j] }
                    rows += 1
                }
            }
        }
        let scale = 1 / (sigma2 * Double(samples ?? s))
        return try y.withUnsafeBufferPointer { try FisherKernels.gramEigenvalues($0.baseAddress!, rows: rows, cols: p, alpha: scale) }
    }

    /// The softmax block at weights `w` (K rows of the augmented input width).
    func softmaxUnitEigenvalues(_ w: [Double], inputs xa: Matrix) throws -> [Double] {
        let k = architecture.classes, p = xa.cols
        precondition(w.count == k * p)
        // The unit's parameters are the rows w_c (each with its bias last): logits = X̃ Wᵀ.
        let logits = BLAS.product(xa, Matrix(rows: k, cols: p, data: w), transB: true)
        let probs = Softmax.probabilities(logits)
        if xa.rows < p {
            return Array(try softmaxGramEigenvalues(probs, xa).suffix((k - 1) * p))
        }
        return try softmaxDirectEigenvalues(probs, xa)
    }

    /// `Tr F_m(θ)` without an eigenproblem: `σ⁻² E[Σ_k act'(w_k·x)² |x|²]` for a Gaussian layer,
    /// `E[(1 − Σ_c p_c²) |x|²]` for the softmax layer (x augmented with the bias input).
    public func blockTrace(_ net: Network, block m: Int, inputs x: Matrix) throws -> Double {
        try check(net, block: m)
        let layer = architecture.parametricLayers[m]
        let xa = unitInputs(x, block: m)
        let s = xa.rows, p = xa.cols
        var norms = [Double](repeating: 0, count: s)
        for i in 0..<s { var q = 0.0; for j in 0..<p { let v = xa.data[i * p + j]; q += v * v }; norms[i] = q }
        let z = net.preActivation(layer: layer, input: x)
        var t = 0.0
        if m == blockDimensions.count - 1 {
            let probs = Softmax.probabilities(z)
            let k = probs.cols
            for i in 0..<s {
                var q = 0.0
                for c in 0..<k { let v = probs.data[i * k + c]; q += v * v }
                t += (1 - q) * norms[i]
            }
            return t / Double(s)
        }
        // Row i of the patches is (sample, position) i; z read as (S·P) × units has the same rows.
        let width = architecture.structure(layer: layer).units
        for i in 0..<s {
            var a = 0.0
            for k in 0..<width { let d = activation.derivative(z.data[i * width + k]); a += d * d }
            t += a * norms[i]
        }
        return t / (sigma2 * Double(x.rows))
    }

    /// Writes unit u's parameters `w` into block m of `net` (the inverse of the layout above): a
    /// Gaussian unit is one weight row and its bias; the softmax unit is every row, each followed by
    /// its bias.
    public func setUnit(_ net: inout Network, block m: Int, unit u: Int, parameters w: [Double]) {
        let layer = architecture.parametricLayers[m]
        let st = architecture.structure(layer: layer)
        let rows = m == blockDimensions.count - 1 ? Array(0..<st.units) : [u]
        for (q, r) in rows.enumerated() {
            for (j, i) in st.unitIndices(r).enumerated() { net.blocks[layer][i] = w[q * st.unitDimension + j] }
        }
    }

    /// A network with every parameter 0 (a template whose blocks are filled unit by unit).
    public func zeroNetwork() -> Network { Network.zeros(architecture: architecture, activation: activation) }
}
