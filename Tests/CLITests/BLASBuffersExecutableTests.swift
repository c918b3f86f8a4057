import Foundation
import TwoScaleFormats
import XCTest

/// The `twoscale` executable exports CBLASBuffers' `blas_memory_alloc` and `blas_memory_free`, so that its
/// OpenBLAS keeps work buffers per thread (docs/PERFORMANCE.md); `bench --json` records where they came from.
final class BLASBuffersExecutableTests: XCTestCase {
    func testTheExecutableKeepsOpenBLASBuffersPerThread() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try FaultTests.binary())
        p.arguments = ["bench", "toy", "--json", "--quiet", "--threads", "2"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        let json = try JSONValue.parse(data, source: "bench --json")
        XCTAssertEqual(json["blas_buffers"]?.stringValue, "per-thread")
    }
}
