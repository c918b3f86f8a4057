import Foundation
import TwoScaleCore
import TwoScaleFormats
#if canImport(Glibc)
import Glibc
#endif

/// Facts about this machine and checkout for the report header.
public enum MachineInfo {
    /// `git rev-parse --short HEAD` in the current folder, or "unknown" when git or the repository is
    /// missing. The child's output is read before waiting, stderr goes to /dev/null.
    public static func gitCommit() -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["git", "rev-parse", "--short", "HEAD"]
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch { return "unknown" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0,
              let s = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
              !s.isEmpty, s.count <= 64, s.allSatisfy(\.isHexDigit) else { return "unknown" }
        return s
    }

    /// Now, as `YYYY-MM-DD HH:MM:SS UTC`.
    public static func utcDate() -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return f.string(from: Date()) + " UTC"
    }

    public static func hostName() -> String {
        let h = ProcessInfo.processInfo.hostName
        return h.isEmpty ? "unknown" : h
    }

    /// The machine hardware name, as `uname -m` prints it.
    public static func architecture() -> String {
        var u = utsname()
        guard uname(&u) == 0 else { return "unknown" }
        let s = withUnsafeBytes(of: &u.machine) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return s.isEmpty ? "unknown" : s
    }

    public static func cores() -> Int { ProcessInfo.processInfo.activeProcessorCount }
}

/// Puts a rendered report in place without ever leaving a half-written one: figures go to a fresh
/// hidden folder first, which is then swapped in by renames; the .md is written atomically last.
/// If anything fails before the swap, the previous report is untouched.
public enum ReportWriter {
    public struct Paths: Sendable { public var markdown: String; public var figureDir: String }

    public static func write(_ report: NotebookReport, name: String, outDir: String) throws -> Paths {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        if fm.fileExists(atPath: outDir, isDirectory: &isDir) {
            guard isDir.boolValue else { throw TwoScaleError.invalid("\(Setting.outputFolder)", outDir, allowed: "it is a file; give a folder") }
        } else {
            try AtomicFile.makeDirectory(outDir)
        }
        let md = outDir + "/" + name + ".md"
        let figDir = outDir + "/" + name
        let pid = getpid()
        let fresh = outDir + "/." + name + ".new-\(pid)"
        let old = outDir + "/." + name + ".old-\(pid)"
        if fm.fileExists(atPath: figDir, isDirectory: &isDir), !isDir.boolValue {
            throw TwoScaleError.file(figDir, "is a file, but the report's figures go in a folder of that name; move it away")
        }
        // Leftovers of runs killed mid-swap (any process id) go first.
        for n in (try? fm.contentsOfDirectory(atPath: outDir)) ?? []
        where n.hasPrefix("." + name + ".new-") || n.hasPrefix("." + name + ".old-") {
            try? fm.removeItem(atPath: outDir + "/" + n)
        }
        defer { try? fm.removeItem(atPath: fresh) }

        // 1. Figures into a fresh folder.
        if !report.figures.isEmpty {
            try AtomicFile.makeDirectory(fresh)
            for f in report.figures { try AtomicFile.write(f.svg, to: fresh + "/" + f.file) }
        }
        // 2. Swap the figure folder: old aside, fresh in (restoring the old one if that fails).
        let hadOld = fm.fileExists(atPath: figDir)
        if hadOld {
            guard rename(figDir, old) == 0 else {
                throw TwoScaleError.file(figDir, "cannot be replaced (\(String(cString: strerror(errno))))")
            }
        }
        if !report.figures.isEmpty, rename(fresh, figDir) != 0 {
            let e = errno
            if hadOld { _ = rename(old, figDir) }
            throw TwoScaleError.file(figDir, "cannot be written (\(String(cString: strerror(e))))")
        }
        // 3. The report itself, atomically; on failure put the old figures back.
        do {
            try AtomicFile.write(report.markdown, to: md)
        } catch {
            if hadOld {
                try? fm.removeItem(atPath: figDir)
                _ = rename(old, figDir)
            }
            throw error
        }
        if hadOld { try? fm.removeItem(atPath: old) }
        return Paths(markdown: md, figureDir: figDir)
    }
}

/// What `notebook` reports of a rendered notebook: the report, its figures, the seeds the notebook
/// declares, and per block its line, command count and wall time.
public struct NotebookSummary: Sendable, Encodable {
    public struct Block: Sendable, Equatable, Encodable {
        public var block: Int
        public var line: Int
        public var commands: Int
        public var seconds: Double
    }

    public var notebook: String
    public var report: String
    public var figures: [String]
    public var seeds: [String]
    public var blocks: [Block]

    public init(notebook: String, paths: ReportWriter.Paths, report: NotebookReport, seeds: [String], outcomes: [BlockOutcome]) {
        self.notebook = notebook
        self.report = paths.markdown
        figures = report.figures.map { paths.figureDir + "/" + $0.file }
        self.seeds = seeds
        blocks = outcomes.map { Block(block: $0.block.number, line: $0.block.line, commands: $0.block.commands.count, seconds: $0.seconds) }
    }
}
