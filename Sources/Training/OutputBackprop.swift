import Foundation
import Networks
import TwoScaleNumerics

extension Network {
    /// `Σ_rows Gᵀ ∂z_L/∂θ` for any gradient `G` of a scalar with respect to the output logits (rows ×
    /// classes), by backpropagation through the layers' vector–Jacobian products — the backward pass of
    /// `Network.crossEntropyGradient` with its output gradient `(P − Y)/B` replaced by `G`. `fwd` is
    /// `forward(x)` of the same batch. Laid out as `Network.parameters`.
    func backpropagate(outputGradient G: Matrix, forward fwd: (inputs: [Matrix], preActivations: [Matrix], logits: Matrix)) -> [Double] {
        precondition(G.rows == fwd.logits.rows && G.cols == fwd.logits.cols, "output gradient shape mismatch")
        let stack = architecture.stack
        var grad = [Double](repeating: 0, count: architecture.parameterCount)
        var offsets: [Int] = []
        var o = 0
        for m in 0..<stack.count { offsets.append(o); o += stack[m].parameterCount }
        var g = G
        for m in stride(from: stack.count - 1, through: 0, by: -1) {
            let layer = stack[m]
            if let parametric = layer.parametric, layer.parameterCount > 0 {
                grad.withUnsafeMutableBufferPointer { gp in
                    parametric.parameterGradient(g, input: fwd.inputs[m],
                        into: UnsafeMutableBufferPointer(rebasing: gp[offsets[m]..<(offsets[m] + layer.parameterCount)]))
                }
            }
            if m > 0 {
                var back = layer.inputGradient(g, input: fwd.inputs[m], parameters: blocks[m])
                if architecture.isActivated(layer: m - 1) {
                    let act = activation
                    let z = fwd.preActivations[m - 1]
                    back.data.withUnsafeMutableBufferPointer { bp in
                        z.data.withUnsafeBufferPointer { zp in
                            for i in bp.indices { bp[i] *= act.derivative(zp[i]) }
                        }
                    }
                }
                g = back
            }
        }
        return grad
    }
}
