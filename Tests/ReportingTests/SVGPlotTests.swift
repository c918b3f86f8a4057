import XCTest
import TwoScaleCore
import TwoScaleFormats
@testable import Reporting

final class SVGPlotTests: XCTestCase {
    func samplePlot() -> SVGPlot {
        let x = [0.01, 0.03, 0.1, 0.3]
        return SVGPlot(title: "2sED <vs> ε & \"more\"", xLabel: "ε", yLabel: "dimension", yUnit: "nats",
                       xScale: .log,
                       series: [PlotSeries(label: "d_zeta", x: x, y: [1.8, 1.9, 2.0, 2.4]),
                                PlotSeries(label: "lower", x: x, y: [1.7, 1.8, 1.95, 2.2], style: .lineMarkers),
                                PlotSeries(label: "pts", x: x, y: [1.6, 1.7, 1.9, 2.1], style: .scatter)],
                       bands: [PlotBand(label: "ci95", x: x, lo: [1.75, 1.85, 1.9, 2.3], hi: [1.85, 1.95, 2.1, 2.5])],
                       referenceLines: [ReferenceLine(.horizontal, at: 2, label: "d = 2"), ReferenceLine(.vertical, at: 0.1)])
    }

    func testOutputIsWellFormedSVGWithSeriesAndLegend() throws {
        let svg = try samplePlot().render()
        let (check, error) = XMLCheck.parse(svg)
        let c = try XCTUnwrap(check, "not XML: \(error ?? "")")
        XCTAssertEqual(c.rootAttributes?["xmlns"], "http://www.w3.org/2000/svg")
        XCTAssertEqual(c.rootAttributes?["version"], "1.1")
        XCTAssertEqual(c.classes["series"], 3, "one series element per series")
        XCTAssertEqual(c.classes["legend-entry"], 4, "three series and one band in the legend")
        XCTAssertEqual(c.classes["band"], 1)
        XCTAssertEqual(c.classes["reference-line"], 2)
        XCTAssertTrue(c.texts.contains("2sED <vs> ε & \"more\""), "title text is escaped and round-trips")
        XCTAssertTrue(c.texts.contains("dimension (nats)"), "unit shown with the axis label")
        XCTAssertFalse(svg.contains("nan") || svg.contains("inf"), "no non-finite numbers")
    }

    /// Point labels, error bars and colour-by-command from a directive, end to end.
    func testPointLabelsErrorBarsAndColourByCommand() throws {
        let a = try JSONValue.parse(Data(#"{"points": [{"x": 1, "y": 2, "y_sd": 0.5, "ho": 3, "arch": "4-3-2"}, {"x": 2, "y": 3, "y_sd": 0, "ho": 4, "arch": "4-2-2"}]}"#.utf8), source: "a")
        let b = try JSONValue.parse(Data(#"{"points": [{"x": 1, "y": 1, "y_sd": 0.1, "ho": 2, "arch": "5-2"}]}"#.utf8), source: "b")
        let d = try PlotDirective.parse(words: ["x=x", "y=y,ho", "cmd=1,2", "bycmd", "pointlabels=arch", "yerr=y_sd", "style=markers"], line: 1)
        let p = try PlotBuilder.plot(d, results: [a, b])
        XCTAssertEqual(p.series.count, 4)
        // One colour per command, one dash per y key.
        XCTAssertEqual(p.series[0].color(0), p.series[1].color(1))
        XCTAssertEqual(p.series[2].color(2), p.series[3].color(3))
        XCTAssertNotEqual(p.series[0].color(0), p.series[2].color(2))
        XCTAssertEqual(p.series[0].dash(0), "")
        XCTAssertNotEqual(p.series[1].dash(1), "")
        XCTAssertEqual(p.series[0].pointLabels, ["4-3-2", "4-2-2"])
        let svg = try p.render()
        let c = try XCTUnwrap(XMLCheck.parse(svg).0)
        XCTAssertTrue(c.texts.contains("4-3-2") && c.texts.contains("5-2"))
        // Error bars (yerr applies to every y series of a command): command 1 has y_sd = 0.5 and 0 (no bar
        // for 0), command 2 has 0.1: one bar per series, four series → four groups of one line each.
        let groups = svg.components(separatedBy: "<g class=\"error-bars\"").dropFirst()
        XCTAssertEqual(groups.count, 4)
        for g in groups { XCTAssertEqual(g.components(separatedBy: "</g>")[0].components(separatedBy: "<line ").count - 1, 1) }
    }

    func testRenderingIsDeterministic() throws {
        XCTAssertEqual(try samplePlot().render(), try samplePlot().render())
    }

    func testNonFinitePointsAreDropped() throws {
        let plot = SVGPlot(title: "t", xLabel: "x", yLabel: "y", series: [
            PlotSeries(label: "a", x: [1, 2, .nan, 4, 5], y: [1, .infinity, 3, 4, -.infinity]),
        ], bands: [PlotBand(label: "b", x: [1, 2, 3], lo: [0, .nan, 1], hi: [2, 3, 4])])
        let svg = try plot.render()
        XCTAssertNotNil(XMLCheck.parse(svg).check)
        for bad in ["nan", "NaN", "inf", "Inf"] { XCTAssertFalse(svg.contains(bad), "found \(bad)") }
        // Only (1,1) and (4,4) survive: a path with one move and one line.
        let path = try XCTUnwrap(svg.components(separatedBy: "class=\"series\" d=\"").dropFirst().first?.prefix { $0 != "\"" })
        XCTAssertEqual(path.filter { $0 == "M" }.count, 1)
        XCTAssertEqual(path.filter { $0 == "L" }.count, 1)
    }

    func testNonPositivePointsAreDroppedOnLogAxes() throws {
        let plot = SVGPlot(title: "t", xLabel: "x", yLabel: "y", yScale: .log,
                           series: [PlotSeries(label: "a", x: [1, 2, 3], y: [0, -1, 10])])
        let svg = try plot.render()
        let path = try XCTUnwrap(svg.components(separatedBy: "class=\"series\" d=\"").dropFirst().first?.prefix { $0 != "\"" })
        XCTAssertFalse(path.contains("L"), "only one point is drawable")
    }

    func testEmptyPlotIsRefused() {
        let plot = SVGPlot(title: "empty one", xLabel: "x", yLabel: "y",
                           series: [PlotSeries(label: "a", x: [.nan, 1], y: [1, .infinity])])
        XCTAssertThrowsError(try plot.render()) { e in
            XCTAssertTrue((e as? TwoScaleError)?.message.contains("empty one") ?? false, "\(e)")
        }
        XCTAssertThrowsError(try SVGPlot(title: "none", xLabel: "x", yLabel: "y").render())
    }

    func testLogAxisTicksAreDecades() throws {
        let axis = try AxisLayout.make(scale: .log, dataLo: 3e-4, dataHi: 0.5)
        XCTAssertEqual(axis.lo, 1e-4, accuracy: 1e-18)
        XCTAssertEqual(axis.hi, 1, accuracy: 1e-12)
        XCTAssertEqual(axis.ticks.map(\.exponent), [-4, -3, -2, -1, 0])
        XCTAssertEqual(axis.ticks.map(\.label), ["10^-4", "10^-3", "10^-2", "10^-1", "10^0"])
        for t in axis.ticks { XCTAssertEqual(log10(t.value), Double(t.exponent ?? 99), accuracy: 1e-12) }
        // A wide range labels every k-th decade, at most about 9 labels.
        let wide = try AxisLayout.make(scale: .log, dataLo: 1e-30, dataHi: 1e10)
        XCTAssertLessThanOrEqual(wide.ticks.count, 9)
        XCTAssertTrue(wide.ticks.allSatisfy { $0.exponent != nil })
        // The SVG shows 10 with a raised exponent.
        let svg = try SVGPlot(title: "", xLabel: "x", yLabel: "y", xScale: .log,
                              series: [PlotSeries(label: "a", x: [1e-3, 1e-1], y: [1, 2])]).render()
        XCTAssertTrue(svg.contains("10<tspan dy=\"-6\" font-size=\"9\">\u{2212}3</tspan>"))
    }

    func testNarrowLogAxisAlsoLabels2And5() throws {
        let axis = try AxisLayout.make(scale: .log, dataLo: 1.4, dataHi: 2.9)
        XCTAssertEqual(axis.ticks.map(\.value), [1, 2, 5, 10])
        XCTAssertEqual(axis.ticks.compactMap(\.exponent), [0, 1])
    }

    func testLinearTicksUse125Steps() throws {
        let a = try AxisLayout.make(scale: .linear, dataLo: 0.13, dataHi: 0.87)
        XCTAssertEqual(a.ticks.map(\.label), ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"])
        let b = try AxisLayout.make(scale: .linear, dataLo: 1.83, dataHi: 2.93)
        XCTAssertEqual(b.ticks.map(\.label), ["1.8", "2.0", "2.2", "2.4", "2.6", "2.8", "3.0"])
        let c = try AxisLayout.make(scale: .linear, dataLo: -37, dataHi: 112)
        XCTAssertEqual(c.ticks.map(\.value), [-50, 0, 50, 100, 150])
        let flat = try AxisLayout.make(scale: .linear, dataLo: 5, dataHi: 5)
        XCTAssertLessThan(flat.lo, 5)
        XCTAssertGreaterThan(flat.hi, 5)
    }

    func testHugeRangesDoNotProduceNonFiniteCoordinates() throws {
        let plot = SVGPlot(title: "t", xLabel: "x", yLabel: "y",
                           series: [PlotSeries(label: "a", x: [0, 1], y: [-1.7e308, 1.7e308])])
        XCTAssertThrowsError(try plot.render(), "an axis over the whole double range cannot be laid out")
    }
}
