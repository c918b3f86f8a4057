import Foundation
import TwoScaleCore
import TwoScaleFormats
import XCTest

final class NPYTests: XCTestCase {
    func testHeaderBytesAreNumPyCompatible() throws {
        let a = try NPYArray(shape: [2, 3], data: [1.5, -2, 0, 1e-300, .pi, 7])
        let b = [UInt8](a.encoded())
        XCTAssertEqual(Array(b[0..<8]), [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59, 0x01, 0x00])  // \x93NUMPY 1.0
        let hlen = Int(b[8]) | Int(b[9]) << 8
        XCTAssertEqual((10 + hlen) % 64, 0, "header padded to a multiple of 64 bytes")
        let header = String(decoding: b[10..<(10 + hlen)], as: UTF8.self)
        XCTAssertTrue(header.hasPrefix("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"), header)
        XCTAssertTrue(header.hasSuffix(" \n"))
        XCTAssertEqual(header.count, 118)
        XCTAssertEqual(b.count, 128 + 48)
        // 1.5 = 0x3FF8000000000000, little-endian.
        XCTAssertEqual(Array(b[128..<136]), [0, 0, 0, 0, 0, 0, 0xF8, 0x3F])
        // One axis is written as NumPy does: (5,).
        let v = try NPYArray(shape: [5], data: [1, 2, 3, 4, 5])
        let hv = String(decoding: v.encoded()[10..<74], as: UTF8.self)
        XCTAssertTrue(hv.contains("'shape': (5,), }"), hv)
    }

    func testRoundTrip() throws {
        for shape in [[0, 4], [3], [2, 3, 4], [1, 1]] {
            let n = shape.reduce(1, *)
            let a = try NPYArray(shape: shape, data: (0..<n).map { Double($0) * 0.37 - 1.1 })
            XCTAssertEqual(try NPYArray.decode(a.encoded(), source: "x.npy"), a)
        }
        XCTAssertThrowsError(try NPYArray(shape: [2, 2], data: [1]))
    }

    func testReaderRejectsBadFiles() throws {
        let good = try NPYArray(shape: [2, 2], data: [1, 2, 3, 4]).encoded()
        func message(_ d: Data) -> String {
            do { _ = try NPYArray.decode(d, source: "f.npy"); return "" } catch { return "\(error)" }
        }
        XCTAssertTrue(message(good.prefix(good.count - 1)).contains("truncated"))
        XCTAssertTrue(message(good.prefix(good.count - 1)).contains("f.npy"))
        XCTAssertTrue(message(good.prefix(20)).contains("truncated header"))
        XCTAssertTrue(message(good + Data([0])).contains("bytes after the data"))
        var f4 = good
        let r = f4.range(of: Data("<f8".utf8))!
        f4.replaceSubrange(r, with: Data("<f4".utf8))
        XCTAssertTrue(message(f4).contains("<f4"), message(f4))
        var fortran = good
        fortran.replaceSubrange(fortran.range(of: Data("False".utf8))!, with: Data("True ".utf8))
        XCTAssertTrue(message(fortran).contains("Fortran"))
        XCTAssertTrue(message(Data("hello world, not npy".utf8)).contains("magic"))
    }
}
