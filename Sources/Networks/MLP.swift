import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// A multilayer perceptron: weights `W_m ∈ R^(n_m × n_{m−1})` (row-major, `θ_m = vec(W_m)`), optional
/// biases, a hidden activation and a softmax output (docs/METHOD.md §10). Inputs are batches stored as rows of a
/// `Matrix` (N × n_0); every layer is one BLAS `gemm`.
public struct MLP: Sendable, Equatable {
    public let architecture: Architecture
    public let activation: Activation
    public var weights: [Matrix]
    /// Biases per layer (empty arrays when the architecture has none).
    public var biases: [[Double]]

    public init(architecture: Architecture, activation: Activation, weights: [Matrix], biases: [[Double]]? = nil) throws {
        guard weights.count == architecture.layers else {
            throw TwoScaleError.failure("weights: \(weights.count) matrices given, the architecture \(architecture) has \(architecture.layers) layers")
        }
        for (m, w) in weights.enumerated() where w.rows != architecture.sizes[m + 1] || w.cols != architecture.sizes[m] {
            throw TwoScaleError.failure("weights: W_\(m + 1) is \(w.rows)×\(w.cols), the architecture \(architecture) needs \(architecture.sizes[m + 1])×\(architecture.sizes[m])")
        }
        for (m, w) in weights.enumerated() where !w.data.allSatisfy(\.isFinite) {
            throw TwoScaleError.failure("weights: W_\(m + 1) holds a non-finite number")
        }
        let b = biases ?? architecture.sizes.dropFirst().map { architecture.bias ? [Double](repeating: 0, count: $0) : [] }
        guard b.count == architecture.layers,
              zip(b, architecture.sizes.dropFirst()).allSatisfy({ architecture.bias ? $0.count == $1 : $0.isEmpty }) else {
            throw TwoScaleError.failure("biases do not match the architecture \(architecture)")
        }
        self.architecture = architecture
        self.activation = activation
        self.weights = weights
        self.biases = b
    }

    /// Parameters drawn uniformly from the box `[lo, hi]` (weights row by row, then biases, layer by layer).
    public static func uniform(architecture: Architecture, activation: Activation, box: ClosedRange<Double>,
                               rng: inout Xoshiro256) -> MLP {
        var ws: [Matrix] = []
        var bs: [[Double]] = []
        for m in 0..<architecture.layers {
            var w = Matrix(rows: architecture.sizes[m + 1], cols: architecture.sizes[m])
            for i in w.data.indices { w.data[i] = rng.uniform(box.lowerBound, box.upperBound) }
            ws.append(w)
            bs.append(architecture.bias ? (0..<architecture.sizes[m + 1]).map { _ in rng.uniform(box.lowerBound, box.upperBound) } : [])
        }
        // Shapes are right by construction.
        return MLP(unchecked: architecture, activation, ws, bs)
    }

    init(unchecked a: Architecture, _ act: Activation, _ w: [Matrix], _ b: [[Double]]) {
        architecture = a
        activation = act
        weights = w
        biases = b
    }

    /// θ as one vector: per layer `vec(W_m)` row-major, then `b_m`.
    public var parameters: [Double] {
        var p: [Double] = []
        p.reserveCapacity(architecture.parameterCount)
        for m in 0..<architecture.layers { p += weights[m].data; p += biases[m] }
        return p
    }

    /// Replaces θ from a vector laid out as `parameters`.
    public mutating func setParameters(_ p: [Double]) {
        precondition(p.count == architecture.parameterCount)
        var o = 0
        for m in 0..<architecture.layers {
            let n = weights[m].data.count
            weights[m].data = Array(p[o..<(o + n)])
            o += n
            let nb = biases[m].count
            biases[m] = Array(p[o..<(o + nb)])
            o += nb
        }
    }

    /// `Z = X·W_mᵀ (+ b_m)`, the pre-activations of layer m (0-based) for a batch X.
    public func preActivation(layer m: Int, input x: Matrix) -> Matrix {
        var z = BLAS.product(x, weights[m], transB: true)
        if architecture.bias {
            let b = biases[m]
            let n = z.cols
            z.data.withUnsafeMutableBufferPointer { p in
                for i in 0..<z.rows { for j in 0..<n { p[i * n + j] += b[j] } }
            }
        }
        return z
    }

    /// Applies the hidden activation elementwise.
    public func activate(_ z: Matrix) -> Matrix {
        var a = z
        let act = activation
        a.data.withUnsafeMutableBufferPointer { p in for i in p.indices { p[i] = act.apply(p[i]) } }
        return a
    }

    /// Deterministic forward pass (σ = 0). Returns the inputs of every layer (`inputs[0] = X`, …,
    /// `inputs[L−1]` = last hidden activations), the hidden pre-activations, and the output logits.
    public func forward(_ x: Matrix) -> (inputs: [Matrix], preActivations: [Matrix], logits: Matrix) {
        var inputs = [x]
        var pre: [Matrix] = []
        var a = x
        for m in 0..<(architecture.layers - 1) {
            let z = preActivation(layer: m, input: a)
            pre.append(z)
            a = activate(z)
            inputs.append(a)
        }
        return (inputs, pre, preActivation(layer: architecture.layers - 1, input: a))
    }
}

/// Row-wise softmax and cross-entropy helpers, stable for any logits (probabilities that underflow
/// become 0, log-probabilities stay finite).
public enum Softmax {
    /// The largest entry of row `i` (of width `k`): the shift that keeps `exp` from overflowing.
    @inline(__always)
    static func rowMax(_ d: UnsafeMutableBufferPointer<Double>, _ i: Int, _ k: Int) -> Double {
        var m = -Double.infinity
        for j in 0..<k { m = Swift.max(m, d[i * k + j]) }
        return m
    }

    /// Row-wise `softmax`.
    public static func probabilities(_ logits: Matrix) -> Matrix {
        var p = logits
        let k = p.cols
        p.data.withUnsafeMutableBufferPointer { d in
            for i in 0..<p.rows {
                let m = rowMax(d, i, k)
                var s = 0.0
                for j in 0..<k { let e = Foundation.exp(d[i * k + j] - m); d[i * k + j] = e; s += e }
                for j in 0..<k { d[i * k + j] /= s }
            }
        }
        return p
    }

    /// The class drawn by inversion from row `i` of a probability matrix with a uniform `u ∈ [0, 1)`:
    /// the first class whose cumulative probability exceeds u (the last class absorbs round-off).
    public static func sampleClass(_ p: Matrix, row i: Int, u: Double) -> Int {
        let k = p.cols
        var acc = 0.0
        for c in 0..<k {
            acc += p.data[i * k + c]
            if u < acc { return c }
        }
        return k - 1
    }

    /// Row-wise `log softmax`.
    public static func logProbabilities(_ logits: Matrix) -> Matrix {
        var p = logits
        let k = p.cols
        p.data.withUnsafeMutableBufferPointer { d in
            for i in 0..<p.rows {
                let m = rowMax(d, i, k)
                var s = 0.0
                for j in 0..<k { s += Foundation.exp(d[i * k + j] - m) }
                let lse = m + Foundation.log(s)
                for j in 0..<k { d[i * k + j] -= lse }
            }
        }
        return p
    }
}
