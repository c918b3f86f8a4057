import XCTest
import TwoScaleCore
import TwoScaleFormats
@testable import Reporting

final class MarkdownTableTests: XCTestCase {
    func testRendersHeaderDelimiterAndRows() {
        let t = MarkdownTable(header: ["a", "b"], rows: [["1", "x"], ["2"]], alignments: [.right])
        XCTAssertEqual(t.render(), "| a | b |\n| ---: | --- |\n| 1 | x |\n| 2 |  |\n")
    }

    func testEscapesPipesAndNewlines() {
        let t = MarkdownTable(header: ["a|b"], rows: [["x | y\nz"]])
        XCTAssertEqual(t.render(), "| a\\|b |\n| --- |\n| x \\| y z |\n")
    }

    func testNumberFormatting() {
        XCTAssertEqual(ReportNumber.format(20), "20")
        XCTAssertEqual(ReportNumber.format(0), "0")
        XCTAssertEqual(ReportNumber.format(1.41171695560298), "1.41172")
        XCTAssertEqual(ReportNumber.format(0.026591479484724956), "0.0265915")
        XCTAssertEqual(ReportNumber.format(1.5694006823349591e-10), "1.5694e-10")
        XCTAssertEqual(ReportNumber.format(2.5e12), "2.5e12")
        XCTAssertEqual(ReportNumber.format(-3.25), "-3.25")
        XCTAssertEqual(ReportNumber.format(.nan), "nan")
    }

    func testResultRendererTables() throws {
        let json = try JSONValue.parse(Data("""
        {"dimension": 2, "name": "a|b", "box": [0, 1], "settings": {"paths": 10},
         "eigen": [1, 2, 3, 4, 5, 6],
         "points": [{"eps": 0.1, "d_zeta": 1.5, "ci95": [1.2, 1.8], "nested": {"a": 1}},
                    {"eps": 0.2, "d_zeta": null, "ci95": [1.3, 1.9]}]}
        """.utf8), source: "test")
        let md = ResultRenderer.markdown(json)
        XCTAssertTrue(md.contains("| `dimension` | 2 |"))
        XCTAssertTrue(md.contains("| `name` | a\\|b |"))
        XCTAssertTrue(md.contains("| `box` | [0, 1] |"))
        XCTAssertTrue(md.contains("| `settings.paths` | 10 |"))
        XCTAssertTrue(md.contains("| `eigen` | 6 values, 1…6 |"))
        XCTAssertTrue(md.contains("**points** (2 rows)"))
        XCTAssertTrue(md.contains("| eps | d_zeta | ci95 |"), md)
        XCTAssertTrue(md.contains("| 0.1 | 1.5 | [1.2, 1.8] |"))
        XCTAssertTrue(md.contains("| 0.2 | — | [1.3, 1.9] |"))
        XCTAssertTrue(md.contains("Nested values not shown: `nested`"))
    }
}
