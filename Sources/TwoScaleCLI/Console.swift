import Foundation
import TwoScaleFormats

/// Where command output goes; every setting marker a library wrote is spelled as its flag on the way
/// (`FlagSpelling`). By default stdout/stderr; a notebook run installs a `Capture` (task
/// local) and reads the command's stdout back.
public final class OutputCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = ""
    public init() {}
    func append(_ s: String) { lock.lock(); buffer += s; lock.unlock() }
    public var text: String { lock.lock(); defer { lock.unlock() }; return buffer }
}

/// Where a command's typed result goes when a notebook runs it: the JSON tree itself, not its text.
public final class ResultSink: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [JSONValue] = []
    public init() {}
    func append(_ v: JSONValue) { lock.lock(); stored.append(v); lock.unlock() }
    public var results: [JSONValue] { lock.lock(); defer { lock.unlock() }; return stored }
}

public enum Console {
    @TaskLocal public static var capture: OutputCapture?
    /// When set (notebooks), `--json` results are handed over here as trees instead of being printed.
    @TaskLocal public static var results: ResultSink?
    /// When set (tests), stderr lines — errors, warnings, progress — go here instead of stderr.
    @TaskLocal public static var errorCapture: OutputCapture?
    /// When true (notebooks), progress lines are not printed.
    @TaskLocal public static var quiet: Bool = false
    /// False under `--quiet`: no progress bars or progress lines (warnings and notes stay).
    @TaskLocal public static var showProgress: Bool = true

    /// Writes to stdout (or the capture).
    public static func out(_ s: String) {
        let s = FlagSpelling.render(s)
        if let c = capture { c.append(s); return }
        FileHandle.standardOutput.write(Data(s.utf8))
    }

    /// One line on stderr.
    public static func error(_ s: String) {
        let s = FlagSpelling.render(s)
        let line = s.hasSuffix("\n") ? s : s + "\n"
        if let c = errorCapture { c.append(line); return }
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// A warning on stderr (silenced in quiet mode).
    public static func warn(_ s: String) {
        if !quiet { error("warning: " + s) }
    }

    /// A note on stderr: a choice made for the user that they may want to know about (silenced in quiet mode).
    public static func note(_ s: String) {
        if !quiet { error("note: " + s) }
    }

    /// Whether stderr is a terminal (progress bars only then).
    public static var stderrIsTerminal: Bool { isatty(2) != 0 && !quiet }
}

extension Console {
    /// A progress line on stderr for long runs (only when stderr is a terminal, never in notebooks).
    public static func progress(_ s: String) {
        if stderrIsTerminal && showProgress { error(s) }
    }
}
