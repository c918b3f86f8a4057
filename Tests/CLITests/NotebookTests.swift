import XCTest
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import TwoScaleCore
import TwoScaleFormats
@testable import TwoScaleCLI

final class NotebookTests: ScratchDirectoryTestCase {
    override class var scratchTag: String { "notebook" }

    /// Runs `twoscale ARGS` in-process; returns the exit status and captured stdout.
    func run(_ args: [String]) async -> (Int32, String) {
        let cap = OutputCapture()
        let status = await Console.$capture.withValue(cap) { await TwoScaleMain.execute(args) }
        return (status, cap.text)
    }

    func write(_ name: String, _ text: String) throws -> String {
        let path = dir + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static let toyNotebook = """
    # Toy check

    Prose stays *verbatim* | with a pipe.

    ```twoscale plot x=eps y=d_zeta,cover_dimension logx title="2sED vs ε" ylabel="dimension"
    # constant Fisher, exact counts
    twoscale toy --family constant --lambdas 4,0.01 --eps 0.01:0.5:5
    ```

    ```twoscale
    #plot x=eps y=d_zeta cmd=1,2 loglog markers file=compare
    twoscale toy --family bernoulli --dim 2 --box 0.1:0.9 \\
        --eps 0.01:0.5:5
    twoscale toy --family constant --lambdas 4,0.01 --eps 0.1 --zeta 0
    ```
    The end.
    """

    func testEndToEndReport() async throws {
        let nb = try write("toy.txt", Self.toyNotebook)
        let out = dir + "/Reports"
        let (status, stdout) = await run(["notebook", nb, "--out-dir", out, "--json"])
        XCTAssertEqual(status, 0)
        let summary = try JSONValue.parse(Data(stdout.utf8), source: "stdout")
        XCTAssertEqual(summary["report"]?.stringValue, out + "/toy.md")
        XCTAssertEqual(summary["blocks"]?.arrayValue?.count, 2)

        let md = try String(contentsOfFile: out + "/toy.md", encoding: .utf8)
        // Header.
        XCTAssertTrue(md.contains("| twoscale | \(TwoScaleVersion.string) (commit "))
        XCTAssertTrue(md.contains(" UTC |"))
        XCTAssertTrue(md.contains("| machine | "))
        XCTAssertTrue(md.contains("| seeds | none given |"))
        // Prose verbatim, commands shown.
        XCTAssertTrue(md.contains("Prose stays *verbatim* | with a pipe.\n"))
        XCTAssertTrue(md.contains("twoscale toy --family bernoulli --dim 2 --box 0.1:0.9 \\\n    --eps 0.01:0.5:5"))
        XCTAssertTrue(md.contains("The end."))
        // The toy's numbers: exact minimal count 20 at ε = 0.1 with ζ = 0, and 2000 at ε = 0.01.
        let rowAt01 = try XCTUnwrap(md.split(separator: "\n").first { $0.hasPrefix("| 0.1 | 1.41172 |") })
        XCTAssertTrue(rowAt01.contains("| 20 |"), String(rowAt01))
        XCTAssertTrue(md.contains("| 0.01 | 1.83405 | 7.6009 | 2000 |"))
        XCTAssertTrue(md.contains("| `family` | bernoulli |"))
        // Figures: linked relatively and valid XML.
        XCTAssertTrue(md.contains("](toy/block1-plot1.svg)"))
        XCTAssertTrue(md.contains("](toy/compare.svg)"))
        let files = try FileManager.default.contentsOfDirectory(atPath: out + "/toy").sorted()
        XCTAssertEqual(files, ["block1-plot1.svg", "compare.svg"])
        for f in files {
            let svg = try String(contentsOfFile: out + "/toy/" + f, encoding: .utf8)
            let parser = XMLParser(data: Data(svg.utf8))
            XCTAssertTrue(parser.parse(), "\(f) is not XML: \(String(describing: parser.parserError))")
        }
        let compare = try String(contentsOfFile: out + "/toy/compare.svg", encoding: .utf8)
        XCTAssertEqual(compare.components(separatedBy: "class=\"legend-entry\"").count - 1, 2)
        // No temporary folders left behind.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out).sorted(), ["toy", "toy.md"])
    }

    /// `--resume DIR` keeps every finished block; a rerun reuses them (same report, same figures, the
    /// recorded wall times), a changed command is run again, and a block kept by another binary is not
    /// reused.
    func testResumeReusesFinishedBlocks() async throws {
        let nb = try write("toy.txt", Self.toyNotebook)
        let out = dir + "/Reports", keep = dir + "/kept"
        func report() throws -> String {
            // The date line is the only one that changes between runs.
            try String(contentsOfFile: out + "/toy.md", encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("| date |") }
                .joined(separator: "\n")
        }
        let (s1, _) = await run(["notebook", nb, "--out-dir", out, "--resume", keep, "--json"])
        XCTAssertEqual(s1, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: keep + "/block-1.json"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: keep + "/block-2.json"))
        let first = try report()
        let svg = try String(contentsOfFile: out + "/toy/compare.svg", encoding: .utf8)
        // Change a number in block 2's kept results (not in its commands): a reuse shows up in the report.
        let path2 = keep + "/block-2.json"
        let kept = try String(contentsOfFile: path2, encoding: .utf8)
        try kept.replacingOccurrences(of: "\"dimension\": 2,", with: "\"dimension\": 9876,").write(toFile: path2, atomically: true, encoding: .utf8)
        let (s2, _) = await run(["notebook", nb, "--out-dir", out, "--resume", keep])
        XCTAssertEqual(s2, 0)
        XCTAssertTrue(try report().contains("9876"), "block 2 came from the kept file")
        // Restore it: the resumed report is the first one, figures included.
        try kept.write(toFile: path2, atomically: true, encoding: .utf8)
        _ = await run(["notebook", nb, "--out-dir", out, "--resume", keep])
        XCTAssertEqual(try report(), first)
        XCTAssertEqual(try String(contentsOfFile: out + "/toy/compare.svg", encoding: .utf8), svg)
        // Another binary's block is run again (and overwritten).
        try kept.replacingOccurrences(of: "\"dimension\": 2,", with: "\"dimension\": 9876,")
            .replacingOccurrences(of: "\"binary\": \"", with: "\"binary\": \"other ").write(toFile: path2, atomically: true, encoding: .utf8)
        _ = await run(["notebook", nb, "--out-dir", out, "--resume", keep])
        XCTAssertFalse(try report().contains("9876"))
        XCTAssertFalse(try String(contentsOfFile: path2, encoding: .utf8).contains("other "))
        // A changed command is run again.
        let changed = Self.toyNotebook.replacingOccurrences(of: "--eps 0.1 --zeta 0", with: "--eps 0.2 --zeta 0")
        _ = try write("toy.txt", changed)
        try kept.replacingOccurrences(of: "\"dimension\": 2,", with: "\"dimension\": 9876,").write(toFile: path2, atomically: true, encoding: .utf8)
        _ = await run(["notebook", nb, "--out-dir", out, "--resume", keep])
        XCTAssertFalse(try report().contains("9876"))
        XCTAssertTrue(try report().contains("--eps 0.2 --zeta 0"))
    }

    func testFailingBlockLeavesPreviousReportUntouched() async throws {
        let nb = try write("toy.txt", Self.toyNotebook)
        let out = dir + "/Reports"
        let (first, _) = await run(["notebook", nb, "--out-dir", out])
        XCTAssertEqual(first, 0)
        let mdBefore = try Data(contentsOf: URL(fileURLWithPath: out + "/toy.md"))
        let svgBefore = try Data(contentsOf: URL(fileURLWithPath: out + "/toy/compare.svg"))

        // Same name, a failing second block (ε = 2 is outside (0, 1)).
        _ = try write("toy.txt", Self.toyNotebook.replacingOccurrences(of: "--eps 0.1 --zeta 0", with: "--eps 2 --zeta 0"))
        let (status, _) = await run(["notebook", nb, "--out-dir", out])
        XCTAssertNotEqual(status, 0)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out + "/toy.md")), mdBefore)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out + "/toy/compare.svg")), svgBefore)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out).sorted(), ["toy", "toy.md"])
    }

    func testRerunWithoutPlotsRemovesStaleFigures() async throws {
        let nb = try write("toy.txt", Self.toyNotebook)
        let out = dir + "/Reports"
        let (first, _) = await run(["notebook", nb, "--out-dir", out])
        XCTAssertEqual(first, 0)
        _ = try write("toy.txt", "Only a table.\n\n```twoscale\ntwoscale toy --family constant --lambdas 4,0.01 --eps 0.1 --zeta 0\n```\n")
        let (second, _) = await run(["notebook", nb, "--out-dir", out])
        XCTAssertEqual(second, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out), ["toy.md"])
        let md = try String(contentsOfFile: out + "/toy.md", encoding: .utf8)
        XCTAssertFalse(md.contains(".svg"))
        XCTAssertTrue(md.contains("| 0.1 | 1.41172 | 2.99573 | 20 |"))
    }

    func testFailureMessageNamesNotebookBlockAndLine() async throws {
        let nb = try write("bad.txt", "x\n```twoscale\ntwoscale toy --family constant --lambdas 4 --eps 0.1\n```\n```twoscale\ntwoscale toy --family constant\n```\n")
        do {
            _ = try await NotebookCommand.produce(file: nb, outDir: dir + "/Reports")
            XCTFail("expected a failure")
        } catch let e as TwoScaleError {
            XCTAssertTrue(e.message.hasPrefix("\(nb):6: block 2, command 1"), e.message)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/Reports"))
    }

    func testNestedNotebookIsRefused() async throws {
        let nb = try write("nested.txt", "```twoscale\ntwoscale notebook other.txt\n```\n")
        let (status, _) = await run(["notebook", nb, "--out-dir", dir + "/R"])
        XCTAssertNotEqual(status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/R/nested.md"))
        // Also refused at run time if it slipped past the parser.
        let inner = await NotebookCommand.$running.withValue(true) { await TwoScaleMain.execute(["notebook", nb]) }
        XCTAssertEqual(inner, 2)
    }

    func testMissingNotebookFile() async {
        let (status, _) = await run(["notebook", dir + "/nope.txt", "--out-dir", dir + "/R"])
        XCTAssertEqual(status, 1)
    }
}
