import TwoScaleCore

/// A parsed notebook: Markdown prose interleaved with `twoscale` blocks (format: docs/NOTEBOOKS.md).
public struct Notebook: Sendable, Equatable {
    /// The report name: the file name without its extension (`notebooks-txt/quick.txt` → `quick`).
    public var name: String
    /// The path the notebook was read from, used in error messages.
    public var source: String
    /// Prose and blocks in file order.
    public var items: [NotebookItem]

    public init(name: String, source: String, items: [NotebookItem]) {
        self.name = name
        self.source = source
        self.items = items
    }

    /// The `twoscale` blocks, in order.
    public var blocks: [NotebookBlock] {
        items.compactMap { if case let .block(b) = $0 { return b } else { return nil } }
    }

    /// Every value of the seed's flag (`flag`, spelled by the command line) given in the notebook's
    /// commands, in order, without repeats.
    public func seeds(flag: String) -> [String] {
        var out: [String] = []
        for b in blocks { for c in b.commands { for s in c.seeds(flag: flag) where !out.contains(s) { out.append(s) } } }
        return out
    }
}

/// A piece of a notebook.
public enum NotebookItem: Sendable, Equatable {
    /// Markdown copied verbatim into the report (fenced blocks of other languages included).
    case prose(String)
    case block(NotebookBlock)
}

/// A fenced block whose info string starts with `twoscale`: commands to run and plots to draw.
public struct NotebookBlock: Sendable, Equatable {
    /// 1-based block number within the notebook.
    public var number: Int
    /// Line of the opening fence.
    public var line: Int
    public var commands: [NotebookCommand]
    /// Plot specs from the info string and from `#plot` lines, in that order.
    public var plots: [PlotDirective]
    /// The block's lines as shown in the report: everything but the `#plot` lines.
    public var displayLines: [String]
}

/// One `twoscale …` command (continuation lines joined).
public struct NotebookCommand: Sendable, Equatable {
    /// Line where the command starts.
    public var line: Int
    /// The arguments after the word `twoscale`, unquoted.
    public var arguments: [String]
    /// The values of the seed's flag: `FLAG V` or `FLAG=V`.
    public func seeds(flag: String) -> [String] {
        var out: [String] = []
        for (i, a) in arguments.enumerated() {
            if a == flag, i + 1 < arguments.count { out.append(arguments[i + 1]) }
            if a.hasPrefix(flag + "=") { out.append(String(a.dropFirst(flag.count + 1))) }
        }
        return out
    }
    /// The arguments to run: `arguments` plus the JSON flag unless already there.
    public func jsonArguments(flag: String) -> [String] { arguments.contains(flag) ? arguments : arguments + [flag] }
}
