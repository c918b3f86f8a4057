import ArgumentParser
import Foundation
@testable import TwoScaleCLI
import XCTest

/// Help a user reads: every argument's help (with the defaults and allowed values ArgumentParser appends)
/// takes at most two lines of a command's `--help` at 80 columns, and `twoscale help ed` fits in 80
/// lines. Details belong in docs/GUIDE.md (and the other docs the help points at), measured results in
/// lab/ESTIMATORS-LOG.md.
final class HelpLengthTests: XCTestCase {
    static let columns = 80
    static let maxLinesPerArgument = 2
    static let maxEdHelpLines = 80
    /// Where ArgumentParser starts an argument's help text (its label column's width).
    static let helpColumn = 26

    /// The help lines of each argument in the ARGUMENTS and OPTIONS sections of `help`: an entry starts
    /// with a line indented by two spaces (its names), its text starts on that line after the names or
    /// on the next line, and continues on the lines indented like it (deeper than two spaces).
    static func argumentHelpLines(_ help: String) -> [(label: String, lines: Int)] {
        let helpColumn = Self.helpColumn
        var entries: [(label: String, lines: Int)] = []
        var inArguments = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let first = line.first, first != " " {
                inArguments = line == "OPTIONS:" || line == "ARGUMENTS:"
                continue
            }
            guard inArguments, !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            let indent = line.prefix { $0 == " " }.count
            if indent == 2 {
                // Names, then the start of the help at the help column where the names leave room (a space
                // before it); longer names put the help on the next line.
                let chars = Array(line)
                let rest = chars.count > helpColumn ? String(chars[helpColumn...]) : ""
                let hasText = chars.count > helpColumn && chars[helpColumn - 1] == " " && !rest.hasPrefix("<")
                let label = hasText ? String(chars[2..<helpColumn]) : String(chars[2...])
                entries.append((label.trimmingCharacters(in: .whitespaces), hasText ? 1 : 0))
            } else if !entries.isEmpty {
                entries[entries.count - 1].lines += 1
            }
        }
        return entries
    }

    func testTheParserCountsHelpLines() {
        let sample = """
        OPTIONS:
          --arch <arch>           One line.
          --data <source>         Two
                                  lines.
          --noise-samples <noise-samples>
                                  Also two
                                  lines.
          --shard <i/n|auto>      Three
                                  lines
                                  here.
          --estimator <estimator> Right after
                                  long names.
          --json                  One.
        """
        let counts = Self.argumentHelpLines(sample)
        XCTAssertEqual(counts.map(\.lines), [1, 2, 2, 3, 2, 1])
        XCTAssertEqual(counts.map(\.label), ["--arch <arch>", "--data <source>", "--noise-samples <noise-samples>",
                                            "--shard <i/n|auto>", "--estimator <estimator>", "--json"])
    }

    func testEveryArgumentsHelpIsAtMostTwoLines() {
        for cmd in TwoScaleCommands.all {
            let name = cmd.configuration.commandName ?? "?"
            let help = TwoScaleMain.helpMessage(for: cmd, columns: Self.columns)
            let entries = Self.argumentHelpLines(help)
            XCTAssertGreaterThan(entries.count, 2, "\(name): no arguments parsed from its help")
            for e in entries where e.lines > Self.maxLinesPerArgument {
                XCTFail("twoscale \(name) \(e.label): its help takes \(e.lines) lines at \(Self.columns) columns "
                    + "(at most \(Self.maxLinesPerArgument)); shorten it and put the detail in docs/GUIDE.md")
            }
        }
    }

    func testHelpEdIsAtMostEightyLines() async {
        let (status, out) = await runCLI(["help", "ed"])
        XCTAssertEqual(status, 0)
        // `twoscale help ed` prints at the terminal's width; piped, that is 80 columns.
        let printed = TwoScaleMain.helpMessage(for: EdCommand.self, columns: Self.columns)
        XCTAssertTrue(out.contains("--island-sweeps"), "help ed printed: \(out.prefix(200))")
        let lines = printed.split(separator: "\n", omittingEmptySubsequences: false).count
        XCTAssertLessThanOrEqual(lines, Self.maxEdHelpLines, "twoscale help ed: \(lines) lines at \(Self.columns) columns")
    }
}
