import Foundation
import TwoScaleCore

/// Draws an `SVGPlot`: drops unusable points, lays out the axes, then writes the SVG elements.
/// Element classes (`series`, `band`, `legend-entry`, `reference-line`, `tick`) make the output
/// easy to inspect and test.
struct SVGRenderer {
    let plot: SVGPlot

    /// A point list after dropping non-finite (and, on log axes, non-positive) coordinates.
    typealias Points = [(x: Double, y: Double)]

    private func usable(_ v: Double, _ scale: AxisScale) -> Bool {
        v.isFinite && (scale == .linear || v > 0)
    }

    private func cleanSeries(_ s: PlotSeries) -> Points {
        zip(s.x, s.y).filter { usable($0.0, plot.xScale) && usable($0.1, plot.yScale) }.map { (x: $0.0, y: $0.1) }
    }

    private func cleanBand(_ b: PlotBand) -> [(x: Double, lo: Double, hi: Double)] {
        let n = min(b.x.count, b.lo.count, b.hi.count)
        var pts: [(x: Double, lo: Double, hi: Double)] = []
        for i in 0..<n where usable(b.x[i], plot.xScale) && usable(b.lo[i], plot.yScale) && usable(b.hi[i], plot.yScale) {
            pts.append((x: b.x[i], lo: Swift.min(b.lo[i], b.hi[i]), hi: Swift.max(b.lo[i], b.hi[i])))
        }
        // Stable sort by x so the polygon outline does not cross itself.
        return pts.enumerated().sorted { $0.element.x != $1.element.x ? $0.element.x < $1.element.x : $0.offset < $1.offset }
            .map(\.element)
    }

    func render() throws -> String {
        let series = plot.series.map(cleanSeries)
        guard series.contains(where: { !$0.isEmpty }) else {
            throw TwoScaleError.failure("plot '\(plot.title)': nothing to draw — every point is missing, not finite"
                + (plot.xScale == .log || plot.yScale == .log ? " or not positive on a log axis" : "")
                + " (\(plot.series.count) series given)")
        }
        let bands = plot.bands.map(cleanBand)
        let refs = plot.referenceLines.filter { usable($0.value, $0.orientation == .horizontal ? plot.yScale : plot.xScale) }

        var xs = series.flatMap { $0.map(\.x) } + bands.flatMap { $0.map(\.x) }
        var ys = series.flatMap { $0.map(\.y) } + bands.flatMap { $0.flatMap { [$0.lo, $0.hi] } }
        // Error bars widen the axes so that no bar is cut off.
        for s in plot.series {
            for k in 0..<Swift.min(s.x.count, s.y.count) where usable(s.x[k], plot.xScale) && usable(s.y[k], plot.yScale) {
                if let e = s.yErr, k < e.count, e[k].isFinite, e[k] > 0 {
                    ys.append(s.y[k] + e[k])
                    if usable(s.y[k] - e[k], plot.yScale) { ys.append(s.y[k] - e[k]) }
                }
                if let e = s.xErr, k < e.count, e[k].isFinite, e[k] > 0 {
                    xs.append(s.x[k] + e[k])
                    if usable(s.x[k] - e[k], plot.xScale) { xs.append(s.x[k] - e[k]) }
                }
            }
        }
        xs += refs.filter { $0.orientation == .vertical }.map(\.value)
        ys += refs.filter { $0.orientation == .horizontal }.map(\.value)
        // xs and ys are non-empty: at least one series has a point.
        let xAxis = try AxisLayout.make(scale: plot.xScale, dataLo: xs.min() ?? 0, dataHi: xs.max() ?? 1)
        let yAxis = try AxisLayout.make(scale: plot.yScale, dataLo: ys.min() ?? 0, dataHi: ys.max() ?? 1)

        // Legend entries: series, then bands.
        var legend: [(label: String, kind: LegendKind, index: Int)] = []
        for (i, s) in plot.series.enumerated() { legend.append((Self.short(s.label), .series(s.style), i)) }
        for b in plot.bands { legend.append((Self.short(b.label), .band, b.seriesIndex)) }
        let longest = legend.map { Double($0.label.count) }.max() ?? 0
        let legendWidth = legend.isEmpty ? 0 : Swift.min(260, 46 + longest * 6.6)

        let W = plot.width, H = plot.height
        let left = 78.0, top = plot.title.isEmpty ? 20.0 : 40.0, bottom = 56.0, right = 20 + legendWidth
        let x0 = left, x1 = Swift.max(left + 100, W - right), y0 = top, y1 = Swift.max(top + 100, H - bottom)
        func px(_ v: Double) -> Double { x0 + xAxis.fraction(v) * (x1 - x0) }
        func py(_ v: Double) -> Double { y1 - yAxis.fraction(v) * (y1 - y0) }
        let c = ReportNumber.coordinate

        var out = """
        <?xml version="1.0" encoding="UTF-8" standalone="no"?>
        <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(c(W))" height="\(c(H))" \
        viewBox="0 0 \(c(W)) \(c(H))" font-family="Helvetica, Arial, sans-serif" font-size="12">

        """
        out += "<title>\(XMLText.escape(plot.title.isEmpty ? "plot" : plot.title))</title>\n"
        out += "<rect x=\"0\" y=\"0\" width=\"\(c(W))\" height=\"\(c(H))\" fill=\"#ffffff\"/>\n"
        out += "<defs><clipPath id=\"plot-area\"><rect x=\"\(c(x0))\" y=\"\(c(y0))\" width=\"\(c(x1 - x0))\" height=\"\(c(y1 - y0))\"/></clipPath></defs>\n"

        // Grid lines at the major ticks.
        out += "<g class=\"grid\" stroke=\"#e3e3e3\" stroke-width=\"1\">\n"
        for t in xAxis.ticks { out += "<line x1=\"\(c(px(t.value)))\" y1=\"\(c(y0))\" x2=\"\(c(px(t.value)))\" y2=\"\(c(y1))\"/>\n" }
        for t in yAxis.ticks { out += "<line x1=\"\(c(x0))\" y1=\"\(c(py(t.value)))\" x2=\"\(c(x1))\" y2=\"\(c(py(t.value)))\"/>\n" }
        out += "</g>\n"

        // Error bands.
        out += "<g class=\"bands\" clip-path=\"url(#plot-area)\">\n"
        for (bi, b) in bands.enumerated() where !b.isEmpty {
            let outline = b.map { "\(c(px($0.x))),\(c(py($0.lo)))" } + b.reversed().map { "\(c(px($0.x))),\(c(py($0.hi)))" }
            out += "<polygon class=\"band\" points=\"\(outline.joined(separator: " "))\" fill=\"\(seriesColor(plot.bands[bi].seriesIndex))\" fill-opacity=\"0.2\" stroke=\"none\"/>\n"
        }
        out += "</g>\n"

        // Reference lines.
        out += "<g class=\"reference-lines\" stroke=\"#555555\" stroke-width=\"1\" stroke-dasharray=\"5 4\">\n"
        for r in refs {
            if r.orientation == .horizontal {
                let y = c(py(r.value))
                out += "<line class=\"reference-line\" x1=\"\(c(x0))\" y1=\"\(y)\" x2=\"\(c(x1))\" y2=\"\(y)\"/>\n"
            } else {
                let x = c(px(r.value))
                out += "<line class=\"reference-line\" x1=\"\(x)\" y1=\"\(c(y0))\" x2=\"\(x)\" y2=\"\(c(y1))\"/>\n"
            }
        }
        out += "</g>\n"
        for r in refs {
            guard let label = r.label, !label.isEmpty else { continue }
            let (tx, ty) = r.orientation == .horizontal ? (x1 - 4, py(r.value) - 4) : (px(r.value) + 4, y0 + 12)
            let anchor = r.orientation == .horizontal ? "end" : "start"
            out += "<text x=\"\(c(tx))\" y=\"\(c(ty))\" text-anchor=\"\(anchor)\" fill=\"#555555\" font-size=\"11\">\(XMLText.escape(label))</text>\n"
        }

        // Series.
        out += "<g class=\"data\" clip-path=\"url(#plot-area)\">\n"
        for (i, pts) in series.enumerated() {
            let s = plot.series[i]
            let color = s.color(i), dash = s.dash(i)
            let dashAttr = dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\""
            // Error bars (drawn under the markers), from the raw arrays so indices match the labels.
            if s.yErr != nil || s.xErr != nil {
                out += "<g class=\"error-bars\" stroke=\"\(color)\" stroke-width=\"1\">\n"
                for k in 0..<Swift.min(s.x.count, s.y.count) where usable(s.x[k], plot.xScale) && usable(s.y[k], plot.yScale) {
                    let x = s.x[k], y = s.y[k]
                    if let e = s.yErr, k < e.count, e[k].isFinite, e[k] > 0 {
                        let lo = usable(y - e[k], plot.yScale) ? y - e[k] : y
                        out += "<line x1=\"\(c(px(x)))\" y1=\"\(c(py(lo)))\" x2=\"\(c(px(x)))\" y2=\"\(c(py(y + e[k])))\"/>\n"
                    }
                    if let e = s.xErr, k < e.count, e[k].isFinite, e[k] > 0 {
                        let lo = usable(x - e[k], plot.xScale) ? x - e[k] : x
                        out += "<line x1=\"\(c(px(lo)))\" y1=\"\(c(py(y)))\" x2=\"\(c(px(x + e[k])))\" y2=\"\(c(py(y)))\"/>\n"
                    }
                }
                out += "</g>\n"
            }
            if s.style != .scatter {
                let d = pts.enumerated().map { k, p in (k == 0 ? "M" : "L") + "\(c(px(p.x))),\(c(py(p.y)))" }.joined(separator: " ")
                out += "<path class=\"series\" d=\"\(d)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" stroke-linejoin=\"round\"\(dashAttr)/>\n"
            }
            // A lone point on a line series gets a marker, or it would be invisible.
            if s.style != .line || pts.count == 1 {
                out += "<g class=\"\(s.style == .scatter ? "series" : "markers")\" fill=\"\(color)\">\n"
                for p in pts { out += "<circle cx=\"\(c(px(p.x)))\" cy=\"\(c(py(p.y)))\" r=\"3\"/>\n" }
                out += "</g>\n"
            }
            if let labels = s.pointLabels {
                out += "<g class=\"point-labels\" fill=\"#333333\" font-size=\"10\">\n"
                for k in 0..<Swift.min(s.x.count, s.y.count, labels.count)
                where usable(s.x[k], plot.xScale) && usable(s.y[k], plot.yScale) && !labels[k].isEmpty {
                    // Labels of points in the right third of the plot go to their left, so they stay inside.
                    let right = px(s.x[k]) > x0 + 2 * (x1 - x0) / 3
                    out += "<text x=\"\(c(px(s.x[k]) + (right ? -5 : 5)))\" y=\"\(c(py(s.y[k]) - 5))\"\(right ? " text-anchor=\"end\"" : "")>\(XMLText.escape(labels[k]))</text>\n"
                }
                out += "</g>\n"
            }
        }
        out += "</g>\n"

        // Axes: frame, ticks and labels.
        out += "<g class=\"axes\" stroke=\"#333333\" stroke-width=\"1\" fill=\"none\">\n"
        out += "<rect x=\"\(c(x0))\" y=\"\(c(y0))\" width=\"\(c(x1 - x0))\" height=\"\(c(y1 - y0))\"/>\n"
        for t in xAxis.ticks { out += "<line class=\"tick\" x1=\"\(c(px(t.value)))\" y1=\"\(c(y1))\" x2=\"\(c(px(t.value)))\" y2=\"\(c(y1 + 5))\"/>\n" }
        for v in xAxis.minorTicks { out += "<line x1=\"\(c(px(v)))\" y1=\"\(c(y1))\" x2=\"\(c(px(v)))\" y2=\"\(c(y1 + 3))\"/>\n" }
        for t in yAxis.ticks { out += "<line class=\"tick\" x1=\"\(c(x0 - 5))\" y1=\"\(c(py(t.value)))\" x2=\"\(c(x0))\" y2=\"\(c(py(t.value)))\"/>\n" }
        for v in yAxis.minorTicks { out += "<line x1=\"\(c(x0 - 3))\" y1=\"\(c(py(v)))\" x2=\"\(c(x0))\" y2=\"\(c(py(v)))\"/>\n" }
        out += "</g>\n"
        out += "<g class=\"tick-labels\" fill=\"#333333\">\n"
        for t in xAxis.ticks {
            out += "<text class=\"tick-label\" x=\"\(c(px(t.value)))\" y=\"\(c(y1 + 19))\" text-anchor=\"middle\">\(Self.tickText(t))</text>\n"
        }
        for t in yAxis.ticks {
            out += "<text class=\"tick-label\" x=\"\(c(x0 - 8))\" y=\"\(c(py(t.value) + 4))\" text-anchor=\"end\">\(Self.tickText(t))</text>\n"
        }
        out += "</g>\n"

        // Title and axis labels.
        if !plot.title.isEmpty {
            out += "<text x=\"\(c((x0 + x1) / 2))\" y=\"24.00\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">\(XMLText.escape(plot.title))</text>\n"
        }
        out += "<text x=\"\(c((x0 + x1) / 2))\" y=\"\(c(H - 12))\" text-anchor=\"middle\" font-size=\"13\">\(XMLText.escape(Self.axisTitle(plot.xLabel, plot.xUnit)))</text>\n"
        let cy = (y0 + y1) / 2
        out += "<text x=\"18.00\" y=\"\(c(cy))\" transform=\"rotate(-90 18.00 \(c(cy)))\" text-anchor=\"middle\" font-size=\"13\">\(XMLText.escape(Self.axisTitle(plot.yLabel, plot.yUnit)))</text>\n"

        // Legend.
        if !legend.isEmpty {
            let lx = x1 + 14
            out += "<g class=\"legend\">\n"
            for (k, e) in legend.enumerated() {
                let y = y0 + 10 + Double(k) * 18
                let color = seriesColor(e.index)
                out += "<g class=\"legend-entry\">"
                switch e.kind {
                case .band:
                    out += "<rect x=\"\(c(lx))\" y=\"\(c(y - 5))\" width=\"24.00\" height=\"10.00\" fill=\"\(color)\" fill-opacity=\"0.2\"/>"
                case let .series(style):
                    if style != .scatter {
                        let dash = plot.series[e.index].dash(e.index)
                        out += "<line x1=\"\(c(lx))\" y1=\"\(c(y))\" x2=\"\(c(lx + 24))\" y2=\"\(c(y))\" stroke=\"\(color)\" stroke-width=\"2\"\(dash.isEmpty ? "" : " stroke-dasharray=\"\(dash)\"")/>"
                    }
                    if style != .line { out += "<circle cx=\"\(c(lx + 12))\" cy=\"\(c(y))\" r=\"3\" fill=\"\(color)\"/>" }
                }
                out += "<text x=\"\(c(lx + 30))\" y=\"\(c(y + 4))\">\(XMLText.escape(e.label))</text></g>\n"
            }
            out += "</g>\n"
        }
        out += "</svg>\n"
        return out
    }

    enum LegendKind { case series(SeriesStyle), band }

    /// The colour of series i (bands take their series' colour; an index without a series, the palette's).
    private func seriesColor(_ i: Int) -> String {
        plot.series.indices.contains(i) ? plot.series[i].color(i) : Palette.color(i)
    }

    /// Tick label text: plain, or 10 with a raised exponent on log axes.
    static func tickText(_ t: AxisTick) -> String {
        guard let e = t.exponent else { return XMLText.escape(t.label) }
        if e == 0 { return "1" }
        if e == 1 { return "10" }
        let exp = e < 0 ? "\u{2212}\(-e)" : "\(e)"
        return "10<tspan dy=\"-6\" font-size=\"9\">\(exp)</tspan>"
    }

    static func axisTitle(_ label: String, _ unit: String?) -> String {
        guard let u = unit, !u.isEmpty else { return label }
        return "\(label) (\(u))"
    }

    /// Legend labels are cut at 36 characters.
    static func short(_ s: String) -> String {
        s.count <= 36 ? s : String(s.prefix(35)) + "…"
    }
}
