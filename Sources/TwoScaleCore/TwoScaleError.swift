import Foundation

/// The one error type users see. `usage` errors (bad flags, values out of range) exit with status 2,
/// `failure`s (unreadable files, numerical breakdowns) with status 1. The message names what was wrong
/// and what is allowed; it is printed as is, one line, on stderr.
public struct TwoScaleError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Kind: Sendable, Equatable { case usage, failure }
    public let kind: Kind
    /// What the error is about, when it is one thing: the setting (a `Setting` marker, which the command line
    /// renders as its flag) of an invalid or missing value, or the file of a file error. The message starts with it.
    public let subject: String?
    /// The message after the subject.
    let rest: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        subject = nil
        rest = message
    }

    init(_ kind: Kind, subject: String, rest: String) {
        self.kind = kind
        self.subject = subject
        self.rest = rest
    }

    public var message: String { (subject ?? "") + rest }
    public var description: String { message }
    public var exitCode: Int32 { kind == .usage ? 2 : 1 }

    /// The same error said about another name: a subject `old` (or, for files, a path under the folder
    /// `old`) becomes `new`. A caller that exposes a setting under another flag (the teacher's flag for an
    /// architecture) or writes through a staging folder names what the user typed this way.
    public func renaming(_ old: String, to new: String) -> TwoScaleError {
        guard let s = subject else { return self }
        if s == old { return TwoScaleError(kind, subject: new, rest: rest) }
        if s.hasPrefix(old + "/") { return TwoScaleError(kind, subject: new + s.dropFirst(old.count), rest: rest) }
        return self
    }

    /// The same error with `context` before its message (a block, a layer). The message no longer starts
    /// with the subject, so the result has none (rename first, then prefix).
    public func prefixed(_ context: String) -> TwoScaleError {
        TwoScaleError(kind, context + message)
    }

    /// A value given for `name` (a `Setting`, or a parameter) is not allowed.
    public static func invalid(_ name: String, _ value: String, allowed: String) -> TwoScaleError {
        TwoScaleError(.usage, subject: name, rest: ": '\(value)' is not allowed; \(allowed)")
    }

    /// A required flag (or a flag another one needs) was not given.
    public static func missing(_ name: String, _ needed: String) -> TwoScaleError {
        TwoScaleError(.usage, subject: name, rest: " is missing; \(needed)")
    }

    public static func usage(_ message: String) -> TwoScaleError { TwoScaleError(.usage, message) }
    public static func failure(_ message: String) -> TwoScaleError { TwoScaleError(.failure, message) }

    /// A well-formed file that does not fit the flags it was given with (a weights file for another
    /// architecture): a usage error (status 2), said about the file.
    public static func mismatch(_ path: String, _ message: String) -> TwoScaleError {
        TwoScaleError(.usage, subject: path, rest: ": \(message)")
    }

    /// A problem in a file, with the line (or byte offset) where it has one.
    public static func file(_ path: String, line: Int? = nil, _ message: String) -> TwoScaleError {
        TwoScaleError(.failure, subject: path, rest: (line.map { ":\($0)" } ?? "") + ": \(message)")
    }
}
