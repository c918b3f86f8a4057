import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// The IDX format of (Fashion-)MNIST: a big-endian header — magic `0x00000803` (unsigned bytes,
/// 3 dimensions: count × rows × cols) for images, or `0x00000804` (count × rows × cols × channels), `0x00000801` (1 dimension: count) for labels —
/// then the bytes, row-major. Files ending in `.gz` (or any gzip file) are decompressed with zlib on
/// the fly; only the first `limit` records are decoded. Image bytes are scaled to [0, 1] (`/255`).
public enum IDXReader {
    public static let imageMagic: UInt32 = 0x0000_0803
    /// Colour images: `count × rows × cols × channels` unsigned bytes.
    public static let colourImageMagic: UInt32 = 0x0000_0804
    public static let labelMagic: UInt32 = 0x0000_0801
    /// The most values (images × pixels, or labels) loaded at once: 2²⁸ (2 GiB of doubles).
    public static let maxValues = 1 << 28

    /// Number of records in an IDX file's header, and the record shape.
    static func header(_ r: GzipFileReader, magic accepted: [UInt32], kind: String) throws -> (count: Int, shape: [Int]) {
        let m = try r.readExactly(4, what: "the IDX magic number")
        let magic = m.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard accepted.contains(magic) else {
            throw TwoScaleError.file(r.path, String(format: "not an IDX %@ file: magic number 0x%08x, expected ", kind, magic)
                                     + accepted.map { String(format: "0x%08x", $0) }.joined(separator: " or "))
        }
        let dims = Int(m[3])
        let d = try r.readExactly(4 * dims, what: "the IDX dimensions")
        var sizes: [Int] = []
        for i in 0..<dims {
            sizes.append(Int(d[4 * i..<4 * i + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }))
        }
        return (sizes[0], Array(sizes.dropFirst()))
    }

    /// Images as an N × (rows·cols) matrix scaled to [0, 1], with the file's record count and the shape of
    /// one image as height × width × channels (`rows × cols × 1` for the 3-dimensional IDX of MNIST,
    /// `rows × cols × channels` for a 4-dimensional file; `nil` for any other rank).
    public static func images(path: String, limit: Int?) throws -> (inputs: Matrix, available: Int, shape: [Int]?) {
        let r = try GzipFileReader(path: path)
        let (count, shape) = try header(r, magic: [imageMagic, colourImageMagic], kind: "image")
        // The header is untrusted: multiply with overflow checks and refuse sizes beyond `maxValues`
        // before allocating anything.
        var features = 1
        for s in shape {
            let (p, overflow) = features.multipliedReportingOverflow(by: s)
            guard !overflow, p <= maxValues else {
                throw TwoScaleError.file(path, "the IDX header announces images of size \(shape.map(String.init).joined(separator: "×")), more than \(maxValues) pixels")
            }
            features = p
        }
        guard features > 0 else { throw TwoScaleError.file(path, "the IDX images have size \(shape) (zero pixels)") }
        let n = Swift.min(limit ?? count, count)
        guard n <= maxValues / features else {
            throw TwoScaleError.file(path, "the IDX header announces \(count) images of \(features) pixels; at most \(maxValues / features) are loaded at once (N × pixels ≤ 2²⁸): use \(Setting.samples) N")
        }
        // Memory grows with the data actually read, never with the (untrusted) announced size: a short
        // file with a huge header fails fast instead of allocating gigabytes first.
        var values: [Double] = []
        let chunkRows = Swift.max(1, (1 << 20) / features)
        var row = 0
        var buf = [UInt8](repeating: 0, count: Swift.min(chunkRows, Swift.max(n, 1)) * features)
        while row < n {
            let k = Swift.min(chunkRows, n - row)
            let want = k * features
            let got = try buf.withUnsafeMutableBytes { try r.read(into: $0, count: want) }
            guard got == want else {
                throw TwoScaleError.file(path, "truncated: the header announces \(count) images of \(features) bytes, the data ends inside image \(row + got / features + 1)")
            }
            let base = values.count
            values.append(contentsOf: repeatElement(0, count: want))
            values.withUnsafeMutableBufferPointer { v in
                buf.withUnsafeBufferPointer { b in for i in 0..<want { v[base + i] = Double(b[i]) / 255 } }
            }
            row += k
        }
        let x = Matrix(rows: n, cols: features, data: values)
        let imageShape: [Int]? = shape.count == 2 ? shape + [1] : shape.count == 3 ? shape : nil
        return (x, count, imageShape)
    }

    /// Labels (one byte each), with the file's record count.
    public static func labels(path: String, limit: Int?) throws -> (labels: [Int], available: Int) {
        let r = try GzipFileReader(path: path)
        let (count, shape) = try header(r, magic: [labelMagic], kind: "label")
        guard shape.isEmpty else { throw TwoScaleError.file(path, "IDX labels must be one-dimensional") }
        let n = Swift.min(limit ?? count, count)
        guard n <= maxValues else {
            throw TwoScaleError.file(path, "the IDX header announces \(count) labels; at most \(maxValues) are loaded at once: use \(Setting.samples) N")
        }
        let bytes = try r.readExactly(n, what: "\(n) labels")
        return (bytes.map(Int.init), count)
    }

    /// Images and optional labels; their record counts must agree.
    public static func load(images: String, labels: String?, limit: Int?) throws -> Dataset {
        let (x, count, shape) = try Self.images(path: images, limit: limit)
        guard let labels else { return Dataset(inputs: x, source: "idx:\(images)", shape: shape) }
        let (l, lcount) = try Self.labels(path: labels, limit: limit)
        guard lcount == count else {
            throw TwoScaleError.file(labels, "has \(lcount) labels but \(images) has \(count) images")
        }
        return Dataset(inputs: x, labels: l, classes: (l.max() ?? 0) + 1, source: "idx:\(images),\(labels)", shape: shape)
    }
}
