import Foundation
import Networks
import RandomStreams
import Samplers
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

    /// What every unit of block m reads, prepared once per input matrix: the block's input patches
    /// with the bias column appended and, where it can pay, their Gram `X̃X̃ᵀ` (see `neuronEigenvalues`).
    public func unitInputs(_ x: Matrix, block m: Int) -> UnitInputs {
        unitInputs(x, block: m, gram: nil)
    }

    /// `gram`: force (true) or forbid (false) the precomputed Gram; nil decides by size (tests compare
    /// the two routes).
    func unitInputs(_ x: Matrix, block m: Int, gram: Bool?) -> UnitInputs {
        let layer = architecture.parametricLayers[m]
        let xa = architecture.parametric(layer: layer).patches(x)
        let samples = xa.rows / architecture.structure(layer: layer).positions
        let softmax = m == blockDimensions.count - 1
        // The Gram route needs the active rows to be fewer than the columns, so the Gram can only pay
        // when the rows are (at most a few times) the columns; 4096 rows cap it at 128 MiB.
        let useGram = !softmax && (gram ?? (xa.rows <= 4 * xa.cols && xa.rows <= 4096))
        // The softmax unit's direct route (rows ≥ columns) reads the packed outer products x_s x_sᵀ.
        let outer = softmax && xa.rows >= xa.cols ? Self.packedOuterProducts(xa) : nil
        return UnitInputs(block: m, patches: xa, samples: samples,
                          gram: useGram ? BLAS.gram(xa) : nil, outer: outer, rowNorms: Self.rowSquaredNorms(xa))
    }

    /// √ of the nonzero eigenvalues of the unit's Fisher block at parameters `w`, for the block and
    /// inputs that `inputs` (from `unitInputs`) holds.
    public func unitRoots(_ w: [Double], inputs: UnitInputs) throws -> [Double] {
        let eig = inputs.block == blockDimensions.count - 1 ? try softmaxUnitEigenvalues(w, inputs: inputs.patches, outer: inputs.outer)
                                                            : try neuronEigenvalues(w, inputs: inputs)
        return try Spectrum(eigenvalues: eig).roots
    }

    /// √ of the softmax unit's Fisher eigenvalues at `w = 0` (every class equally likely on every input),
    /// where its determinant is largest: for every concave increasing φ,
    ///
    ///     Σ_i φ(λ_i(F(w))) ≤ Σ_i φ(λ_i(F(0)))      for all w,
    ///
    /// so `g_s(w) = Π_i (1 + s √λ_i(F(w))) ≤ g_s(0)` at every scale s, and `Z(s) = E_w g_s(w) ≤ g_s(0)`.
    /// Why (docs/METHOD.md §11, "The softmax block's maximum"): `Φ(M) = Σ_i φ(λ_i(M))` is concave and
    /// monotone on PSD matrices; permuting the classes permutes `F(w)`'s rows and columns and leaves Φ
    /// alone, so Φ(F(w)) is at most Φ of the average over the permutations, which replaces each
    /// `A_n = diag p_n − p_n p_nᵀ` by `α_n (I − 11ᵀ/K)` with `α_n = (1 − |p_n|²)/(K − 1) ≤ 1/K`; the largest
    /// is at uniform p_n, i.e. at `w = 0` (or any w whose class rows are equal, always inside a box).
    /// At `w = 0` the projected block is `I_{K−1} ⊗ X̃ᵀX̃/(S·K)`: the eigenvalues of the inputs'
    /// second-moment matrix over K, each K − 1 times. Computed by `unitRoots` itself, so the bound is of
    /// exactly the function the sampler integrates.
    public func softmaxSupremumRoots(inputs: UnitInputs) throws -> [Double] {
        precondition(inputs.block == blockDimensions.count - 1, "the supremum is the softmax unit's")
        return try unitRoots([Double](repeating: 0, count: architecture.classes * inputs.patches.cols), inputs: inputs)
    }

    /// `Tr F_u(w)`, the trace of the unit's Fisher block, with no eigenproblem: `σ⁻² E[act'(w·x)² |x|²]`
    /// for a Gaussian neuron (a filter: summed over its positions), `E[(1 − Σ_c p_c²) |x|²]` for the
    /// softmax unit (x augmented with the bias input). One matrix–vector product (the softmax unit: one
    /// small matrix product); the smc sampler screens its proposals with it (`SMCUnit.screen`).
    public func unitTrace(_ w: [Double], inputs: UnitInputs) -> Double {
        let xa = inputs.patches
        if inputs.block == blockDimensions.count - 1 {
            let k = architecture.classes, p = xa.cols
            precondition(w.count == k * p)
            let probs = Softmax.probabilities(BLAS.product(xa, Matrix(rows: k, cols: p, data: w), transB: true))
            return Self.softmaxTraceSum(probs, norms: inputs.rowNorms) / Double(inputs.samples)
        }
        let z = Self.preActivations(w, patches: xa)
        return activationTraceSum(z, width: 1, norms: inputs.rowNorms) / (sigma2 * Double(inputs.samples))
    }

    /// `|x_i|²` of every row of `a`.
    static func rowSquaredNorms(_ a: Matrix) -> [Double] {
        let p = a.cols
        return (0..<a.rows).map { i in
            var q = 0.0
            for j in 0..<p { let v = a.data[i * p + j]; q += v * v }
            return q
        }
    }

    /// `Σ_i (1 − Σ_c p_ic²) |x_i|²` over the rows of the softmax probabilities.
    static func softmaxTraceSum(_ probs: Matrix, norms: [Double]) -> Double {
        let k = probs.cols
        var t = 0.0
        for i in 0..<probs.rows {
            var q = 0.0
            for c in 0..<k { let v = probs.data[i * k + c]; q += v * v }
            t += (1 - q) * norms[i]
        }
        return t
    }

    /// `Σ_i Σ_k act'(z_ik)² |x_i|²` for pre-activations z read as rows × `width`.
    func activationTraceSum(_ z: [Double], width: Int, norms: [Double]) -> Double {
        var t = 0.0
        for i in 0..<norms.count {
            var a = 0.0
            for k in 0..<width { let d = activation.derivative(z[i * width + k]); a += d * d }
            t += a * norms[i]
        }
        return t
    }

    /// `X̃ w`, one pre-activation per patch row.
    static func preActivations(_ w: [Double], patches xa: Matrix) -> [Double] {
        let s = xa.rows, p = xa.cols
        precondition(w.count == p)
        var z = [Double](repeating: 0, count: s)
        xa.data.withUnsafeBufferPointer { px in
            w.withUnsafeBufferPointer { pw in
                z.withUnsafeMutableBufferPointer { pz in
                    BLAS.gemv(m: s, n: p, a: px.baseAddress!, lda: p, x: pw.baseAddress!, y: pz.baseAddress!)
                }
            }
        }
        return z
    }

    /// `σ⁻² E[act'(w·x)² x xᵀ]` for one neuron (a filter: the sum over its positions), whose nonzero
    /// eigenvalues are those of the smaller of
    ///
    ///     σ⁻²/S · X̃ᵀ D² X̃   (p × p)   and   σ⁻²/S · D X̃X̃ᵀ D   (r × r),
    ///
    /// D = diag|act'(w·x_i)| over the r rows with act' ≠ 0 (ReLU drops the others). The second reads
    /// the precomputed `X̃X̃ᵀ`, so an evaluation costs one matrix–vector product, an r² scaling and the
    /// eigenproblem, instead of a Gram product of r²p.
    func neuronEigenvalues(_ w: [Double], inputs: UnitInputs) throws -> [Double] {
        let xa = inputs.patches
        let s = xa.rows, p = xa.cols
        let scale = 1 / (sigma2 * Double(inputs.samples))
        let z = Self.preActivations(w, patches: xa)
        var active: [Int] = []
        var weight: [Double] = []
        active.reserveCapacity(s)
        weight.reserveCapacity(s)
        for i in 0..<s {
            let d = activation.derivative(z[i])
            if d == 0 { continue }
            active.append(i)
            weight.append(Swift.abs(d))
        }
        let r = active.count
        if r == 0 { return [] }
        if let g0 = inputs.gram, r <= p {
            var g = Matrix(rows: r, cols: r)
            g0.data.withUnsafeBufferPointer { pg0 in
                g.data.withUnsafeMutableBufferPointer { pg in
                    for a in 0..<r {
                        let row = pg0.baseAddress! + active[a] * s
                        let wa = scale * weight[a]
                        for b in a..<r { pg[a * r + b] = wa * weight[b] * row[active[b]] }
                    }
                }
            }
            return try SymmetricEigen.eigenvalues(g)
        }
        // Scaled active rows (not zero-filled first: every entry is written).
        let y = [Double](unsafeUninitializedCapacity: r * p) { buf, count in
            xa.data.withUnsafeBufferPointer { px in
                for (a, i) in active.enumerated() {
                    let xr = px.baseAddress! + i * p
                    let yr = buf.baseAddress! + a * p
                    let wa = weight[a]
                    for j in 0..<p { yr[j] = wa * xr[j] }
                }
            }
            count = r * p
        }
        return try y.withUnsafeBufferPointer { try FisherKernels.gramEigenvalues($0.baseAddress!, rows: r, cols: p, alpha: scale) }
    }

    /// The softmax block at weights `w` (K rows of the augmented input width); `outer`: the inputs'
    /// packed outer products, when precomputed (`packedOuterProducts`).
    func softmaxUnitEigenvalues(_ w: [Double], inputs xa: Matrix, outer: [Double]? = nil) throws -> [Double] {
        let k = architecture.classes, p = xa.cols
        precondition(w.count == k * p)
        // The unit's parameters are the rows w_c (each with its bias last): logits = X̃ Wᵀ.
        let logits = BLAS.product(xa, Matrix(rows: k, cols: p, data: w), transB: true)
        let probs = Softmax.probabilities(logits)
        if xa.rows < p {
            return Array(try softmaxGramEigenvalues(probs, xa).suffix((k - 1) * p))
        }
        if let outer { return try SymmetricEigen.eigenvalues(softmaxProjectedFisher(probs, outer: outer, columns: p)) }
        return try softmaxDirectEigenvalues(probs, xa)
    }

    /// `Tr F_m(θ)` without an eigenproblem: `σ⁻² E[Σ_k act'(w_k·x)² |x|²]` for a Gaussian layer,
    /// `E[(1 − Σ_c p_c²) |x|²]` for the softmax layer (x augmented with the bias input).
    public func blockTrace(_ net: Network, block m: Int, inputs x: Matrix) throws -> Double {
        try check(net, block: m)
        let layer = architecture.parametricLayers[m]
        let xa = architecture.parametric(layer: layer).patches(x)
        let norms = Self.rowSquaredNorms(xa)
        let z = net.preActivation(layer: layer, input: x)
        if m == blockDimensions.count - 1 {
            return Self.softmaxTraceSum(Softmax.probabilities(z), norms: norms) / Double(xa.rows)
        }
        // Row i of the patches is (sample, position) i; z read as (S·P) × units has the same rows.
        let width = architecture.structure(layer: layer).units
        return activationTraceSum(z.data, width: width, norms: norms) / (sigma2 * Double(x.rows))
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

/// A block's unit inputs, prepared once for many evaluations (`MarkovFisher.unitInputs`).
public struct UnitInputs: Sendable {
    /// The Fisher block whose units read these inputs.
    public let block: Int
    /// The augmented input patches, one row per (sample, position).
    public let patches: Matrix
    /// Samples the block averages over (patches / positions).
    let samples: Int
    /// `patches · patchesᵀ`, both triangles, when the Gram route can pay.
    let gram: Matrix?
    /// The softmax unit's packed outer products `x_s x_sᵀ` (`MarkovFisher.packedOuterProducts`).
    let outer: [Double]?
    /// `|x̃_i|²` of every patch row (the traces of `unitTrace`).
    let rowNorms: [Double]
}
