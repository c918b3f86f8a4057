import Foundation
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// How the tensors of an `.npz` or `.safetensors` file become a network's `W_1, b_1, …, W_L, b_L`: one
/// weight (and bias) per parametric layer — dense and convolution layers; pooling layers have none, so
/// L counts the parametric layers only.
///
/// **Positional** — every tensor named `arr_K` (what `np.savez(f, A, B, …)` writes), taken in the order
/// of K, which must run 0, 1, …, n−1; the count decides what they are:
/// * n = L: `W_1, …, W_L` (weights only; with `Setting.bias` the biases are zero, as in a JSON file without
///   `"biases"`);
/// * n = 2L: `W_1, b_1, W_2, b_2, …, W_L, b_L` (interleaved, as `model.parameters()` of an
///   `nn.Sequential` lists them) — only with `Setting.bias`;
/// * anything else is an error.
///
/// **Named** — a PyTorch state dict: every tensor named `PATH.weight` or `PATH.bias` (a bare `weight`,
/// `bias` for a single layer), one module PATH per parametric layer. Its order is the network's: PyTorch
/// lists modules in registration order, depth first, but `safetensors` sorts names, so the order comes
/// from the names, never the file. A module's children keep their order where their names carry an
/// index — `0, 2, 10` (a Sequential: numerically), `conv1, conv2` (one stem: by its number) — while
/// children of different stems (`conv1` and `fc1`, `features` and `classifier`, `encoder` and
/// `decoder`) may come in any order, each child's modules kept together (`0.0, 0.2, 1` nests). If the
/// names allow one order it is taken; otherwise the one order in which every weight (and bias) has its
/// layer's shape, and none or several such orders is an error naming the tensors, with the workaround.
/// Biases: all layers or none; none means zero biases under `Setting.bias`, and bias tensors without `Setting.bias`
/// are an error.
///
/// Every dense `W_m` must have shape n_m × n_{m−1} — PyTorch's `nn.Linear.weight` layout (out, in) — and
/// every `b_m` shape n_m; all values must be finite. A convolution's weight is either PyTorch's
/// `nn.Conv2d.weight`, F × C_in × k × k, or twoscale's own layout F × (k·k·C_in) (each filter's kernel in
/// row, column, channel order, channels fastest; what the JSON format and checkpoints hold). With
/// PyTorch-shaped (4-D) convolution weights the file is read as a PyTorch model throughout: PyTorch
/// flattens an image channel-first (C, H, W) while twoscale flattens it (H, W, C), so the columns of the
/// dense layer right after an image are permuted accordingly. A file mixing the two naming schemes, or holding a
/// tensor of neither form (a BatchNorm's running mean, say), is an error that names the tensor.
extension WeightsFile {
    public static func network(from tensors: [NamedTensor], path: String, architecture a: Architecture,
                               activation: Activation) throws -> Network {
        let L = a.parametricLayers.count
        func fail(_ message: String) -> TwoScaleError { TwoScaleError.mismatch(path, message) }
        guard !tensors.isEmpty else { throw fail("holds no tensors; the architecture \(a) needs \(L) weight matrices") }
        let positional = tensors.map { positionalIndex($0.name) }
        let layers: [(weight: NamedTensor, bias: NamedTensor?)]
        if positional.allSatisfy({ $0 != nil }) {
            let sorted = zip(positional.compactMap { $0 }, tensors).sorted { $0.0 < $1.0 }
            for (k, t) in sorted.enumerated() where t.0 != k {
                throw fail("positional arrays must be arr_0 … arr_\(tensors.count - 1); found '\(t.1.name)' where arr_\(k) belongs")
            }
            let ts = sorted.map(\.1)
            if ts.count == L {
                layers = ts.map { ($0, nil) }
            } else if ts.count == 2 * L {
                guard a.bias else {
                    throw fail("has \(ts.count) positional arrays, read as W_1, b_1, …, W_\(L), b_\(L), but the network has no biases (pass \(Setting.bias))")
                }
                layers = (0..<L).map { (ts[2 * $0], ts[2 * $0 + 1]) }
            } else {
                throw fail("has \(ts.count) positional arrays (arr_0 …); the architecture \(a) needs \(L) (W_1, …, W_\(L))"
                           + (a.bias ? " or \(2 * L) (W_1, b_1, …, W_\(L), b_\(L))" : ""))
            }
        } else {
            if let k = positional.firstIndex(where: { $0 != nil }) {
                let other = tensors.indices.first { positional[$0] == nil }.map { tensors[$0].name } ?? ""
                throw fail("mixes positional arrays ('\(tensors[k].name)') with named ones ('\(other)'); use one naming or the other")
            }
            layers = try namedLayers(tensors, architecture: a, fail: fail)
        }

        // A file read as a PyTorch model: some layer's weight has the rank of its own PyTorch layout.
        let pytorch = zip(layers, a.parametricLayers).contains { t, m in
            a.parametric(layer: m).pytorchWeight.map { $0.shape.count == t.weight.shape.count } ?? false
        }
        var weights: [Matrix] = []
        var biases: [[Double]] = []
        for (b, (layer, m)) in zip(layers, a.parametricLayers).enumerated() {
            let s = a.structure(layer: m)
            let rows = s.units, cols = s.patchSize
            let w = layer.weight
            try checkFinite(w, what: "W_\(b + 1)", cols: w.shape.count == 2 ? w.shape[1] : nil, fail: fail)
            var values: [Double]
            let p = a.parametric(layer: m)
            if let layout = p.pytorchWeight, w.shape.count == layout.shape.count {
                guard w.shape == layout.shape else {
                    throw fail("W_\(b + 1) (tensor '\(w.name)') has shape \(w.shapeText); layer \(m + 1) (\(p.notationTerm)) needs \(layout.shapeText) (\(layout.name)) or \(rows)×\(cols)")
                }
                values = layout.reorder(w.values)
            } else {
                guard w.shape == [rows, cols] else {
                    let transposed = w.shape == [cols, rows] && rows != cols
                    let layout = p.pytorchWeight
                    throw fail("W_\(b + 1) (tensor '\(w.name)') has shape \(w.shapeText), "
                               + (layout != nil ? "layer \(m + 1) (\(p.notationTerm)) of " : "")
                               + "the architecture \(a) needs \(rows)×\(cols)"
                               + (layout.map { " \($0.choices)" } ?? "")
                               + (transposed ? " (it looks transposed: twoscale wants (out, in), the layout of PyTorch's nn.Linear.weight; "
                                  + "transpose (in, out) kernels such as JAX/Flax or Keras ones)" : ""))
                }
                values = w.values
                if pytorch, m > 0, let image = (a.stack[m - 1] as? any ImageLayer)?.output {
                    values = p.weightFromChannelFirst(values, input: image)
                }
            }
            weights.append(Matrix(rows: rows, cols: cols, data: values))
            if let bt = layer.bias {
                guard bt.shape == [rows] else {
                    throw fail("b_\(b + 1) (tensor '\(bt.name)') has shape \(bt.shapeText), the architecture \(a) needs \(rows)")
                }
                try checkFinite(bt, what: "b_\(b + 1)", cols: nil, fail: fail)
                biases.append(bt.values)
            }
        }
        return try Network(architecture: a, activation: activation, weights: weights, biases: biases.isEmpty ? nil : biases)
    }

    /// K for a name `arr_K` (K written in plain decimal digits), else nil.
    static func positionalIndex(_ name: String) -> Int? {
        guard name.hasPrefix("arr_") else { return nil }
        let digits = name.dropFirst(4)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }

    /// Refuses NaN and ±∞ (`cols` set: a matrix, reported by row and entry).
    static func checkFinite(_ t: NamedTensor, what: String, cols: Int?, fail: (String) -> TwoScaleError) throws {
        guard let i = t.values.firstIndex(where: { !$0.isFinite }) else { return }
        let place = cols.map { "row \(i / $0 + 1), entry \(i % $0 + 1)" } ?? "entry \(i + 1)"
        throw fail("\(what) (tensor '\(t.name)'), \(place) is not a finite number (\(t.values[i]))")
    }
}
