import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// Mean cross-entropy of a batch and its gradient with respect to θ.
public struct CrossEntropyGradient: Sendable {
    /// `L(θ) = (1/B) Σ_i −log softmax(z_i)[y_i]`.
    public var loss: Double
    /// How many rows had `argmax z_i = y_i` (ties go to the lowest class index).
    public var correct: Int
    /// `∂L/∂θ`, laid out as `Network.parameters`: per layer the block's layout (dense: `vec(∂L/∂W_m)` row-major, then `∂L/∂b_m`).
    public var gradient: [Double]
}

extension Network {
    /// Cross-entropy loss and its gradient by backpropagation on a batch (rows of `x`), through the
    /// layers' vector–Jacobian products (a dense layer: two BLAS `gemm`s). With `Z_m = layer_m(A_m)`,
    /// `A_{m+1} = act(Z_m)` (or `Z_m` after a layer the activation does not follow) and `P = softmax(Z_L)`:
    ///
    ///     G_L      = (P − Y) / B                         (Y: one-hot labels; B rows)
    ///     ∂L/∂θ_m  = Σ_rows G_m ∂Z_m/∂θ_m               (dense: G_mᵀ A_m and 1ᵀ G_m)
    ///     G_{m−1}  = (G_m ∂Z_m/∂A_m) ⊙ act'(Z_{m−1})
    ///
    /// - Precondition: `labels.count == x.rows`, every label in `0..<classes` (callers validate).
    public func crossEntropyGradient(inputs x: Matrix, labels: [Int]) -> CrossEntropyGradient {
        precondition(labels.count == x.rows && x.cols == architecture.inputSize, "batch shape mismatch")
        let (inputs, pre, logits) = forward(x)
        let L = architecture.layers
        let bsz = x.rows
        let k = architecture.classes
        let invB = bsz > 0 ? 1.0 / Double(bsz) : 0

        // G_L = (softmax − onehot)/B, the loss and the hits in one pass over the logits.
        var g = logits
        var loss = 0.0
        var correct = 0
        g.data.withUnsafeMutableBufferPointer { d in
            for i in 0..<bsz {
                let row = i * k
                var m = -Double.infinity
                var arg = 0
                for j in 0..<k where d[row + j] > m { m = d[row + j]; arg = j }
                let y = labels[i]
                let zy = d[row + y]
                var s = 0.0
                for j in 0..<k { let e = Foundation.exp(d[row + j] - m); d[row + j] = e; s += e }
                if arg == y { correct += 1 }
                loss += m + Foundation.log(s) - zy  // −log softmax, finite for any logits
                let inv = invB / s
                for j in 0..<k { d[row + j] *= inv }
                d[row + y] -= invB
            }
        }

        var grad = [Double](repeating: 0, count: architecture.parameterCount)
        var offsets: [Int] = []
        var o = 0
        for m in 0..<L { offsets.append(o); o += architecture.parameters(layer: m) }
        let stack = architecture.stack

        for m in stride(from: L - 1, through: 0, by: -1) {
            let layer = stack[m]
            if let parametric = layer.parametric, layer.parameterCount > 0 {
                grad.withUnsafeMutableBufferPointer { gp in
                    parametric.parameterGradient(g, input: inputs[m],
                                            into: UnsafeMutableBufferPointer(rebasing: gp[offsets[m]..<(offsets[m] + layer.parameterCount)]))
                }
            }
            if m > 0 {
                var back = layer.inputGradient(g, input: inputs[m], parameters: blocks[m])
                if architecture.isActivated(layer: m - 1) {
                    let act = activation
                    let z = pre[m - 1]
                    back.data.withUnsafeMutableBufferPointer { bp in
                        z.data.withUnsafeBufferPointer { zp in
                            for i in bp.indices { bp[i] *= act.derivative(zp[i]) }
                        }
                    }
                }
                g = back
            }
        }
        return CrossEntropyGradient(loss: loss * invB, correct: correct, gradient: grad)
    }

    /// Mean cross-entropy and accuracy on a labelled set, evaluated in chunks of `chunk` rows (one
    /// forward pass each): `(1/N) Σ_i −log softmax(z_i)[y_i]` and the fraction with `argmax z_i = y_i`.
    public func crossEntropy(inputs x: Matrix, labels: [Int], chunk: Int = 4096) -> (loss: Double, accuracy: Double) {
        precondition(labels.count == x.rows, "labels and inputs differ in count")
        guard x.rows > 0 else { return (0, 0) }
        var loss = 0.0
        var correct = 0
        let k = architecture.classes
        var start = 0
        while start < x.rows {
            let end = Swift.min(x.rows, start + chunk)
            let part = start == 0 && end == x.rows ? x
                : Matrix(rows: end - start, cols: x.cols, data: Array(x.data[(start * x.cols)..<(end * x.cols)]))
            let lp = Softmax.logProbabilities(forward(part).logits)
            lp.data.withUnsafeBufferPointer { d in
                for i in 0..<(end - start) {
                    let y = labels[start + i]
                    loss -= d[i * k + y]
                    var arg = 0
                    for j in 1..<k where d[i * k + j] > d[i * k + arg] { arg = j }
                    if arg == y { correct += 1 }
                }
            }
            start = end
        }
        return (loss / Double(x.rows), Double(correct) / Double(x.rows))
    }
}
