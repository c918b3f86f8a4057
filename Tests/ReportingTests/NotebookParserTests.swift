import XCTest
import TwoScaleCore
import TwoScaleFormats
@testable import Reporting

final class NotebookParserTests: XCTestCase {
    func parse(_ text: String) throws -> Notebook { try Notebook.parse(text, source: "nb.txt", name: "nb") }

    /// Asserts parsing fails with a message naming `nb.txt:LINE` and containing `fragment`.
    func assertFails(_ text: String, line: Int, _ fragment: String, file: StaticString = #filePath, lineNo: UInt = #line) {
        XCTAssertThrowsError(try parse(text), file: file, line: lineNo) { e in
            let m = (e as? TwoScaleError)?.message ?? "\(e)"
            XCTAssertTrue(m.hasPrefix("nb.txt:\(line): "), "wrong place: \(m)", file: file, line: lineNo)
            XCTAssertTrue(m.contains(fragment), "message lacks '\(fragment)': \(m)", file: file, line: lineNo)
        }
    }

    func testGoodNotebook() throws {
        let nb = try parse("""
        # Title
        Prose line.

        ```bash
        twoscale not-run
        ```

        ```twoscale plot x=eps y=d_zeta,d_zeta_lower band=ci95 logx title="2sED vs ε" ylabel='dimension'
        # a comment
        #plot x=eps y=box_count from=points loglog cmd=1,2 file=counts hline=1,2 style=scatter
        twoscale toy --family constant \\
            --lambdas 4,0.01 --eps "0.01:0.5:5" --seed 7
        twoscale toy --family bernoulli --dim 2 --seed=11
        ```
        After.
        """)
        XCTAssertEqual(nb.items.count, 3)
        guard case let .prose(p) = nb.items[0] else { return XCTFail("prose first") }
        XCTAssertTrue(p.contains("twoscale not-run"), "other fenced blocks stay prose")
        let b = try XCTUnwrap(nb.blocks.first)
        XCTAssertEqual(b.number, 1)
        XCTAssertEqual(b.line, 8)
        XCTAssertEqual(b.commands.count, 2)
        XCTAssertEqual(b.commands[0].line, 11)
        XCTAssertEqual(b.commands[0].arguments, ["toy", "--family", "constant", "--lambdas", "4,0.01", "--eps", "0.01:0.5:5", "--seed", "7"])
        XCTAssertEqual(b.commands[0].jsonArguments(flag: "--json").last, "--json")
        XCTAssertEqual(b.commands[1].line, 13)
        XCTAssertEqual(nb.seeds(flag: "--seed"), ["7", "11"])
        XCTAssertEqual(b.plots.count, 2)
        let p1 = b.plots[0]
        XCTAssertEqual(p1.line, 8)
        XCTAssertEqual(p1.x, "eps")
        XCTAssertEqual(p1.y, ["d_zeta", "d_zeta_lower"])
        XCTAssertEqual(p1.band, .pair("ci95"))
        XCTAssertEqual(p1.xScale, .log)
        XCTAssertEqual(p1.yScale, .linear)
        XCTAssertEqual(p1.title, "2sED vs ε")
        XCTAssertEqual(p1.yLabel, "dimension")
        XCTAssertNil(p1.commands)
        let p2 = b.plots[1]
        XCTAssertEqual(p2.line, 10)
        XCTAssertEqual(p2.commands, [1, 2])
        XCTAssertEqual(p2.file, "counts")
        XCTAssertEqual(p2.hLines, [1, 2])
        XCTAssertEqual(p2.style, .scatter)
        XCTAssertEqual(p2.yScale, .log)
        XCTAssertFalse(b.displayLines.contains { $0.contains("#plot") }, "#plot lines are not shown")
        XCTAssertTrue(b.displayLines.contains("# a comment"))
        guard case let .prose(after) = nb.items[2] else { return XCTFail("prose last") }
        XCTAssertEqual(after, "After.")
    }

    func testBandWithTwoKeysAndTildeFences() throws {
        let nb = try parse("~~~~twoscale plot x=n y=gap_mean band=gap_lo:gap_hi\ntwoscale gap --n 10\n~~~~\n")
        XCTAssertEqual(nb.blocks.first?.plots.first?.band, .keys("gap_lo", "gap_hi"))
    }

    func testUnterminatedBlock() {
        assertFails("text\n```twoscale\ntwoscale toy --lambdas 1\n", line: 2, "never closed")
    }

    func testUnknownDirective() {
        assertFails("```twoscale chart x=eps\ntwoscale toy\n```", line: 1, "unknown directive 'chart'")
        assertFails("```twoscale plot x=eps y=d colour=red\ntwoscale toy\n```", line: 1, "unknown plot setting 'colour'")
        assertFails("```twoscale\n\n#plot x=eps y=d fancy\ntwoscale toy\n```", line: 3, "unknown plot option 'fancy'")
        assertFails("```twoscale\n#plot y=d\ntwoscale toy\n```", line: 2, "needs x=KEY")
        assertFails("```twoscale\n#plot x=e y=d cmd=3\ntwoscale toy\n```", line: 2, "cmd=3")
    }

    func testCommandLineNotStartingWithTwoscale() {
        assertFails("prose\n```twoscale\ntwoscale toy\npython run.py\n```", line: 4, "'python…' is not a twoscale command")
        assertFails("```twoscale\n./twoscale toy\n```", line: 2, "not a twoscale command")
    }

    func testBadQuoting() {
        assertFails("```twoscale plot x=eps y=d title=\"open\ntwoscale toy\n```", line: 1, "unterminated \" quote")
        assertFails("```twoscale\ntwoscale toy \\\n  --box 'a:b\n```", line: 3, "unterminated ' quote")
    }

    func testContinuationAndShellOperators() {
        assertFails("```twoscale\ntwoscale toy \\\n```", line: 2, "past the end of the block")
        assertFails("```twoscale\ntwoscale toy \\\n\n--eps 0.1\n```", line: 3, "cannot follow")
        assertFails("```twoscale\ntwoscale toy --json > out.json\n```", line: 2, "shell operator")
    }

    func testNestedNotebookAndEmptyBlocks() {
        assertFails("a\nb\n```twoscale\ntwoscale notebook other.txt\n```", line: 4, "nested notebooks")
        assertFails("```twoscale\n# only a comment\n```", line: 1, "has no command")
        assertFails("```twoscale\ntwoscale\n```", line: 2, "needs a command")
    }

    func testPlotBuilderErrorsNameKeys() throws {
        let result = try JSONValue.parse(Data(#"{"points": [{"eps": 0.1, "d_zeta": 1}], "blocks": [{"layer": 1}]}"#.utf8), source: "t")
        let d = try PlotDirective.parse(words: ["x=eps", "y=d_zet"], line: 3)
        XCTAssertThrowsError(try PlotBuilder.plot(d, results: [result])) { e in
            XCTAssertTrue((e as? PlotDirective.Problem)?.message.contains("keys there: eps, d_zeta") ?? false, "\(e)")
        }
        let d2 = try PlotDirective.parse(words: ["x=eps", "y=d_zeta", "from=epochs"], line: 3)
        XCTAssertThrowsError(try PlotBuilder.plot(d2, results: [result])) { e in
            XCTAssertTrue((e as? PlotDirective.Problem)?.message.contains("its arrays: points, blocks") ?? false, "\(e)")
        }
        let ok = try PlotBuilder.plot(PlotDirective.parse(words: ["x=eps", "y=d_zeta"], line: 1), results: [result])
        XCTAssertEqual(ok.series.count, 1)
        XCTAssertEqual(ok.series[0].y, [1])
    }

    func testPlotLabelsNameSeriesInOrder() throws {
        let r1 = try JSONValue.parse(Data(#"{"points": [{"eps": 0.1, "a": 1, "b": 2}]}"#.utf8), source: "t")
        let r2 = try JSONValue.parse(Data(#"{"points": [{"eps": 0.1, "a": 3, "b": 4}]}"#.utf8), source: "t")
        let d = try PlotDirective.parse(words: ["x=eps", "y=a,b", "cmd=1,2", "labels=A1;B1;A2;B2"], line: 1)
        let p = try PlotBuilder.plot(d, results: [r1, r2])
        XCTAssertEqual(p.series.map(\.label), ["A1", "B1", "A2", "B2"])
        XCTAssertEqual(p.series.map(\.y), [[1], [2], [3], [4]])
        let bad = try PlotDirective.parse(words: ["x=eps", "y=a", "labels=only;two;three"], line: 1)
        XCTAssertThrowsError(try PlotBuilder.plot(bad, results: [r1]))
    }
}
