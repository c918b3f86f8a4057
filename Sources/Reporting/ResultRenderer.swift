import TwoScaleCore
import TwoScaleFormats

/// Turns a command's JSON result into Markdown, generically: scalar keys (and short lists, and scalars
/// of nested objects as `outer.inner`) form a key/value table; every array of objects (`points`,
/// `blocks`, `epochs`, …) becomes its own table with one column per key.
public enum ResultRenderer {
    /// Lists with more elements than this are summarised as "n values, min…max".
    public static let inlineListLimit = 4

    /// The Markdown for `result`; array tables show at most `maxRows` rows.
    public static func markdown(_ result: JSONValue, maxRows: Int = 200) -> String {
        var scalars: [[String]] = []
        var tables: [(name: String, rows: [JSONValue])] = []
        collect(result, prefix: "", scalars: &scalars, tables: &tables)
        var out = ""
        if !scalars.isEmpty {
            out += MarkdownTable(header: ["key", "value"], rows: scalars).render() + "\n"
        }
        for t in tables {
            out += "**\(t.name)** (\(t.rows.count) row\(t.rows.count == 1 ? "" : "s"))\n\n"
            out += table(t.rows, maxRows: maxRows)
            out += "\n"
        }
        return out
    }

    /// Sorts a value into key/value rows and tables.
    static func collect(_ v: JSONValue, prefix: String, scalars: inout [[String]], tables: inout [(name: String, rows: [JSONValue])]) {
        switch v {
        case let .object(kv):
            for (k, child) in kv {
                let name = prefix.isEmpty ? k : prefix + "." + k
                switch child {
                case .object: collect(child, prefix: name, scalars: &scalars, tables: &tables)
                case let .array(a) where !a.isEmpty && a.allSatisfy(isObject): tables.append((name, a))
                default: scalars.append(["`\(name)`", cell(child)])
                }
            }
        case let .array(a) where !a.isEmpty && a.allSatisfy(isObject):
            tables.append((prefix.isEmpty ? "result" : prefix, a))
        default:
            scalars.append([prefix.isEmpty ? "`result`" : "`\(prefix)`", cell(v)])
        }
    }

    static func isObject(_ v: JSONValue) -> Bool { if case .object = v { return true } else { return false } }

    static func isScalar(_ v: JSONValue) -> Bool {
        switch v {
        case .object, .array: return false
        default: return true
        }
    }

    /// Whether a value fits in a table cell (a scalar or a list of scalars).
    static func isCellValue(_ v: JSONValue) -> Bool {
        switch v {
        case .object: return false
        case let .array(a): return a.allSatisfy(isScalar)
        default: return true
        }
    }

    /// A Markdown table of an array of objects: one column per key whose values are scalars or lists
    /// of scalars (keys in order of first appearance; nested columns are named in a note).
    public static func table(_ rows: [JSONValue], maxRows: Int = 200) -> String {
        var keys: [String] = []
        var nested: [String] = []
        for r in rows {
            guard case let .object(kv) = r else { continue }
            for (k, v) in kv {
                if !isCellValue(v) { if !nested.contains(k) { nested.append(k) } } else if !keys.contains(k) { keys.append(k) }
            }
        }
        keys.removeAll { nested.contains($0) }
        let numeric = keys.map { k in
            rows.allSatisfy { r in
                switch r[k] {
                case .int?, .uint?, .double?, .null?, nil: return true
                default: return false
                }
            }
        }
        let shown = rows.prefix(max(0, maxRows))
        let body = shown.map { r in keys.map { k in r[k].map(cell) ?? "" } }
        var out = MarkdownTable(header: keys, rows: body, alignments: numeric.map { $0 ? .right : .left }).render()
        if rows.count > shown.count {
            out += "\n… \(rows.count - shown.count) more rows not shown (run the command with \(Setting.json) for all).\n"
        }
        if !nested.isEmpty {
            out += "\nNested values not shown: \(nested.map { "`\($0)`" }.joined(separator: ", ")).\n"
        }
        return out
    }

    /// The text of one value in a cell: numbers readably, `—` for null, short lists as `[a, b]`, long
    /// lists as "n values, min…max".
    public static func cell(_ v: JSONValue) -> String {
        switch v {
        case .null: return "—"
        case let .bool(b): return b ? "true" : "false"
        case let .int(i): return String(i)
        case let .uint(u): return String(u)
        case let .double(x): return ReportNumber.format(x)
        case let .string(s): return s
        case let .object(kv): return "{\(kv.count) key\(kv.count == 1 ? "" : "s")}"
        case let .array(a):
            if a.count <= inlineListLimit, a.allSatisfy(isScalar) {
                return "[" + a.map(cell).joined(separator: ", ") + "]"
            }
            let nums = a.compactMap(\.doubleValue)
            if nums.count == a.count, let lo = nums.min(), let hi = nums.max() {
                return "\(a.count) values, \(ReportNumber.format(lo))…\(ReportNumber.format(hi))"
            }
            return "\(a.count) values"
        }
    }
}
