import Foundation
import TwoScaleCore

/// A float64 array in NumPy's `.npy` format, version 1.0 — the on-disk form of the spectra store.
///
/// Layout (NumPy's NEP 1): the magic `\x93NUMPY`, the version bytes `1 0`, a little-endian `UInt16`
/// header length `H`, then `H` bytes of ASCII header — a Python dict literal
/// `{'descr': '<f8', 'fortran_order': False, 'shape': (K, r), }` padded with spaces and ended by `\n`
/// so that `10 + H` is a multiple of 64 — then the `Π shape` values as little-endian IEEE doubles in
/// C (row-major) order. `numpy.load` reads these files as they are; the same array gives the same bytes.
public struct NPYArray: Sendable, Equatable {
    public let shape: [Int]
    public var data: [Double]

    public init(shape: [Int], data: [Double]) throws {
        guard shape.allSatisfy({ $0 >= 0 }) else {
            throw TwoScaleError.failure("npy: negative extent in shape \(shape)")
        }
        let n = shape.reduce(1, *)
        guard n == data.count else {
            throw TwoScaleError.failure("npy: shape \(shape) holds \(n) values, \(data.count) given")
        }
        self.shape = shape
        self.data = data
    }

    public static let magic: [UInt8] = [0x93] + Array("NUMPY".utf8)

    /// The header dict as NumPy writes it (`(5,)` for one axis, `()` for a scalar).
    static func headerDict(shape: [Int]) -> String {
        let dims: String
        switch shape.count {
        case 0: dims = "()"
        case 1: dims = "(\(shape[0]),)"
        default: dims = "(" + shape.map(String.init).joined(separator: ", ") + ")"
        }
        return "{'descr': '<f8', 'fortran_order': False, 'shape': \(dims), }"
    }

    /// The file's bytes.
    public func encoded() -> Data {
        var header = Array(Self.headerDict(shape: shape).utf8)
        // 10 bytes of preamble + header + padding + '\n' ≡ 0 (mod 64).
        let unpadded = 10 + header.count + 1
        let pad = (64 - unpadded % 64) % 64
        header += [UInt8](repeating: 0x20, count: pad)
        header.append(0x0A)
        var out = Data(capacity: 10 + header.count + 8 * data.count)
        out.append(contentsOf: Self.magic)
        out.append(contentsOf: [1, 0])
        let h = UInt16(header.count)
        out.append(contentsOf: [UInt8(h & 0xFF), UInt8(h >> 8)])
        out.append(contentsOf: header)
        data.withUnsafeBufferPointer { p in
            var le = [UInt64](repeating: 0, count: p.count)
            for i in p.indices { le[i] = p[i].bitPattern.littleEndian }
            le.withUnsafeBytes { out.append(contentsOf: $0) }
        }
        return out
    }

    /// Writes the array atomically to `path`.
    public func write(to path: String) throws {
        try AtomicFile.write(encoded(), to: path)
    }

    /// Reads `path`, validating the magic, version, dtype (`<f8` only), memory order (C only), shape and
    /// the data length; every error names the file.
    public static func read(path: String) throws -> NPYArray {
        let d = try InputFile.read(path, expecting: "a .npy array")
        return try decode(d, source: path)
    }

    /// Parses the bytes of an `.npy` file (`source` names it in errors): little-endian float64 in C
    /// order only, the store's form (`decodeTensor` reads the other float layouts).
    public static func decode(_ bytes: Data, source: String) throws -> NPYArray {
        let b = [UInt8](bytes)
        func bad(_ what: String) -> TwoScaleError { TwoScaleError.file(source, "is not a valid float64 .npy file: \(what)") }
        let h = try Header.parse(b, bad: bad) { descr, fortran in
            guard descr == "<f8" else {
                throw bad("dtype \(Header.shown(descr)) is not supported; the store holds little-endian float64 ('<f8')")
            }
            guard !fortran else { throw bad("Fortran-ordered arrays are not supported; save in C order") }
        }
        let values = try h.values(b, bad: bad)
        return NPYArray(uncheckedShape: h.shape, data: values)
    }

    public init(uncheckedShape: [Int], data: [Double]) {
        shape = uncheckedShape
        self.data = data
    }

    /// Parses an `.npy` array of float32 or float64, either byte order (descr `<f4`, `>f4`, `<f8`, `>f8`),
    /// C or Fortran order — the arrays `np.save`/`np.savez` write for float tensors. Values are widened
    /// to `Double` (exactly) and returned in C (row-major) order: a Fortran-ordered array is transposed
    /// back to its logical layout. Other dtypes are refused with an error naming the tensor `name` and
    /// its dtype.
    public static func decodeTensor(_ b: [UInt8], name: String, source: String) throws -> NamedTensor {
        func bad(_ what: String) -> TwoScaleError { TwoScaleError.file(source, "tensor '\(name)' is not a valid .npy array: \(what)") }
        let h = try Header.parse(b, bad: bad) { descr, _ in
            guard ["<f4", ">f4", "<f8", ">f8", "=f4", "=f8"].contains(descr) else {
                throw TwoScaleError.file(source, "tensor '\(name)' has dtype \(Header.shown(descr))\(Header.meaning(descr)); "
                                         + "only float32 and float64 tensors are supported (convert with .astype(np.float32))")
            }
        }
        var values = try h.values(b, bad: bad)
        if h.fortranOrder && h.shape.count > 1 { values = fortranToC(values, shape: h.shape) }
        return NamedTensor(name: name, dtype: h.itemSize == 4 ? "float32" : "float64", shape: h.shape, values: values)
    }

    /// The values of a Fortran-ordered (first index fastest) array of `shape`, in C order (last index fastest).
    static func fortranToC(_ f: [Double], shape: [Int]) -> [Double] {
        let k = shape.count
        var fStride = [Int](repeating: 1, count: k)
        for i in 1..<k { fStride[i] = fStride[i - 1] * shape[i - 1] }
        var out = [Double](repeating: 0, count: f.count)
        var index = [Int](repeating: 0, count: k)
        for c in 0..<f.count {
            var at = 0
            for i in 0..<k { at += index[i] * fStride[i] }
            out[c] = f[at]
            // Advance the multi-index in C order.
            var i = k - 1
            while i >= 0 {
                index[i] += 1
                if index[i] < shape[i] { break }
                index[i] = 0
                i -= 1
            }
        }
        return out
    }

    /// An `.npy` header: the magic, version, header length and the dict `descr`, `fortran_order`, `shape`.
    struct Header {
        let descr: String
        let fortranOrder: Bool
        let shape: [Int]
        let dataStart: Int

        var itemSize: Int { descr.hasSuffix("4") ? 4 : 8 }

        /// Parses the header of `b`; `accept(descr, fortranOrder)` refuses what the caller cannot read,
        /// before the shape is looked at.
        static func parse(_ b: [UInt8], bad: (String) -> TwoScaleError,
                          accept: (String, Bool) throws -> Void) throws -> Header {
            guard b.count >= 10, Array(b[0..<6]) == magic else { throw bad("the NumPy magic bytes are missing") }
            let major = b[6]
            let headerLen: Int
            let start: Int
            switch major {
            case 1:
                headerLen = Int(b[8]) | Int(b[9]) << 8
                start = 10
            case 2, 3:
                guard b.count >= 12 else { throw bad("truncated header") }
                headerLen = Int(b[8]) | Int(b[9]) << 8 | Int(b[10]) << 16 | Int(b[11]) << 24
                start = 12
            default:
                throw bad("format version \(major).\(b[7]) is not supported (1.0, 2.0 and 3.0 are)")
            }
            guard b.count >= start + headerLen else { throw bad("truncated header") }
            let h = String(decoding: b[start..<(start + headerLen)], as: UTF8.self)
            func value(of key: String) -> Substring? {
                for quote in ["'", "\""] {
                    if let r = h.range(of: quote + key + quote) {
                        var rest = h[r.upperBound...].drop { $0 == " " }
                        guard rest.first == ":" else { return nil }
                        rest = rest.dropFirst().drop { $0 == " " }
                        return rest
                    }
                }
                return nil
            }
            guard let d = value(of: "descr") else { throw bad("the header has no 'descr'") }
            // A simple dtype is a quoted string ('<f8'); a structured one is a list, shown as it stands.
            let descr: String
            if let q = d.first, q == "'" || q == "\"", let close = d.dropFirst().firstIndex(of: q) {
                descr = String(d[d.index(after: d.startIndex)..<close])
            } else {
                descr = String(d.prefix { $0 != "}" }.prefix(40))
            }
            guard let fo = value(of: "fortran_order") else { throw bad("the header has no 'fortran_order'") }
            guard fo.hasPrefix("False") || fo.hasPrefix("True") else { throw bad("'fortran_order' is neither True nor False") }
            try accept(descr, fo.hasPrefix("True"))
            guard let sh = value(of: "shape"), sh.first == "(", let close = sh.firstIndex(of: ")") else {
                throw bad("the header has no 'shape' tuple")
            }
            let inner = sh[sh.index(after: sh.startIndex)..<close]
            var shape: [Int] = []
            for part in inner.split(separator: ",") {
                let t = part.trimmingCharacters(in: .whitespaces)
                if t.isEmpty { continue }
                guard let n = Int(t), n >= 0 else { throw bad("shape entry '\(t)' is not a whole number ≥ 0") }
                shape.append(n)
            }
            var total = 1
            for n in shape {
                let (p, o) = total.multipliedReportingOverflow(by: n)
                guard !o, p <= Int.max / 8 else { throw bad("shape \(shape) is too large") }
                total = p
            }
            return Header(descr: descr, fortranOrder: fo.hasPrefix("True"), shape: shape, dataStart: start + headerLen)
        }

        /// The data of `b` (which must hold exactly `Π shape` items after the header) as doubles, in file order.
        func values(_ b: [UInt8], bad: (String) -> TwoScaleError) throws -> [Double] {
            let count = shape.reduce(1, *)
            let expected = count * itemSize
            let have = b.count - dataStart
            guard have == expected else {
                throw bad(have < expected
                          ? "truncated: shape \(shape) needs \(expected) data bytes, the file has \(have)"
                          : "\(have - expected) bytes after the data of shape \(shape)")
            }
            return FloatBytes.decode(b, at: dataStart, count: count, width: itemSize, bigEndian: descr.hasPrefix(">"))
        }

        /// The dtype as the header spells it, quoted.
        static func shown(_ descr: String) -> String { "'\(descr)'" }

        /// NumPy's name for a simple descr (`<i8` → " (int64)"), or "" where there is none.
        static func meaning(_ descr: String) -> String {
            let s = descr.drop { "<>=|".contains($0) }
            guard let kind = s.first, let bytes = Int(s.dropFirst()), (1...64).contains(bytes) else { return "" }
            let names: [Character: String] = ["f": "float", "i": "int", "u": "uint", "c": "complex"]
            if kind == "b" && bytes == 1 { return " (bool)" }
            return names[kind].map { " (\($0)\(bytes * 8))" } ?? ""
        }
    }
}
