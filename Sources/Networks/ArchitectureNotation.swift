import Foundation
import TwoScaleCore

/// The architecture notation for networks with convolutions: terms joined by `-`, read left to right.
///
///     28x28x1-conv8k3p1-maxpool2-conv16k3-avgpool2-10
///
/// * the first term is the input: `H x W x C` for an image (`28x28x1`), or a number for a flat input;
/// * `conv<F>k<K>[s<S>][p<P>]`: a 2-D convolution with F filters of size K×K, stride S (default 1) and
///   zero padding P (default 0) on each side;
/// * `maxpool<K>`, `avgpool<K>`: non-overlapping K×K pooling (stride K);
/// * `flatten`: optional; an image is flattened (height, width, channel order) before a dense term anyway;
/// * a number n: a dense layer of n units. The last term is the dense softmax layer (n ≥ 2 classes).
///
/// The hidden activation follows every convolution and dense layer but the last; `Setting.bias` gives every
/// convolution and dense layer a bias. A plain `54-16-7` is the MLP notation (all terms numbers).
enum ArchitectureNotation {
    /// The layer types with a term of their own, asked in this order (each reads only its own terms).
    static let termTypes: [any NotatedLayer.Type] = [DenseLayer.self, ConvolutionLayer.self, PoolingLayer.self]

    static let help = "terms joined by '-': an input (28x28x1 or a number), then conv<F>k<K>[s<S>][p<P>], maxpool<K>, avgpool<K>, flatten, and dense sizes; the last term is the number of classes, e.g. 28x28x1-conv8k3p1-maxpool2-10"

    /// Whether `text` uses the image notation (any term that is not a plain number).
    static func isImageNotation(_ text: String) -> Bool {
        text.split(separator: "-", omittingEmptySubsequences: false).contains { Int($0.trimmingCharacters(in: .whitespaces)) == nil }
    }

    /// The layers that `text` describes; errors name the offending term (1-based) and say what fits.
    static func layers(_ text: String, bias: Bool, flag: String) throws -> [any Layer] {
        let terms = text.split(separator: "-", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        func fail(_ i: Int, _ why: String) -> TwoScaleError {
            TwoScaleError.invalid(flag, text, allowed: "term \(i + 1) '\(terms[i])': \(why)")
        }
        guard terms.count >= 2 else {
            throw TwoScaleError.invalid(flag, text, allowed: "an architecture needs an input and at least one layer; " + help)
        }
        var shape: NotationInput
        if let n = Int(terms[0]) {
            guard (1...1_000_000).contains(n) else { throw fail(0, "an input size must be from 1 to 10⁶") }
            shape = .flat(n)
        } else {
            let dims = terms[0].split(separator: "x", omittingEmptySubsequences: false)
            guard dims.count == 3, dims.allSatisfy({ Int($0) != nil }) else {
                throw fail(0, "the input is an image shape HxWxC (e.g. 28x28x1) or a number of features")
            }
            guard let image = ImageShape(parsing: terms[0]), image.size <= 1 << 26 else {
                throw fail(0, "image sides and channels must be from 1 to 10⁵, with at most 2²⁶ values per image")
            }
            shape = .image(image)
        }
        var layers: [any Layer] = []
        for i in 1..<terms.count {
            let t = terms[i]
            if t == "flatten" {
                guard case let .image(s) = shape else { throw fail(i, "flatten needs an image before it") }
                shape = .flat(s.size)
                continue
            }
            var read: (any Layer)?
            do {
                for type in termTypes where read == nil { read = try type.init(notation: t, input: shape, bias: bias) }
            } catch let e as LayerGeometryError {
                throw fail(i, e.reason)  // the layer's own syntax or geometry check, said about this term
            }
            guard let layer = read else {
                guard case .image = shape else {
                    throw fail(i, "a convolution or pooling needs an image before it, but the input here is flat (after a dense layer or flatten)")
                }
                throw fail(i, "unknown term; " + help)
            }
            layers.append(layer)
            shape = (layer as? any ImageLayer).map { .image($0.output) } ?? .flat(layer.outputSize)
        }
        guard let classes = Int(terms[terms.count - 1]), classes >= 2 else {
            throw fail(terms.count - 1, "the last term is the softmax layer: a number of classes ≥ 2")
        }
        return layers
    }

    /// The canonical notation of a stack: the input's term and one term per layer (flattening
    /// implicit) — `54-16-7` for an MLP.
    static func notation(_ stack: [any Layer]) -> String {
        ([stack.first?.inputNotation ?? "0"] + stack.map(\.notationTerm)).joined(separator: "-")
    }
}

/// What a layer term of the notation is applied to: the previous layer's image, or a flat vector.
enum NotationInput {
    case image(ImageShape), flat(Int)

    /// Values per sample.
    var size: Int {
        switch self { case let .image(s): s.size; case let .flat(n): n }
    }
}

/// A layer type with its own term in the architecture notation: it reads the term as its `notationTerm` writes it.
protocol NotatedLayer: Layer {
    /// The layer `term` describes on `input`, nil when the term is not this type's (or needs an image and
    /// the input is flat). Throws `LayerGeometryError` for a term of this type that is malformed or does
    /// not fit the input, saying what in words the parser attaches to the term.
    init?(notation term: String, input: NotationInput, bias: Bool) throws
}
