import Foundation
import Networks
import RandomStreams
import TwoScaleCore
import TwoScaleNumerics

/// The generic rank of the Markov FIM on a parameter box: the rank `r` of the ε → 0 limit
/// `d_ζ → ζd + (1 − ζ)r` (docs/METHOD.md §5, §17), which is the largest rank the Fisher matrix reaches on
/// a set of θ of positive measure, not the largest rank a few uniform draws happen to show.
///
/// **Bound (every θ).** The Markov FIM is block diagonal over the parametric layers, and so is its rank.
/// A Gaussian layer with C units at P positions and patch length q (bias input included) has one block
/// per unit, `σ⁻²(1/S) Σ_{s,p} act'(w_c·x̃_{s,p})² x̃_{s,p} x̃_{s,p}ᵀ`, whose range lies in the span of the
/// layer's input patches, so its rank is at most `C · rank(X̃)` with X̃ the `(S·P) × q` patch matrix. For
/// the first parametric layer X̃ is the data's (θ-free: computed here once, with the threshold rule of
/// `FisherRank`); for later layers only `rank(X̃) ≤ min(S·P, q')` is known, q' the patch entries that are
/// not padding at every position (q' = q but for a kernel reaching past a small image). The softmax block has the rank
/// `(K − 1) · rank(X̃)` exactly at every θ (its nonzero part is `Σ_s A'_s ⊗ x̃_s x̃_sᵀ / S` with every
/// `A'_s` positive definite), bounded by `(K − 1) · rank(data)` when it is the only layer, else by
/// `(K − 1) · min(S, q)`. The sum of these is `bound`.
///
/// **Witness (the bound is attained).** If at one θ\* in the box every block's numerical rank equals its
/// bound, the bound is the generic rank: near θ\* every Fisher block dominates (≽) a continuous matrix
/// function equal to it at θ\* — the sum over the patches active at θ\* (a ReLU patch with
/// `w·x̃ > 0` stays active nearby, inputs and noise move continuously with θ; the other activations
/// and the softmax are smooth) — and rank is lower semicontinuous, so every block keeps at least
/// its bound on an open neighbourhood of θ\*, whose intersection with the box has positive measure;
/// the bound caps it everywhere. This is proved up to the numerical threshold of the ranks.
///
/// θ\* is built layer by layer on the inputs the earlier layers give it (`witness`): for ReLU each
/// unit is moved towards a direction that is positive on a basis of the layer's input patches (rows
/// kept by Gram–Schmidt, the direction solving `B u = 1`, so every unit's active patches span the
/// patches' row space: no data defeat this, not even rows x and −x); for tanh and sigmoid each unit is shrunk towards the box's point nearest 0
/// (away from saturation); linear units keep their draw; the softmax weights are that nearest point
/// (uniform probabilities when the box holds 0). Every step is a convex combination of points of the
/// box, so θ\* stays in it (checked). A few candidates (random starting draws) are tried; when none
/// attains the bound, `proved` is false and the largest rank seen is only a lower bound of `r`.
public struct GenericRank: Sendable, Equatable, Encodable {
    /// One Fisher block (a parametric layer).
    public struct Block: Sendable, Equatable, Encodable {
        /// 1-based block (parametric layer).
        public var layer: Int
        public var parameters: Int
        /// The closed-form bound on the block's rank at every θ.
        public var bound: Int
        /// The block's numerical rank at the best witness found.
        public var witness: Int
    }

    public var blocks: [Block]
    /// Σ of the blocks' bounds: the generic rank when `proved`.
    public var bound: Int
    /// The total rank at the best witness (all blocks at one θ\*).
    public var witness: Int
    /// Whether one θ\* attains every block's bound (then `bound` is the generic rank).
    public var proved: Bool
    /// Witness candidates tried.
    public var candidates: Int
    /// The best witness θ\* (not part of the report).
    public var witnessNetwork: Network

    enum CodingKeys: String, CodingKey { case blocks, bound, witness, proved, candidates }

    /// Witness candidates tried before giving up.
    public static let defaultCandidates = 8
    static let stream: UInt64 = 0x4745_4E52  // "GENR"

    /// The bound and the search for a witness in `box` (candidates from `Xoshiro256(seed:, stream: [GENR, k])`).
    public init(model: MarkovFisher, box: ClosedRange<Double>, seed: UInt64, candidates: Int = GenericRank.defaultCandidates) throws {
        guard candidates >= 1 else { throw TwoScaleError.failure("internal error: the generic rank needs at least one witness candidate") }
        try Network.checkBox(box)
        let inputs = try Self.inputRanks(model: model)
        let bounds = Self.bounds(model: model, inputRanks: inputs)
        let a = model.architecture
        var best: (net: Network, ranks: [Int])?
        var last = Network.zeros(architecture: a, activation: model.activation)
        var tried = 0
        for k in 0..<candidates {
            var rng = Xoshiro256(seed: seed, stream: [Self.stream, UInt64(k)])
            let start = Network.uniform(architecture: a, activation: model.activation, box: box, rng: &rng)
            let net = try Self.witness(model: model, box: box, start: start, inputRanks: inputs)
            last = net
            tried += 1
            // A candidate whose spectra break down (non-finite values at the box's edge) proves nothing;
            // the run itself goes on.
            guard let r = try? Self.ranks(model: model, at: net) else { continue }
            if r.reduce(0, +) > (best?.ranks.reduce(0, +) ?? -1) { best = (net, r) }
            if r == bounds { break }
        }
        let found = best ?? (last, bounds.map { _ in 0 })
        blocks = bounds.indices.map { m in
            Block(layer: m + 1, parameters: model.blockDimensions[m], bound: bounds[m], witness: found.ranks[m])
        }
        bound = bounds.reduce(0, +)
        witness = found.ranks.reduce(0, +)
        proved = found.ranks == bounds
        self.candidates = tried
        witnessNetwork = found.net
    }

    /// The closed-form bound per block (see the type's documentation).
    public static func bounds(model: MarkovFisher) throws -> [Int] {
        bounds(model: model, inputRanks: try inputRanks(model: model))
    }

    static func bounds(model: MarkovFisher, inputRanks: [Int]) -> [Int] {
        let a = model.architecture
        let layers = a.parametricLayers
        return zip(layers.indices, inputRanks).map { b, r in (b == layers.count - 1 ? a.classes - 1 : a.structure(layer: layers[b]).units) * r }
    }

    /// Per block, the bound on the rank of its input patch matrix: the data's numerical rank for the first
    /// parametric layer, `min(S·P, q')` for later ones.
    static func inputRanks(model: MarkovFisher) throws -> [Int] {
        let a = model.architecture
        let layers = a.parametricLayers
        let zero = Network.zeros(architecture: a, activation: model.activation)
        let dataRank = try patchRank(a.parametric(layer: layers[0]).patches(try model.blockInputs(zero, block: 0)))
        let samples = model.data.rows * model.noiseSamples
        return layers.enumerated().map { b, l in
            b == 0 ? dataRank : Swift.min(samples * a.structure(layer: l).positions, structuralPatchLength(a.parametric(layer: l)))
        }
    }

    /// The patch entries that can be nonzero: q less the entries that are padding at every position (a
    /// convolution's kernel reaching past a small image), which are 0 in every patch of every input.
    static func structuralPatchLength(_ layer: any ParametricLayer) -> Int {
        let p = layer.patches(Matrix(rows: 1, cols: layer.inputSize, repeating: 1))
        return (0..<p.cols).filter { j in (0..<p.rows).contains { p.data[$0 * p.cols + j] != 0 } }.count
    }

    /// The numerical rank of a patch matrix (rows: patches), from its smaller Gram with `FisherRank`'s
    /// threshold (q = the patch length).
    static func patchRank(_ x: Matrix) throws -> Int {
        guard x.rows > 0, x.cols > 0 else { return 0 }
        let eig = try x.data.withUnsafeBufferPointer { p in
            try FisherKernels.gramEigenvalues(p.baseAddress!, rows: x.rows, cols: x.cols, alpha: 1 / Double(x.rows))
        }
        return FisherRank.rank(try Spectrum(eigenvalues: eig), parameters: x.cols)
    }

    /// The numerical rank of every block at `net`, as `MarkovSMC.rankEstimate` counts it.
    public static func ranks(model: MarkovFisher, at net: Network) throws -> [Int] {
        let raw = try (0..<model.blockDimensions.count).map { m in
            try model.blockEigenvalues(net, block: m, inputs: try model.blockInputs(net, block: m))
        }
        let scale = Spectrum.largestMagnitude(raw)
        return try zip(raw, model.blockDimensions).map { FisherRank.rank(try Spectrum(eigenvalues: $0, scale: scale), parameters: $1) }
    }

    /// The witness built from `start` (a point of the box), layer by layer; every parameter lies in `box`.
    /// `inputRanks` (`inputRanks(model:)`, computed when nil) ends each layer's search for a row basis.
    public static func witness(model: MarkovFisher, box: ClosedRange<Double>, start: Network, inputRanks: [Int]? = nil) throws -> Network {
        let enough = try inputRanks ?? Self.inputRanks(model: model)
        let a = model.architecture
        let lo = box.lowerBound, hi = box.upperBound
        let nearZero = Swift.min(Swift.max(0, lo), hi)
        var net = start
        let layers = a.parametricLayers
        for (b, l) in layers.enumerated() {
            let s = a.structure(layer: l)
            if b == layers.count - 1 {
                net.blocks[l] = [Double](repeating: nearZero, count: s.parameterCount)
                continue
            }
            let patches = a.parametric(layer: l).patches(try model.blockInputs(net, block: b))
            var units = (0..<s.units).map { unitVector(net.blocks[l], structure: s, unit: $0) }
            switch model.activation {
            case .relu:
                let basis = RowBasis(patches, enough: enough[b])
                guard basis.rank > 0 else { break }
                let u = toBox(basis.positiveDirection(), lo: lo, hi: hi)
                let onU = apply(basis.rows, u)
                for c in units.indices {
                    let onUnit = apply(basis.rows, units[c])
                    for beta in [0.5, 0.75, 0.9, 0.99, 1.0] where zip(onUnit, onU).allSatisfy({ (1 - beta) * $0 + beta * $1 > 0 }) {
                        units[c] = zip(units[c], u).map { (1 - beta) * $0 + beta * $1 }
                        break
                    }
                }
            case .tanh, .sigmoid:
                // w_β = (1 − β)w + β·z₀·1 gives the pre-activations (1 − β)·Xw + β·z₀·X1.
                let ones = apply(patches, [Double](repeating: nearZero, count: patches.cols))
                for c in units.indices {
                    let z = apply(patches, units[c])
                    var chosen = 0.0, smallest = Double.infinity
                    for beta in [0, 0.5, 0.75, 0.9, 0.95, 0.99] {
                        let top = zip(z, ones).reduce(0.0) { Swift.max($0, Swift.abs((1 - beta) * $1.0 + beta * $1.1)) }
                        if top < smallest { chosen = beta; smallest = top }
                        if top <= 2 { break }
                    }
                    units[c] = units[c].map { (1 - chosen) * $0 + chosen * nearZero }
                }
            case .linear:
                break
            }
            for c in units.indices { setUnitVector(&net.blocks[l], structure: s, unit: c, units[c].map { Swift.min(Swift.max($0, lo), hi) }) }
        }
        guard net.parameters.allSatisfy({ box.contains($0) }) else {
            throw TwoScaleError.failure("internal error: the rank witness left the box [\(lo), \(hi)]")
        }
        return net
    }

    /// Unit c's parameters as one vector `(w_c, b_c)` (the patch's layout, bias input last).
    static func unitVector(_ block: [Double], structure s: LayerStructure, unit c: Int) -> [Double] {
        s.unitIndices(c).map { block[$0] }
    }

    static func setUnitVector(_ block: inout [Double], structure s: LayerStructure, unit c: Int, _ v: [Double]) {
        for (i, j) in s.unitIndices(c).enumerated() { block[j] = v[i] }
    }

    /// `X·v` (`dgemv`).
    static func apply(_ x: Matrix, _ v: [Double]) -> [Double] {
        var y = [Double](repeating: 0, count: x.rows)
        x.data.withUnsafeBufferPointer { px in
            v.withUnsafeBufferPointer { pv in
                y.withUnsafeMutableBufferPointer { py in
                    BLAS.gemv(m: x.rows, n: x.cols, a: px.baseAddress!, lda: x.cols, x: pv.baseAddress!, y: py.baseAddress!)
                }
            }
        }
        return y
    }

    /// A basis of a patch matrix's row space, chosen among its rows: modified Gram–Schmidt over the rows
    /// in order (each projection done twice, which keeps the computed basis orthonormal), keeping a row
    /// whose residual exceeds `1e-6` of its norm, until q (or `enough`) are kept. `rows` holds the kept rows (B),
    /// `orthonormal` their orthonormalisation (Q) and `factor` the lower-triangular L with B = L·Q.
    struct RowBasis {
        var rows: Matrix
        var orthonormal: Matrix
        var factor: [[Double]]
        var rank: Int { factor.count }

        init(_ x: Matrix, enough: Int? = nil) {
            let q = x.cols
            let target = Swift.min(q, enough ?? q)
            var b: [Double] = [], e: [Double] = [], l: [[Double]] = []
            var c = [Double](repeating: 0, count: q), c2 = [Double](repeating: 0, count: q)
            var res = [Double](repeating: 0, count: q)
            x.data.withUnsafeBufferPointer { px in
                for i in 0..<x.rows where l.count < target {
                    let row = px.baseAddress! + i * q
                    var norm0 = 0.0
                    for j in 0..<q { res[j] = row[j]; norm0 += row[j] * row[j] }
                    guard norm0 > 0, norm0.isFinite else { continue }
                    let r = l.count
                    for j in 0..<r { c[j] = 0 }
                    if r > 0 {
                        for _ in 0..<2 {
                            // c2 = Q·res, res −= Qᵀ·c2, c += c2
                            e.withUnsafeBufferPointer { pe in
                                res.withUnsafeMutableBufferPointer { pr in
                                    c2.withUnsafeMutableBufferPointer { pc in
                                        BLAS.gemv(m: r, n: q, a: pe.baseAddress!, lda: q, x: pr.baseAddress!, y: pc.baseAddress!)
                                        BLAS.gemm(m: 1, n: q, k: r, alpha: -1, a: pc.baseAddress!, lda: r, b: pe.baseAddress!, ldb: q,
                                                  beta: 1, c: pr.baseAddress!, ldc: q)
                                    }
                                }
                            }
                            for j in 0..<r { c[j] += c2[j] }
                        }
                    }
                    let norm = res.reduce(0) { $0 + $1 * $1 }.squareRoot()
                    guard norm > 1e-6 * norm0.squareRoot() else { continue }
                    b.append(contentsOf: UnsafeBufferPointer(start: row, count: q))
                    e.append(contentsOf: res.map { $0 / norm })
                    l.append(Array(c[0..<r]) + [norm])
                }
            }
            rows = Matrix(rows: l.count, cols: q, data: b)
            orthonormal = Matrix(rows: l.count, cols: q, data: e)
            factor = l
        }

        /// A u with `b·u = 1` for every kept row b: u = Qᵀy with L·y = 1 (forward substitution).
        func positiveDirection() -> [Double] {
            var y = [Double](repeating: 1, count: rank)
            for i in 0..<rank {
                for k in 0..<i { y[i] -= factor[i][k] * y[k] }
                y[i] /= factor[i][i]
            }
            var u = [Double](repeating: 0, count: orthonormal.cols)
            y.withUnsafeBufferPointer { py in
                orthonormal.data.withUnsafeBufferPointer { pq in
                    u.withUnsafeMutableBufferPointer { pu in
                        BLAS.gemm(m: 1, n: orthonormal.cols, k: rank, a: py.baseAddress!, lda: rank, b: pq.baseAddress!,
                                  ldb: orthonormal.cols, c: pu.baseAddress!, ldc: orthonormal.cols)
                    }
                }
            }
            return u
        }
    }

    /// `t·u` on the box's boundary when the box holds 0 in its interior (the longest step along u);
    /// otherwise u scaled to the box's largest magnitude and clamped into it.
    static func toBox(_ u: [Double], lo: Double, hi: Double) -> [Double] {
        let top = u.map(Swift.abs).max() ?? 0
        guard top > 0, top.isFinite else { return u.map { _ in Swift.min(Swift.max(0, lo), hi) } }
        if lo < 0, hi > 0 {
            var t = Double.infinity
            for v in u where v != 0 { t = Swift.min(t, v > 0 ? hi / v : lo / v) }
            return u.map { $0 * t }
        }
        let t = Swift.max(Swift.abs(lo), Swift.abs(hi)) / top
        return u.map { Swift.min(Swift.max($0 * t, lo), hi) }
    }
}
