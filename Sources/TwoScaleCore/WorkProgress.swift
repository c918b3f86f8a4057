/// How far a parallel loop has come, for progress bars. A caller that wants to know sets `observer` around
/// its work; every `Parallel` loop of that task then reports `(done, total)` as its items finish, on the
/// caller's task. Loops nested inside an item do not report (their tasks see no observer), so the counts
/// are always those of the outermost loop now running.
public enum WorkProgress {
    @TaskLocal public static var observer: (@Sendable (_ done: Int, _ total: Int) -> Void)?
}
