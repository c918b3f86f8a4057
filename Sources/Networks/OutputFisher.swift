import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// The output Fisher information of the deterministic network (σ = 0, docs/METHOD.md §12), one block of size d:
///
///     F = (1/N) Σ_n J_nᵀ (diag p_n − p_n p_nᵀ) J_n,   J_n = ∂ logits(x_n) / ∂θ   (K × d).
///
/// With `diag p_n − p_n p_nᵀ = Λ_n Λ_nᵀ` (Λ_n is K × (K−1), `SoftmaxCovariance.factor`), `F = MᵀM/N` where
/// M has the N(K−1) rows `g_{n,a} = J_nᵀ Λ_n e_a`, so F's nonzero spectrum is that of the
/// `N(K−1) × N(K−1)` Gram `G = M Mᵀ / N`. Restricted to layer m, `g_{n,a}` is the outer product
/// `β^m_{n,a} ⊗ x^{m−1}_n` of the backward signal `β^m_{n,a} = (∂logits/∂z_m)ᵀ Λ_n e_a` (z_m the
/// pre-activation, `β^L = Λ_n e_a`, `β^m = act'(z_m) ⊙ W_{m+1}ᵀ β^{m+1}`) and the layer's input, so
///
///     G = (1/N) Σ_m (B_m B_mᵀ) ∘ (A_m A_mᵀ ⊗ 1_{(K−1)×(K−1)}),
///
/// with `B_m` the N(K−1) × n_m backward signals and `A_m` the N × n_{m−1} layer inputs (augmented with a
/// 1 when the layer has a bias). Neither J (N·K × d) nor F (d × d) is formed. When `d ≤ N(K−1)` the
/// d × d matrix `MᵀM/N` is smaller and is built instead.
///
/// `blockEigenvalues` returns `min(d, N(K−1))` eigenvalues, ascending; the omitted ones are zeros.
public struct OutputFisher: FisherModel {
    public var kind: FisherKind { .output }
    public let architecture: Architecture
    public let activation: Activation
    public let data: Matrix
    public let blockDimensions: [Int]
    /// `A_1 A_1ᵀ` for the data (the first layer's activation Gram does not depend on θ).
    let dataGram: Matrix

    public init(architecture: Architecture, activation: Activation, data: Matrix) throws {
        try FisherKind.output.validate(data: data, architecture: architecture)
        self.architecture = architecture
        self.activation = activation
        self.data = data
        blockDimensions = [architecture.parameterCount]
        let n = data.rows, q = architecture.classes - 1, d = architecture.parameterCount
        // The spectrum comes from an s × s matrix, s = min(d, N(K−1)): refuse what cannot be held.
        let side = Swift.min(d, n * q)
        guard side <= Self.maxSide else {
            throw TwoScaleError.invalid("--samples", "\(n)", allowed: "the output Fisher of \(architecture) at N = \(n) needs a \(side) × \(side) matrix (\(side * side / 134_217_728) GiB); the limit is \(Self.maxSide) (use N(K−1) ≤ \(Self.maxSide), i.e. --samples ≤ \(Self.maxSide / Swift.max(1, q)))")
        }
        // The backward signals are N(K−1) × n_m matrices whatever the route.
        let widest = architecture.stack.map(\.outputSize).max() ?? 1
        let (rowsNQ, o1) = n.multipliedReportingOverflow(by: q)
        let (signals, o2) = rowsNQ.multipliedReportingOverflow(by: widest)
        guard !o1, !o2, signals <= 1 << 30 else {
            throw TwoScaleError.invalid("--samples", "\(n)", allowed: "the output Fisher of \(architecture) holds N(K−1) × n_m backward signals, more than 2³⁰ values at N = \(n); use fewer samples")
        }
        // The first layer's data Gram (N × N) serves only the Gram route (N(K−1) < d).
        dataGram = n * q < d && architecture.stack[0].structure != nil ? architecture.stack[0].inputGram(data) : Matrix(rows: 0, cols: 0)
    }

    /// The largest matrix side the spectrum may need: 2²⁹ doubles (4 GiB) at most.
    public static let maxSide = 23_170

    /// Values of M per chunk in the direct route (tests lower it to exercise the accumulation).
    var chunkValues = 1 << 22

    /// Number of eigenvalues `blockEigenvalues` returns: `min(d, N(K−1))`.
    public var rank: Int { Swift.min(architecture.parameterCount, data.rows * (architecture.classes - 1)) }

    /// The data (the network's input).
    public func blockInputs(_ net: Network, block m: Int) throws -> Matrix {
        try check(net, block: m)
        return data
    }

    func check(_ net: Network, block m: Int) throws {
        guard net.architecture == architecture, net.activation == activation else {
            throw TwoScaleError.failure("internal error: a \(net.architecture) \(net.activation.rawValue) network given to the Fisher model of \(architecture) \(activation.rawValue)")
        }
        guard m == 0 else { throw TwoScaleError.failure("internal error: block \(m) requested, the output Fisher model has one block (0)") }
    }

    enum Route { case automatic, direct, gram }

    /// The `min(d, N(K−1))` largest-possible-rank eigenvalues of F, ascending (omitted ones are zeros).
    public func blockEigenvalues(_ net: Network, block m: Int, inputs x: Matrix) throws -> [Double] {
        try check(net, block: m)
        return try eigenvalues(net, inputs: x, route: .automatic)
    }

    func eigenvalues(_ net: Network, inputs x: Matrix, route: Route) throws -> [Double] {
        guard x.cols == architecture.inputSize, x.rows >= 1 else {
            throw TwoScaleError.failure("internal error: inputs are \(x.rows)×\(x.cols), expected N×\(architecture.inputSize)")
        }
        let n = x.rows, k = architecture.classes, q = k - 1, layers = architecture.layers
        let d = architecture.parameterCount
        let fwd = net.forward(x)
        let probs = Softmax.probabilities(fwd.logits)
        let stack = architecture.stack
        // Backward signals, last layer first: B_L = the Λ columns; B_m = (B_{m+1} ∂Z_{m+1}/∂A_{m+1}) ⊙ act'(Z_m)
        // (the activation factor only after a layer the activation follows).
        var backward = [Matrix](repeating: Matrix(rows: 0, cols: 0), count: layers)
        backward[layers - 1] = MarkovFisher.factors(probs)
        if layers >= 2 {
            for m in stride(from: layers - 2, through: 0, by: -1) {
                var b = stack[m + 1].inputGradient(backward[m + 1], input: fwd.inputs[m + 1], parameters: net.blocks[m + 1])
                if architecture.isActivated(layer: m) {
                    let z = fwd.preActivations[m]
                    let w = z.cols
                    let act = activation
                    b.data.withUnsafeMutableBufferPointer { pb in
                        z.data.withUnsafeBufferPointer { pz in
                            for r in 0..<(n * q) {
                                let zr = pz.baseAddress! + (r / q) * w
                                for j in 0..<w { pb[r * w + j] *= act.derivative(zr[j]) }
                            }
                        }
                    }
                }
                backward[m] = b
            }
        }
        let useGram = route == .gram || (route == .automatic && n * q < d)
        let alpha = 1 / Double(n)
        if useGram {
            var g = Matrix(rows: n * q, cols: n * q)
            for m in 0..<layers where stack[m].structure != nil {
                let gramA = m == 0 && x == data && dataGram.rows > 0
                    ? dataGram : stack[m].inputGram(fwd.inputs[m])
                stack[m].addGradientGram(into: &g, backward: backward[m], inputGram: gramA, q: q, alpha: alpha)
            }
            let eig = try SymmetricEigen.eigenvalues(g)
            return eig.count > d ? Array(eig.suffix(d)) : eig
        }
        // Direct: M (N(K−1) × d), row (n,a) = the per-sample gradients of every layer side by side, then
        // F = MᵀM/N, accumulated over chunks of samples (F += M_cᵀM_c/N) so that memory stays d² + 2²²
        // values whatever N is.
        var f = Matrix(rows: d, cols: d)
        let perChunk = Swift.max(1, chunkValues / Swift.max(1, q * d))
        var mat = [Double](repeating: 0, count: Swift.min(n, perChunk) * q * d)
        var first = 0
        while first < n {
            let count = Swift.min(perChunk, n - first)
            var offset = 0
            mat.withUnsafeMutableBufferPointer { pm in
                for m in 0..<layers where stack[m].structure != nil {
                    stack[m].writeGradientRows(backward: backward[m], input: fwd.inputs[m],
                                               rows: (first * q)..<((first + count) * q), q: q,
                                               into: pm.baseAddress!, stride: d, offset: offset)
                    offset += architecture.parameters(layer: m)
                }
            }
            mat.withUnsafeBufferPointer { pm in
                f.data.withUnsafeMutableBufferPointer { pf in
                    BLAS.syrk(n: d, k: count * q, alpha: alpha, a: pm.baseAddress!, lda: d, transpose: true,
                              beta: 1, c: pf.baseAddress!, ldc: d)
                }
            }
            first += count
        }
        let eig = try SymmetricEigen.eigenvalues(f)
        return Array(eig.suffix(rank))
    }
}
