import Foundation
import TwoScaleCore

/// Hidden-layer activation functions.
public enum Activation: String, Sendable, CaseIterable, Codable {
    case relu, tanh, sigmoid, linear

    @inlinable
    public func apply(_ z: Double) -> Double {
        switch self {
        case .relu: return z > 0 ? z : 0
        case .tanh: return Foundation.tanh(z)
        case .sigmoid: return 1 / (1 + Foundation.exp(-z))
        case .linear: return z
        }
    }

    /// `act'(z)`; relu' is taken as 0 at 0.
    @inlinable
    public func derivative(_ z: Double) -> Double {
        switch self {
        case .relu: return z > 0 ? 1 : 0
        case .tanh:
            let t = Foundation.tanh(z)
            return 1 - t * t
        case .sigmoid:
            let s = 1 / (1 + Foundation.exp(-z))
            return s * (1 - s)
        case .linear: return 1
        }
    }
}

/// Layer sizes `n_0-n_1-…-n_L` (e.g. `54-16-7`), with or without biases, and the layer stack they
/// describe (`stack`: one `DenseLayer` per weight matrix). Layer m (1-based) has the weight matrix
/// `W_m ∈ R^(n_m × n_{m−1})` (and a bias `b_m ∈ R^(n_m)`).
public struct Architecture: Sendable, Equatable, CustomStringConvertible {
    public let sizes: [Int]
    public let bias: Bool
    /// The layers, in order. Every consumer (the network, the trainer, both Fisher routes) reads the
    /// model through these.
    public let stack: [any Layer]
    /// Which layers the hidden activation follows: the parametric ones but the last.
    let activated: [Bool]
    /// The indices of the parametric layers: Markov Fisher block b is layer `parametricLayers[b]`.
    public let parametricLayers: [Int]

    public static func == (a: Architecture, b: Architecture) -> Bool {
        a.sizes == b.sizes && a.bias == b.bias && a.stack.map(\.description) == b.stack.map(\.description)
    }

    /// Any stack of layers: each layer's input size is the previous one's output size; the last layer is
    /// a parametric layer applied at one position (the softmax classifier, ≥ 2 classes); every
    /// parametric layer has a bias or none does. `sizes` is then the input size followed by every
    /// layer's output size.
    public init(stack layers: [any Layer]) throws {
        guard let last = layers.last else { throw TwoScaleError.failure("architecture: no layers") }
        for i in 1..<layers.count where layers[i].inputSize != layers[i - 1].outputSize {
            throw TwoScaleError.failure("architecture: layer \(i + 1) (\(layers[i])) takes \(layers[i].inputSize) values, layer \(i) (\(layers[i - 1])) gives \(layers[i - 1].outputSize)")
        }
        guard let top = last.structure, top.positions == 1, last.outputSize >= 2 else {
            throw TwoScaleError.failure("architecture: the last layer (\(last)) must be a parametric layer with one position and ≥ 2 outputs (the softmax classifier)")
        }
        let biases = Set(layers.compactMap { $0.structure?.bias })
        guard biases.count == 1 else { throw TwoScaleError.failure("architecture: some layers have biases and some do not") }
        let d = layers.reduce(0) { $0 + $1.parameterCount }
        guard d <= Self.maxParameters else {
            throw TwoScaleError.failure("architecture: the network has \(d) parameters; at most \(Self.maxParameters) are supported")
        }
        sizes = [layers[0].inputSize] + layers.map(\.outputSize)
        bias = top.bias
        let parametric = layers.indices.filter { layers[$0].structure != nil }
        stack = layers
        parametricLayers = parametric
        activated = layers.indices.map { layers[$0].structure != nil && $0 < parametric.last! }
    }

    public init(sizes: [Int], bias: Bool = false) throws {
        guard sizes.count >= 2 else {
            throw TwoScaleError.invalid("\(Setting.architecture)", sizes.map(String.init).joined(separator: "-"),
                                        allowed: "an architecture needs at least an input and an output size, e.g. 54-16-7")
        }
        guard sizes.allSatisfy({ $0 >= 1 && $0 <= 1_000_000 }) else {
            throw TwoScaleError.invalid("\(Setting.architecture)", sizes.map(String.init).joined(separator: "-"),
                                        allowed: "every layer size must be a whole number from 1 to 10⁶")
        }
        guard sizes.last! >= 2 else {
            throw TwoScaleError.invalid("\(Setting.architecture)", sizes.map(String.init).joined(separator: "-"),
                                        allowed: "the softmax output needs at least 2 classes")
        }
        // Sizes ≤ 10⁶ and at most a few thousand layers: the products below cannot overflow an Int.
        guard sizes.count <= 10_000 else {
            throw TwoScaleError.invalid("\(Setting.architecture)", "\(sizes.count - 1) layers", allowed: "at most 10000 layers")
        }
        let d = (1..<sizes.count).reduce(0) { $0 + sizes[$1] * sizes[$1 - 1] + (bias ? sizes[$1] : 0) }
        guard d <= Self.maxParameters else {
            throw TwoScaleError.invalid("\(Setting.architecture)", sizes.map(String.init).joined(separator: "-"),
                                        allowed: "the network has \(d) parameters; at most \(Self.maxParameters) (2²⁸, 2 GiB per copy of θ) are supported")
        }
        self.sizes = sizes
        self.bias = bias
        let layers: [any Layer] = (1..<sizes.count).map { DenseLayer(inputs: sizes[$0 - 1], outputs: sizes[$0], bias: bias) }
        let parametric = layers.indices.filter { layers[$0].structure != nil }
        let lastParametric = parametric.last ?? layers.count - 1
        stack = layers
        parametricLayers = parametric
        activated = layers.indices.map { layers[$0].structure != nil && $0 < lastParametric }
    }

    /// The most parameters d a network may have: 2²⁸ (one copy of θ is 2 GiB).
    public static let maxParameters = 1 << 28

    /// Parses `54-16-7`, or the image notation (`28x28x1-conv8k3p1-maxpool2-10`, see
    /// `ArchitectureNotation`).
    public init(parsing text: String, bias: Bool = false, flag: String = "\(Setting.architecture)") throws {
        if ArchitectureNotation.isImageNotation(text), text.contains(where: \.isLetter) {
            let layers = try ArchitectureNotation.layers(text, bias: bias, flag: flag)
            do { try self.init(stack: layers) } catch let e as TwoScaleError {
                throw TwoScaleError.invalid(flag, text, allowed: e.message)
            }
            return
        }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        var sizes: [Int] = []
        for p in parts {
            guard let n = Int(p.trimmingCharacters(in: .whitespaces)) else {
                throw TwoScaleError.invalid(flag, text, allowed: "an architecture is layer sizes joined by '-', e.g. 54-16-7")
            }
            sizes.append(n)
        }
        do { try self.init(sizes: sizes, bias: bias) } catch let e as TwoScaleError {
            throw e.renaming("\(Setting.architecture)", to: flag)
        }
    }

    /// Number of weight layers L.
    public var layers: Int { stack.count }
    public var inputSize: Int { stack[0].inputSize }
    /// The input image's shape when the first layer reads an image (a convolution or pooling); `nil` for a
    /// flat input (an MLP).
    public var inputShape: ImageShape? { (stack[0] as? any ImageLayer)?.input }
    public var classes: Int { stack[stack.count - 1].outputSize }

    /// Parameters of layer m (0-based): `n_m·n_{m−1}` (+ `n_m` with biases) for a dense layer.
    public func parameters(layer m: Int) -> Int { stack[m].parameterCount }

    /// The unit structure of parametric layer m.
    public func structure(layer m: Int) -> LayerStructure { parametric(layer: m).parameterStructure }

    /// Layer m, which must be parametric (a dense or convolution layer).
    public func parametric(layer m: Int) -> any ParametricLayer {
        guard let p = stack[m].parametric else { preconditionFailure("layer \(m + 1) (\(stack[m])) has no parameters") }
        return p
    }

    /// Whether the hidden activation (and, in the stochastic network, the Gaussian noise) follows layer m.
    public func isActivated(layer m: Int) -> Bool { activated[m] }
    public var layerParameterCounts: [Int] { (0..<layers).map(parameters(layer:)) }
    /// Parameters of each parametric layer, in order: the Markov FIM's block sizes (pooling layers,
    /// which have none, left out).
    public var blockParameterCounts: [Int] { parametricLayers.map(parameters(layer:)) }
    public var parameterCount: Int { layerParameterCounts.reduce(0, +) }

    /// The widths of the hidden parametric layers: the units (neurons of a dense layer, filters of a
    /// convolution) of every parametric layer but the last (`[16]` for 54-16-7).
    public var hiddenWidths: [Int] { parametricLayers.dropLast().map { structure(layer: $0).units } }

    /// The architecture notation of the stack (`54-16-7` for an MLP).
    public var notation: String { ArchitectureNotation.notation(stack) }
    public var description: String { notation + (bias ? " (bias)" : "") }
}
