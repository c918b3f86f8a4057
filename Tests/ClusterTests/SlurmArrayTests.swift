import Cluster
import TwoScaleCore
import XCTest

/// `--shard auto`: the SLURM array variables → shard i/n, and a clear usage error for every missing or
/// inconsistent combination.
final class SlurmArrayTests: XCTestCase {
    func env(id: String? = nil, min: String? = nil, max: String? = nil, step: String? = nil, count: String? = nil,
             job: String? = nil) -> [String: String] {
        var e: [String: String] = [:]
        e["SLURM_ARRAY_TASK_ID"] = id
        e["SLURM_ARRAY_TASK_MIN"] = min
        e["SLURM_ARRAY_TASK_MAX"] = max
        e["SLURM_ARRAY_TASK_STEP"] = step
        e["SLURM_ARRAY_TASK_COUNT"] = count
        e["SLURM_JOB_ID"] = job
        return e
    }

    func shard(_ e: [String: String]) throws -> String {
        let t = try SlurmArrayTask(environment: e)
        return "\(t.index)/\(t.count)"
    }

    func testArraysStartingAtZeroOrOneOrSteppingGiveTheSameShards() throws {
        // --array=0-3, --array=1-4, --array=10-16:2: four tasks, shards 1/4 … 4/4.
        for (first, step) in [(0, 1), (1, 1), (10, 2)] {
            for i in 0..<4 {
                let id = first + i * step
                let e = env(id: "\(id)", min: "\(first)", max: "\(first + 3 * step)", step: "\(step)", count: "4")
                XCTAssertEqual(try shard(e), "\(i + 1)/4", "array from \(first) step \(step), task \(id)")
            }
        }
        // COUNT alone (no MAX), STEP absent (1), and MAX alone (no COUNT).
        XCTAssertEqual(try shard(env(id: "2", min: "0", count: "3")), "3/3")
        XCTAssertEqual(try shard(env(id: "5", min: "1", max: "8")), "5/8")
        XCTAssertEqual(try shard(env(id: " 1 ", min: "1", max: "1", step: "1", count: "1")), "1/1")
    }

    func assertUsage(_ e: [String: String], _ needles: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try SlurmArrayTask(environment: e), file: file, line: line) { error in
            guard let t = error as? TwoScaleError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(t.kind, .usage, t.message, file: file, line: line)
            XCTAssertTrue(t.message.hasPrefix("\(Setting.shard) auto: "), t.message, file: file, line: line)
            for n in needles { XCTAssertTrue(t.message.contains(n), "'\(n)' missing in: \(t.message)", file: file, line: line) }
        }
    }

    func testOutsideSlurmAndInconsistentVariablesAreClearErrors() {
        assertUsage([:], ["SLURM_ARRAY_TASK_ID is not set", "\(Setting.shard) i/n"])
        assertUsage(env(job: "77"), ["SLURM_JOB_ID=77", "not a job array", "--array"])
        assertUsage(env(id: "x", min: "0", count: "2"), ["SLURM_ARRAY_TASK_ID=x", "whole number"])
        assertUsage(env(id: "-1", min: "0", count: "2"), ["SLURM_ARRAY_TASK_ID=-1"])
        assertUsage(env(id: "1", count: "2"), ["SLURM_ARRAY_TASK_MIN is not"])
        assertUsage(env(id: "1", min: "0"), ["SLURM_ARRAY_TASK_MAX and SLURM_ARRAY_TASK_COUNT"])
        // A list array (--array=1,4,9): MIN 1, MAX 9, COUNT 3.
        assertUsage(env(id: "4", min: "1", max: "9", step: "1", count: "3"), ["inconsistent", "COUNT is 3", "--array=A-B"])
        assertUsage(env(id: "5", min: "1", max: "4", count: "4"), ["task 5 is not in the range"])
        assertUsage(env(id: "0", min: "1", max: "4", count: "4"), ["task 0 is not in the range"])
        assertUsage(env(id: "3", min: "0", max: "6", step: "2", count: "4"), ["task 3 is not in the range"])
        assertUsage(env(id: "1", min: "0", max: "5", step: "2"), ["not a range"])
        assertUsage(env(id: "1", min: "3", max: "1"), ["not a range"])
        assertUsage(env(id: "1", min: "0", max: "3", step: "0"), ["SLURM_ARRAY_TASK_STEP=0"])
        assertUsage(env(id: "0", min: "0", count: "0"), ["an array of 0 tasks"])
    }
}
