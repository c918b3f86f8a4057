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
    private let bar = Console.stderrIsTerminal

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
        if !announced, p.computed >= 1, !Console.quiet {
            announced = true
            // The first `threads` paths run side by side: one path time covers up to `threads` paths.
            let perPath = p.elapsed / Double(Swift.min(p.computed, threads)) / Double(threads)
            let projected = perPath * Double(remaining) + p.elapsed
            if projected > announceAfter {
                Console.error("\(label): about \(Self.duration(projected)) for \(p.total - p.done + p.computed) paths on \(threads) thread(s) (from the first path); store ≈ \(Self.bytes(storeBytes))")
            }
        }
        guard bar else { return }
        let now = Date()
        guard p.done == p.total || now.timeIntervalSince(lastDraw) > 0.2 else { return }
        lastDraw = now
        let width = 30
        let filled = p.total > 0 ? width * p.done / p.total : width
        var line = "\r\(label) [" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] "
        line += "\(p.done)/\(p.total) paths"
        if rate > 0 { line += String(format: "  %.2f paths/s", rate) }
        if eta.isFinite && remaining > 0 { line += "  ETA " + Self.duration(eta) }
        line += "   "
        if p.done == p.total { line += "\n" }
        Console.progressLine(line)
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
    /// Writes a progress line to stderr as is (carriage return included, no newline added); only
    /// call it when `stderrIsTerminal`.
    static func progressLine(_ s: String) {
        if let c = errorCapture { c.append(s); return }
        FileHandle.standardError.write(Data(s.utf8))
    }
}
