import Foundation
import Networks
import RandomStreams
import TwoScaleCore
import TwoScaleNumerics

/// The Markov (joint) Fisher information of the stochastic network (docs/METHOD.md §11), block diagonal over
/// layers. Hidden layers are Gaussian, `x_m = act(W_m x_{m−1} (+ b_m)) + v_m`, `v_m ~ N(0, σ²I)`;
/// the output is `y ~ softmax(W_L x_{L−1} (+ b_L))`. Blocks are 0-based here (block m = layer m + 1).
///
/// * Gaussian layer: `F_m = σ⁻² E[diag(act'(W_m x)²) ⊗ x xᵀ]`, x = x_{m−1}, block diagonal with one
///   `n_{m−1} × n_{m−1}` block per neuron k: `σ⁻² E[act'(w_k·x)² x xᵀ] = Yᵀ_k Y_k`, where row s of
///   `Y_k` is `√(act'(w_k·x_s)² / (σ² S)) · x_s`. Its spectrum comes from `Y_kᵀY_k` or, when fewer
///   samples than inputs carry weight, from the smaller Gram `Y_k Y_kᵀ` (same nonzero spectrum).
/// * Softmax layer: `F_L = E[(diag p − p pᵀ) ⊗ x xᵀ]`. Every vector `1 ⊗ u` is in its kernel, so with
///   Q the `K × (K−1)` Helmert basis of `1^⊥`, `F_L` has the spectrum of
///   `F' = E[Qᵀ(diag p − p pᵀ)Q ⊗ x xᵀ]` (size `(K−1)·n_{L−1}`) plus `n_{L−1}` zeros. When there are
///   fewer samples than inputs, the `S(K−1)` Gram `G[(s,a),(t,b)] = (Λ_s e_a · Λ_t e_b)(x_s · x_t)/S`
///   is used instead (Λ_s the `K × (K−1)` factor of `diag p_s − p_s p_sᵀ`).
///
/// With biases the input x is augmented with a constant 1 (the bias is the weight of that input), so a
/// neuron's block is `(n_{m−1} + 1)²`. `E` averages over the S = N·R samples of the block's input: the N
/// data inputs for the first layer; for later layers each data input with R noise draws propagated
/// through all hidden layers. The noise `v_m` for (sample n, draw r, hidden layer m) comes from
/// `Xoshiro256(seed: noiseSeed, stream: [NOIS, n, r, m])` — never from θ — so every θ sees the same
/// draws (common random numbers).
public struct MarkovFisher: FisherModel {
    public var kind: FisherKind { .markov }
    public let architecture: Architecture
    public let activation: Activation
    public let data: Matrix
    public let sigma2: Double
    public let noiseSamples: Int
    public let noiseSeed: UInt64
    public let blockDimensions: [Int]
    /// σ·v for hidden layer m (0-based, m < L − 1): `(N·R) × n_{m+1}`, row `n·R + r`.
    let noise: [Matrix]

    static let noiseStream: UInt64 = 0x4E4F_4953  // "NOIS"

    public init(architecture: Architecture, activation: Activation, data: Matrix, sigma2: Double,
                noiseSamples: Int, noiseSeed: UInt64) throws {
        guard sigma2.isFinite, sigma2 > 0 else {
            throw TwoScaleError.invalid("\(Setting.noiseVariance)", "\(sigma2)", allowed: "the noise variance σ² must be a finite number > 0")
        }
        guard noiseSamples >= 1 else {
            throw TwoScaleError.invalid("\(Setting.noiseSamples)", "\(noiseSamples)", allowed: "the number of noise draws R must be ≥ 1")
        }
        // Hidden states are held for all S = N·R samples: S × n_m values per layer.
        let widest = architecture.stack.map { Swift.max($0.inputSize, $0.outputSize) }.max() ?? 1
        let (s, o1) = data.rows.multipliedReportingOverflow(by: noiseSamples)
        let (values, o2) = s.multipliedReportingOverflow(by: widest)
        guard !o1, !o2, values <= 1 << 28 else {
            throw TwoScaleError.invalid("\(Setting.noiseSamples)", "\(noiseSamples)", allowed: "the hidden states of N·R = \(data.rows)·\(noiseSamples) samples would exceed 2²⁸ values per layer; use fewer noise draws or samples (N·R·n_m ≤ 2²⁸)")
        }
        try FisherKind.markov.validate(data: data, architecture: architecture)
        self.architecture = architecture
        self.activation = activation
        self.data = data
        self.sigma2 = sigma2
        self.noiseSamples = noiseSamples
        self.noiseSeed = noiseSeed
        blockDimensions = architecture.parametricLayers.map { architecture.parameters(layer: $0) }
        let sigma = sigma2.squareRoot()
        let n = data.rows, r = noiseSamples
        let hidden = architecture.stack.indices.filter { architecture.isActivated(layer: $0) }
        noise = hidden.indices.map { m in
            let width = architecture.stack[hidden[m]].outputSize
            var v = Matrix(rows: n * r, cols: width)
            for i in 0..<n {
                for j in 0..<r {
                    var rng = Xoshiro256(seed: noiseSeed, stream: [Self.noiseStream, UInt64(i), UInt64(j), UInt64(m)])
                    let row = (i * r + j) * width
                    for k in 0..<width { v.data[row + k] = sigma * rng.normal() }
                }
            }
            return v
        }
    }

    func check(_ net: Network, block m: Int) throws {
        guard net.architecture == architecture, net.activation == activation else {
            throw TwoScaleError.failure("internal error: a \(net.architecture) \(net.activation.rawValue) network given to the Fisher model of \(architecture) \(activation.rawValue)")
        }
        guard blockDimensions.indices.contains(m) else {
            throw TwoScaleError.failure("internal error: block \(m) requested, the Markov model has blocks 0..<\(blockDimensions.count)")
        }
    }

    /// The first block's input samples: the data through the parameter-free layers before the first
    /// parametric one (pooling or flattening), the same for every θ; the data itself where there are none.
    public var firstBlockInputs: Matrix {
        var h = data
        for layer in architecture.stack.prefix(architecture.parametricLayers[0]) { h = layer.forward(h, parameters: []) }
        return h
    }

    /// The samples of `x_m` (the input of block m): `firstBlockInputs` for m = 0; for m ≥ 1 the N·R
    /// rows `x_m = act(W_m x_{m−1} + b_m) + σ v_m` (row `n·R + r`: data input n, noise draw r).
    public func blockInputs(_ net: Network, block m: Int) throws -> Matrix {
        try check(net, block: m)
        return try blockInputs(net, blocks: m + 1)[m]
    }

    /// The input samples of blocks `0..<count` of `net` (`blockInputs`), from one pass through the layers.
    public func blockInputs(_ net: Network, blocks count: Int) throws -> [Matrix] {
        try check(net, block: count - 1)
        let target = architecture.parametricLayers[count - 1]
        let n = data.rows, r = noiseSamples
        var h = firstBlockInputs
        var out = [h]
        var expanded = false
        var hidden = 0
        for layer in architecture.parametricLayers[0]..<target {
            defer { if out.count < count, architecture.parametricLayers[out.count] == layer + 1 { out.append(h) } }
            let z = net.preActivation(layer: layer, input: h)
            guard architecture.isActivated(layer: layer) else { h = z; continue }
            let a = net.activate(z)
            if expanded {
                var next = a
                let v = noise[hidden]
                for i in next.data.indices { next.data[i] += v.data[i] }
                h = next
            } else {
                // The first noisy layer: its input is deterministic (one row per data input), so its
                // activation is computed once per data input and repeated for the R noise draws.
                let w = a.cols
                var next = noise[hidden]
                next.data.withUnsafeMutableBufferPointer { ph in
                    a.data.withUnsafeBufferPointer { pz in
                        for i in 0..<n { for j in 0..<r { for k in 0..<w { ph[(i * r + j) * w + k] += pz[i * w + k] } } }
                    }
                }
                h = next
                expanded = true
            }
            hidden += 1
        }
        return out
    }

    /// All `blockDimensions[m]` eigenvalues of `F_m`, ascending, zeros included.
    public func blockEigenvalues(_ net: Network, block m: Int, inputs x: Matrix) throws -> [Double] {
        try check(net, block: m)
        let layer = architecture.parametricLayers[m]
        guard x.cols == architecture.stack[layer].inputSize, x.rows >= 1 else {
            throw TwoScaleError.failure("internal error: block \(m) inputs are \(x.rows)×\(x.cols), expected S×\(architecture.stack[layer].inputSize)")
        }
        return m == blockDimensions.count - 1
            ? try softmaxEigenvalues(net, inputs: x)
            : try gaussianEigenvalues(net, layer: layer, inputs: x)
    }

    /// Which route the softmax layer takes (exposed for tests): the `(K−1)p` projected Fisher matrix
    /// or the `S(K−1)` Gram.
    enum Route { case automatic, direct, gram }

    /// Gaussian layer m: per unit k the eigenvalues of `Y_kᵀ Y_k` (see the type's documentation); a
    /// unit shared over P positions has S·P rows, one per (sample, position) patch.
    func gaussianEigenvalues(_ net: Network, layer m: Int, inputs x: Matrix, route: Route = .automatic) throws -> [Double] {
        let z = net.preActivation(layer: m, input: x)
        let xa = architecture.parametric(layer: m).patches(x)
        let units = architecture.structure(layer: m).units
        let s = xa.rows, p = xa.cols, width = units
        let scale = 1 / (sigma2 * Double(x.rows))
        var values: [Double] = []
        values.reserveCapacity(width * p)
        var y = [Double](repeating: 0, count: s * p)
        for k in 0..<width {
            // Rows with act' = 0 (relu) carry no weight and are dropped.
            var rows = 0
            y.withUnsafeMutableBufferPointer { py in
                xa.data.withUnsafeBufferPointer { px in
                    z.data.withUnsafeBufferPointer { pz in
                        for i in 0..<s {
                            let d = activation.derivative(pz[i * width + k])
                            if d == 0 { continue }
                            let w = Swift.abs(d), to = py.baseAddress! + rows * p, from = px.baseAddress! + i * p
                            if w == 1 { to.update(from: from, count: p) } else { for j in 0..<p { to[j] = w * from[j] } }
                            rows += 1
                        }
                    }
                }
            }
            let eig: [Double]
            switch route {
            case .automatic:
                eig = try y.withUnsafeBufferPointer { try FisherKernels.gramEigenvalues($0.baseAddress!, rows: rows, cols: p, alpha: scale) }
            case .direct, .gram:
                guard rows > 0 else { continue }
                let g = y.withUnsafeBufferPointer { FisherKernels.syrk($0.baseAddress!, rows: rows, cols: p, transpose: route == .direct, alpha: scale) }
                // The larger of the two Grams has max(rows, p) − min(rows, p) extra zero eigenvalues.
                eig = Array(try SymmetricEigen.eigenvalues(g).suffix(Swift.min(rows, p)))
            }
            values.append(contentsOf: eig)
        }
        return FisherKernels.padded(values, to: architecture.parameters(layer: m))
    }

    /// Softmax layer: the projected Fisher matrix `F'` or the Gram, whichever is smaller.
    func softmaxEigenvalues(_ net: Network, inputs x: Matrix, route: Route = .automatic) throws -> [Double] {
        let last = architecture.layers - 1
        let probs = Softmax.probabilities(net.preActivation(layer: last, input: x))
        let xa = architecture.parametric(layer: last).patches(x)
        let s = x.rows, p = xa.cols, k = architecture.classes
        let useGram = route == .gram || (route == .automatic && s < p)
        // A Gram larger than F' (forced route) carries extra zeros: keep the (K−1)p largest.
        let eig = useGram ? Array(try softmaxGramEigenvalues(probs, xa).suffix((k - 1) * p))
                          : try softmaxDirectEigenvalues(probs, xa)
        return FisherKernels.padded(eig, to: k * p)
    }

    /// `F'[(a,i),(b,j)] = (1/S) Σ_s A'_s[a,b] x_si x_sj`, `A'_s = Qᵀ(diag p_s − p_s p_sᵀ)Q`, computed as one
    /// gemm `Xᵀ·Y` with `Y[s, (ab, j)] = A'_s[a,b] x_sj / S` over the pairs a ≤ b.
    func softmaxDirectEigenvalues(_ probs: Matrix, _ xa: Matrix) throws -> [Double] {
        try SymmetricEigen.eigenvalues(softmaxProjectedFisher(probs, xa))
    }

    /// The projected softmax covariances `A'_s[a, b] / S` (a ≤ b, packed row by row) of every sample,
    /// `A'_s = Qᵀ(diag p_s − p_s p_sᵀ)Q = (QᵀΛ)(QᵀΛ)ᵀ` with Λ the stable factor of `diag p − p pᵀ`: a Gram, so
    /// PSD by construction. (Forming `Qᵀ diag(p) Q − qp qpᵀ` cancels catastrophically when p is nearly
    /// one-hot — a saturated softmax — and gave clearly negative eigenvalues.) Calls `body(s, A'_s / S)`.
    func softmaxProjectedCovariances(_ probs: Matrix, samples: Int, _ body: (Int, UnsafePointer<Double>) -> Void) {
        let k = probs.cols, q = k - 1
        let pairs = q * (q + 1) / 2
        // Per-sample scratch (raw buffers: this loop runs for every sample of every inner draw).
        let aProj = UnsafeMutablePointer<Double>.allocate(capacity: pairs)
        let lam = UnsafeMutablePointer<Double>.allocate(capacity: k * q)
        let lq = UnsafeMutablePointer<Double>.allocate(capacity: q * q)
        let running = UnsafeMutablePointer<Double>.allocate(capacity: q)
        defer { aProj.deallocate(); lam.deallocate(); lq.deallocate(); running.deallocate() }
        let invS = 1 / Double(samples)
        probs.data.withUnsafeBufferPointer { pp in
            for i in 0..<probs.rows {
                SoftmaxCovariance.factor(pp.baseAddress! + i * k, k, into: lam)
                SoftmaxCovariance.helmertProject(lam, k, into: lq, running: running)
                var t = 0
                for a in 0..<q {
                    let la = lq + a * q
                    for b in a..<q {
                        let lb = lq + b * q
                        var v = 0.0
                        for j in 0..<q { v += la[j] * lb[j] }
                        aProj[t] = v * invS
                        t += 1
                    }
                }
                body(i, aProj)
            }
        }
    }

    /// The packed outer products `x_s x_sᵀ` (upper triangle, row by row: p(p+1)/2 per row of `xa`) that
    /// `softmaxProjectedFisher(_:outer:)` reads; nil when they would exceed 2²¹ doubles (16 MiB).
    static func packedOuterProducts(_ xa: Matrix) -> [Double]? {
        let s = xa.rows, p = xa.cols, width = p * (p + 1) / 2
        guard s * width <= 1 << 21 else { return nil }
        return [Double](unsafeUninitializedCapacity: s * width) { buf, count in
            xa.data.withUnsafeBufferPointer { px in
                for r in 0..<s {
                    let x = px.baseAddress! + r * p
                    var o = buf.baseAddress! + r * width
                    for i in 0..<p { let xi = x[i]; for j in i..<p { o[j - i] = xi * x[j] }; o += p - i }
                }
            }
            count = s * width
        }
    }

    /// `F'` from precomputed outer products (`packedOuterProducts`): block (a, b) of F' is
    /// `Σ_s A'_s[a, b] x_s x_sᵀ / S`, symmetric for every pair, so the pairs' blocks are the rows of one
    /// product `C = A'·O` ((K−1)K/2 × p(p+1)/2, inner dimension S) — half the work of the route below
    /// and no S × (pairs·p) scratch, for inputs that are fixed while the weights move (the samplers).
    func softmaxProjectedFisher(_ probs: Matrix, outer: [Double], columns p: Int) -> Matrix {
        let s = probs.rows, q = probs.cols - 1
        let pairs = q * (q + 1) / 2, width = p * (p + 1) / 2
        precondition(outer.count == s * width)
        // A'ᵀ: S × pairs, sample by sample.
        var at = [Double](repeating: 0, count: s * pairs)
        at.withUnsafeMutableBufferPointer { pa in
            softmaxProjectedCovariances(probs, samples: s) { i, a in
                (pa.baseAddress! + i * pairs).update(from: a, count: pairs)
            }
        }
        var c = [Double](repeating: 0, count: pairs * width)
        at.withUnsafeBufferPointer { pa in
            outer.withUnsafeBufferPointer { po in
                c.withUnsafeMutableBufferPointer { pc in
                    BLAS.gemm(m: pairs, n: width, k: s, a: pa.baseAddress!, lda: pairs, transA: true,
                              b: po.baseAddress!, ldb: width, c: pc.baseAddress!, ldc: width)
                }
            }
        }
        let n = q * p
        var f = Matrix(rows: n, cols: n)
        f.data.withUnsafeMutableBufferPointer { pf in
            c.withUnsafeBufferPointer { pc in
                var t = 0
                for a in 0..<q {
                    for b in a..<q {
                        var src = pc.baseAddress! + t * width
                        for i in 0..<p {
                            for j in i..<p {
                                let v = src[j - i]
                                pf[(a * p + i) * n + b * p + j] = v
                                pf[(a * p + j) * n + b * p + i] = v
                            }
                            src += p - i
                        }
                        t += 1
                    }
                }
            }
        }
        // Only the upper triangle is read; the diagonal blocks (a = b) are filled whole.
        return f
    }

    /// The projected softmax Fisher `F'` of `softmaxDirectEigenvalues`, upper triangle filled
    /// ((K−1)p × (K−1)p, index `(a, i) ↦ a·p + i`).
    func softmaxProjectedFisher(_ probs: Matrix, _ xa: Matrix) -> Matrix {
        let s = xa.rows, p = xa.cols, k = probs.cols, q = k - 1
        let pairs = q * (q + 1) / 2
        let width = pairs * p
        var y = [Double](repeating: 0, count: s * width)
        xa.data.withUnsafeBufferPointer { px in
            y.withUnsafeMutableBufferPointer { py in
                softmaxProjectedCovariances(probs, samples: s) { i, aProj in
                    let row = py.baseAddress! + i * width
                    let xr = px.baseAddress! + i * p
                    for t in 0..<pairs {
                        let w = aProj[t]
                        for j in 0..<p { row[t * p + j] = w * xr[j] }
                    }
                }
            }
        }
        // C = Xᵀ Y : p × (pairs·p); block t = (a,b) of C is F'[(a,·),(b,·)].
        var c = [Double](repeating: 0, count: p * width)
        xa.data.withUnsafeBufferPointer { px in
            y.withUnsafeBufferPointer { py in
                c.withUnsafeMutableBufferPointer { pc in
                    BLAS.gemm(m: p, n: width, k: s, a: px.baseAddress!, lda: p, transA: true,
                              b: py.baseAddress!, ldb: width, c: pc.baseAddress!, ldc: width)
                }
            }
        }
        let n = q * p
        var f = Matrix(rows: n, cols: n)
        f.data.withUnsafeMutableBufferPointer { pf in
            c.withUnsafeBufferPointer { pc in
                var t = 0
                for a in 0..<q {
                    for b in a..<q {
                        for i in 0..<p {
                            let src = pc.baseAddress! + i * width + t * p
                            let dst = pf.baseAddress! + (a * p + i) * n + b * p
                            for j in 0..<p { dst[j] = src[j] }
                        }
                        t += 1
                    }
                }
            }
        }
        // Only the upper triangle is read; the diagonal blocks (a = b) are symmetric themselves.
        return f
    }

    /// `G[(s,a),(t,b)] = (Λ_s e_a · Λ_t e_b)(x_s · x_t) / S`, size `S(K−1)`.
    func softmaxGramEigenvalues(_ probs: Matrix, _ xa: Matrix) throws -> [Double] {
        let s = xa.rows, k = probs.cols, q = k - 1
        let lam = Self.factors(probs)
        let act = xa.data.withUnsafeBufferPointer { FisherKernels.syrk($0.baseAddress!, rows: s, cols: xa.cols, transpose: false, alpha: 1) }
        var g = Matrix(rows: s * q, cols: s * q)
        FisherKernels.addHadamardGram(into: &g, backward: lam, activationGram: act, q: q, alpha: 1 / Double(s))
        return try SymmetricEigen.eigenvalues(g)
    }

    /// The `(S(K−1)) × K` matrix whose rows `s(K−1) + a` are the columns `Λ_s e_a` of the factors of
    /// `diag p_s − p_s p_sᵀ`.
    static func factors(_ probs: Matrix) -> Matrix {
        let s = probs.rows, k = probs.cols, q = k - 1
        var out = Matrix(rows: s * q, cols: k)
        var lam = [Double](repeating: 0, count: k * q)
        probs.data.withUnsafeBufferPointer { pp in
            out.data.withUnsafeMutableBufferPointer { po in
                lam.withUnsafeMutableBufferPointer { pl in
                    for i in 0..<s {
                        SoftmaxCovariance.factor(pp.baseAddress! + i * k, k, into: pl.baseAddress!)
                        for a in 0..<q { for c in 0..<k { po[(i * q + a) * k + c] = pl[c * q + a] } }
                    }
                }
            }
        }
        return out
    }
}
