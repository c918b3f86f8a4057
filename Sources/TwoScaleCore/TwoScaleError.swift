import Foundation

/// The one error type users see. `usage` errors (bad flags, values out of range) exit with status 2,
/// `failure`s (unreadable files, numerical breakdowns) with status 1. The message names what was wrong
/// and what is allowed; it is printed as is, one line, on stderr.
public struct TwoScaleError: Error, CustomStringConvertible, Equatable, Sendable {
    public enum Kind: Sendable, Equatable { case usage, failure }
    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
    public var exitCode: Int32 { kind == .usage ? 2 : 1 }

    /// A value given for `name` (a flag like `--eps`, or a parameter) is not allowed.
    public static func invalid(_ name: String, _ value: String, allowed: String) -> TwoScaleError {
        TwoScaleError(.usage, "\(name): '\(value)' is not allowed; \(allowed)")
    }

    /// A required flag (or a flag another one needs) was not given.
    public static func missing(_ name: String, _ needed: String) -> TwoScaleError {
        TwoScaleError(.usage, "\(name) is missing; \(needed)")
    }

    public static func usage(_ message: String) -> TwoScaleError { TwoScaleError(.usage, message) }
    public static func failure(_ message: String) -> TwoScaleError { TwoScaleError(.failure, message) }

    /// A well-formed file that does not fit the flags it was given with (a weights file for another
    /// architecture): a usage error (status 2), said about the file.
    public static func mismatch(_ path: String, _ message: String) -> TwoScaleError {
        TwoScaleError(.usage, "\(path): \(message)")
    }

    /// A problem in a file, with the line (or byte offset) where it has one.
    public static func file(_ path: String, line: Int? = nil, _ message: String) -> TwoScaleError {
        let place = line.map { "\(path):\($0)" } ?? path
        return TwoScaleError(.failure, "\(place): \(message)")
    }
}
