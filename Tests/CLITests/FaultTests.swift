import Foundation
import RandomStreams
import TwoScaleCLI
import TwoScaleCore
import TwoScaleFormats
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Faults: the real `twoscale` binary killed (SIGINT, SIGKILL) at seeded random moments of an
/// `ed --store` run, then resumed — the store is never corrupt and the result equals an uninterrupted
/// run bit for bit; and outputs into a full or read-only file system fail cleanly (exit 1, no files).
final class FaultTests: ScratchDirectoryTestCase {
    override class var scratchTag: String { "fault" }

    /// The `twoscale` executable that `swift build`/`swift test` put next to the test bundle.
    static func binary() throws -> String {
        var candidates: [String] = []
        // The test runner lives in the build folder (…/.build/<triple>/debug/twoscalePackageTests.xctest).
        let runner = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).resolvingSymlinksInPath()
        candidates.append(runner.deletingLastPathComponent().appendingPathComponent("twoscale").path)
        candidates.append(Bundle.main.bundleURL.appendingPathComponent("twoscale").path)
        for b in Bundle.allBundles { candidates.append(b.bundleURL.deletingLastPathComponent().appendingPathComponent("twoscale").path) }
        // The package root from this file: Tests/CLITests/FaultTests.swift.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/twoscale").path)
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        throw XCTSkip("the twoscale executable is not built (looked in \(candidates.joined(separator: ", "))); run swift build first")
    }

    struct Run {
        var status: Int32
        var signaled: Bool
        var out: String
        var err: String
    }

    /// Runs the binary; with `kill`, sends that signal `after` seconds after `file` appears (at once when
    /// nil) — if it is still running.
    func launch(_ args: [String], kill: (signal: Int32, after: Double)? = nil, startedWhen file: String? = nil) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try Self.binary())
        p.arguments = args
        let captured = try CapturedOutput(attachingTo: p, in: dir)
        try p.run()
        if let k = kill {
            if let f = file {
                while p.isRunning && !FileManager.default.fileExists(atPath: f) { usleep(2_000) }
            }
            let deadline = Date().addingTimeInterval(k.after)
            while p.isRunning && Date() < deadline { usleep(5_000) }
            if p.isRunning { Glibc.kill(p.processIdentifier, k.signal) }
        }
        p.waitUntilExit()
        let (out, err) = try captured.collect()
        return Run(status: p.terminationStatus, signaled: p.terminationReason == .uncaughtSignal, out: out, err: err)
    }

    func numbers(_ text: String) throws -> JSONValue {
        withoutTimingKeys(try JSONValue.parse(Data(text.utf8), source: "stdout"))
    }

    /// A store being written holds meta.json, partial path files that decode, maybe stale temporaries;
    /// `analyze` on it says it is unfinished (never crashes or reads garbage).
    func assertResumable(_ store: String, _ label: String) throws {
        guard FileManager.default.fileExists(atPath: store + "/meta.json") else { return }  // killed before creation
        let names = files(store).keys.filter { !$0.contains(".tmp-") }
        for n in names {
            XCTAssertTrue(n == "meta.json" || n.hasPrefix("partial/path_") || n.hasPrefix("own_") || n.hasPrefix("inner_"), "\(label): unexpected \(n)")
        }
    }

    // 20-30-10 Markov FIM, K = 24 paths: about 2.5 s in a debug build on 2 threads on an idle machine, of
    // which about 1.1 s after meta.json (the paths; K = 12 left 0.56 s, less than the SIGINT's delay).
    var edArgs: [String] {
        ["ed", "--arch", "20-30-10", "--samples", "50", "--paths", "24", "--inner", "20", "--eps", "1e-3:0.5:4",
         "--lower", "--bootstrap", "20", "--seed", "5", "--threads", "2", "--json"]
    }

    func testKillAndResumeGiveTheUninterruptedResultBitForBit() throws {
        let ref = try launch(edArgs + ["--store", dir + "/ref"])
        XCTAssertEqual(ref.status, 0, ref.err)
        let refFiles = files(dir + "/ref")
        XCTAssertEqual(Set(refFiles.keys), ["meta.json", "own_1.npy", "own_2.npy", "inner_2.npy"])
        let refJSON = try numbers(ref.out)

        var rng = Xoshiro256(seed: 20261122, stream: [6])
        // SIGINT: a clean stop (status ≠ 0, a resume hint), then --resume finishes.
        do {
            let store = dir + "/int"
            // The handler is installed before the store's meta.json is written: interrupt after that.
            let r = try launch(edArgs + ["--store", store], kill: (SIGINT, rng.uniform(0.05, 0.4)), startedWhen: store + "/meta.json")
            XCTAssertFalse(r.signaled, "SIGINT must be handled, not kill the process: \(r.err)")
            XCTAssertEqual(r.status, 130, "the run (about 1 s after meta.json) must still be going when interrupted: \(r.err)")
            XCTAssertTrue(r.err.contains("--resume"), "the message says how to resume: \(r.err)")
            XCTAssertEqual(r.out, "", "no JSON from an interrupted run")
            XCTAssertTrue(FileManager.default.fileExists(atPath: store + "/meta.json"))
            try assertResumable(store, "after SIGINT")
            let rs = try launch(edArgs + ["--store", store, "--resume"])
            XCTAssertEqual(rs.status, 0, rs.err)
            XCTAssertEqual(try numbers(rs.out), refJSON, "resumed JSON")
            XCTAssertEqual(files(store), refFiles, "store after SIGINT + resume")
        }
        // SIGKILL, twice at random moments (the second during the resumed run), then a final resume.
        do {
            let store = dir + "/kill"
            var killed = 0
            for round in 0..<3 {
                let args = edArgs + ["--store", store] + (round > 0 ? ["--resume"] : [])
                let r = try launch(args, kill: round < 2 ? (SIGKILL, rng.uniform(0.1, 1.5)) : nil)
                if r.signaled {
                    killed += 1
                    try assertResumable(store, "after SIGKILL \(round)")
                    continue
                }
                XCTAssertEqual(r.status, 0, r.err)
                XCTAssertEqual(try numbers(r.out), refJSON, "JSON after \(killed) kills")
                break
            }
            XCTAssertGreaterThan(killed, 0, "the run ended before any kill; lengthen it")
            XCTAssertEqual(files(store), refFiles, "store after SIGKILL + resume")
        }
    }

    /// `ed --estimator tempering --lower --checkpoint DIR` killed (SIGKILL) at random moments after its first snapshot,
    /// and again after the lower 2sED's stage 1 was saved (among its prefix samplers and islands), then run again: the
    /// JSON of a run never stopped. Ctrl-C (SIGINT) stops it at once with status 130 and says how to continue.
    func testKilledTemperingRunContinuesFromItsCheckpoints() throws {
        let args = ["ed", "--estimator", "tempering", "--arch", "12-6-4-3", "--samples", "20", "--eps", "0.001,0.1",
                    "--paths", "16", "--inner", "2", "--threads", "2", "--json"]
        let ref = try launch(args + ["--lower"])
        XCTAssertEqual(ref.status, 0, ref.err)
        let refJSON = try numbers(ref.out)
        var rng = Xoshiro256(seed: 20261201, stream: [7])
        let folder = dir + "/ckpt"
        var killed = 0
        // Rounds 0–1 are killed within half a second of the joint samplers' first snapshot, round 2 within 4 s of stage 1's
        // (the prefix samplers and islands take about 9 s more on 2 cores).
        for round in 0..<4 {
            let r = try launch(args + ["--lower", "--checkpoint", folder], kill: round < 3 ? (SIGKILL, rng.uniform(0, round < 2 ? 0.5 : 4)) : nil,
                               startedWhen: folder + (round < 2 ? "/joint-0.snapshot" : "/lower-stage1.snapshot"))
            if r.signaled {
                killed += 1
                continue
            }
            XCTAssertEqual(r.status, 0, r.err)
            XCTAssertEqual(try numbers(r.out), refJSON, "JSON after \(killed) kills")
            break
        }
        XCTAssertGreaterThan(killed, 1, "the run ended before the kills; lengthen it")
        let int = dir + "/int"
        let r = try launch(args + ["--checkpoint", int], kill: (SIGINT, 0), startedWhen: int + "/joint-0.snapshot")
        XCTAssertFalse(r.signaled, r.err)
        XCTAssertEqual(r.status, 130, r.err)
        XCTAssertTrue(r.err.contains("run the same command to continue"), r.err)
        XCTAssertEqual(r.out, "")
        let again = try launch(args + ["--checkpoint", int])
        XCTAssertEqual(try numbers(again.out), try numbers(try launch(args).out))
    }

    /// A kill at the very start (before meta.json is written) and just after (meta.json only) both
    /// resume: simulated by the states such kills leave.
    func testResumeFromStartupLeftovers() async throws {
        let args = ["ed", "--arch", "3-4-3", "--samples", "3", "--paths", "3", "--inner", "2", "--eps", "0.1", "--bootstrap", "0", "--json"]
        let ref = await runCLICapturingErrors(args + ["--store", dir + "/ref"])
        XCTAssertEqual(ref.status, 0, ref.err)
        // 1: the folder with only a half-written meta.json temporary.
        try FileManager.default.createDirectory(atPath: dir + "/a", withIntermediateDirectories: true)
        try Data("{\"form".utf8).write(to: URL(fileURLWithPath: dir + "/a/.meta.json.tmp-99999"))
        // 2: meta.json written, partial/ not yet created.
        try FileManager.default.createDirectory(atPath: dir + "/b", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: dir + "/ref/meta.json", toPath: dir + "/b/meta.json")
        for s in ["a", "b"] {
            let r = await runCLICapturingErrors(args + ["--store", dir + "/" + s, "--resume"])
            XCTAssertEqual(r.status, 0, "\(s): \(r.err)")
            XCTAssertEqual(withoutTimingKeys(try JSONValue.parse(Data(r.out.utf8), source: s)),
                           withoutTimingKeys(try JSONValue.parse(Data(ref.out.utf8), source: "ref")))
            XCTAssertEqual(files(dir + "/" + s), files(dir + "/ref"), s)
        }
    }

    /// merge builds the output in a hidden staging folder and renames it into place: a killed merge's
    /// leftover is cleaned up by the next one, and a failing merge leaves no output.
    func testMergeIsAtomic() async throws {
        let ed = ["ed", "--arch", "20-30-10", "--samples", "5", "--paths", "4", "--inner", "5", "--eps", "0.1", "--bootstrap", "0"]
        for i in 1...2 {
            let r = await runCLICapturingErrors(ed + ["--shard", "\(i)/2", "--store", dir + "/s\(i)"])
            XCTAssertEqual(r.status, 0, r.err)
        }
        let leftover = dir + "/.m.merge-99999"
        try FileManager.default.createDirectory(atPath: leftover, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: leftover + "/own_1.npy"))
        let r = await runCLICapturingErrors(["merge", dir + "/s1", dir + "/s2", "--out", dir + "/m"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: leftover))
        XCTAssertEqual(Set(files(dir + "/m").keys), ["meta.json", "own_1.npy", "own_2.npy", "inner_2.npy"])
        // Onto a disk too small for the merged store: status 1, no output, no staging folder.
        let m = try mountTmpfs(size: "60k")
        let full = await runCLICapturingErrors(["merge", dir + "/s1", dir + "/s2", "--out", m + "/m"])
        XCTAssertEqual(full.status, 1, full.err)
        XCTAssertTrue(full.err.contains(m + "/m"), full.err)
        XCTAssertFalse(full.err.contains(".merge-"), "names the output, not the staging folder: \(full.err)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m), [])
    }

    /// A notebook run that fails leaves the previous report and figures as they were; leftovers of a
    /// run killed mid-swap are removed by the next run.
    func testNotebookFailureKeepsThePreviousReport() async throws {
        let nb = dir + "/nb.txt", out = dir + "/rep"
        let good = "# T\n```twoscale plot x=eps y=d_zeta file=f\ntwoscale toy --family constant --lambdas 4 --eps 0.1,0.2\n```\n"
        try Data(good.utf8).write(to: URL(fileURLWithPath: nb))
        let r1 = await runCLICapturingErrors(["notebook", nb, "--out-dir", out])
        XCTAssertEqual(r1.status, 0, r1.err)
        let before = files(out)
        XCTAssertTrue(before.keys.contains("nb.md") && before.keys.contains("nb/f.svg"), "\(before.keys)")
        try Data(good.replacingOccurrences(of: "0.1,0.2", with: "0.1,2").utf8).write(to: URL(fileURLWithPath: nb))
        let r2 = await runCLICapturingErrors(["notebook", nb, "--out-dir", out])
        XCTAssertEqual(r2.status, 1, r2.err)
        XCTAssertEqual(files(out), before, "a failed run changes nothing")
        try FileManager.default.createDirectory(atPath: out + "/.nb.old-99999", withIntermediateDirectories: true)
        try Data(good.utf8).write(to: URL(fileURLWithPath: nb))
        let r3 = await runCLICapturingErrors(["notebook", nb, "--out-dir", out])
        XCTAssertEqual(r3.status, 0, r3.err)
        XCTAssertEqual(Set(files(out).keys), Set(before.keys), "no leftovers")
        XCTAssertFalse(FileManager.default.fileExists(atPath: out + "/.nb.old-99999"))
    }

    // MARK: full and read-only file systems

    /// Mounts a tmpfs of `size` at a new folder (needs root; skips otherwise). Returns its path.
    func mountTmpfs(size: String, readOnly: Bool = false) throws -> String {
        let m = dir + "/mnt-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: m, withIntermediateDirectories: true)
        let opts = "size=\(size)" + (readOnly ? ",ro" : "")
        guard opts.withCString({ mount("tmpfs", m, "tmpfs", 0, $0) }) == 0 else {
            throw XCTSkip("cannot mount a tmpfs (\(String(cString: strerror(errno)))); full/read-only disk cases need root")
        }
        addTeardownBlock { umount2(m, Int32(MNT_DETACH)) }
        return m
    }

    func testFullDiskFailsCleanly() async throws {
        let m = try mountTmpfs(size: "40k")
        // A store larger than the disk: ed fails with status 1 naming the file; every file left is whole
        // (meta.json, finished path files) — a resumable store — and no temporary remains.
        let store = m + "/s"
        let r = await runCLICapturingErrors(["ed", "--arch", "20-30-10", "--samples", "5", "--paths", "40", "--inner", "5",
                                             "--eps", "0.1", "--bootstrap", "0", "--threads", "1", "--store", store, "--json"])
        XCTAssertEqual(r.status, 1, r.err)
        XCTAssertTrue(r.err.contains("No space left on device"), r.err)
        XCTAssertEqual(r.out, "")
        let left = files(store)
        XCTAssertTrue(left.keys.allSatisfy { !$0.contains(".tmp-") }, "\(left.keys)")
        for (name, data) in left where name.hasPrefix("partial/") {
            XCTAssertNoThrow(try NPYArrayCheck.isWhole(data), name)
        }
        // A JSON output (train --weights-out) that does not fit: status 1, no file.
        let big = m + "/w.json"
        try Data(repeating: 0x20, count: 1).write(to: URL(fileURLWithPath: m + "/fill"))
        let t = await runCLICapturingErrors(["train", "--arch", "3-200-2", "--data", "synthetic:teacher:3-2", "--samples", "8",
                                             "--batch", "4", "--epochs", "1", "--weights-out", big])
        XCTAssertEqual(t.status, 1, t.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: big))
        XCTAssertTrue(files(m).keys.allSatisfy { !$0.contains(".tmp-") })
    }

    func testReadOnlyFolderFailsCleanly() async throws {
        let m = try mountTmpfs(size: "64k", readOnly: true)
        let cases: [[String]] = [
            ["ed", "--arch", "3-4-3", "--samples", "3", "--paths", "2", "--inner", "2", "--eps", "0.1", "--store", m + "/s"],
            ["train", "--arch", "3-4-2", "--data", "synthetic:teacher:3-2", "--samples", "8", "--batch", "4", "--epochs", "1",
             "--weights-out", m + "/w.json"],
            ["train", "--arch", "3-4-2", "--data", "synthetic:teacher:3-2", "--samples", "8", "--batch", "4", "--epochs", "1",
             "--checkpoints", m + "/ck"],
        ]
        for args in cases {
            let r = await runCLICapturingErrors(args)
            XCTAssertEqual(r.status, 1, "\(args): \(r.err)")
            XCTAssertTrue(r.err.contains(m), "names the path: \(r.err)")
            XCTAssertTrue(r.err.contains("Read-only") || r.err.contains("not writable"), r.err)
            XCTAssertEqual(r.out, "")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m), [])
        // A notebook into a read-only folder writes no report.
        let nb = dir + "/nb.txt"
        try Data("# T\n```twoscale\ntwoscale toy --family constant --lambdas 4 --eps 0.1\n```\n".utf8).write(to: URL(fileURLWithPath: nb))
        let r = await runCLICapturingErrors(["notebook", nb, "--out-dir", m + "/rep"])
        XCTAssertEqual(r.status, 1, r.err)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: m), [])
    }
}

/// Checks that bytes are a complete `.npy` file (header + exactly the announced data).
enum NPYArrayCheck {
    struct Broken: Error {}
    static func isWhole(_ d: Data) throws {
        let b = [UInt8](d)
        guard b.count >= 10, b[0] == 0x93, b[1...5].elementsEqual(Array("NUMPY".utf8)) else { throw Broken() }
        let hlen = Int(b[8]) | Int(b[9]) << 8
        guard b.count >= 10 + hlen else { throw Broken() }
        let header = String(decoding: b[10..<(10 + hlen)], as: UTF8.self)
        guard let open = header.range(of: "'shape': ("), let close = header[open.upperBound...].firstIndex(of: ")") else { throw Broken() }
        let dims = header[open.upperBound..<close].split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard b.count - 10 - hlen == 8 * dims.reduce(1, *) else { throw Broken() }
    }
}
