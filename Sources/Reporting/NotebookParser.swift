import Foundation
import TwoScaleCore
import TwoScaleFormats

extension Notebook {
    /// Reads and parses the notebook at `path`.
    public static func load(path: String) throws -> Notebook {
        let data = try InputFile.read(path, expecting: "a notebook file such as notebooks-txt/NAME.txt")
        guard let text = String(data: data, encoding: .utf8) else {
            throw TwoScaleError.file(path, "is not UTF-8 text")
        }
        let base = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        return try parse(text, source: path, name: base)
    }

    /// Parses notebook text. Errors name `source` and the line, and say what is allowed.
    public static func parse(_ text: String, source: String, name: String) throws -> Notebook {
        var parser = NotebookParser(source: source)
        return Notebook(name: name, source: source, items: try parser.parse(text))
    }
}

/// The line-by-line notebook reader behind `Notebook.parse`.
struct NotebookParser {
    let source: String

    func fail(_ line: Int, _ message: String) -> TwoScaleError {
        TwoScaleError.file(source, line: line, message)
    }

    /// An opening or closing code fence: its character, length and the rest of the line.
    struct Fence { var char: Character; var count: Int; var info: String }

    static func fence(_ line: String) -> Fence? {
        let indent = line.prefix { $0 == " " }.count
        guard indent <= 3 else { return nil }
        let rest = line.dropFirst(indent)
        guard let c = rest.first, c == "`" || c == "~" else { return nil }
        let n = rest.prefix { $0 == c }.count
        guard n >= 3 else { return nil }
        let info = rest.dropFirst(n).trimmingCharacters(in: .whitespaces)
        if c == "`" && info.contains("`") { return nil }
        return Fence(char: c, count: n, info: info)
    }

    /// Whether `info` marks a twoscale block (its first word is exactly `twoscale`).
    static func isTwoscale(_ info: String) -> Bool {
        info == "twoscale" || info.hasPrefix("twoscale ") || info.hasPrefix("twoscale\t")
    }

    mutating func parse(_ text: String) throws -> [NotebookItem] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { l -> String in
            l.hasSuffix("\r") ? String(l.dropLast()) : String(l)
        }
        var items: [NotebookItem] = []
        var prose: [String] = []
        var i = 0
        var otherFence: Fence?
        var blockNumber = 0
        func flushProse() {
            if !prose.isEmpty { items.append(.prose(prose.joined(separator: "\n"))); prose = [] }
        }
        while i < lines.count {
            let line = lines[i]
            if let open = otherFence {
                // Inside a fenced block of another language: copy until its closing fence.
                if let f = Self.fence(line), f.char == open.char, f.count >= open.count, f.info.isEmpty { otherFence = nil }
                prose.append(line)
                i += 1
                continue
            }
            guard let f = Self.fence(line) else { prose.append(line); i += 1; continue }
            guard Self.isTwoscale(f.info) else { otherFence = f; prose.append(line); i += 1; continue }
            // A twoscale block: find its closing fence.
            let openLine = i + 1
            var j = i + 1
            while j < lines.count {
                if let c = Self.fence(lines[j]), c.char == f.char, c.count >= f.count, c.info.isEmpty { break }
                j += 1
            }
            guard j < lines.count else {
                throw fail(openLine, "the ```twoscale block opened here is never closed; end it with a line \(String(repeating: f.char, count: f.count))")
            }
            flushProse()
            blockNumber += 1
            let body = Array(lines[(i + 1)..<j])
            items.append(.block(try block(number: blockNumber, openLine: openLine, info: f.info, body: body)))
            i = j + 1
        }
        flushProse()
        return items
    }

    /// Parses one block's info string and body (body line k is notebook line openLine + 1 + k).
    func block(number: Int, openLine: Int, info: String, body: [String]) throws -> NotebookBlock {
        var plots: [PlotDirective] = []
        let infoRest = String(info.dropFirst("twoscale".count)).trimmingCharacters(in: .whitespaces)
        if !infoRest.isEmpty {
            let words = try split(infoRest, line: openLine, operators: false)
            guard words.first == "plot" else {
                throw fail(openLine, "unknown directive '\(words.first ?? infoRest)' after ```twoscale; allowed: plot (e.g. ```twoscale plot x=eps y=d_zeta)")
            }
            plots.append(try directive(Array(words.dropFirst()), line: openLine))
        }

        var commands: [NotebookCommand] = []
        var display: [String] = []
        // The command being assembled: its first line and its pieces with their lines.
        var pending: (line: Int, pieces: [(text: String, line: Int)])?
        for (k, raw) in body.enumerated() {
            let ln = openLine + 1 + k
            let t = raw.trimmingCharacters(in: .whitespaces)
            if let p = pending {
                if t.isEmpty || t.hasPrefix("#") {
                    throw fail(ln, "the command continued with '\\' on line \(p.pieces.last?.line ?? p.line) needs more of it here; a blank or comment line cannot follow a '\\' continuation")
                }
            } else if t.isEmpty {
                display.append(raw)
                continue
            } else if t == "#plot" || t.hasPrefix("#plot ") || t.hasPrefix("#plot\t") {
                let words = try split(String(t.dropFirst("#plot".count)), line: ln, operators: false)
                plots.append(try directive(words, line: ln))
                continue
            } else if t.hasPrefix("#") {
                display.append(raw)
                continue
            } else if !(t == "twoscale" || t.hasPrefix("twoscale ") || t.hasPrefix("twoscale\t")) {
                let first = t.split(separator: " ").first.map(String.init) ?? t
                throw fail(ln, "'\(first)…' is not a twoscale command; every command line starts with the word twoscale (comments start with #, prose goes outside the block)")
            }
            display.append(raw)
            var piece = t
            let continues = piece.hasSuffix("\\")
            if continues { piece = String(piece.dropLast()) }
            var cmd = pending ?? (line: ln, pieces: [])
            cmd.pieces.append((piece, ln))
            if continues { pending = cmd; continue }
            pending = nil
            commands.append(try command(cmd.line, cmd.pieces))
        }
        if let p = pending {
            throw fail(p.pieces.last?.line ?? p.line, "the '\\' at the end of this line continues the command past the end of the block")
        }
        guard !commands.isEmpty else {
            throw fail(openLine, "the ```twoscale block has no command; write at least one line starting with twoscale")
        }
        for p in plots {
            for c in p.commands ?? [] where c > commands.count {
                throw fail(p.line, "plot cmd=\(c): the block has \(commands.count) command\(commands.count == 1 ? "" : "s")")
            }
        }
        return NotebookBlock(number: number, line: openLine, commands: commands, plots: plots, displayLines: display)
    }

    /// Joins a command's pieces and splits it into arguments; errors point at the piece's line.
    func command(_ line: Int, _ pieces: [(text: String, line: Int)]) throws -> NotebookCommand {
        var joined = ""
        var starts: [(offset: Int, line: Int)] = []
        for p in pieces {
            if !joined.isEmpty { joined += " " }
            starts.append((joined.count, p.line))
            joined += p.text
        }
        let words: [String]
        do {
            words = try ShellWords.split(joined, forbidOperators: true)
        } catch {
            let at = starts.last { $0.offset <= error.offset }?.line ?? line
            throw fail(at, error.message)
        }
        let args = Array(words.dropFirst())
        guard let sub = args.first else {
            throw fail(line, "'twoscale' needs a command, e.g. twoscale toy \(Setting.family) constant \(Setting.lambdas) 4,0.01")
        }
        if sub == "notebook" {
            throw fail(line, "a notebook cannot run 'twoscale notebook' (nested notebooks are not allowed)")
        }
        return NotebookCommand(line: line, arguments: args)
    }

    func split(_ text: String, line: Int, operators: Bool) throws -> [String] {
        do { return try ShellWords.split(text, forbidOperators: operators) } catch { throw fail(line, error.message) }
    }

    func directive(_ words: [String], line: Int) throws -> PlotDirective {
        do { return try PlotDirective.parse(words: words, line: line) } catch { throw fail(line, "plot: " + error.message) }
    }
}
