import ArgumentParser
import Foundation
@testable import TwoScaleCLI
import XCTest

/// docs/FLAGS.md (written by scripts/flags-doc.py from the binary) names exactly the flags each
/// subcommand's `--help` lists: a flag added, renamed or removed without regenerating it fails here.
final class FlagReferenceTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func testEveryFlagOfEveryCommandIsInTheReference() throws {
        let doc = try String(contentsOf: Self.root.appendingPathComponent("docs/FLAGS.md"), encoding: .utf8)
        let sections = doc.components(separatedBy: "\n## `twoscale ").dropFirst()
        var byCommand: [String: String] = [:]
        for s in sections {
            let name = String(s.prefix { $0 != "`" })
            byCommand[name] = s
        }
        XCTAssertEqual(byCommand.count, TwoScaleCommands.all.count, "one section per subcommand")
        for cmd in TwoScaleCommands.all {
            let name = cmd.configuration.commandName ?? "?"
            let help = TwoScaleMain.helpMessage(for: cmd, columns: 400)
            // The flags of the OPTIONS section only (abstracts may mention other commands' flags).
            let options = help.components(separatedBy: "OPTIONS:").dropFirst().joined()
            // A flag with an inversion is listed as `--x/--no-x`: both names.
            let listed = Set(options.split(separator: "\n").flatMap { line -> [String] in
                let t = line.trimmingCharacters(in: .whitespaces)
                guard t.hasPrefix("--") else { return [] }
                return t.prefix { !$0.isWhitespace && $0 != "," && $0 != "<" }.split(separator: "/").map(String.init)
            }).subtracting(["--help", "--version"])
            XCTAssertFalse(listed.isEmpty, "\(name): no options parsed from --help")
            let section = try XCTUnwrap(byCommand[name], "docs/FLAGS.md has no section for \(name); run python3 scripts/flags-doc.py")
            let rows = section.split(separator: "\n").filter { $0.hasPrefix("| `--") }
            // Every name in a row's first cell (an inverted flag's row names both).
            let documented = Set(rows.flatMap { row -> [String] in
                let first = row.dropFirst().prefix { $0 != "|" }
                return first.components(separatedBy: "`--").dropFirst().map { "--" + $0.prefix { $0 != "`" } }
            })
            XCTAssertEqual(documented, listed, "\(name): docs/FLAGS.md differs from --help; run python3 scripts/flags-doc.py")
        }
    }
}
