import Foundation
import TwoScaleCore

/// How a series is drawn.
public enum SeriesStyle: Sendable, Equatable {
    /// A polyline through the points (in the given order).
    case line
    /// A marker per point, no line.
    case scatter
    /// A polyline with a marker per point.
    case lineMarkers
}

/// One data series: paired x and y values. Points with a non-finite coordinate (or a non-positive one
/// on a log axis) are dropped when the plot is drawn.
public struct PlotSeries: Sendable, Equatable {
    public var label: String
    public var x: [Double]
    public var y: [Double]
    public var style: SeriesStyle
    /// Optional text beside each point (e.g. the architecture of a scatter point).
    public var pointLabels: [String]?
    /// Optional symmetric error bars: ± yErr[i] vertically, ± xErr[i] horizontally.
    public var yErr: [Double]?
    public var xErr: [Double]?
    /// Colour and dash slots (default: the series index for both — colour cycles first, then dashes).
    public var colorIndex: Int?
    public var dashIndex: Int?

    public init(label: String, x: [Double], y: [Double], style: SeriesStyle = .line, pointLabels: [String]? = nil,
                yErr: [Double]? = nil, xErr: [Double]? = nil, colorIndex: Int? = nil, dashIndex: Int? = nil) {
        self.label = label
        self.x = x
        self.y = y
        self.style = style
        self.pointLabels = pointLabels
        self.yErr = yErr
        self.xErr = xErr
        self.colorIndex = colorIndex
        self.dashIndex = dashIndex
    }

    /// The colour of series number `i` of its plot.
    func color(_ i: Int) -> String { Palette.color(colorIndex ?? i) }
    /// Its dash pattern: `dashIndex` picks a pattern directly; otherwise patterns follow the colour cycle.
    func dash(_ i: Int) -> String { dashIndex.map { Palette.dashes[$0 % Palette.dashes.count] } ?? Palette.dash(i) }
}

/// An error band: the region between `lo` and `hi` over `x`, filled semi-transparently in the colour of
/// the series it belongs to (`seriesIndex`). Points where x, lo or hi is unusable are dropped.
public struct PlotBand: Sendable, Equatable {
    public var label: String
    public var x: [Double]
    public var lo: [Double]
    public var hi: [Double]
    public var seriesIndex: Int

    public init(label: String, x: [Double], lo: [Double], hi: [Double], seriesIndex: Int = 0) {
        self.label = label
        self.x = x
        self.lo = lo
        self.hi = hi
        self.seriesIndex = seriesIndex
    }
}

/// A dashed grey reference line across the plot: horizontal at y = value or vertical at x = value.
public struct ReferenceLine: Sendable, Equatable {
    public enum Orientation: Sendable, Equatable { case horizontal, vertical }
    public var orientation: Orientation
    public var value: Double
    public var label: String?

    public init(_ orientation: Orientation, at value: Double, label: String? = nil) {
        self.orientation = orientation
        self.value = value
        self.label = label
    }
}

/// A line/scatter plot rendered as standalone SVG 1.1: several series with a legend, error bands,
/// reference lines, linear or log axes. Rendering is deterministic (fixed-precision numbers, no
/// timestamps or random ids), so the same plot gives the same bytes.
public struct SVGPlot: Sendable, Equatable {
    public var title: String
    public var xLabel: String
    public var yLabel: String
    /// Units, shown in parentheses after the axis label when given.
    public var xUnit: String?
    public var yUnit: String?
    public var xScale: AxisScale = .linear
    public var yScale: AxisScale = .linear
    public var series: [PlotSeries] = []
    public var bands: [PlotBand] = []
    public var referenceLines: [ReferenceLine] = []
    public var width: Double = 720
    public var height: Double = 440

    public init(title: String, xLabel: String, yLabel: String, xUnit: String? = nil, yUnit: String? = nil,
                xScale: AxisScale = .linear, yScale: AxisScale = .linear,
                series: [PlotSeries] = [], bands: [PlotBand] = [], referenceLines: [ReferenceLine] = []) {
        self.title = title
        self.xLabel = xLabel
        self.yLabel = yLabel
        self.xUnit = xUnit
        self.yUnit = yUnit
        self.xScale = xScale
        self.yScale = yScale
        self.series = series
        self.bands = bands
        self.referenceLines = referenceLines
    }

    /// The SVG document. Throws when no series has a drawable point.
    public func render() throws -> String {
        try SVGRenderer(plot: self).render()
    }
}
