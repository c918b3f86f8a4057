import Dispatch
import Foundation

/// Ctrl-C (SIGINT) during a long stored run: the first SIGINT sets a flag and runs the registered
/// action (`ed` cancels its Monte Carlo task: paths in progress stop at their next inner draw and are
/// recomputed on resume; every finished path is already saved in the store), so the run stops cleanly
/// with the partial files kept and a message saying how to resume; a second SIGINT kills the process
/// at once (the default action is restored by the first). SIGKILL needs no handling: the store is
/// written atomically path by path, so a killed run is resumable too.
///
/// Installed only for the duration of a stored run (`install()` … `remove()`); elsewhere SIGINT keeps
/// its default action.
final class Interruption: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    private var source: DispatchSourceSignal?
    private var action: (@Sendable () -> Void)?

    /// Runs `action` on the first SIGINT (or at once if one already arrived), e.g. to cancel the work.
    func onInterrupt(_ action: @escaping @Sendable () -> Void) {
        lock.lock()
        let now = flag
        if !now { self.action = action }
        lock.unlock()
        if now { action() }
    }

    /// Whether a SIGINT arrived since `install()`.
    var requested: Bool {
        lock.lock(); defer { lock.unlock() }
        return flag
    }

    /// Starts catching SIGINT; `notice` is printed on the first.
    static func install(notice: String = "twoscale: interrupt received; stopping (finished paths are saved; Ctrl-C again to quit at once)") -> Interruption {
        let i = Interruption()
        signal(SIGINT, SIG_IGN)  // delivered to the dispatch source instead of terminating
        // A private serial queue: it targets the overcommitting root queue, so the handler runs at once
        // even while every core is busy with Monte Carlo paths (the non-overcommitting `.global()` queue
        // shares its threads with Swift concurrency and ran the handler only when a path finished).
        let s = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "twoscale.sigint"))
        s.setEventHandler { [weak i] in
            guard let i else { return }
            i.lock.lock(); i.flag = true; let action = i.action; i.lock.unlock()
            signal(SIGINT, SIG_DFL)  // a second Ctrl-C terminates immediately
            Console.error(notice)
            action?()
        }
        s.resume()
        i.source = s
        return i
    }

    /// Stops catching SIGINT (the default action again).
    func remove() {
        source?.cancel()
        source = nil
        signal(SIGINT, SIG_DFL)
    }
}
