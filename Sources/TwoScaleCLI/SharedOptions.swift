import Experiments
import ArgumentParser
import Foundation
import TwoScaleCore
import Training
import TwoScaleFormats

/// `--eps` and `--zeta`, shared by every command that evaluates the 2sED.
struct ScaleOptions: ParsableArguments {
    @Option(name: .customLong("eps"), help: ArgumentHelp(
        "Covering radius ε ∈ (0,1): a value, a list a,b,c or a log grid lo:hi:n.", valueName: "grid"))
    var epsText: String = "1e-3:0.5:30"

    @Option(name: .customLong("zeta"), help: "Meso-scale exponent ζ ∈ [0,1) (the bound needs ζ ≥ 2/3).")
    var zeta: Double = 2.0 / 3.0

    /// The validated ε grid.
    func eps() throws -> [Double] {
        let g = try Grid.parse(epsText, flag: "--eps")
        for e in g { try ScaleParameters.checkEpsilon(e) }
        return g
    }

    func checkedZeta() throws -> Double {
        try ScaleParameters.checkZeta(zeta)
        return zeta
    }
}

/// File and folder flags: an empty (or blank) name is refused with the flag named, before any file
/// is touched (the file system's own message for "" names nothing).
enum PathFlags {
    static func check(_ value: String?, flag: String, what: String = "a file or folder name") throws {
        guard let v = value else { return }
        if v.trimmingCharacters(in: .whitespaces).isEmpty {
            throw TwoScaleError.invalid(flag, v, allowed: "give \(what)")
        }
    }
}

/// `--json`.
struct OutputOptions: ParsableArguments {
    @Flag(name: .customLong("json"), help: "Print JSON (keys: docs/COMMANDS.md), not a summary.")
    var json = false

    @Flag(help: "No progress bars or lines on stderr (warnings stay).")
    var quiet = false

    /// Whether the parsed `command` was given `--quiet` (every command has this option group).
    static func quiet(_ command: ParsableCommand) -> Bool {
        Mirror(reflecting: command).children.contains { ($0.value as? OptionGroup<OutputOptions>)?.wrappedValue.quiet == true }
    }

    /// Prints a typed result: its JSON (keys in declaration order, then `extra`'s) with --json, else `human()`. Under a
    /// notebook the JSON tree goes to `Console.results` instead of being printed. Every printed object
    /// starts with `schema_version` and `twoscale_version` (`JSONContract`); a notebook's report records the
    /// version once, in its header, so its trees are not stamped.
    func emit<T: Encodable>(_ value: T, extra: [(String, JSONValue)] = [], human: () -> String) throws {
        guard json else { return Console.out(human()) }
        var tree = FlagSpelling.render(try JSONValue(encoding: value))
        if case let .object(pairs) = tree, !extra.isEmpty { tree = .object(pairs + extra) }
        if let sink = Console.results {
            sink.append(try tree.asWritten())
        } else {
            Console.out(try JSONContract.stamped(tree).serialized())
        }
    }
}

extension Normalization: ExpressibleByArgument {}
extension GapLoss: ExpressibleByArgument {}
extension GapDimensionSource: ExpressibleByArgument {}

/// Fixed-width number formatting for readable tables.
enum Fmt {
    static func num(_ x: Double?, _ digits: Int = 6) -> String { NumberText.format(x, digits: digits) }

    /// A plain-text table with right-aligned columns.
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        var w = header.map { $0.count }
        for r in rows { for (i, c) in r.enumerated() where i < w.count { w[i] = Swift.max(w[i], c.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in String(repeating: " ", count: w[i] - c.count) + c }.joined(separator: "  ")
        }
        var out = line(header) + "\n" + line(w.map { String(repeating: "-", count: $0) }) + "\n"
        for r in rows { out += line(r) + "\n" }
        return out
    }
}

/// What a script may rely on in every `--json` output: its first two keys. `schema_version` rises when a
/// key is renamed or removed or changes meaning (added keys do not raise it); `twoscale_version` is the
/// tool's. Exit statuses: docs/COMMANDS.md, "For scripts".
public enum JSONContract {
    public static let schemaVersion = 1

    public static func stamped(_ tree: JSONValue) -> JSONValue {
        guard case let .object(pairs) = tree else { return tree }
        return .object([("schema_version", .int(schemaVersion)), ("twoscale_version", .string(TwoScaleVersion.string))]
                       + pairs.filter { $0.0 != "schema_version" && $0.0 != "twoscale_version" })
    }
}
