import Dispatch
import Foundation

/// Ctrl-C (SIGINT) during a long stored run: the first SIGINT sets a flag that the run checks after
/// each completed path (every finished path is already saved in the store), so it stops cleanly with
/// the partial files kept and a message saying how to resume; a second SIGINT kills the process at
/// once (the default action is restored by the first). SIGKILL needs no handling: the store is
/// written atomically path by path, so a killed run is resumable too.
///
/// Installed only for the duration of a stored run (`install()` … `remove()`); elsewhere SIGINT keeps
/// its default action.
final class Interruption: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    private var source: DispatchSourceSignal?

    /// Whether a SIGINT arrived since `install()`.
    var requested: Bool {
        lock.lock(); defer { lock.unlock() }
        return flag
    }

    /// Starts catching SIGINT.
    static func install() -> Interruption {
        let i = Interruption()
        signal(SIGINT, SIG_IGN)  // delivered to the dispatch source instead of terminating
        let s = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        s.setEventHandler { [weak i] in
            guard let i else { return }
            i.lock.lock(); i.flag = true; i.lock.unlock()
            signal(SIGINT, SIG_DFL)  // a second Ctrl-C terminates immediately
            Console.error("twoscale: interrupt received; stopping after the paths in progress (Ctrl-C again to quit at once)")
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
