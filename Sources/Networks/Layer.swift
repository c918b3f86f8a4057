import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// How a layer's parameters enter the Fisher information (docs/METHOD.md §11–12).
///
/// Every parametric layer of twoscale is *unit-shared affine*: its output is `units` channels at
/// `positions` places, and channel c at place p is `w_c · x_p (+ b_c)`, where `x_p` is the p-th
/// *patch* of the input (`patchSize` values) and `w_c` is row c of a `units × patchSize` weight matrix.
/// A dense layer has one position whose patch is the whole input; a convolution has one position per
/// output pixel and im2col patches. The parameter block is laid out as `vec(W)` row by row, then the
/// biases `b_1, …, b_units` (when the layer has them).
///
/// This shared form is what the Fisher routes exploit: given the layer's input, a Gaussian layer's
/// Fisher block splits into one block per unit, `σ⁻² E[Σ_p act'(w_c·x_p)² x̃_p x̃_pᵀ]` (x̃ the patch with a
/// 1 appended for the bias), and an output-FIM per-sample gradient of the layer is `Σ_p β_p ⊗ x̃_p`.
public struct LayerStructure: Sendable, Equatable {
    /// Output channels (neurons of a dense layer, filters of a convolution).
    public var units: Int
    /// Places each unit is applied at per sample (1 for a dense layer).
    public var positions: Int
    /// Inputs each unit reads at one place (without the bias input).
    public var patchSize: Int
    /// Whether each unit has a bias.
    public var bias: Bool

    public init(units: Int, positions: Int, patchSize: Int, bias: Bool) {
        self.units = units
        self.positions = positions
        self.patchSize = patchSize
        self.bias = bias
    }

    /// Parameters of one unit: its weight row and, with biases, its bias.
    public var unitDimension: Int { patchSize + (bias ? 1 : 0) }
    /// Weights of the layer (biases excluded): `units · patchSize`.
    public var weightCount: Int { units * patchSize }
    /// All parameters of the layer.
    public var parameterCount: Int { units * unitDimension }

    /// The indices, within the layer's parameter block, of unit u's parameters: its weight row, then
    /// its bias.
    public func unitIndices(_ u: Int) -> [Int] {
        var idx = Array((u * patchSize)..<((u + 1) * patchSize))
        if bias { idx.append(weightCount + u) }
        return idx
    }
}

/// One layer of a network: what the model and the trainer need of every layer (docs/ARCHITECTURE.md,
/// "Where to add things"). Batches are matrices with one sample per row; a layer's input and output rows
/// are flat (an image is stored height × width × channels, channels fastest). A layer with parameters
/// is a `ParametricLayer` as well; a parameter-free one (pooling) is only this.
public protocol Layer: Sendable, CustomStringConvertible {
    /// Values per input sample.
    var inputSize: Int { get }
    /// Values per output sample.
    var outputSize: Int { get }
    /// The layer's term in the architecture notation (`16` for a dense layer, `conv8k3p1`, `maxpool2`).
    var notationTerm: String { get }
    /// The input's term when this layer comes first (`28x28x1` for an image; default: the input size).
    var inputNotation: String { get }

    /// The layer's output (pre-activation) for a batch `x` (rows × inputSize) and the layer's parameter
    /// block θ (empty for a parameter-free layer): rows × outputSize. For a parametric layer, row s read
    /// as `positions × units` is the matrix `Z[p, c] = w_c · x_p (+ b_c)`.
    func forward(_ x: Matrix, parameters θ: [Double]) -> Matrix
    /// The vector–Jacobian product with respect to the input: for `g` (rows × outputSize, the gradient
    /// of a scalar with respect to the output), `gᵀ ∂out/∂x` (rows × inputSize). `x` is the input the
    /// output came from (pooling needs it).
    func inputGradient(_ g: Matrix, input x: Matrix, parameters θ: [Double]) -> Matrix
    /// The layer's step of the ℓ₂ path norm `√(Σ_paths Π_m w²)` (`ArchitectureComparison.pathNorm`): `v`
    /// (one row per input: the sum, over the paths reaching each input, of their squared weights'
    /// products) carried along every path through the layer, each weight squared — no bias, no
    /// activation. A parametric layer has it from its parameters (`ParametricLayer`); a parameter-free
    /// layer says what weight each path through it carries.
    func pathNormStep(_ v: Matrix, parameters θ: [Double]) -> Matrix
}

/// A layer with parameters: what the Fisher routes need besides (a dense or convolution layer). Its
/// parameters live in the network as one flat block, laid out as `parameterStructure` says.
public protocol ParametricLayer: Layer {
    /// The unit-shared affine structure: units, positions, patch size, bias.
    var parameterStructure: LayerStructure { get }
    /// Fan-in and fan-out of a weight (Glorot initialisation): `n_in`, `n_out` for a dense layer.
    var fans: (fanIn: Int, fanOut: Int) { get }
    /// `Σ_rows` of the vector–Jacobian product with respect to θ, written to `grad` (the layer's
    /// `parameterCount` values, overwritten).
    func parameterGradient(_ g: Matrix, input x: Matrix, into grad: UnsafeMutableBufferPointer<Double>)
    /// The patches of a batch with the bias input appended: `(rows · positions) × unitDimension`,
    /// row `s·positions + p` = `x̃_p` of sample s.
    func patches(_ x: Matrix) -> Matrix
    /// What the output-FIM Gram needs of the layer's input and is worth computing once per input
    /// (the first layer's input is the data, the same for every θ): `A Aᵀ` (+ 1 with a bias) for a
    /// dense layer.
    func inputGram(_ x: Matrix) -> Matrix
    /// Adds the layer's share of the output-FIM Gram: with `B` the `(N·q) × outputSize` backward
    /// signals (row `n·q + a` = `β_{n,a}`, the output gradient of logit direction a of sample n) and
    /// the layer's per-sample gradient `g_{n,a} = ∂(β_{n,a} · out_n)/∂θ`,
    ///
    ///     G[(n,a), (n',b)] += α · g_{n,a} · g_{n',b}       (upper triangle of G).
    func addGradientGram(into g: inout Matrix, backward b: Matrix, inputGram: Matrix, q: Int, alpha: Double)
    /// Writes the per-sample gradient `g_{n,a}` of every row r of `b` (r = n·q + a, relative to the
    /// batch's sample `first`) into row r of `out` (row stride `stride`, starting at column `offset`),
    /// reading the layer's input through its `patches` (row `(first + r/q)·positions + p` = `x̃_p`).
    func writeGradientRows(backward b: Matrix, patches xp: Matrix, first: Int, q: Int,
                           into out: UnsafeMutablePointer<Double>, stride: Int, offset: Int)

    /// The weight's layout in a PyTorch model where it differs from twoscale's `units × patchSize` (row
    /// by row): nn.Conv2d's filters × C_in × k × k; nil where the two agree (nn.Linear). Weights files
    /// (`WeightsFile.network(from:…)`) read either.
    var pytorchWeight: PyTorchWeightLayout? { get }
    /// The weight (twoscale's `units × patchSize`, row by row) of a PyTorch model, which flattens an image
    /// channel first (C, H, W) where twoscale flattens it (H, W, C): `values` reordered to twoscale's
    /// order when the layer reads the image `input` (the previous layer's output) flattened, as a dense
    /// layer does; unchanged when it reads it as an image.
    func weightFromChannelFirst(_ values: [Double], input: ImageShape) -> [Double]
}

/// A parametric layer's weight as a PyTorch model lays it out, where that is not twoscale's `units ×
/// patchSize` (`ParametricLayer.pytorchWeight`).
public struct PyTorchWeightLayout: Sendable {
    /// The tensor's shape (nn.Conv2d: filters × C_in × k × k).
    public let shape: [Int]
    /// The layout in words, for errors ("PyTorch's Conv2d layout: filters × channels × kernel × kernel").
    public let name: String
    /// The layer's two layouts in words, for errors ("(filters × k·k·C_in) or PyTorch's filters × C_in × k × k").
    public let choices: String
    /// A tensor of `shape` (row-major) in twoscale's order: `units × patchSize`, row by row.
    public let reorder: @Sendable ([Double]) -> [Double]

    public init(shape: [Int], name: String, choices: String, reorder: @escaping @Sendable ([Double]) -> [Double]) {
        self.shape = shape
        self.name = name
        self.choices = choices
        self.reorder = reorder
    }

    /// `shape` as errors write it: `8×1×3×3`.
    public var shapeText: String { shape.map(String.init).joined(separator: "×") }
}

/// A layer whose geometry does not fit its input (a kernel larger than the image, a window that does
/// not divide it), or a malformed term of the layer's type in the architecture notation: `reason` says what,
/// in words a notation parser can attach to the offending term.
public struct LayerGeometryError: Error, CustomStringConvertible, Sendable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

extension Layer {
    /// The input as the first term of the architecture notation: its size for a flat input.
    public var inputNotation: String { "\(inputSize)" }

    /// The layer as a `ParametricLayer`, nil for a parameter-free one.
    public var parametric: (any ParametricLayer)? { self as? any ParametricLayer }

    /// The unit-shared affine structure of a parametric layer; nil for a parameter-free one.
    public var structure: LayerStructure? { parametric?.parameterStructure }

    /// Parameters of the layer (0 for a parameter-free one).
    public var parameterCount: Int { structure?.parameterCount ?? 0 }
}

extension ParametricLayer {
    /// Whether the layer's output-FIM Gram share comes from its backward Gram alone
    /// (`addGradientGram`'s Hadamard product, exact when each unit reads one position), rather than
    /// from its per-sample gradient rows (`writeGradientRows`, needed when weights are shared over
    /// positions).
    public var gramFromBackward: Bool { parameterStructure.positions == 1 }

    /// The path-norm step of a unit-shared affine layer: the layer's map with every weight squared and
    /// the biases 0.
    public func pathNormStep(_ v: Matrix, parameters θ: [Double]) -> Matrix {
        var squared = θ.map { $0 * $0 }
        let s = parameterStructure
        if s.bias { for i in s.weightCount..<squared.count { squared[i] = 0 } }
        return forward(v, parameters: squared)
    }
}
