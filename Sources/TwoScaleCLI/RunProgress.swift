import Foundation
import SpectraStore
import TwoScaleCore

/// Progress of a Monte Carlo run on stderr: a one-line bar (paths done/total, rate, ETA) only when
/// stderr is a terminal, and — for runs projected to take longer than `announceAfter` seconds — one
/// estimate line (time extrapolated from the first computed paths, store size) whatever stderr is.
final class RunProgress: @unchecked Sendable {
    let label: String
    let storeBytes: Double
    let threads: Int
    let announceAfter: Double
    private var announced = false
    private var lastDraw = Date.distantPast
    private let bar = Console.progressBars
    private let plain = Console.plainProgressLines
    private var lastPlain = Date()

    init(label: String, storeBytes: Double, threads: Int, announceAfter: Double = 10) {
        self.label = label
        self.storeBytes = storeBytes
        self.threads = threads
        self.announceAfter = announceAfter
    }

    func update(_ p: SpectraRun.Progress) {
        let remaining = p.total - p.done
        let rate = p.elapsed > 0 ? Double(p.computed) / p.elapsed : 0
        let eta = rate > 0 ? Double(remaining) / rate : .nan
        if !announced, p.computed >= 1, !Console.quiet, Console.showProgress {
            announced = true
            // The first `threads` paths run side by side: one path time covers up to `threads` paths.
            let perPath = p.elapsed / Double(Swift.min(p.computed, threads)) / Double(threads)
            let projected = perPath * Double(remaining) + p.elapsed
            if projected > announceAfter {
                Console.error("\(label): about \(Self.duration(projected)) for \(p.total - p.done + p.computed) paths on \(threads) thread(s) (from the first path); store ≈ \(Self.bytes(storeBytes))")
            }
        }
        let now = Date()
        if plain, now.timeIntervalSince(lastPlain) >= 10 {
            lastPlain = now
            Console.error("\(label): \(p.done)/\(p.total) paths (\(p.total > 0 ? 100 * p.done / p.total : 100)%)"
                + (eta.isFinite && remaining > 0 ? ", ETA " + Self.duration(eta) : ""))
        }
        guard bar else { return }
        guard p.done == p.total || now.timeIntervalSince(lastDraw) > 0.2 else { return }
        lastDraw = now
        var line = "\r\u{1B}[K\(label) " + Self.bar(done: p.done, total: p.total) + " "
        line += "\(p.done)/\(p.total) paths (\(p.total > 0 ? 100 * p.done / p.total : 100)%)"
        if rate > 0 { line += String(format: "  %.2f paths/s", rate) }
        if eta.isFinite && remaining > 0 { line += "  ETA " + Self.duration(eta) }
        line += "   "
        if p.done == p.total { line += "\n" }
        Console.progressLine(line)
    }

    /// A 30-character bar, `[####      ]`.
    static func bar(done: Int, total: Int) -> String {
        let width = 30, filled = total > 0 ? width * Swift.min(done, total) / total : width
        return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "]"
    }

    static func duration(_ s: Double) -> String {
        if !s.isFinite { return "?" }
        if s < 90 { return String(format: "%.0f s", s.rounded(.up)) }
        if s < 5400 { return String(format: "%.0f min", (s / 60).rounded()) }
        return String(format: "%.1f h", s / 3600)
    }

    static func bytes(_ b: Int) -> String { bytes(Double(b)) }

    static func bytes(_ b: Double) -> String {
        let x = b
        if x < 1_048_576 { return String(format: "%.0f KB", x / 1024) }
        if x < 1_073_741_824 { return String(format: "%.1f MB", x / 1048576) }
        return String(format: "%.2f GB", x / 1073741824)
    }

    /// Upper bound of a store's size: every row of length d_m.
    /// In Double: K·J·d can exceed an Int (10⁸ · 10⁸ · 10⁴).
    static func storeBytes(layers: [Int], paths: Int, inner: Int) -> Double {
        let own = Double(layers.reduce(0, +))
        let inn = Double(layers.dropFirst().reduce(0, +)) * Double(inner)
        return 8 * Double(paths) * (own + inn)
    }

    /// The largest store a run may plan: its rows are held in memory for the final assembly.
    static let maxStoreBytes = 1099511627776.0  // 1 TiB
}

extension Console {
    /// Progress as a redrawn bar: stderr is a terminal and `--quiet` was not given.
    static var progressBars: Bool { stderrIsTerminal && showProgress }
    /// Progress as plain lines, at most one every 10 s: stderr is not a terminal, and neither a notebook
    /// nor `--quiet` silences it.
    static var plainProgressLines: Bool { !stderrIsTerminal && !quiet && showProgress }

    /// Writes a progress line to stderr as is (carriage return included, no newline added); only
    /// call it when `stderrIsTerminal`.
    static func progressLine(_ s: String) {
        let s = FlagSpelling.render(s)
        if let c = errorCapture { c.append(s); return }
        FileHandle.standardError.write(Data(s.utf8))
    }
}

/// Progress of work made of phases (the smc estimator's stages, a toy's trials, a comparison's cells):
/// each phase's name as the library reports it, and the outermost parallel loop's items done
/// (`WorkProgress`). On a terminal, each phase's name and a bar with percentage and ETA; otherwise one plain
/// line on stderr (a phase's name, or how far its loop is) at most every `plainEvery` seconds. A loop projected
/// past `announceAfter` seconds says so once, whatever stderr is. `--quiet` (and notebooks) silence all of it.
final class PhaseProgress: @unchecked Sendable {
    let label: String
    let threads: Int
    let plainEvery: Double
    let announceAfter: Double
    private let lock = NSLock()
    private let bar = Console.progressBars
    private let plain = Console.plainProgressLines
    private var phaseName = ""
    private var loopStart = Date()
    private var lastDraw = Date.distantPast
    private var lastPlain = Date()
    private var barOpen = false
    private var announcedLoop = false

    init(label: String, threads: Int, plainEvery: Double = 10, announceAfter: Double = 300) {
        self.label = label
        self.threads = Swift.max(1, threads)
        self.plainEvery = plainEvery
        self.announceAfter = announceAfter
    }

    /// Runs `work` with this object observing its parallel loops, and closes the bar.
    func observing<T>(_ work: () async throws -> T) async rethrows -> T {
        defer { finish() }
        return try await WorkProgress.$observer.withValue(WorkProgress { [self] done, total in tick(done: done, total: total) }) {
            try await work()
        }
    }

    /// A new phase, named as the library reports it.
    func phase(_ name: String) {
        lock.lock(); defer { lock.unlock() }
        closeBar()
        phaseName = name
        loopStart = Date()
        announcedLoop = false
        // Off a terminal, a phase's name counts as a plain line.
        let now = Date(), asPlain = !bar && plain && now.timeIntervalSince(lastPlain) >= plainEvery
        if asPlain { lastPlain = now }
        if bar || asPlain { Console.error("\(label): \(name)") }
    }

    func tick(done: Int, total: Int) {
        lock.lock(); defer { lock.unlock() }
        let now = Date()
        // A loop starts: its projection counts from here, not from the end of the work before it.
        if done == 0 {
            loopStart = now
            announcedLoop = false
            return
        }
        let elapsed = now.timeIntervalSince(loopStart)
        let eta = done > 0 && done < total ? elapsed / Double(done) * Double(total - done) : 0
        if !announcedLoop, done >= Swift.min(threads, total), done < total, !Console.quiet, Console.showProgress,
           elapsed + eta > announceAfter {
            announcedLoop = true
            closeBar()
            Console.error("\(label): \(phaseName.isEmpty ? "this step" : phaseName): about \(RunProgress.duration(elapsed + eta)) "
                + "on \(threads) thread(s), projected from its first \(done) of \(total) items")
        }
        let percent = total > 0 ? 100 * done / total : 100
        let etaText = done < total && done > 0 ? ", ETA " + RunProgress.duration(eta) : ""
        // A bar for loops that last: drawn from half a second in, at most five times a second, and at the end.
        if bar, total >= 2, barOpen || elapsed >= 0.5 {
            if done == total || now.timeIntervalSince(lastDraw) > 0.2 {
                lastDraw = now
                Console.progressLine("\r\u{1B}[K  " + RunProgress.bar(done: done, total: total) + " \(percent)% (\(done)/\(total))\(etaText)   ")
                barOpen = true
            }
        } else if plain, now.timeIntervalSince(lastPlain) >= plainEvery {
            lastPlain = now
            Console.error("\(label): \(phaseName.isEmpty ? "" : phaseName + ": ")\(percent)% (\(done)/\(total))\(etaText)")
        }
        if done == total {
            closeBar()
            loopStart = now
            announcedLoop = false
        }
    }

    func finish() {
        lock.lock(); defer { lock.unlock() }
        closeBar()
    }

    private func closeBar() {
        if barOpen { Console.progressLine("\n"); barOpen = false }
    }
}
