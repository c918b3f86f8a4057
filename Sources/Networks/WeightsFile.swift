import Foundation
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// Network parameters from a file, in one of three formats, told apart by their first bytes
/// (`format(of:path:)`):
///
/// * JSON (README, "Weights files"): `{"weights": [W_1, …, W_L], "biases": [b_1, …, b_L]}`, one entry per
///   parametric layer (dense and convolution; pooling has none): a dense `W_m` is a list of `n_m` rows of
///   `n_{m−1}` numbers, a convolution's a list of F rows (one per filter) of k·k·C_in numbers (row, column,
///   channel order, channels fastest); each `b_m` a list of one number per unit. `biases` is optional
///   (zeros) and only allowed when the architecture has biases. Errors name the file and which matrix and
///   row has the wrong shape; a well-formed file for another architecture is a usage error (status 2).
/// * NumPy `.npz` (`NPZ`, zip magic `PK\x03\x04`) and `.safetensors` (`SafeTensors`, an 8-byte
///   little-endian header length, then a JSON header): float32 or float64 tensors, positional
///   (`np.savez(f, W_1, …)`) or named like a PyTorch `nn.Sequential` state dict (`0.weight`, `0.bias`,
///   `2.weight`, …); `network(from:…)` (TensorWeights.swift) states the rules.
public enum WeightsFile {
    /// The formats `load` reads.
    public enum Format: String, Sendable {
        case json, npz, safetensors
    }

    public static func load(path: String, architecture: Architecture, activation: Activation) throws -> Network {
        let data = try InputFile.read(path, expecting: "a weights file (JSON, .npz or .safetensors)")
        return try decode(data, path: path, architecture: architecture, activation: activation)
    }

    /// The network in `data`, the bytes of the weights file `path` (which names it in errors), in
    /// whichever format `format(of:path:)` finds.
    public static func decode(_ data: Data, path: String, architecture: Architecture, activation: Activation) throws -> Network {
        switch try format(of: data, path: path) {
        case .json:
            return try parse(try JSONValue.parse(data, source: path), path: path, architecture: architecture, activation: activation)
        case .npz:
            let bytes = [UInt8](data)
            if try ZipArchive(bytes: bytes, source: path).entries.contains(where: { $0.name.hasSuffix("data.pkl") }) {
                throw TwoScaleError.file(path, "is a torch.save archive (a pickle); " + torchSaveHint)
            }
            return try network(from: try NPZ.tensors(bytes, source: path), path: path,
                               architecture: architecture, activation: activation)
        case .safetensors:
            return try network(from: try SafeTensors.tensors([UInt8](data), source: path), path: path,
                               architecture: architecture, activation: activation)
        }
    }

    /// How to export a PyTorch model, for the errors on files written by `torch.save`.
    static let torchSaveHint = "twoscale does not read pickles. Save the state dict instead: twoscale.save_weights(model.state_dict(), \"model.safetensors\") with the Python client (python/), safetensors.torch.save_file, or np.savez (docs/FORMATS.md)"

    /// The format of a weights file: by content — the zip magic is `.npz`, a plausible safetensors
    /// header length followed by `{` is `.safetensors` — else by the name's extension (`.npz`,
    /// `.safetensors`, so that a damaged file gets that format's error), else JSON. A lone `.npy`
    /// array is refused with a hint to save an `.npz`.
    public static func format(of data: Data, path: String) throws -> Format {
        let head = [UInt8](data.prefix(9))
        if NPZ.looksLike(head) { return .npz }
        if SafeTensors.looksLike(head) { return .safetensors }
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
        if head.first == 0x80 || ["pt", "pth", "ckpt", "pkl", "bin"].contains(ext) {
            throw TwoScaleError.file(path, "looks like a torch.save or pickle file; " + torchSaveHint)
        }
        if head.count >= 6 && Array(head[0..<6]) == NPYArray.magic {
            throw TwoScaleError.file(path, "is a single .npy array; save every layer in one .npz file: np.savez(f, W_1, …, W_L)")
        }
        switch ext {
        case "npz": return .npz
        case "safetensors": return .safetensors
        default: return .json
        }
    }

    public static func parse(_ json: JSONValue, path: String, architecture a: Architecture, activation: Activation) throws -> Network {
        guard case .object = json, let ws = json["weights"]?.arrayValue else {
            throw TwoScaleError.file(path, "expected an object {\"weights\": [W_1, …, W_\(a.parametricLayers.count)]}")
        }
        let parametric = a.parametricLayers
        guard ws.count == parametric.count else {
            throw TwoScaleError.mismatch(path, "\(ws.count) weight matrices, the architecture \(a) needs \(parametric.count)")
        }
        var weights: [Matrix] = []
        for (b, (w, m)) in zip(ws, parametric).enumerated() {
            let s = a.structure(layer: m)
            let rows = s.units, cols = s.patchSize
            guard let list = w.arrayValue, list.count == rows else {
                throw TwoScaleError.mismatch(path, "W_\(b + 1) must be a list of \(rows) rows (layer \(m + 1), \(a.stack[m].notationTerm): \(rows) units), found \(w.arrayValue.map { "\($0.count) rows" } ?? "no list")")
            }
            var mat = Matrix(rows: rows, cols: cols)
            for (i, r) in list.enumerated() {
                let v = try numbers(r, count: cols, path: path, what: "W_\(b + 1) row \(i + 1)")
                for j in 0..<cols { mat[i, j] = v[j] }
            }
            weights.append(mat)
        }
        var biases: [[Double]]? = nil
        if let bs = json["biases"], bs != .null {
            guard a.bias else {
                throw TwoScaleError.mismatch(path, "has \"biases\" but the network has none (pass \(Setting.bias))")
            }
            guard let list = bs.arrayValue, list.count == parametric.count else {
                throw TwoScaleError.mismatch(path, "\"biases\" must be a list of \(parametric.count) vectors, one per parametric layer")
            }
            biases = try zip(list, parametric).enumerated().map { b, pair in
                try numbers(pair.0, count: a.structure(layer: pair.1).units, path: path, what: "b_\(b + 1)")
            }
        }
        return try Network(architecture: a, activation: activation, weights: weights, biases: biases)
    }

    static func numbers(_ v: JSONValue, count: Int, path: String, what: String) throws -> [Double] {
        guard let list = v.arrayValue else { throw TwoScaleError.file(path, "\(what) must be a list of \(count) numbers") }
        guard list.count == count else { throw TwoScaleError.mismatch(path, "\(what) has \(list.count) numbers, expected \(count)") }
        return try list.enumerated().map { j, x in
            guard let d = x.doubleValue, d.isFinite else {
                throw TwoScaleError.file(path, "\(what), entry \(j + 1) is not a finite number")
            }
            return d
        }
    }

    /// The JSON form of a network's parameters (the inverse of `parse`).
    public static func json(_ net: Network) -> JSONValue {
        var kv: [(String, JSONValue)] = [("weights", .array(net.weights.map { w in .array(w.rowArrays.map(JSONValue.numbers)) }))]
        if net.architecture.bias { kv.append(("biases", .array(net.biases.map(JSONValue.numbers)))) }
        return .object(kv)
    }
}
