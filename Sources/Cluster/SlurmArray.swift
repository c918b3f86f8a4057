import TwoScaleCore

/// The task of a SLURM job array, as `ed` uses it for the shard `auto` (`Setting.shard`): shard `index/count` of the run.
///
/// SLURM exports, in every task of `sbatch --array=MIN-MAX[:STEP]`:
/// `SLURM_ARRAY_TASK_ID` (this task), `SLURM_ARRAY_TASK_MIN`, `SLURM_ARRAY_TASK_MAX`,
/// `SLURM_ARRAY_TASK_STEP` and `SLURM_ARRAY_TASK_COUNT`. The shard index is the task's position in the
/// range, `(ID − MIN)/STEP + 1`, so arrays starting at 0 (`--array=0-7`) and at 1 (`--array=1-8`), or
/// stepping (`--array=0-14:2`), give shards 1/8 … 8/8 alike. The variables must describe a regular range
/// holding the task; anything else (missing, not a number, an array given as a list such as
/// `--array=1,4,9`, a task outside the range) is a usage error naming the variable.
public struct SlurmArrayTask: Sendable, Equatable {
    /// The shard index, 1-based.
    public let index: Int
    /// The number of tasks (shards).
    public let count: Int
    /// `SLURM_ARRAY_TASK_ID`.
    public let taskID: Int

    public static let variables = ["SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
                                   "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_COUNT"]

    /// Reads the array task from `env`; `flag` names the option in messages.
    public init(environment env: [String: String], flag: String = "\(Setting.shard) auto") throws {
        func fail(_ why: String) -> TwoScaleError {
            TwoScaleError.usage("\(flag): \(why)")
        }
        func number(_ key: String) throws -> Int? {
            guard let raw = env[key] else { return nil }
            guard let v = Int(raw.trimmingCharacters(in: .whitespaces)), v >= 0 else {
                throw fail("\(key)=\(raw) is not a whole number ≥ 0")
            }
            return v
        }
        guard let id = try number("SLURM_ARRAY_TASK_ID") else {
            if let job = env["SLURM_JOB_ID"] {
                throw fail("this SLURM job (SLURM_JOB_ID=\(job)) is not a job array: SLURM_ARRAY_TASK_ID is not set. Submit it with sbatch --array=1-N (see scripts/slurm-array.sh), or give \(Setting.shard) i/n")
            }
            throw fail("SLURM_ARRAY_TASK_ID is not set: auto reads the shard from a SLURM job array task (sbatch --array=1-N, see scripts/slurm-array.sh); outside one, give \(Setting.shard) i/n")
        }
        guard let min = try number("SLURM_ARRAY_TASK_MIN") else {
            throw fail("SLURM_ARRAY_TASK_ID=\(id) is set but SLURM_ARRAY_TASK_MIN is not (SLURM sets both in every array task); give \(Setting.shard) i/n")
        }
        let step = try number("SLURM_ARRAY_TASK_STEP") ?? 1
        guard step >= 1 else { throw fail("SLURM_ARRAY_TASK_STEP=\(step) must be ≥ 1") }
        let max = try number("SLURM_ARRAY_TASK_MAX")
        let given = try number("SLURM_ARRAY_TASK_COUNT")
        let range = "SLURM_ARRAY_TASK_MIN=\(min)" + (max.map { ", SLURM_ARRAY_TASK_MAX=\($0)" } ?? "")
            + ", SLURM_ARRAY_TASK_STEP=\(step)" + (given.map { ", SLURM_ARRAY_TASK_COUNT=\($0)" } ?? "")
        let inconsistent = "the SLURM array variables are inconsistent (\(range), SLURM_ARRAY_TASK_ID=\(id)): "
        var count: Int
        if let max {
            guard max >= min, (max - min) % step == 0 else {
                throw fail(inconsistent + "MIN to MAX in steps of STEP is not a range; \(Setting.shard) auto needs --array=A-B or A-B:S")
            }
            count = (max - min) / step + 1
            if let g = given, g != count {
                throw fail(inconsistent + "the range has \(count) tasks but COUNT is \(g) (an array given as a list, such as --array=1,4,9?); \(Setting.shard) auto needs --array=A-B or A-B:S, or give \(Setting.shard) i/n")
            }
        } else if let g = given {
            count = g
        } else {
            throw fail("SLURM_ARRAY_TASK_MAX and SLURM_ARRAY_TASK_COUNT are both unset (SLURM sets them in every array task); give \(Setting.shard) i/n")
        }
        guard count >= 1 else { throw fail(inconsistent + "an array of \(count) tasks") }
        guard id >= min, (id - min) % step == 0, (id - min) / step < count else {
            throw fail(inconsistent + "task \(id) is not in the range")
        }
        index = (id - min) / step + 1
        self.count = count
        taskID = id
    }
}
