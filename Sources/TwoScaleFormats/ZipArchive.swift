import CZlib
import Foundation
import TwoScaleCore

/// A small reader of zip archives held in memory — enough for NumPy's `.npz` files, which are zip
/// archives of `.npy` members written by Python's `zipfile` (`np.savez`: stored, `np.savez_compressed`:
/// deflated).
///
/// Layout (PKWARE's APPNOTE.TXT): the members' data, each after a *local header*
/// (`PK\x03\x04`, 30 bytes + name + extra field), then the *central directory*, one header per member
/// (`PK\x01\x02`, 46 bytes + name + extra + comment) with the member's method, CRC-32, sizes and the
/// offset of its local header, then the *end of central directory* record (`PK\x05\x06`, 22 bytes + a
/// comment of up to 65 535 bytes) that says where the directory is. Archives or members past 4 GiB
/// use the ZIP64 forms: a ZIP64 end record found through its locator (`PK\x06\x07`) just before the end
/// record, and extra field 0x0001 holding the 64-bit sizes and offset of the fields set to 0xFFFFFFFF.
///
/// The reader trusts the central directory (NumPy writes ZIP64 local headers whose 32-bit sizes are
/// 0xFFFFFFFF), uses the local header only for the length of its name and extra field, and checks every
/// offset and size against the bytes it has. Methods 0 (stored) and 8 (deflate, inflated by zlib with
/// `inflateInit2(-15)`, raw deflate) are supported; encrypted members, split archives and other methods
/// are refused. Every member's CRC-32 is checked. Every error names the file (`source`).
public struct ZipArchive: Sendable {
    /// One member, as its central-directory header describes it.
    public struct Entry: Sendable, Equatable {
        public let name: String
        /// 0 stored, 8 deflate.
        public let method: Int
        public let crc32: UInt32
        public let compressedSize: Int
        public let size: Int
        let flags: Int
        let localHeaderOffset: Int
    }

    public let entries: [Entry]
    let bytes: [UInt8]
    let source: String

    public init(bytes: [UInt8], source: String) throws {
        self.bytes = bytes
        self.source = source
        let r = ByteReader(bytes: bytes, bad: { TwoScaleError.file(source, "is not a valid zip (.npz) archive: \($0)") })
        let end = try Self.endRecord(r)
        var entries: [Entry] = []
        var at = end.directoryOffset
        for k in 0..<end.count {
            guard try r.u32(at, "central directory header \(k + 1)") == 0x0201_4B50 else {
                throw r.bad("central directory header \(k + 1) has the wrong signature (damaged or truncated file)")
            }
            let flags = try r.u16(at + 8, "flags")
            let method = try r.u16(at + 10, "method")
            let crc = try r.u32(at + 16, "CRC-32")
            var compressed = try r.u32(at + 20, "compressed size")
            var size = try r.u32(at + 24, "size")
            let nameLength = try r.u16(at + 28, "name length")
            let extraLength = try r.u16(at + 30, "extra field length")
            let commentLength = try r.u16(at + 32, "comment length")
            var disk = try r.u16(at + 34, "disk number")
            var local = try r.u32(at + 42, "local header offset")
            let name = String(decoding: try r.slice(at + 46, nameLength, "member name"), as: UTF8.self)
            // ZIP64 extended information (header 0x0001): 8-byte values for the fields set to all ones, in this order.
            var extra = at + 46 + nameLength
            let extraEnd = extra + extraLength
            while extra + 4 <= extraEnd {
                let id = try r.u16(extra, "extra field id"), length = try r.u16(extra + 2, "extra field length")
                guard extra + 4 + length <= extraEnd else { throw r.bad("member '\(name)': its extra field overruns its header") }
                if id == 0x0001 {
                    var p = extra + 4
                    func next(_ w: Int, _ what: String) throws -> Int {
                        guard p + w <= extra + 4 + length else { throw r.bad("member '\(name)': its ZIP64 field lacks the \(what)") }
                        defer { p += w }
                        return w == 8 ? try r.u64(p, what) : try r.u32(p, what)
                    }
                    if size == 0xFFFF_FFFF { size = try next(8, "size") }
                    if compressed == 0xFFFF_FFFF { compressed = try next(8, "compressed size") }
                    if local == 0xFFFF_FFFF { local = try next(8, "local header offset") }
                    if disk == 0xFFFF { disk = try next(4, "disk number") }
                }
                extra += 4 + length
            }
            guard disk == 0 else { throw r.bad("member '\(name)' is on disk \(disk + 1) of a split archive; split archives are not supported") }
            entries.append(Entry(name: name, method: method, crc32: UInt32(crc), compressedSize: compressed, size: size,
                                 flags: flags, localHeaderOffset: local))
            at = extraEnd + commentLength
        }
        self.entries = entries
    }

    /// The (uncompressed, CRC-checked) bytes of `entry`.
    public func contents(of entry: Entry) throws -> [UInt8] {
        let r = ByteReader(bytes: bytes, bad: { TwoScaleError.file(self.source, "member '\(entry.name)' of the zip (.npz) archive: \($0)") })
        guard entry.flags & 1 == 0 else { throw r.bad("is encrypted; encrypted archives are not supported") }
        let at = entry.localHeaderOffset
        guard try r.u32(at, "local header") == 0x0403_4B50 else {
            throw r.bad("the local header at byte \(at) has the wrong signature (damaged or truncated file)")
        }
        let start = at + 30 + (try r.u16(at + 26, "name length")) + (try r.u16(at + 28, "extra field length"))
        let stored = try r.slice(start, entry.compressedSize, "compressed data")
        let out: [UInt8]
        switch entry.method {
        case 0:
            guard entry.compressedSize == entry.size else {
                throw r.bad("stored (uncompressed), yet its sizes differ (\(entry.compressedSize) and \(entry.size) bytes)")
            }
            out = Array(stored)
        case 8:
            out = try Self.inflate(Array(stored), size: entry.size, bad: r.bad)
        default:
            throw r.bad("compression method \(entry.method) is not supported (stored and deflate are; np.savez and np.savez_compressed write these)")
        }
        let crc = Self.crc32(out)
        guard crc == entry.crc32 else {
            throw r.bad("CRC-32 mismatch (the archive says \(String(entry.crc32, radix: 16)), the data give \(String(crc, radix: 16))): the file is damaged")
        }
        return out
    }

    // MARK: - End of central directory

    struct EndRecord { let count: Int, directoryOffset: Int }

    /// Finds the end record (scanning back over a comment of up to 65 535 bytes) and, where the archive
    /// uses them, the ZIP64 end record it points to.
    static func endRecord(_ r: ByteReader) throws -> EndRecord {
        let n = r.bytes.count
        guard n >= 22 else { throw r.bad("\(n) bytes is too short for a zip archive (truncated?)") }
        var at = n - 22
        let lowest = max(0, n - 22 - 65_535)
        while at >= lowest {
            if r.bytes[at] == 0x50, r.bytes[at + 1] == 0x4B, r.bytes[at + 2] == 5, r.bytes[at + 3] == 6,
               at + 22 + (try r.u16(at + 20, "comment length")) == n { break }
            at -= 1
        }
        guard at >= lowest else { throw r.bad("no end of central directory record (the file is truncated or not a zip archive)") }
        var count = try r.u16(at + 10, "member count")
        var size = try r.u32(at + 12, "central directory size")
        var offset = try r.u32(at + 16, "central directory offset")
        guard try r.u16(at + 4, "disk number") == 0 || count == 0xFFFF else {
            throw r.bad("split (multi-disk) archives are not supported")
        }
        if count == 0xFFFF || size == 0xFFFF_FFFF || offset == 0xFFFF_FFFF {
            let locator = at - 20
            guard locator >= 0, try r.u32(locator, "ZIP64 locator") == 0x0706_4B50 else {
                throw r.bad("the end record asks for ZIP64 values but there is no ZIP64 locator")
            }
            let z = try r.u64(locator + 8, "ZIP64 end record offset")
            guard try r.u32(z, "ZIP64 end record") == 0x0606_4B50 else { throw r.bad("the ZIP64 end record has the wrong signature") }
            count = try r.u64(z + 32, "member count")
            size = try r.u64(z + 40, "central directory size")
            offset = try r.u64(z + 48, "central directory offset")
        }
        // Each central header is at least 46 bytes: a count that does not fit is damage, not a big archive.
        guard offset <= n, size <= n - offset, count <= size / 46 else {
            throw r.bad("the central directory (\(count) members, \(size) bytes at byte \(offset)) does not fit in the file's \(n) bytes (truncated?)")
        }
        return EndRecord(count: count, directoryOffset: offset)
    }

    // MARK: - zlib

    /// Raw-deflate data inflated to exactly `size` bytes.
    static func inflate(_ input: [UInt8], size: Int, bad: (String) -> TwoScaleError) throws -> [UInt8] {
        // Deflate cannot expand data by more than 1032:1; a larger stated size is damage.
        guard size <= input.count * 1032 + 1024 else {
            throw bad("its stated size (\(size) bytes) is impossible for \(input.count) bytes of deflate data")
        }
        var stream = z_stream()
        var status = inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw bad("zlib inflateInit2 failed (status \(status))") }
        defer { inflateEnd(&stream) }
        var input = input
        // The output grows as it is produced (a damaged size costs only what the data inflate to), up to
        // one byte past `size`: a stream that reaches it is longer than the archive says.
        let limit = size + 1
        var output = [UInt8](repeating: 0, count: min(limit, max(4096, input.count * 8)))
        var produced = 0
        input.withUnsafeMutableBufferPointer { inp in
            stream.next_in = inp.baseAddress
            var inLeft = inp.count
            while true {
                if produced == output.count {
                    guard output.count < limit else { break }
                    output += repeatElement(0, count: min(output.count, limit - output.count))
                }
                // zlib counts in UInt32: at most 1 GiB each way per call.
                let inChunk = min(inLeft, 1 << 30), outChunk = min(output.count - produced, 1 << 30)
                stream.avail_in = UInt32(inChunk)
                stream.avail_out = UInt32(outChunk)
                output.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress.map { $0 + produced }
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                inLeft -= inChunk - Int(stream.avail_in)
                produced += outChunk - Int(stream.avail_out)
                // Stop at the end of the stream, on an error, or when the input is spent and zlib holds no more output.
                if status != Z_OK || (inLeft == 0 && stream.avail_out > 0) { break }
            }
        }
        switch status {
        case Z_STREAM_END:
            guard produced == size else {
                throw bad("inflates to \(produced) bytes, the archive says \(size) (the file is damaged)")
            }
        case Z_OK, Z_BUF_ERROR:
            throw bad(produced > size ? "inflates to more than the \(size) bytes the archive says (the file is damaged)"
                                      : "the deflate data end early after \(produced) of \(size) bytes (truncated or damaged)")
        default:
            let msg = stream.msg.map { String(cString: $0) } ?? "status \(status)"
            throw bad("corrupt deflate data (\(msg))")
        }
        return Array(output[0..<produced])
    }

    /// zlib's CRC-32 of `data`.
    static func crc32(_ data: [UInt8]) -> UInt32 {
        data.withUnsafeBufferPointer { p in
            var crc = CZlib.crc32(0, nil, 0)
            var at = 0
            while at < p.count {
                let n = min(p.count - at, 1 << 30)
                crc = CZlib.crc32(crc, p.baseAddress.map { $0 + at }, UInt32(n))
                at += n
            }
            return UInt32(truncatingIfNeeded: crc)
        }
    }
}

/// Bounds-checked little-endian reads from a byte array: every read that would leave the array throws
/// `bad("truncated: …")` instead of trapping.
struct ByteReader {
    let bytes: [UInt8]
    let bad: (String) -> TwoScaleError

    func check(_ at: Int, _ count: Int, _ what: String) throws {
        guard at >= 0, count >= 0, at <= bytes.count, count <= bytes.count - at else {
            throw bad("truncated: the \(what) (\(count) bytes at byte \(at)) lies past the end of the file's \(bytes.count) bytes")
        }
    }

    func uint(_ at: Int, _ width: Int, _ what: String) throws -> UInt64 {
        try check(at, width, what)
        var v: UInt64 = 0
        for k in (0..<width).reversed() { v = v << 8 | UInt64(bytes[at + k]) }
        return v
    }

    func u16(_ at: Int, _ what: String) throws -> Int { Int(try uint(at, 2, what)) }
    func u32(_ at: Int, _ what: String) throws -> Int { Int(try uint(at, 4, what)) }

    /// A 64-bit value that must also fit the file's offsets (anything ≥ 2⁶² is damage).
    func u64(_ at: Int, _ what: String) throws -> Int {
        let v = try uint(at, 8, what)
        guard v < 1 << 62 else { throw bad("the \(what) (\(v)) is impossibly large (damaged file)") }
        return Int(v)
    }

    func slice(_ at: Int, _ count: Int, _ what: String) throws -> ArraySlice<UInt8> {
        try check(at, count, what)
        return bytes[at..<(at + count)]
    }
}
