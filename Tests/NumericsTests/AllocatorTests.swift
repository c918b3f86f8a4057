#if os(Linux)
import Foundation
import Testing
import XCTest
@testable import TwoScaleNumerics

/// Allocator: a thread's arena keeps the memory it frees. The same rounds of allocating, touching and
/// freeing 144 MiB in blocks of 6 MiB (more than two 64 MiB heaps of a thread's arena) fault their pages in
/// again on every round with glibc's top pad at 0, and only in the first round under `Allocator.keepFreedMemory()`.
///
/// The rounds run in a fresh process of this test runner (`AllocatorProbe`), where a new thread is given an
/// arena of its own. Inside the suite's own process, tests running beside it hold arenas too: once glibc's
/// limit of arenas is reached a new thread shares one (or the main arena, which the trim threshold alone
/// keeps), and the control showed no faults.
@Suite(.serialized) struct AllocatorTests {
    /// The probe's report: the control's and the kept setting's minor faults over 10 rounds.
    struct Report: Equatable {
        var controls: [Int]
        var kept: [Int]
    }

    /// Runs `AllocatorProbe.testMeasure` in a new process of this runner and reads its report line.
    static func probe() throws -> (report: Report?, output: String) {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = ["NumericsTests.AllocatorProbe/testMeasure"]
        var env = ProcessInfo.processInfo.environment
        env[AllocatorProbe.variable] = "1"
        p.environment = env
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard p.terminationStatus == 0,
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(AllocatorProbe.prefix) }) else { return (nil, text) }
        var controls: [Int] = [], kept: [Int] = []
        for field in line.dropFirst(AllocatorProbe.prefix.count).split(separator: " ") {
            let kv = field.split(separator: "=")
            guard kv.count == 2 else { continue }
            let values = kv[1].split(separator: ",").compactMap { Int($0) }
            if kv[0] == "controls" { controls = values } else if kv[0] == "kept" { kept = values }
        }
        return (Report(controls: controls, kept: kept), text)
    }

    @Test func aThreadKeepsTheHeapsItFreed() throws {
        let (report, output) = try Self.probe()
        let r = try #require(report, "the probe process gave no report; its output:\n\(output.suffix(2_000))")
        // A round touches 36 864 pages; those in the thread's later heaps are faulted in again each round.
        #expect(r.controls.contains { $0 > 10 * 2_000 }, "controls: \(r.controls) faults over 10 rounds")
        #expect(!r.kept.isEmpty && r.kept.allSatisfy { $0 < 2_000 }, "kept: \(r.kept) faults over 10 rounds")
    }
}

/// The measurement itself, run only in the process `AllocatorTests` starts (it skips elsewhere): prints one
/// line `allocator-probe: controls=a,b,… kept=x,y,…` with each setting's minor faults over 10 rounds.
final class AllocatorProbe: XCTestCase {
    static let variable = "TWOSCALE_ALLOCATOR_PROBE"
    static let prefix = "allocator-probe: "
    static let blockCount = 24

    final class Box: @unchecked Sendable {
        var faults = 0
        let done = DispatchSemaphore(value: 0)
    }

    /// The minor page faults of a new thread over `rounds` rounds, after one round that maps the memory.
    static func faultsAfterFirstRound(rounds: Int) -> Int {
        let box = Box()
        let thread = Thread {
            func round() {
                let blocks = (0..<Self.blockCount).map { _ in malloc(6 << 20)! }
                for b in blocks { memset(b, 1, 6 << 20) }
                for b in blocks.reversed() { free(b) }
            }
            // The thread's own minor faults: field 10 of /proc/thread-self/stat, after the name in parentheses.
            func minorFaults() -> Int {
                let stat = (try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8)) ?? ""
                let fields = stat[(stat.lastIndex(of: ")") ?? stat.startIndex)...].split(separator: " ")
                return fields.count > 8 ? Int(fields[8]) ?? -1 : -1
            }
            round()
            let before = minorFaults()
            for _ in 0..<rounds { round() }
            box.faults = minorFaults() - before
            box.done.signal()
        }
        thread.start()
        box.done.wait()
        return box.faults
    }

    func testMeasure() throws {
        guard ProcessInfo.processInfo.environment[Self.variable] != nil else {
            throw XCTSkip("run by AllocatorTests in a process of its own")
        }
        var controls: [Int] = [], kept: [Int] = []
        // Alternating, so each setting's thread takes the arena the other's left; three of each.
        for _ in 0..<3 {
            XCTAssertTrue(Allocator.keepFreedMemory(topPad: 0))
            controls.append(Self.faultsAfterFirstRound(rounds: 10))
            XCTAssertTrue(Allocator.keepFreedMemory())
            kept.append(Self.faultsAfterFirstRound(rounds: 10))
        }
        print(Self.prefix + "controls=" + controls.map(String.init).joined(separator: ",")
              + " kept=" + kept.map(String.init).joined(separator: ","))
    }
}
#endif
