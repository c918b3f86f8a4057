import Foundation
import RandomStreams
import TwoScaleCore
import TwoScaleNumerics

/// A network: a sequence of layers (`Architecture.stack`), a hidden activation applied after every
/// parametric layer but the last, and a softmax output (docs/METHOD.md §10). Its parameters θ are one
/// flat block per layer (`blocks[i]`, laid out as layer i's `LayerStructure` says; empty for a
/// parameter-free layer); θ as a whole is the blocks in order. The model interprets the blocks — Monte
/// Carlo and the optimisers only draw or update flat blocks.
///
/// Inputs are batches stored as rows of a `Matrix` (N × inputSize).
public struct Network: Sendable, Equatable {
    public let architecture: Architecture
    public let activation: Activation
    /// θ, one block per layer of `architecture.stack`.
    public var blocks: [[Double]]

    /// A network from its parameter blocks (checked: one per layer, of the layer's size, finite).
    public init(architecture: Architecture, activation: Activation, blocks: [[Double]]) throws {
        let stack = architecture.stack
        guard blocks.count == stack.count else {
            throw TwoScaleError.failure("parameters: \(blocks.count) blocks given, the architecture \(architecture) has \(stack.count) layers")
        }
        for (i, (b, l)) in zip(blocks, stack).enumerated() {
            guard b.count == l.parameterCount else {
                throw TwoScaleError.failure("parameters: layer \(i + 1) (\(l)) has \(l.parameterCount) parameters, \(b.count) given")
            }
            guard b.allSatisfy(\.isFinite) else { throw TwoScaleError.failure("parameters: layer \(i + 1) holds a non-finite number") }
        }
        self.architecture = architecture
        self.activation = activation
        self.blocks = blocks
    }

    /// A network from the weight matrix of every parametric layer (`W_b`, units × patch size: n_m × n_{m−1}
    /// for a dense layer, filters × k²C_in for a convolution, see `LayerStructure`) and their biases (nil:
    /// zeros when the architecture has biases). Parameter-free layers (pooling) take no entry.
    public init(architecture: Architecture, activation: Activation, weights: [Matrix], biases: [[Double]]? = nil) throws {
        let parametric = architecture.parametricLayers
        guard weights.count == parametric.count else {
            throw TwoScaleError.failure("weights: \(weights.count) matrices given, the architecture \(architecture) has \(parametric.count) parametric layers")
        }
        let structures = parametric.map(architecture.structure(layer:))
        for (b, (w, s)) in zip(weights, structures).enumerated() where w.rows != s.units || w.cols != s.patchSize {
            throw TwoScaleError.failure("weights: W_\(b + 1) is \(w.rows)×\(w.cols), the architecture \(architecture) needs \(s.units)×\(s.patchSize)")
        }
        for (b, w) in weights.enumerated() where !w.data.allSatisfy(\.isFinite) {
            throw TwoScaleError.failure("weights: W_\(b + 1) holds a non-finite number")
        }
        let bs = biases ?? structures.map { $0.bias ? [Double](repeating: 0, count: $0.units) : [] }
        guard bs.count == structures.count, zip(bs, structures).allSatisfy({ $1.bias ? $0.count == $1.units : $0.isEmpty }) else {
            throw TwoScaleError.failure("biases do not match the architecture \(architecture)")
        }
        var blocks = architecture.stack.map { _ in [Double]() }
        for (b, m) in parametric.enumerated() { blocks[m] = weights[b].data + bs[b] }
        try self.init(architecture: architecture, activation: activation, blocks: blocks)
    }

    init(unchecked a: Architecture, _ act: Activation, _ blocks: [[Double]]) {
        architecture = a
        activation = act
        self.blocks = blocks
    }

    /// The parameter box of uniform draws: finite ends, lo < hi.
    public static func checkBox(_ box: ClosedRange<Double>) throws {
        guard box.lowerBound.isFinite, box.upperBound.isFinite, box.lowerBound < box.upperBound else {
            throw TwoScaleError.invalid("\(Setting.box)", "\(box.lowerBound):\(box.upperBound)", allowed: "the box lo:hi needs finite lo < hi")
        }
    }

    /// Parameters drawn uniformly from the box `[lo, hi]`, block by block in layout order.
    public static func uniform(architecture: Architecture, activation: Activation, box: ClosedRange<Double>,
                               rng: inout Xoshiro256) -> Network {
        let blocks = architecture.stack.map { l in
            (0..<l.parameterCount).map { _ in rng.uniform(box.lowerBound, box.upperBound) }
        }
        return Network(unchecked: architecture, activation, blocks)
    }

    /// A network with every parameter 0.
    public static func zeros(architecture: Architecture, activation: Activation) -> Network {
        Network(unchecked: architecture, activation, architecture.stack.map { [Double](repeating: 0, count: $0.parameterCount) })
    }

    /// θ as one vector: the blocks in layer order.
    public var parameters: [Double] {
        var p: [Double] = []
        p.reserveCapacity(architecture.parameterCount)
        for b in blocks { p += b }
        return p
    }

    /// Replaces θ from a vector laid out as `parameters`.
    public mutating func setParameters(_ p: [Double]) {
        precondition(p.count == architecture.parameterCount)
        var o = 0
        for i in blocks.indices {
            let n = blocks[i].count
            blocks[i] = Array(p[o..<(o + n)])
            o += n
        }
    }

    /// The weight matrix of parametric layer m (0-based index into the stack; units × patch size, `W_m`
    /// = n_m × n_{m−1} for a dense layer); a copy read from the block.
    public func weightMatrix(layer m: Int) -> Matrix {
        let s = architecture.structure(layer: m)
        return Matrix(rows: s.units, cols: s.patchSize, data: Array(blocks[m][0..<s.weightCount]))
    }

    /// The weight matrices of every parametric layer (unit rows × patch size), biases left out.
    public var weights: [Matrix] { architecture.parametricLayers.map(weightMatrix(layer:)) }
    /// The biases of every parametric layer (empty arrays when the architecture has none).
    public var biases: [[Double]] {
        architecture.parametricLayers.map { m in
            let s = architecture.structure(layer: m)
            return s.bias ? Array(blocks[m][s.weightCount...]) : []
        }
    }

    /// The output of layer m (0-based) for a batch X, before any activation.
    public func preActivation(layer m: Int, input x: Matrix) -> Matrix {
        architecture.stack[m].forward(x, parameters: blocks[m])
    }

    /// Applies the hidden activation elementwise.
    public func activate(_ z: Matrix) -> Matrix {
        var a = z
        let act = activation
        a.data.withUnsafeMutableBufferPointer { p in for i in p.indices { p[i] = act.apply(p[i]) } }
        return a
    }

    /// Deterministic forward pass (σ = 0). Returns the input of every layer (`inputs[0] = X`), every
    /// layer's output but the last's before the activation (`preActivations[i]` for layer i), and the
    /// output logits.
    public func forward(_ x: Matrix) -> (inputs: [Matrix], preActivations: [Matrix], logits: Matrix) {
        let stack = architecture.stack
        var inputs = [x]
        var pre: [Matrix] = []
        var a = x
        for m in 0..<(stack.count - 1) {
            let z = stack[m].forward(a, parameters: blocks[m])
            pre.append(z)
            a = architecture.isActivated(layer: m) ? activate(z) : z
            inputs.append(a)
        }
        return (inputs, pre, stack[stack.count - 1].forward(a, parameters: blocks[stack.count - 1]))
    }
}
