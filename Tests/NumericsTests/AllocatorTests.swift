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
        // A round touches 36 864 pages; without the pad the 20 480 beyond the thread's first heap (64 MiB) are
        // faulted in again each round, since glibc unmaps the later heaps as they fall free.
        #expect(!r.controls.isEmpty && r.controls.allSatisfy { $0 > 10 * 15_000 }, "controls: \(r.controls) faults over 10 rounds")
        #expect(!r.kept.isEmpty && r.kept.allSatisfy { $0 < 2_000 }, "kept: \(r.kept) faults over 10 rounds")
    }
}

/// The measurement itself, run only in the process `AllocatorTests` starts (it skips elsewhere): prints one
/// line `allocator-probe: controls=a,b,… kept=x,y,…` with each setting's minor faults over 10 rounds.
///
/// The measured thread allocates nothing but its blocks. Anything else it allocated while its later heaps
/// were mapped could stay there and keep a heap from ever falling wholly free: the Swift runtime's first
/// instantiation of a generic type's metadata takes a 16 KiB slab that it never frees (seen as `controls:
/// [22, 0, 0]`, the first control's arena pinned and the later threads reusing it). So the pointers live in
/// memory the calling thread allocates, the loops use no generic types, the faults come from `getrusage`, and
/// a warm-up thread runs the same path with small blocks first (a guard), so that whatever the runtime keeps
/// from a thread's first run lies in a first heap, which glibc never unmaps. Each thread is joined before the
/// next starts, so the next takes the arena it left.
final class AllocatorProbe: XCTestCase {
    static let variable = "TWOSCALE_ALLOCATOR_PROBE"
    static let prefix = "allocator-probe: "
    static let blockCount = 24
    static let blockBytes = 6 << 20

    /// One measured thread's inputs and result; the thread reads it through its start argument.
    final class Box {
        let rounds: Int
        let bytes: Int
        var faults = 0
        let blocks = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: AllocatorProbe.blockCount)
        init(rounds: Int, bytes: Int) { self.rounds = rounds; self.bytes = bytes }
        deinit { blocks.deallocate() }
    }

    /// The calling thread's minor faults (`RUSAGE_THREAD`, 1, which Glibc's module does not name).
    static func minorFaults() -> Int {
        var usage = rusage()
        return getrusage(__rusage_who_t(1), &usage) == 0 ? usage.ru_minflt : -1
    }

    /// The minor page faults of a new thread over `rounds` rounds of `bytes`-sized blocks, after one round
    /// that maps the memory. The thread is joined, so its arena is free for the next one to take.
    static func faultsAfterFirstRound(rounds: Int, bytes: Int = blockBytes) -> Int {
        let box = Box(rounds: rounds, bytes: bytes)
        var thread = pthread_t()
        let started = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let box = Unmanaged<Box>.fromOpaque(argument).takeUnretainedValue()
            func round() {
                var i = 0
                while i < AllocatorProbe.blockCount {
                    box.blocks[i] = malloc(box.bytes)
                    if let b = box.blocks[i] { memset(b, 1, box.bytes) }
                    i += 1
                }
                while i > 0 { i -= 1; free(box.blocks[i]) }
            }
            round()
            let before = AllocatorProbe.minorFaults()
            var r = 0
            while r < box.rounds { round(); r += 1 }
            box.faults = AllocatorProbe.minorFaults() - before
            return nil
        }, Unmanaged.passUnretained(box).toOpaque())
        guard started == 0 else { return -1 }
        pthread_join(thread, nil)
        return withExtendedLifetime(box) { box.faults }
    }

    func testMeasure() throws {
        guard ProcessInfo.processInfo.environment[Self.variable] != nil else {
            throw XCTSkip("run by AllocatorTests in a process of its own")
        }
        _ = Self.faultsAfterFirstRound(rounds: 1, bytes: 4_096)
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
