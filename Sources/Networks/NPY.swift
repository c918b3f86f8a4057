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

    static let magic: [UInt8] = [0x93] + Array("NUMPY".utf8)

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
        guard let d = FileManager.default.contents(atPath: path) else {
            throw TwoScaleError.file(path, FileManager.default.fileExists(atPath: path)
                                     ? "cannot be read" : "does not exist")
        }
        return try decode(d, source: path)
    }

    /// Parses the bytes of an `.npy` file (`source` names it in errors).
    public static func decode(_ bytes: Data, source: String) throws -> NPYArray {
        let b = [UInt8](bytes)
        func bad(_ what: String) -> TwoScaleError { TwoScaleError.file(source, "is not a valid float64 .npy file: \(what)") }
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
        let header = String(decoding: b[start..<(start + headerLen)], as: UTF8.self)
        let shape = try parseHeader(header, bad: bad)
        let count = shape.reduce(1) { $0.multipliedReportingOverflow(by: $1).partialValue }
        let dataStart = start + headerLen
        let expected = count * 8
        guard b.count - dataStart == expected else {
            throw bad(b.count - dataStart < expected
                      ? "truncated: shape \(shape) needs \(expected) data bytes, the file has \(b.count - dataStart)"
                      : "\(b.count - dataStart - expected) bytes after the data of shape \(shape)")
        }
        var values = [Double](repeating: 0, count: count)
        b.withUnsafeBytes { raw in
            for i in 0..<count {
                let bits = raw.loadUnaligned(fromByteOffset: dataStart + 8 * i, as: UInt64.self)
                values[i] = Double(bitPattern: UInt64(littleEndian: bits))
            }
        }
        return NPYArray(uncheckedShape: shape, data: values)
    }

    init(uncheckedShape: [Int], data: [Double]) {
        shape = uncheckedShape
        self.data = data
    }

    /// Extracts `descr`, `fortran_order` and `shape` from the header dict, accepting only what this
    /// reader can honour: little-endian float64 in C order.
    static func parseHeader(_ h: String, bad: (String) -> TwoScaleError) throws -> [Int] {
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
        guard let descr = value(of: "descr") else { throw bad("the header has no 'descr'") }
        guard descr.hasPrefix("'<f8'") || descr.hasPrefix("\"<f8\"") else {
            let shown = descr.prefix { $0 != "," }
            throw bad("dtype \(shown) is not supported; the store holds little-endian float64 ('<f8')")
        }
        guard let fo = value(of: "fortran_order") else { throw bad("the header has no 'fortran_order'") }
        guard fo.hasPrefix("False") else { throw bad("Fortran-ordered arrays are not supported; save in C order") }
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
        return shape
    }
}
