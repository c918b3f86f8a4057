/// One `plot` spec of a notebook block: which result array and keys to draw, and how.
///
/// Grammar (words split like a shell line; values with spaces are double- or single-quoted):
///
///     plot-spec := "plot" item*
///     item      := KEY "=" VALUE | FLAG
///     KEY       := x | y | from | band | cmd | title | xlabel | ylabel | xunit | yunit
///                | hline | vline | file | style | labels | pointlabels | yerr | xerr
///     FLAG      := logx | logy | loglog | scatter | markers | bycmd
///
/// `x=KEY` and `y=KEY[,KEY…]` are required. docs/NOTEBOOKS.md ("The notebook format") gives the meaning of each.
public struct PlotDirective: Sendable, Equatable {
    /// How the error band's bounds are found in each row.
    public enum Band: Sendable, Equatable {
        /// One key holding a `[lo, hi]` pair, e.g. `ci95`.
        case pair(String)
        /// Two keys, lower and upper bound.
        case keys(String, String)
    }

    /// Notebook line the spec was written on.
    public var line: Int
    public var x: String
    public var y: [String]
    /// The top-level array of objects whose rows are plotted (default `points`).
    public var from: String = "points"
    public var band: Band?
    /// 1-based command numbers within the block whose results are drawn; nil = the block's last command.
    public var commands: [Int]?
    public var title: String?
    public var xLabel: String?
    public var yLabel: String?
    public var xUnit: String?
    public var yUnit: String?
    public var xScale: AxisScale = .linear
    public var yScale: AxisScale = .linear
    public var style: SeriesStyle = .line
    public var hLines: [Double] = []
    public var vLines: [Double] = []
    /// File name stem of the SVG (letters, digits, `-`, `_`); default `blockB-plotP`.
    public var file: String?
    /// Legend labels for the series, in drawing order (commands, then y keys); `;`-separated.
    public var labels: [String]?
    /// A key whose value (text or number) is written beside each point.
    public var pointLabels: String?
    /// Keys of symmetric error bars (± the value), vertical and horizontal.
    public var yErr: String?
    public var xErr: String?
    /// One colour per command, one dash pattern per y key (e.g. one colour per model, solid training and
    /// dashed holdout curves) instead of one colour per series.
    public var colorByCommand = false

    /// Keys a spec may set, for error messages.
    public static let keys = ["x", "y", "from", "band", "cmd", "title", "xlabel", "ylabel", "xunit", "yunit",
                              "hline", "vline", "file", "style", "labels", "pointlabels", "yerr", "xerr"]
    public static let flags = ["logx", "logy", "loglog", "scatter", "markers", "bycmd"]

    /// A problem in a spec, reported by the notebook parser with the file and line.
    public struct Problem: Error, Equatable {
        public var message: String
    }

    /// Parses the words after `plot` (already split), written on `line`.
    public static func parse(words: [String], line: Int) throws(Problem) -> PlotDirective {
        var x: String?, y: [String]?
        var d = PlotDirective(line: line, x: "", y: [])
        var seen = Set<String>()
        for w in words {
            guard let eq = w.firstIndex(of: "=") else {
                switch w {
                case "logx": d.xScale = .log
                case "logy": d.yScale = .log
                case "loglog": d.xScale = .log; d.yScale = .log
                case "scatter": d.style = .scatter
                case "markers": d.style = .lineMarkers
                case "bycmd": d.colorByCommand = true
                default:
                    throw Problem(message: "unknown plot option '\(w)'; allowed flags: \(flags.joined(separator: ", ")); "
                        + "allowed settings: \(keys.map { $0 + "=…" }.joined(separator: ", "))")
                }
                continue
            }
            let key = String(w[..<eq]), value = String(w[w.index(after: eq)...])
            guard keys.contains(key) else {
                throw Problem(message: "unknown plot setting '\(key)'; allowed: \(keys.joined(separator: ", ")) and the flags \(flags.joined(separator: ", "))")
            }
            guard !seen.contains(key) else { throw Problem(message: "plot setting '\(key)' is given twice") }
            seen.insert(key)
            guard !value.isEmpty || ["title", "xlabel", "ylabel", "xunit", "yunit"].contains(key) else {
                throw Problem(message: "plot setting '\(key)=' needs a value")
            }
            switch key {
            case "x": x = try name(value, key)
            case "y": y = try value.split(separator: ",", omittingEmptySubsequences: false).map { s throws(Problem) -> String in try name(String(s), key) }
            case "from": d.from = try name(value, key)
            case "band":
                let parts = value.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
                switch parts.count {
                case 1: d.band = .pair(try name(parts[0], key))
                case 2: d.band = .keys(try name(parts[0], key), try name(parts[1], key))
                default: throw Problem(message: "band='\(value)': give one key holding [lo, hi] (band=ci95) or two keys (band=LO:HI)")
                }
            case "cmd":
                let list = value.split(separator: ",", omittingEmptySubsequences: false)
                d.commands = try list.map { s throws(Problem) -> Int in
                    guard let n = Int(s), n >= 1 else {
                        throw Problem(message: "cmd='\(value)': give command numbers within the block, 1-based, e.g. cmd=1 or cmd=1,2")
                    }
                    return n
                }
            case "title": d.title = value
            case "pointlabels": d.pointLabels = try name(value, key)
            case "yerr": d.yErr = try name(value, key)
            case "xerr": d.xErr = try name(value, key)
            case "labels": d.labels = value.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            case "xlabel": d.xLabel = value
            case "ylabel": d.yLabel = value
            case "xunit": d.xUnit = value
            case "yunit": d.yUnit = value
            case "hline": d.hLines = try numbers(value, key)
            case "vline": d.vLines = try numbers(value, key)
            case "style":
                switch value {
                case "line": d.style = .line
                case "scatter": d.style = .scatter
                case "markers": d.style = .lineMarkers
                default: throw Problem(message: "style='\(value)': allowed: line, scatter, markers")
                }
            case "file":
                guard value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                    throw Problem(message: "file='\(value)': use letters, digits, '-' and '_' only (the .svg is added)")
                }
                d.file = value
            default: break
            }
        }
        guard let xKey = x else { throw Problem(message: "a plot needs x=KEY (the key of the x values)") }
        guard let yKeys = y else { throw Problem(message: "a plot needs y=KEY or y=KEY1,KEY2 (the keys of the y values)") }
        d.x = xKey
        d.y = yKeys
        return d
    }

    private static func name(_ s: String, _ key: String) throws(Problem) -> String {
        guard !s.isEmpty, !s.contains(where: { $0 == " " || $0 == "," || $0 == ":" || $0 == "=" }) else {
            throw Problem(message: "\(key)='\(s)': give the name of a JSON key")
        }
        return s
    }

    private static func numbers(_ s: String, _ key: String) throws(Problem) -> [Double] {
        try s.split(separator: ",", omittingEmptySubsequences: false).map { p throws(Problem) -> Double in
            guard let v = Double(p), v.isFinite else {
                throw Problem(message: "\(key)='\(s)': give finite numbers separated by commas")
            }
            return v
        }
    }
}
