import Foundation
import TwoScaleCore
import XCTest

/// SLURM job arrays: `ed --shard auto` on the real binary (outside SLURM and with inconsistent
/// variables: usage errors; inside array tasks starting at 0 or 1: the shards), scripts/slurm-array.sh's
/// three steps (submission through a stand-in sbatch whose recorded job scripts are then run, shard,
/// merge) against the one-process store, and — where slurm-wlm is installed and we are root — a real
/// array with its dependent merge job on a private single-node SLURM (scripts/slurm-local.sh).
final class SlurmTests: ScratchDirectoryTestCase {
    override class var scratchTag: String { "slurm" }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    static let arrayVariables = ["SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
                                 "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_JOB_ID", "SLURM_JOB_ID"]

    struct Run {
        var status: Int32
        var out: String
        var err: String
    }

    /// Runs `executable ARGS` with the SLURM array variables of this process removed and `env` added;
    /// stops it (status 124) after `timeout` seconds.
    func run(_ executable: String, _ args: [String], env: [String: String] = [:], timeout: Double = 300) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = args
        var environment = ProcessInfo.processInfo.environment
        for k in Self.arrayVariables { environment[k] = nil }
        for (k, v) in env { environment[k] = v }
        p.environment = environment
        let captured = try CapturedOutput(attachingTo: p, in: dir)
        try p.run()
        let deadline = Date().addingTimeInterval(timeout)
        while p.isRunning && Date() < deadline { usleep(10_000) }
        let timedOut = p.isRunning
        if timedOut { p.terminate() }
        p.waitUntilExit()
        let (out, err) = try captured.collect()
        return Run(status: timedOut ? 124 : p.terminationStatus, out: out, err: err)
    }

    func twoscale(_ args: [String], env: [String: String] = [:]) throws -> Run {
        try run(try FaultTests.binary(), args, env: env)
    }

    /// scripts/slurm-array.sh with TWOSCALE set to the built binary.
    func script(_ args: [String], env: [String: String] = [:]) throws -> Run {
        var e = env
        e["TWOSCALE"] = try FaultTests.binary()
        return try run("/bin/bash", [Self.root + "/scripts/slurm-array.sh"] + args, env: e)
    }

    /// The array variables of task `id` of `--array=min-max`.
    func task(_ id: Int, min: Int, max: Int) -> [String: String] {
        ["SLURM_ARRAY_TASK_ID": "\(id)", "SLURM_ARRAY_TASK_MIN": "\(min)", "SLURM_ARRAY_TASK_MAX": "\(max)",
         "SLURM_ARRAY_TASK_STEP": "1", "SLURM_ARRAY_TASK_COUNT": "\(max - min + 1)", "SLURM_ARRAY_JOB_ID": "7", "SLURM_JOB_ID": "8"]
    }

    let ed = ["--arch", "6-4-3", "--data", "synthetic:gaussian", "--samples", "20", "--paths", "7", "--inner", "5", "--seed", "3"]

    /// The store of the same run in one process.
    func reference() throws -> [String: Data] {
        let r = try twoscale(["ed"] + ed + ["--store", dir + "/ref"])
        XCTAssertEqual(r.status, 0, r.err)
        return files(dir + "/ref")
    }

    func testShardAutoNeedsConsistentSlurmArrayVariables() throws {
        let cases: [([String: String], [String])] = [
            ([:], ["--shard auto: SLURM_ARRAY_TASK_ID is not set", "--shard i/n"]),
            (["SLURM_JOB_ID": "12"], ["SLURM_JOB_ID=12", "not a job array"]),
            (["SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "9", "SLURM_ARRAY_TASK_COUNT": "3"],
             ["inconsistent", "SLURM_ARRAY_TASK_COUNT=3"]),
            (task(9, min: 1, max: 4), ["task 9 is not in the range"]),
            (task(1, min: 1, max: 8), ["n must not exceed the number of paths K = 7"]),
        ]
        for (env, needles) in cases {
            let store = dir + "/s-\(UUID().uuidString.prefix(6))"
            let r = try twoscale(["ed"] + ed + ["--shard", "auto", "--store", store], env: env)
            XCTAssertEqual(r.status, 2, "\(env): \(r.err)")
            XCTAssertEqual(r.out, "")
            for n in needles { XCTAssertTrue(r.err.contains(n), "'\(n)' in: \(r.err)") }
            XCTAssertFalse(FileManager.default.fileExists(atPath: store), "nothing written")
        }
        // Inside a task of --array=0-2: shard 2/3, the same store as --shard 2/3.
        let auto = try twoscale(["ed"] + ed + ["--shard", "auto", "--store", dir + "/auto", "--json"], env: task(1, min: 0, max: 2))
        XCTAssertEqual(auto.status, 0, auto.err)
        XCTAssertTrue(auto.out.contains("\"shard\": \"2/3\""), auto.out)
        let fixed = try twoscale(["ed"] + ed + ["--shard", "2/3", "--store", dir + "/fixed"])
        XCTAssertEqual(fixed.status, 0, fixed.err)
        XCTAssertEqual(files(dir + "/auto"), files(dir + "/fixed"))
    }

    /// The script's shard step in the tasks of an array starting at 0, then its merge step: the
    /// one-process store. Merging shards of different settings is refused, naming the setting.
    func testScriptShardAndMergeStepsGiveTheOneProcessStore() throws {
        let ref = try reference()
        let out = dir + "/run"
        for id in 0...2 {
            let r = try script(["shard", out, "--"] + ed, env: task(id, min: 0, max: 2))
            XCTAssertEqual(r.status, 0, "task \(id): \(r.err)")
        }
        // A requeued task (same variables) finds its shard complete and leaves it as it is.
        let again = try script(["shard", out, "--"] + ed, env: task(1, min: 0, max: 2))
        XCTAssertEqual(again.status, 0, again.err)
        let m = try script(["merge", out])
        XCTAssertEqual(m.status, 0, m.err)
        XCTAssertEqual(files(out), ref, "merged store")

        // A shard made with another seed does not merge with the others; the message names --seed.
        let other = ed.map { $0 == "3" ? "4" : $0 }
        let o = try twoscale(["ed"] + other + ["--shard", "2/3", "--store", dir + "/other"])
        XCTAssertEqual(o.status, 0, o.err)
        let bad = try twoscale(["merge", out + ".shards/task-0", dir + "/other", out + ".shards/task-2", "--out", dir + "/bad"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.err.contains("--seed 3 vs 4"), bad.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/bad"))
        // A missing shard: named.
        let missing = try twoscale(["merge", out + ".shards/task-0", out + ".shards/task-2", "--out", dir + "/missing"])
        XCTAssertEqual(missing.status, 2, missing.err)
        XCTAssertTrue(missing.err.contains("shards 2/3 are missing"), missing.err)
        // ed arguments the script sets itself are refused.
        let dup = try script(["shard", out, "--"] + ed + ["--store", dir + "/x"], env: task(0, min: 0, max: 2))
        XCTAssertEqual(dup.status, 2, dup.err)
        XCTAssertTrue(dup.err.contains("--store"), dup.err)
    }

    /// Submission through a stand-in sbatch that records its arguments: an array 1-N, then a merge job
    /// depending on it (afterok). Running the recorded job scripts as SLURM would gives the one-process store.
    func testSubmitWiresTheArrayAndTheDependentMergeJob() throws {
        let ref = try reference()
        let log = dir + "/sbatch.log"
        let fake = dir + "/sbatch"
        // Each call: its arguments, one per line, then a separator; prints job id 41, then 42.
        try Data("""
        #!/bin/bash
        n=$( (grep -c '^=====$' "\(log)" 2>/dev/null) || true); n=${n:-0}
        for a in "$@"; do printf '%s\\n' "$a" | base64 -w0; echo; done >> "\(log)"
        echo ===== >> "\(log)"
        echo "$((41 + n));cluster"
        """.utf8).write(to: URL(fileURLWithPath: fake))
        chmod(fake, 0o755)
        let out = dir + "/run"
        let r = try script(["submit", "3", out, "--"] + ed, env: ["SBATCH": fake])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("array job 41") && r.out.contains("merge job 42"), r.out)
        let text = try String(contentsOfFile: log, encoding: .utf8)
        let calls = text.components(separatedBy: "=====\n").filter { !$0.isEmpty }.map { call in
            call.split(separator: "\n").map { line -> String in
                String(decoding: Data(base64Encoded: String(line)) ?? Data(), as: UTF8.self).replacingOccurrences(of: "\n", with: "")
            }
        }
        XCTAssertEqual(calls.count, 2)
        guard calls.count == 2 else { return }
        XCTAssertTrue(calls[0].contains("--array=1-3"), "\(calls[0])")
        XCTAssertTrue(calls[1].contains("--dependency=afterok:41"), "\(calls[1])")
        func wrap(_ call: [String]) -> String? { call.first { $0.hasPrefix("--wrap=") }.map { String($0.dropFirst(7)) } }
        let shardJob = try XCTUnwrap(wrap(calls[0])), mergeJob = try XCTUnwrap(wrap(calls[1]))
        // What SLURM would run: each array task's script, then the merge job's.
        for id in 1...3 {
            let t = try run("/bin/sh", ["-c", shardJob], env: task(id, min: 1, max: 3))
            XCTAssertEqual(t.status, 0, "task \(id): \(t.err)")
        }
        let m = try run("/bin/sh", ["-c", mergeJob])
        XCTAssertEqual(m.status, 0, m.err)
        XCTAssertEqual(files(out), ref, "merged store")
    }

    /// A real job array and its dependent merge job on a private single-node SLURM.
    func testRealSlurmArrayOnALocalCluster() throws {
        let tools = ["/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged", "/usr/bin/sbatch"]
        guard tools.allSatisfy({ FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("SLURM (Debian's slurm-wlm) is not installed, so no real job array runs here; --shard auto and scripts/slurm-array.sh are tested through SLURM's variables and the script's steps (scripts/test.sh installs slurm-wlm when TWOSCALE_TEST_SLURM=1, as CI sets)")
        }
        guard getuid() == 0 else { throw XCTSkip("a private SLURM (slurmd) needs root") }
        let ref = try reference()
        let cluster = dir + "/cluster"
        let start = try run("/bin/bash", [Self.root + "/scripts/slurm-local.sh", "start", cluster], timeout: 60)
        addTeardownBlock { [dir] in
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/bash")
            p.arguments = [Self.root + "/scripts/slurm-local.sh", "stop", dir + "/cluster"]
            try? p.run()
            p.waitUntilExit()
        }
        XCTAssertEqual(start.status, 0, start.err)
        guard start.status == 0 else { return }
        let conf = ["SLURM_CONF": cluster + "/slurm.conf"]
        let out = dir + "/run"
        var submitEnv = conf
        submitEnv["TWOSCALE"] = try FaultTests.binary()
        let r = try run("/bin/bash", [Self.root + "/scripts/slurm-array.sh", "submit", "3", out, "--"] + ed, env: submitEnv, timeout: 60)
        XCTAssertEqual(r.status, 0, r.err)
        // The merged store appears at once (merge renames it into place) when the merge job ends.
        let deadline = Date().addingTimeInterval(180)
        while !FileManager.default.fileExists(atPath: out + "/meta.json") && Date() < deadline { usleep(200_000) }
        let logs = ((try? FileManager.default.contentsOfDirectory(atPath: out + ".shards")) ?? []).filter { $0.hasSuffix(".out") }
        XCTAssertEqual(logs.count, 4, "3 task logs and the merge job's: \(logs)")
        XCTAssertEqual(files(out), ref, "the array's merged store; logs: " + logs.map {
            (try? String(contentsOfFile: out + ".shards/" + $0, encoding: .utf8)) ?? ""
        }.joined(separator: " | "))
    }
}
