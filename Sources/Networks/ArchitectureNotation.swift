import Foundation
import TwoScaleCore

/// The `--arch` notation for networks with convolutions: terms joined by `-`, read left to right.
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
/// The hidden activation follows every convolution and dense layer but the last; `--bias` gives every
/// convolution and dense layer a bias. A plain `54-16-7` is the MLP notation (all terms numbers).
enum ArchitectureNotation {
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
        enum Shape { case image(ImageShape), flat(Int) }
        var shape: Shape
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
            if let n = Int(t) {
                guard (1...1_000_000).contains(n) else { throw fail(i, "a dense layer has 1 to 10⁶ units") }
                let inputs: Int
                switch shape { case let .image(s): inputs = s.size; case let .flat(k): inputs = k }
                layers.append(DenseLayer(inputs: inputs, outputs: n, bias: bias))
                shape = .flat(n)
                continue
            }
            if t == "flatten" {
                guard case let .image(s) = shape else { throw fail(i, "flatten needs an image before it") }
                shape = .flat(s.size)
                continue
            }
            guard case let .image(input) = shape else {
                throw fail(i, "a convolution or pooling needs an image before it, but the input here is flat (after a dense layer or flatten)")
            }
            do {
                if t.hasPrefix("conv") {
                    guard let spec = convSpec(t.dropFirst(4)) else {
                        throw fail(i, "a convolution is conv<F>k<K>[s<S>][p<P>], e.g. conv8k3 or conv16k5s1p2")
                    }
                    let conv = try ConvolutionLayer(input: input, filters: spec.f, kernel: spec.k, stride: spec.s, padding: spec.p, bias: bias)
                    layers.append(conv)
                    shape = .image(conv.output)
                } else if t.hasPrefix("maxpool") || t.hasPrefix("avgpool") {
                    guard let k = Int(t.dropFirst(7)), k >= 1 else { throw fail(i, "pooling is maxpool<K> or avgpool<K>, e.g. maxpool2") }
                    let pool = try PoolingLayer(t.hasPrefix("max") ? .max : .average, input: input, size: k)
                    layers.append(pool)
                    shape = .image(pool.output)
                } else {
                    throw fail(i, "unknown term; " + help)
                }
            } catch let e as LayerGeometryError {
                throw fail(i, e.reason)  // the layer's own geometry check, said about this term
            }
        }
        guard let last = layers.last as? DenseLayer, last.outputSize >= 2 else {
            throw fail(terms.count - 1, "the last term is the softmax layer: a number of classes ≥ 2")
        }
        return layers
    }

    /// `8k3`, `8k3s2`, `8k3p1`, `8k3s2p1` → (filters, kernel, stride, padding).
    static func convSpec(_ s: Substring) -> (f: Int, k: Int, s: Int, p: Int)? {
        var rest = s
        func number() -> Int? {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 6 else { return nil }
            rest = rest.dropFirst(digits.count)
            return Int(digits)
        }
        guard let f = number(), rest.first == "k" else { return nil }
        rest = rest.dropFirst()
        guard let k = number() else { return nil }
        var stride = 1, padding = 0
        if rest.first == "s" { rest = rest.dropFirst(); guard let v = number() else { return nil }; stride = v }
        if rest.first == "p" { rest = rest.dropFirst(); guard let v = number() else { return nil }; padding = v }
        guard rest.isEmpty, f >= 1, k >= 1, stride >= 1 else { return nil }
        return (f, k, stride, padding)
    }

    /// The canonical notation of a stack: the input's term and one term per layer (flattening
    /// implicit) — `54-16-7` for an MLP.
    static func notation(_ stack: [any Layer]) -> String {
        ([stack.first?.inputNotation ?? "0"] + stack.map(\.notationTerm)).joined(separator: "-")
    }
}
