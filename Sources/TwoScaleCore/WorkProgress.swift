/// How far a parallel loop has come, for progress bars. A caller that wants to know sets `observer` around
/// its work; every `Parallel` loop of that task then reports `(0, total)` as it starts and `(done, total)` as
/// its items finish, on the caller's task. A loop's items are synchronous, so no loop runs inside another: the counts are always
/// those of the one loop now running.
public final class WorkProgress: Sendable {
    @TaskLocal public static var observer: WorkProgress?

    /// Told `(done, total)` of the loop now running.
    public let report: @Sendable (_ done: Int, _ total: Int) -> Void

    public init(_ report: @escaping @Sendable (_ done: Int, _ total: Int) -> Void) {
        self.report = report
    }
}
