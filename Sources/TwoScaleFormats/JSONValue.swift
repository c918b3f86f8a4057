import Foundation
import TwoScaleCore

/// A JSON value with ordered keys and a deterministic writer: the same value gives the same bytes,
/// numbers in Swift's shortest round-trip form. Non-finite numbers are refused (no command ever prints a
/// NaN: docs/RELIABILITY.md), so a bug surfaces as an error instead of an invalid file.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    /// A whole number above `Int.max` (a seed of 2⁶³ or more); smaller ones are always `.int`.
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.int(x), .int(y)): return x == y
        case let (.uint(x), .uint(y)): return x == y
        case let (.uint(x), .double(y)), let (.double(y), .uint(x)): return Double(x) == y
        case let (.double(x), .double(y)): return x == y
        case let (.int(x), .double(y)), let (.double(y), .int(x)): return Double(x) == y
        case let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// A number, or null when `x` is nil.
    public static func number(_ x: Double?) -> JSONValue { x.map { .double($0) } ?? .null }
    public static func numbers(_ xs: [Double]) -> JSONValue { .array(xs.map { .double($0) }) }

    /// Key lookup on objects (first match), for tests and readers.
    public subscript(key: String) -> JSONValue? {
        if case let .object(kv) = self { return kv.first { $0.0 == key }?.1 }
        return nil
    }

    public var doubleValue: Double? {
        switch self {
        case let .double(x): return x
        case let .int(i): return Double(i)
        case let .uint(u): return Double(u)
        default: return nil
        }
    }
    public var arrayValue: [JSONValue]? { if case let .array(a) = self { return a } else { return nil } }
    public var stringValue: String? { if case let .string(s) = self { return s } else { return nil } }

    /// The value as a reader of `serialized()` sees it, without the text in between: whole numbers
    /// below 10¹⁵ become `.int` (the writer prints them without a fraction), and a non-finite number is
    /// refused as the writer refuses it. A notebook takes a command's result this way.
    public func asWritten() throws -> JSONValue {
        switch self {
        case let .double(x):
            guard x.isFinite else { throw TwoScaleError.failure("internal error: a non-finite number (\(x)) reached the JSON output") }
            return x == x.rounded() && Swift.abs(x) < 1e15 ? .int(Int(x)) : self
        case let .array(a): return .array(try a.map { try $0.asWritten() })
        case let .object(kv): return .object(try kv.map { ($0.0, try $0.1.asWritten()) })
        default: return self
        }
    }

    /// Serialises with two-space indentation; arrays of scalars stay on one line.
    public func serialized() throws -> String {
        var out = ""
        try write(into: &out, indent: 0)
        out.append("\n")
        return out
    }

    private var isScalar: Bool {
        switch self {
        case .array, .object: return false
        default: return true
        }
    }

    private func write(into out: inout String, indent: Int) throws {
        switch self {
        case .null: out += "null"
        case let .bool(b): out += b ? "true" : "false"
        case let .int(i): out += String(i)
        case let .uint(u): out += String(u)
        case let .double(x):
            guard x.isFinite else { throw TwoScaleError.failure("internal error: a non-finite number (\(x)) reached the JSON output") }
            if x == x.rounded(), Swift.abs(x) < 1e15 { out += String(Int64(x)) } else { out += "\(x)" }
        case let .string(s): JSONValue.writeString(s, into: &out)
        case let .array(a):
            if a.isEmpty { out += "[]"; return }
            if a.allSatisfy({ $0.isScalar }) {
                out += "["
                for (i, v) in a.enumerated() {
                    if i > 0 { out += ", " }
                    try v.write(into: &out, indent: indent)
                }
                out += "]"
            } else {
                let pad = String(repeating: "  ", count: indent + 1)
                out += "[\n"
                for (i, v) in a.enumerated() {
                    out += pad
                    try v.write(into: &out, indent: indent + 1)
                    out += i + 1 < a.count ? ",\n" : "\n"
                }
                out += String(repeating: "  ", count: indent) + "]"
            }
        case let .object(kv):
            if kv.isEmpty { out += "{}"; return }
            let pad = String(repeating: "  ", count: indent + 1)
            out += "{\n"
            for (i, (k, v)) in kv.enumerated() {
                out += pad
                JSONValue.writeString(k, into: &out)
                out += ": "
                try v.write(into: &out, indent: indent + 1)
                out += i + 1 < kv.count ? ",\n" : "\n"
            }
            out += String(repeating: "  ", count: indent) + "}"
        }
    }

    private static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
            }
        }
        out += "\""
    }

    /// Parses JSON text, keeping object keys in their order. Errors name `source` and the line.
    public static func parse(_ data: Data, source: String) throws -> JSONValue {
        var p = JSONParser(bytes: Array(data), source: source)
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        guard p.pos == p.bytes.count else { throw p.error("unexpected text after the JSON value") }
        return v
    }
}

struct JSONParser {
    let bytes: [UInt8]
    let source: String
    var pos = 0

    init(bytes: [UInt8], source: String) {
        self.bytes = bytes
        self.source = source
    }

    func error(_ what: String) -> TwoScaleError {
        let line = bytes[..<min(pos, bytes.count)].reduce(1) { $0 + ($1 == 10 ? 1 : 0) }
        return TwoScaleError.file(source, line: line, "is not valid JSON: \(what)")
    }

    mutating func skipSpace() {
        while pos < bytes.count, [9, 10, 13, 32].contains(bytes[pos]) { pos += 1 }
    }

    mutating func expect(_ c: UInt8) throws {
        skipSpace()
        guard pos < bytes.count, bytes[pos] == c else { throw error("expected '\(Character(UnicodeScalar(c)))'") }
        pos += 1
    }

    mutating func literal(_ word: String, _ v: JSONValue) throws -> JSONValue {
        let w = Array(word.utf8)
        guard pos + w.count <= bytes.count, Array(bytes[pos..<pos + w.count]) == w else { throw error("unexpected character") }
        pos += w.count
        return v
    }

    mutating func value(depth: Int) throws -> JSONValue {
        guard depth < 512 else { throw error("nested too deeply") }
        skipSpace()
        guard pos < bytes.count else { throw error("unexpected end of file") }
        switch bytes[pos] {
        case UInt8(ascii: "{"):
            pos += 1
            var kv: [(String, JSONValue)] = []
            skipSpace()
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") { pos += 1; return .object(kv) }
            while true {
                skipSpace()
                guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else { throw error("expected a key string") }
                let k = try string()
                try expect(UInt8(ascii: ":"))
                kv.append((k, try value(depth: depth + 1)))
                skipSpace()
                guard pos < bytes.count else { throw error("unterminated object") }
                if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
                if bytes[pos] == UInt8(ascii: "}") { pos += 1; return .object(kv) }
                throw error("expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            pos += 1
            var a: [JSONValue] = []
            skipSpace()
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") { pos += 1; return .array(a) }
            while true {
                a.append(try value(depth: depth + 1))
                skipSpace()
                guard pos < bytes.count else { throw error("unterminated array") }
                if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
                if bytes[pos] == UInt8(ascii: "]") { pos += 1; return .array(a) }
                throw error("expected ',' or ']'")
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default: return try number()
        }
    }

    mutating func number() throws -> JSONValue {
        let start = pos
        while pos < bytes.count, "+-0123456789.eE".utf8.contains(bytes[pos]) { pos += 1 }
        let text = String(decoding: bytes[start..<pos], as: UTF8.self)
        guard !text.isEmpty else { throw error("unexpected character") }
        if !text.contains("."), !text.contains("e"), !text.contains("E") {
            if let i = Int(text) { return .int(i) }
            if let u = UInt64(text) { return .uint(u) }
        }
        guard let d = Double(text), d.isFinite else { throw error("'\(text)' is not a finite number") }
        return .double(d)
    }

    mutating func string() throws -> String {
        pos += 1
        var out = [UInt8]()
        while pos < bytes.count {
            let c = bytes[pos]
            pos += 1
            if c == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
            if c == UInt8(ascii: "\\") {
                guard pos < bytes.count else { break }
                let e = bytes[pos]
                pos += 1
                switch e {
                case UInt8(ascii: "n"): out.append(10)
                case UInt8(ascii: "t"): out.append(9)
                case UInt8(ascii: "r"): out.append(13)
                case UInt8(ascii: "b"): out.append(8)
                case UInt8(ascii: "f"): out.append(12)
                case UInt8(ascii: "u"):
                    guard pos + 4 <= bytes.count, let v = UInt32(String(decoding: bytes[pos..<pos + 4], as: UTF8.self), radix: 16)
                    else { throw error("bad \\u escape") }
                    pos += 4
                    out.append(contentsOf: Array(String(UnicodeScalar(v).map(Character.init) ?? "?").utf8))
                default: out.append(e)
                }
            } else {
                out.append(c)
            }
        }
        throw error("unterminated string")
    }
}
