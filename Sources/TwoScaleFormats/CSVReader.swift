import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// Which CSV column, if any, holds the class label.
public enum LabelColumn: String, Sendable, CaseIterable {
    /// Every column is a feature.
    case none
    /// The last column is an integer class label ≥ 0.
    case last
}

/// Numeric CSV: one input per row, comma-separated numbers, every column a feature, or with
/// `labels: .last` the last column an integer class label ≥ 0. An optional header is recognised
/// when the first non-blank line is not all numbers. Blank lines are skipped, `\r\n` is accepted.
/// Errors name the file and the line: wrong number of fields, a non-numeric field, NaN/inf, a label
/// that is not a whole number ≥ 0, an empty file.
public enum CSVReader {
    /// Reads at most `limit` rows (all when nil).
    public static func read(path: String, labels: LabelColumn, limit: Int?) throws -> Dataset {
        let data = try InputFile.read(path, expecting: "a CSV file of comma-separated numbers", mapped: true)
        return try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            try parse(raw.bindMemory(to: UInt8.self), path: path, labels: labels, limit: limit)
        }
    }

    /// The delimiter of a line read as one field that splits into numbers on `;`, a tab, `|` or spaces.
    static func otherDelimiter(in field: String) -> (name: String, escaped: String)? {
        let candidates: [(Character, String, String)] = [(";", "semicolons ';'", ";"), ("\t", "tabs", "\\t"),
                                                         ("|", "bars '|'", "|"), (" ", "spaces", " ")]
        for (c, name, escaped) in candidates {
            let parts = field.split(separator: c, omittingEmptySubsequences: c == " ")
            if parts.count > 1, parts.allSatisfy({ Double($0.trimmingCharacters(in: .whitespaces)) != nil }) {
                return (name, escaped)
            }
        }
        return nil
    }

    /// Parses CSV text (exposed for tests and in-memory data).
    public static func parse(text: String, path: String = "<text>", labels: LabelColumn, limit: Int? = nil) throws -> Dataset {
        var bytes = Array(text.utf8)
        return try bytes.withUnsafeMutableBufferPointer { try parse(UnsafeBufferPointer($0), path: path, labels: labels, limit: limit) }
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>, path: String, labels: LabelColumn, limit: Int?) throws -> Dataset {
        var values: [Double] = []
        var labelValues: [Int] = []
        var columns = -1          // fields per line, fixed by the first data (or header) line
        var rows = 0
        var lineNumber = 0
        var sawHeader = false
        var fieldBuffer = [CChar](repeating: 0, count: 64)
        var fields: [Double] = []
        var start = 0
        let n = bytes.count
        while start < n {
            if let limit, rows >= limit { break }
            var end = start
            while end < n && bytes[end] != UInt8(ascii: "\n") { end += 1 }
            lineNumber += 1
            var lineEnd = end
            if lineEnd > start && bytes[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
            defer { start = end + 1 }
            if isBlank(bytes, start, lineEnd) { continue }
            // Split into fields and parse each as a number.
            fields.removeAll(keepingCapacity: true)
            var numeric = true
            var firstBad: String?
            var fs = start
            while true {
                var fe = fs
                while fe < lineEnd && bytes[fe] != UInt8(ascii: ",") { fe += 1 }
                if let v = number(bytes, fs, fe, &fieldBuffer) {
                    fields.append(v)
                } else {
                    numeric = false
                    if firstBad == nil { firstBad = String(decoding: UnsafeBufferPointer(rebasing: bytes[fs..<fe]), as: UTF8.self) }
                    fields.append(.nan)
                }
                if fe >= lineEnd { break }
                fs = fe + 1
            }
            if columns < 0 {
                columns = fields.count
                if !numeric && rows == 0 && !sawHeader {
                    sawHeader = true     // a header line: names, not numbers
                    continue
                }
            }
            guard fields.count == columns else {
                throw TwoScaleError.file(path, line: lineNumber,
                                         "\(fields.count) fields, expected \(columns) like the \(sawHeader ? "header" : "first line")")
            }
            guard numeric else {
                let bad = (firstBad ?? "").trimmingCharacters(in: .whitespaces)
                if columns == 1, let d = otherDelimiter(in: bad) {
                    throw TwoScaleError.file(path, line: lineNumber, "fields are separated by \(d.name), not commas: twoscale reads comma-separated numbers; convert the file, e.g. tr '\(d.escaped)' ',' < IN > OUT.csv")
                }
                throw TwoScaleError.file(path, line: lineNumber, "'\(bad)' is not a number (every field must be numeric)")
            }
            if let bad = fields.first(where: { !$0.isFinite }) {
                throw TwoScaleError.file(path, line: lineNumber, "\(bad) is not allowed: every value must be a finite number")
            }
            switch labels {
            case .none:
                values.append(contentsOf: fields)
            case .last:
                guard columns >= 2 else {
                    throw TwoScaleError.file(path, line: lineNumber, "\(Setting.labels) last needs at least two columns (features, then the label)")
                }
                let l = fields[columns - 1]
                guard l >= 0, l == l.rounded(), l < 1e9 else {
                    throw TwoScaleError.file(path, line: lineNumber, "the label \(l) (last column) must be a whole number ≥ 0")
                }
                labelValues.append(Int(l))
                values.append(contentsOf: fields[0..<(columns - 1)])
            }
            rows += 1
        }
        guard rows > 0 else {
            throw TwoScaleError.file(path, sawHeader ? "has a header line but no data rows" : "is empty: no data rows")
        }
        let features = labels == .last ? columns - 1 : columns
        let x = Matrix(rows: rows, cols: features, data: values)
        if labels == .last {
            return Dataset(inputs: x, labels: labelValues, classes: (labelValues.max() ?? 0) + 1, source: "csv:\(path)")
        }
        return Dataset(inputs: x, source: "csv:\(path)")
    }

    @inline(__always)
    private static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }

    private static func isBlank(_ bytes: UnsafeBufferPointer<UInt8>, _ s: Int, _ e: Int) -> Bool {
        var i = s
        while i < e { if !isSpace(bytes[i]) { return false }; i += 1 }
        return true
    }

    /// The number in `bytes[s..<e]` (surrounding blanks allowed), or nil. `nan`/`inf` parse (and are
    /// rejected by the caller with a clearer message).
    private static func number(_ bytes: UnsafeBufferPointer<UInt8>, _ s0: Int, _ e0: Int, _ buf: inout [CChar]) -> Double? {
        var s = s0, e = e0
        while s < e && isSpace(bytes[s]) { s += 1 }
        while e > s && isSpace(bytes[e - 1]) { e -= 1 }
        let len = e - s
        guard len > 0 else { return nil }
        // Quoted numbers ("1.5") are accepted.
        if len >= 2 && bytes[s] == UInt8(ascii: "\"") && bytes[e - 1] == UInt8(ascii: "\"") {
            return number(bytes, s + 1, e - 1, &buf)
        }
        if buf.count < len + 1 { buf = [CChar](repeating: 0, count: len + 1) }
        return buf.withUnsafeMutableBufferPointer { b -> Double? in
            for i in 0..<len { b[i] = CChar(bitPattern: bytes[s + i]) }
            b[len] = 0
            var endPtr: UnsafeMutablePointer<CChar>?
            let v = strtod(b.baseAddress!, &endPtr)
            guard let endPtr, endPtr == b.baseAddress! + len else { return nil }
            // strtod also takes hex floats; a leading letter other than n/i (nan/inf) is not a number here.
            return v
        }
    }
}
