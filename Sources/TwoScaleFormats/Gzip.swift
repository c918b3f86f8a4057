import CZlib
import Foundation
import TwoScaleCore

/// A sequential byte reader over a file that may be gzip-compressed, through zlib's `gzread`
/// (which reads uncompressed files transparently). Only the bytes asked for are decompressed, so
/// reading the first N records of a large `.gz` file costs O(N), not O(file).
public final class GzipFileReader {
    private let file: gzFile
    public let path: String
    /// Bytes delivered so far (uncompressed offset).
    public private(set) var offset: Int = 0

    public init(path: String) throws {
        self.path = path
        try InputFile.check(path, expecting: "a file (IDX, optionally gzip-compressed)")
        guard let f = gzopen(path, "rb") else {
            throw TwoScaleError.file(path, "cannot be opened (\(String(cString: strerror(errno))))")
        }
        file = f
        gzbuffer(f, 1 << 17)
    }

    deinit { gzclose(file) }

    /// Reads up to `count` bytes into `buffer` (from its start); returns how many were read (fewer
    /// only at the end of the data). A corrupt or truncated compressed stream is an error.
    public func read(into buffer: UnsafeMutableRawBufferPointer, count: Int) throws -> Int {
        precondition(count <= buffer.count)
        var got = 0
        while got < count {
            let want = Swift.min(count - got, Int(Int32.max / 2))
            let n = gzread(file, buffer.baseAddress! + got, UInt32(want))
            if n < 0 { throw zlibError(during: "reading") }
            if n == 0 {
                // End of data — or a truncated gzip stream, which zlib reports through gzerror.
                var code: Int32 = 0
                _ = gzerror(file, &code)
                if code != Z_OK && code != Z_STREAM_END { throw zlibError(during: "reading") }
                break
            }
            got += Int(n)
        }
        offset += got
        return got
    }

    /// Exactly `count` bytes, or an error saying the file ends early (`what` names the record).
    public func readExactly(_ count: Int, what: String) throws -> [UInt8] {
        // In chunks of at most 1 MiB, so that a bogus `count` from a damaged header costs only what the
        // file holds.
        var out: [UInt8] = []
        let start = offset
        var n = 0
        var chunk = [UInt8](repeating: 0, count: Swift.min(count, 1 << 20))
        while n < count {
            let want = Swift.min(chunk.count, count - n)
            let got = try chunk.withUnsafeMutableBytes { try read(into: $0, count: want) }
            out.append(contentsOf: chunk[0..<got])
            n += got
            if got < want { break }
        }
        guard n == count else {
            throw TwoScaleError.file(path, "truncated: \(what) needs \(count) bytes from byte \(start), the file ends after \(n)")
        }
        return out
    }

    private func zlibError(during what: String) -> TwoScaleError {
        var code: Int32 = 0
        let msg = gzerror(file, &code).map { String(cString: $0) } ?? "unknown zlib error"
        if code == Z_BUF_ERROR {
            return TwoScaleError.file(path, "truncated: the compressed data ends early after \(offset) bytes (\(msg))")
        }
        return TwoScaleError.file(path, "corrupt compressed data after \(offset) bytes (\(msg))")
    }
}

/// gzip compression in memory (zlib's deflate with a gzip wrapper), for writing `.gz` files.
public enum Gzip {
    /// `data` as a complete gzip member.
    public static func compress(_ data: Data, level: Int32 = 6) throws -> Data {
        var stream = z_stream()
        // windowBits 15 + 16 selects the gzip wrapper.
        var status = deflateInit2_(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                                   ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw TwoScaleError.failure("gzip: zlib deflateInit2 failed (status \(status))") }
        defer { deflateEnd(&stream) }
        var input = [UInt8](data)
        let bound = Int(deflateBound(&stream, UInt(input.count))) + 64
        var output = [UInt8](repeating: 0, count: bound)
        let produced: Int = input.withUnsafeMutableBufferPointer { inp in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = inp.baseAddress
                stream.avail_in = UInt32(inp.count)
                stream.next_out = out.baseAddress
                stream.avail_out = UInt32(out.count)
                status = deflate(&stream, Z_FINISH)
                return out.count - Int(stream.avail_out)
            }
        }
        guard status == Z_STREAM_END else { throw TwoScaleError.failure("gzip: zlib deflate failed (status \(status))") }
        return Data(output[0..<produced])
    }
}
