/// A GitHub-flavoured Markdown table. Cells are plain text: `|` is escaped, line breaks become spaces,
/// so any string is safe to put in a cell. Rows shorter than the widest row are padded with empty cells.
public struct MarkdownTable: Sendable, Equatable {
    /// Column alignment, written in the delimiter row (`---`, `---:`, `:---:`).
    public enum Alignment: Sendable, Equatable { case left, right, center }

    public var header: [String]
    public var rows: [[String]]
    /// Per-column alignment; missing entries are `.left`.
    public var alignments: [Alignment]

    public init(header: [String], rows: [[String]], alignments: [Alignment] = []) {
        self.header = header
        self.rows = rows
        self.alignments = alignments
    }

    /// The table's Markdown text, one line per row, ending with a newline.
    public func render() -> String {
        let width = max(header.count, rows.map(\.count).max() ?? 0, 1)
        func line(_ cells: [String]) -> String {
            let padded = cells + Array(repeating: "", count: width - cells.count)
            return "| " + padded.prefix(width).map(MarkdownTable.escape).joined(separator: " | ") + " |"
        }
        var out = line(header) + "\n"
        out += "|" + (0..<width).map { i -> String in
            switch i < alignments.count ? alignments[i] : .left {
            case .left: return " --- "
            case .right: return " ---: "
            case .center: return " :---: "
            }
        }.joined(separator: "|") + "|\n"
        for r in rows { out += line(r) + "\n" }
        return out
    }

    /// Makes `text` safe inside one table cell: escapes `|` as `\|`, turns line breaks into spaces.
    public static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "|": out += "\\|"
            case "\n", "\r", "\r\n": out += " "
            default: out.append(c)
            }
        }
        return out
    }
}
