import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// The Markov Fisher matrix seen as independent *units* (docs/ESTIMATORS.md): given the block's input
/// samples, a Gaussian layer's block is one block per neuron, depending on that neuron's weights only;
/// the softmax layer is one unit holding all its weights. Unit parameters are laid out as the network's:
/// a neuron's row `w_k` then its bias; the softmax unit's rows `w_c` (each followed by `b_c` with biases).
extension MarkovFisher {
    /// Number of units of block m and the parameters of each.
    public func units(block m: Int) -> (count: Int, dimension: Int) {
        let p = architecture.sizes[m] + (architecture.bias ? 1 : 0)
        return m == architecture.layers - 1 ? (1, architecture.classes * p) : (architecture.sizes[m + 1], p)
    }

    /// The block's input samples with the bias column appended (what every unit of block m reads).
    public func unitInputs(_ x: Matrix) -> Matrix { FisherKernels.augmented(x, bias: architecture.bias) }

    /// √ of the nonzero eigenvalues of the unit's Fisher block at parameters `w`, for block m with
    /// augmented inputs `xa` (from `unitInputs`).
    public func unitRoots(_ w: [Double], block m: Int, inputs xa: Matrix) throws -> [Double] {
        let eig = m == architecture.layers - 1 ? try softmaxUnitEigenvalues(w, inputs: xa)
                                               : try neuronEigenvalues(w, inputs: xa)
        return try Spectrum(eigenvalues: eig).roots
    }

    /// `σ⁻² E[act'(w·x)² x xᵀ]` for one neuron (its Gram route, as in `gaussianEigenvalues`).
    func neuronEigenvalues(_ w: [Double], inputs xa: Matrix) throws -> [Double] {
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
        let scale = 1 / (sigma2 * Double(s))
        return try y.withUnsafeBufferPointer { try FisherKernels.gramEigenvalues($0.baseAddress!, rows: rows, cols: p, alpha: scale) }
    }

    /// The softmax block at weights `w` (K rows of the augmented input width).
    func softmaxUnitEigenvalues(_ w: [Double], inputs xa: Matrix) throws -> [Double] {
        let k = architecture.classes, p = xa.cols
        precondition(w.count == k * p)
        let logits = BLAS.product(xa, Matrix(rows: k, cols: p, data: w), transB: true)
        let probs = Softmax.probabilities(logits)
        if xa.rows < p {
            return Array(try softmaxGramEigenvalues(probs, xa).suffix((k - 1) * p))
        }
        return try softmaxDirectEigenvalues(probs, xa)
    }

    /// `Tr F_m(θ)` without an eigenproblem: `σ⁻² E[Σ_k act'(w_k·x)² |x|²]` for a Gaussian layer,
    /// `E[(1 − Σ_c p_c²) |x|²]` for the softmax layer (x augmented with the bias input).
    public func blockTrace(_ net: MLP, block m: Int, inputs x: Matrix) throws -> Double {
        try check(net, block: m)
        let xa = unitInputs(x)
        let s = xa.rows, p = xa.cols
        var norms = [Double](repeating: 0, count: s)
        for i in 0..<s { var q = 0.0; for j in 0..<p { let v = xa.data[i * p + j]; q += v * v }; norms[i] = q }
        let z = net.preActivation(layer: m, input: x)
        var t = 0.0
        if m == architecture.layers - 1 {
            let probs = Softmax.probabilities(z)
            let k = probs.cols
            for i in 0..<s {
                var q = 0.0
                for c in 0..<k { let v = probs.data[i * k + c]; q += v * v }
                t += (1 - q) * norms[i]
            }
            return t / Double(s)
        }
        let width = z.cols
        for i in 0..<s {
            var a = 0.0
            for k in 0..<width { let d = activation.derivative(z.data[i * width + k]); a += d * d }
            t += a * norms[i]
        }
        return t / (sigma2 * Double(s))
    }

    /// Writes unit u's parameters `w` into block m of `net` (the inverse of the layout above).
    public func setUnit(_ net: inout MLP, block m: Int, unit u: Int, parameters w: [Double]) {
        let nIn = architecture.sizes[m], bias = architecture.bias, p = nIn + (bias ? 1 : 0)
        let rows = m == architecture.layers - 1 ? Array(0..<architecture.classes) : [u]
        for (q, r) in rows.enumerated() {
            for j in 0..<nIn { net.weights[m].data[r * nIn + j] = w[q * p + j] }
            if bias { net.biases[m][r] = w[q * p + nIn] }
        }
    }

    /// A network with every parameter 0 (a template whose blocks are filled unit by unit).
    public func zeroNetwork() -> MLP {
        var rng = Xoshiro256(seed: 0)
        var net = MLP.uniform(architecture: architecture, activation: activation, box: 0...0, rng: &rng)
        for m in 0..<architecture.layers {
            net.weights[m].data = [Double](repeating: 0, count: net.weights[m].data.count)
            net.biases[m] = net.biases[m].map { _ in 0 }
        }
        return net
    }
}
