import TwoScaleCore
import TwoScaleFormats

/// Builds the `SVGPlot` a `PlotDirective` asks for from the JSON results of a block's commands.
public enum PlotBuilder {
    /// `results[i]` is the JSON printed by command i+1 of the block. Errors say which key or array is
    /// missing and what is there instead.
    public static func plot(_ d: PlotDirective, results: [JSONValue]) throws(PlotDirective.Problem) -> SVGPlot {
        let chosen = d.commands ?? [results.count]
        var series: [PlotSeries] = []
        var bands: [PlotBand] = []
        for c in chosen {
            guard c >= 1, c <= results.count else {
                throw PlotDirective.Problem(message: "cmd=\(c): the block has \(results.count) command(s)")
            }
            let result = results[c - 1]
            guard let rows = result[d.from]?.arrayValue, rows.allSatisfy(ResultRenderer.isObject) else {
                let arrays: [String]
                if case let .object(kv) = result {
                    arrays = kv.filter { ($0.1.arrayValue ?? []).contains(where: ResultRenderer.isObject) }.map(\.0)
                } else { arrays = [] }
                throw PlotDirective.Problem(message: "command \(c) has no array of objects '\(d.from)'"
                    + (arrays.isEmpty ? "" : "; its arrays: \(arrays.joined(separator: ", ")) (choose one with from=NAME)"))
            }
            func column(_ key: String) throws(PlotDirective.Problem) -> [Double] {
                guard rows.contains(where: { $0[key] != nil }) else {
                    var keys: [String] = []
                    for r in rows { if case let .object(kv) = r { for (k, _) in kv where !keys.contains(k) { keys.append(k) } } }
                    throw PlotDirective.Problem(message: "key '\(key)' is not in the rows of '\(d.from)' of command \(c); keys there: \(keys.joined(separator: ", "))")
                }
                return rows.map { $0[key]?.doubleValue ?? .nan }
            }
            let xs = try column(d.x)
            let suffix = chosen.count > 1 ? " (cmd \(c))" : ""
            let first = series.count
            let pointLabels: [String]? = try d.pointLabels.map { key throws(PlotDirective.Problem) -> [String] in
                _ = try column(key)  // names the missing key
                return rows.map { r in
                    switch r[key] {
                    case let .string(t)?: t
                    case let v?: v.doubleValue.map(ReportNumber.format) ?? ""
                    case nil: ""
                    }
                }
            }
            let yErr = try d.yErr.map { k throws(PlotDirective.Problem) in try column(k) }
            let xErr = try d.xErr.map { k throws(PlotDirective.Problem) in try column(k) }
            let cmdIndex = chosen.firstIndex(of: c) ?? 0
            for (yi, y) in d.y.enumerated() {
                series.append(PlotSeries(label: y + suffix, x: xs, y: try column(y), style: d.style, pointLabels: pointLabels,
                                         yErr: yErr, xErr: xErr,
                                         colorIndex: d.colorByCommand ? cmdIndex : nil, dashIndex: d.colorByCommand ? yi : nil))
            }
            switch d.band {
            case nil: break
            case let .pair(key)?:
                guard rows.contains(where: { $0[key] != nil }) else { _ = try column(key); break }
                let pairs = rows.map { r -> (Double, Double) in
                    guard let a = r[key]?.arrayValue, a.count == 2, let lo = a[0].doubleValue, let hi = a[1].doubleValue else { return (.nan, .nan) }
                    return (lo, hi)
                }
                bands.append(PlotBand(label: key + suffix, x: xs, lo: pairs.map(\.0), hi: pairs.map(\.1), seriesIndex: first))
            case let .keys(lo, hi)?:
                bands.append(PlotBand(label: "\(lo)…\(hi)" + suffix, x: xs, lo: try column(lo), hi: try column(hi), seriesIndex: first))
            }
        }
        if let labels = d.labels {
            guard labels.count == series.count else {
                throw PlotDirective.Problem(message: "labels= gives \(labels.count) label(s) for \(series.count) series (one per command and y key, separated by ';')")
            }
            for i in series.indices { series[i].label = labels[i] }
            for i in bands.indices { bands[i].label = labels[bands[i].seriesIndex] + " (" + bands[i].label + ")" }
        }
        let refs = d.hLines.map { ReferenceLine(.horizontal, at: $0, label: ReportNumber.format($0)) }
            + d.vLines.map { ReferenceLine(.vertical, at: $0, label: ReportNumber.format($0)) }
        return SVGPlot(title: d.title ?? "\(d.y.joined(separator: ", ")) vs \(d.x)",
                       xLabel: d.xLabel ?? d.x,
                       yLabel: d.yLabel ?? (d.y.count == 1 ? d.y[0] : "value"),
                       xUnit: d.xUnit, yUnit: d.yUnit, xScale: d.xScale, yScale: d.yScale,
                       series: series, bands: bands, referenceLines: refs)
    }
}
