import Foundation
import Networks
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
/// 1 when the layer has a bias). A layer whose weights are shared over positions (a convolution) has
/// `g_{n,a} = Σ_p β_{n,a,p} ⊗ x̃_{n,p}`, not one outer product: its rows are formed and their Gram taken
/// with the other such layers' in one `syrk`. Neither J (N·K × d) nor F (d × d) is formed. When
/// `d ≤ N(K−1)` the d × d matrix `MᵀM/N` is smaller and is built instead.
///
/// The backward signals are computed a few samples at a time (≤ 2¹⁹ values per layer), so the
/// N(K−1) × n_m matrices of wide layers (a convolution's output) are never held whole; only the
/// Hadamard layers' (one position per unit) are gathered.
///
/// `blockEigenvalues` returns `min(d, N(K−1))` eigenvalues, ascending; the omitted ones are zeros.
public struct OutputFisher: FisherModel {
    public var kind: FisherKind { .output }
    public let architecture: Architecture
    public let activation: Activation
    public let data: Matrix
    public let blockDimensions: [Int]
    /// `A_1 A_1ᵀ` for the data (the first layer's activation Gram does not depend on θ), or empty.
    let dataGram: Matrix
    /// The first layer's patches of the data when its gradient rows are formed, or empty.
    let dataPatches: Matrix

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
            throw TwoScaleError.invalid("\(Setting.samples)", "\(n)", allowed: "the output Fisher of \(architecture) at N = \(n) needs a \(side) × \(side) matrix (\(side * side / 134_217_728) GiB); the limit is \(Self.maxSide) (use N(K−1) ≤ \(Self.maxSide), i.e. \(Setting.samples) ≤ \(Self.maxSide / Swift.max(1, q)))")
        }
        // The backward signals are N(K−1) × n_m matrices whatever the route.
        let widest = architecture.stack.map(\.outputSize).max() ?? 1
        let (rowsNQ, o1) = n.multipliedReportingOverflow(by: q)
        let (signals, o2) = rowsNQ.multipliedReportingOverflow(by: widest)
        guard !o1, !o2, signals <= 1 << 30 else {
            throw TwoScaleError.invalid("\(Setting.samples)", "\(n)", allowed: "the output Fisher of \(architecture) holds N(K−1) × n_m backward signals, more than 2³⁰ values at N = \(n); use fewer samples")
        }
        // On the Gram route the weight-shared layers' gradient rows are held whole: N(K−1) × their parameters.
        let shared = Self.rowLayers(architecture, gram: true).map { architecture.parameters(layer: $0) }.reduce(0, +)
        let (rowValues, o3) = rowsNQ.multipliedReportingOverflow(by: shared)
        guard rowsNQ >= d || (!o3 && rowValues <= 1 << 30) else {
            throw TwoScaleError.invalid("\(Setting.samples)", "\(n)", allowed: "the output Fisher of \(architecture) holds the N(K−1) per-sample gradient rows of its convolutions (N(K−1) × \(shared) values), more than 2³⁰ at N = \(n); use fewer samples")
        }
        // What the first layer needs of the data, the same for every θ: its Gram (N × N) on the Gram route
        // when its share comes from the backward Gram, otherwise its patches.
        if let first = architecture.stack[0].parametric, n * q < d && first.gramFromBackward {
            dataGram = first.inputGram(data)
            dataPatches = Matrix(rows: 0, cols: 0)
        } else if let first = architecture.stack[0].parametric {
            dataGram = Matrix(rows: 0, cols: 0)
            dataPatches = first.patches(data)
        } else {
            dataGram = Matrix(rows: 0, cols: 0)
            dataPatches = Matrix(rows: 0, cols: 0)
        }
    }

    /// The parametric layers whose Gram share is taken from their per-sample gradient rows: every one on
    /// the direct route, the weight-shared ones (`gramFromBackward` false) on the Gram route.
    static func rowLayers(_ architecture: Architecture, gram: Bool) -> [Int] {
        architecture.parametricLayers.filter { !gram || !architecture.parametric(layer: $0).gramFromBackward }
    }

    /// The largest matrix side the spectrum may need: 2²⁹ doubles (4 GiB) at most.
    public static let maxSide = 23_170

    /// Values of M per chunk in the direct route (tests lower it to exercise the accumulation).
    var chunkValues = 1 << 22
    /// Backward-signal values per layer and chunk of samples (tests lower it to exercise the chunks).
    var backwardChunkValues = 1 << 19

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
        let lambda = MarkovFisher.factors(Softmax.probabilities(fwd.logits))
        let stack = architecture.stack
        let useGram = route == .gram || (route == .automatic && n * q < d)
        let alpha = 1 / Double(n)
        let onData = x == data
        // Layers whose share is taken from their gradient rows (every layer on the direct route), with
        // their column offsets in the row matrix; and, on the Gram route, the layers whose share comes
        // from their whole backward signals.
        let byRows = Self.rowLayers(architecture, gram: useGram)
        let byBackward = architecture.parametricLayers.filter { !byRows.contains($0) }
        var columns = [Int](repeating: 0, count: layers), width = 0
        for m in byRows { columns[m] = width; width += architecture.parameters(layer: m) }
        var gathered = [Int: Matrix]()
        for m in byBackward { gathered[m] = Matrix(rows: n * q, cols: stack[m].outputSize) }
        // Samples per chunk: ≤ backwardChunkValues per layer; on the direct route also ≤ chunkValues of M.
        let widest = stack.map(\.outputSize).max() ?? 1
        var perChunk = Swift.max(1, backwardChunkValues / Swift.max(1, q * widest))
        if !useGram { perChunk = Swift.min(perChunk, Swift.max(1, chunkValues / Swift.max(1, q * d))) }
        // The Gram route holds all N(K−1) rows (their Gram couples every pair); the direct route one chunk's,
        // accumulating F = Σ_chunks M_cᵀM_c/N.
        var mat = [Double](repeating: 0, count: (useGram ? n : Swift.min(n, perChunk)) * q * width)
        var f = Matrix(rows: useGram ? 0 : d, cols: useGram ? 0 : d)
        var first = 0
        while first < n {
            let count = Swift.min(perChunk, n - first)
            let samples = first..<(first + count), rows = (first * q)..<((first + count) * q)
            // Backward signals of the chunk, last layer first: B_L = the Λ columns;
            // B_m = (B_{m+1} ∂Z_{m+1}/∂A_{m+1}) ⊙ act'(Z_m) (the factor only after a layer the activation follows).
            var b = lambda.rows(rows)
            for m in stride(from: layers - 1, through: 0, by: -1) {
                if m < layers - 1 {
                    b = stack[m + 1].inputGradient(b, input: fwd.inputs[m + 1].rows(samples), parameters: net.blocks[m + 1])
                    if architecture.isActivated(layer: m) { applySlopes(&b, preActivations: fwd.preActivations[m], samples: samples, q: q) }
                }
                if gathered[m] != nil {
                    let w = b.cols
                    gathered[m]!.data.withUnsafeMutableBufferPointer { pg in
                        b.data.withUnsafeBufferPointer { pb in
                            (pg.baseAddress! + rows.lowerBound * w).update(from: pb.baseAddress!, count: b.data.count)
                        }
                    }
                }
                if byRows.contains(m) {
                    let fromData = m == 0 && onData && dataPatches.rows > 0
                    let layer = architecture.parametric(layer: m)
                    let xp = fromData ? dataPatches : layer.patches(fwd.inputs[m].rows(samples))
                    let rowOffset = useGram ? rows.lowerBound : 0
                    mat.withUnsafeMutableBufferPointer { pm in
                        layer.writeGradientRows(backward: b, patches: xp, first: fromData ? first : 0, q: q,
                                                   into: pm.baseAddress! + rowOffset * width, stride: width, offset: columns[m])
                    }
                }
            }
            if !useGram {
                mat.withUnsafeBufferPointer { pm in
                    f.data.withUnsafeMutableBufferPointer { pf in
                        BLAS.syrk(n: d, k: count * q, alpha: alpha, a: pm.baseAddress!, lda: d, transpose: true,
                                  beta: 1, c: pf.baseAddress!, ldc: d)
                    }
                }
            }
            first += count
        }
        if useGram {
            let side = n * q
            var g = Matrix(rows: side, cols: side)
            if width > 0 {
                mat.withUnsafeBufferPointer { pm in
                    g.data.withUnsafeMutableBufferPointer { pg in
                        BLAS.syrk(n: side, k: width, alpha: alpha, a: pm.baseAddress!, lda: width, beta: 0, c: pg.baseAddress!, ldc: side)
                    }
                }
            }
            for m in byBackward {
                let layer = architecture.parametric(layer: m)
                let gramA = m == 0 && onData && dataGram.rows > 0 ? dataGram : layer.inputGram(fwd.inputs[m])
                layer.addGradientGram(into: &g, backward: gathered[m]!, inputGram: gramA, q: q, alpha: alpha)
            }
            let eig = try SymmetricEigen.eigenvalues(g)
            return eig.count > d ? Array(eig.suffix(d)) : eig
        }
        let eig = try SymmetricEigen.eigenvalues(f)
        return Array(eig.suffix(rank))
    }

    /// `B ← B ⊙ act'(Z)` for the chunk `samples` (q rows of B per sample), act' taken once per sample.
    func applySlopes(_ b: inout Matrix, preActivations z: Matrix, samples: Range<Int>, q: Int) {
        let w = z.cols, act = activation
        let slopes = z.data[(samples.lowerBound * w)..<(samples.upperBound * w)].map { act.derivative($0) }
        b.data.withUnsafeMutableBufferPointer { pb in
            slopes.withUnsafeBufferPointer { ps in
                for r in 0..<b.rows {
                    let sr = ps.baseAddress! + (r / q) * w, br = pb.baseAddress! + r * w
                    for j in 0..<w { br[j] *= sr[j] }
                }
            }
        }
    }
}
