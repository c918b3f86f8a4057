import Foundation
@testable import TwoScaleCLI
import TwoScaleFormats
import XCTest

/// docs/COMMANDS.md (its key lists written by scripts/commands-doc.py from the binary) lists exactly the
/// JSON keys that its tiny command lines produce: a key added, renamed or removed without regenerating
/// the reference fails here. The command lines are read back from the document itself, so the test
/// checks what the reader sees.
final class CommandReferenceTests: ScratchDirectoryTestCase {
    override class var scratchTag: String { "commands-doc" }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// One generated block: `<!-- keys: NAME -->` … `<!-- end keys -->`.
    struct Block {
        var name: String
        var setup: [String] = []
        var command = ""
        var keys: Set<String> = []
    }

    static func blocks(_ doc: String) -> [Block] {
        var out: [Block] = []
        var current: Block?
        for line in doc.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("<!-- keys: "), line.hasSuffix(" -->") {
                current = Block(name: String(line.dropFirst("<!-- keys: ".count).dropLast(" -->".count)))
            } else if line == "<!-- end keys -->", let b = current {
                out.append(b)
                current = nil
            } else if current != nil {
                let ticks = backticked(line)
                if line.hasPrefix("After `twoscale "), let c = ticks.first {
                    current!.setup.append(c)
                } else if line.hasPrefix("`twoscale "), let c = ticks.first {
                    current!.command = c
                } else if line.hasPrefix("* ") {
                    current!.keys.formUnion(ticks)
                }
            }
        }
        return out
    }

    /// The texts between pairs of backticks.
    static func backticked(_ line: String) -> [String] {
        let parts = line.components(separatedBy: "`")
        return stride(from: 1, to: parts.count, by: 2).map { parts[$0] }
    }

    /// Every key path of a JSON value: `points[].d_zeta` (as scripts/commands-doc.py writes them).
    static func keyPaths(_ v: JSONValue, _ prefix: String = "") -> Set<String> {
        switch v {
        case let .object(kv):
            var out: Set<String> = []
            for (k, child) in kv {
                let p = prefix.isEmpty ? k : prefix + "." + k
                out.insert(p)
                out.formUnion(keyPaths(child, p))
            }
            return out
        case let .array(a):
            return a.reduce(into: Set<String>()) { $0.formUnion(keyPaths($1, prefix + "[]")) }
        default:
            return []
        }
    }

    /// A documented command line as arguments: `twoscale` dropped, `$D` the scratch folder, a path of the
    /// repository made absolute (the tests do not run in the package's folder).
    func arguments(_ line: String, scratch: String) -> [String] {
        let args = line.split(separator: " ").dropFirst().map { word in
            let w = String(word).replacingOccurrences(of: "$D", with: scratch)
            if !w.hasPrefix("-"), w.contains("/"), !w.hasPrefix("/"),
               FileManager.default.fileExists(atPath: Self.root.appendingPathComponent(w).path) {
                return Self.root.appendingPathComponent(w).path
            }
            return w
        }
        return args.contains("--json") ? args : args + ["--json"]
    }

    func testEveryCommandsJSONKeysAreInTheReference() async throws {
        let doc = try String(contentsOf: Self.root.appendingPathComponent("docs/COMMANDS.md"), encoding: .utf8)
        let blocks = Self.blocks(doc)
        let hint = "; run python3 scripts/commands-doc.py (after swift build) to regenerate docs/COMMANDS.md"
        let documented = Set(blocks.map { String($0.name.prefix { $0 != " " }) })
        for cmd in TwoScaleCommands.all {
            let name = cmd.configuration.commandName ?? "?"
            XCTAssertTrue(documented.contains(name), "docs/COMMANDS.md has no key list for \(name)" + hint)
        }
        for (i, b) in blocks.enumerated() {
            let scratch = dir + "/block\(i)"
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            XCTAssertTrue(b.command.hasPrefix("twoscale "), "\(b.name): no command line in its block" + hint)
            XCTAssertFalse(b.keys.isEmpty, "\(b.name): no keys listed" + hint)
            for s in b.setup {
                let (status, _) = await runCLI(arguments(s, scratch: scratch))
                XCTAssertEqual(status, 0, "\(b.name): setup `\(s)` failed")
            }
            let json = try await runJSON(arguments(b.command, scratch: scratch))
            let actual = Self.keyPaths(json)
            XCTAssertEqual(b.keys.subtracting(actual).sorted(), [], "\(b.name): keys listed but not written" + hint)
            XCTAssertEqual(actual.subtracting(b.keys).sorted(), [], "\(b.name): keys written but not listed" + hint)
        }
    }
}
