import Foundation

/// Where a long sampler stands, told to a progress closure at most once every `every` seconds, however many
/// replicates (threads) share the reporter: one line a minute from a run that lasts hours, none from a short one.
final class StepReporter: @unchecked Sendable {
    private let lock = NSLock()
    private var last = Date()
    private let every: Double
    private let say: @Sendable (String) -> Void

    init(every: Double = 60, say: @escaping @Sendable (String) -> Void) {
        (self.every, self.say) = (every, say)
    }

    /// Tells `message()` if `every` seconds have passed since the last line (or since this reporter was made).
    func report(_ message: @autoclosure () -> String) {
        lock.lock(); defer { lock.unlock() }
        let now = Date()
        guard now.timeIntervalSince(last) >= every else { return }
        last = now
        say(message())
    }

    /// A scale as a progress line shows it.
    static func scale(_ s: Double) -> String { String(format: "%.4g", s) }
}
