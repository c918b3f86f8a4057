import Foundation
import TwoScaleCore

/// The `.safetensors` format (Hugging Face's `safetensors` package; `safetensors.torch.save_file`,
/// `safetensors.numpy.save_file`, `safetensors.flax.save_file`):
///
///     8 bytes   N, the header's length, an unsigned little-endian integer
///     N bytes   a JSON object (UTF-8, possibly padded with spaces):
///               {"__metadata__": {…}, "NAME": {"dtype": "F32", "shape": [4, 3], "data_offsets": [BEGIN, END]}, …}
///     the rest  the byte buffer; tensor NAME is bytes BEGIN..<END of it, little-endian, C (row-major) order
///
/// Only `F32` and `F64` tensors are read; every other dtype (`F16`, `BF16`, `I64`, …) is refused with
/// an error naming the tensor and its dtype. Offsets and sizes are checked against the file.
public enum SafeTensors {
    /// A plausible safetensors start: a header length below 2³² and a JSON object right after it. (A
    /// JSON or text file cannot pass: its first eight bytes would read as a length far above 2³².)
    public static func looksLike(_ b: [UInt8]) -> Bool {
        b.count >= 9 && b[4] == 0 && b[5] == 0 && b[6] == 0 && b[7] == 0 && b[8] == UInt8(ascii: "{")
    }

    /// Every tensor of the file, in header order.
    public static func tensors(_ b: [UInt8], source: String) throws -> [NamedTensor] {
        func bad(_ what: String) -> TwoScaleError { TwoScaleError.file(source, "is not a valid .safetensors file: \(what)") }
        let r = ByteReader(bytes: b, bad: bad)
        let n = try r.u64(0, "header length")
        guard n <= b.count - 8 else {
            throw bad("truncated: the header is \(n) bytes long, the file has \(b.count - 8) after the length")
        }
        let header: JSONValue
        do { header = try JSONValue.parse(Data(b[8..<(8 + n)]), source: source) } catch let e as TwoScaleError {
            throw bad("its header is not valid JSON (\(e.message))")
        }
        guard case let .object(entries) = header else { throw bad("its header is not a JSON object") }
        let bufferStart = 8 + n, bufferCount = b.count - bufferStart
        var out: [NamedTensor] = []
        for (name, info) in entries where name != "__metadata__" {
            func badTensor(_ what: String) -> TwoScaleError { bad("tensor '\(name)': \(what)") }
            guard let dtype = info["dtype"]?.stringValue else { throw badTensor("no \"dtype\"") }
            guard let dims = info["shape"]?.arrayValue else { throw badTensor("no \"shape\" list") }
            var shape: [Int] = []
            var count = 1
            for d in dims {
                guard case let .int(k) = d, k >= 0 else { throw badTensor("shape entry \(d) is not a whole number ≥ 0") }
                let (p, o) = count.multipliedReportingOverflow(by: k)
                guard !o, p <= Int.max / 8 else { throw badTensor("shape \(dims.compactMap(\.doubleValue)) is too large") }
                shape.append(k)
                count = p
            }
            guard let offs = info["data_offsets"]?.arrayValue, offs.count == 2,
                  case let .int(begin) = offs[0], case let .int(end) = offs[1] else {
                throw badTensor("no \"data_offsets\" [BEGIN, END]")
            }
            let width: Int
            switch dtype {
            case "F32": width = 4
            case "F64": width = 8
            default:
                throw TwoScaleError.file(source, "tensor '\(name)' has dtype \(dtype); only F32 and F64 (float32, float64) "
                                         + "tensors are supported (convert before saving, e.g. model.float())")
            }
            guard 0 <= begin, begin <= end, end <= bufferCount else {
                throw badTensor("data_offsets [\(begin), \(end)] lie outside the \(bufferCount) data bytes (truncated?)")
            }
            guard end - begin == count * width else {
                throw badTensor("data_offsets [\(begin), \(end)] span \(end - begin) bytes, shape \(shape) of \(dtype) needs \(count * width)")
            }
            out.append(NamedTensor(name: name, dtype: width == 4 ? "float32" : "float64", shape: shape,
                                   values: FloatBytes.decode(b, at: bufferStart + begin, count: count, width: width, bigEndian: false)))
        }
        return out
    }
}
