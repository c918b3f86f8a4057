import ArgumentParser
import Foundation
import ToyModels
import TwoScaleCore
import TwoScaleFormats

extension Family: ExpressibleByArgument {}
extension EstimatorKind: ExpressibleByArgument {}

/// `toy --mc`: the Monte Carlo estimators run on the exact toy model, beside the exact value.
struct ToyMonteCarloOptions: ParsableArguments {
    @Flag(help: "Also estimate d_ζ by Monte Carlo (d_zeta_mc, ci95_mc) beside the exact d_zeta, to measure bias and coverage.")
    var mc = false

    @Option(help: "Monte Carlo estimator: smc (factorised over axes, annealed SMC per axis) or plain (uniform draws of θ).")
    var estimator: EstimatorKind = .smc

    @Option(help: "K: the Monte Carlo budget (plain: draws of θ; smc: particles per axis, split over the replicates).")
    var paths: Int = 100

    @Option(help: "Seed of the Monte Carlo draws (trial i uses seed + i − 1).")
    var seed: Int = 1

    @Option(help: "Independent repetitions with seeds seed, seed+1, …: reports how often the 95% interval holds the exact value.")
    var trials: Int = 1

    @Option(help: "smc: uniform draws of θ for the trace normalisation ĉ (its uncertainty enters the interval).")
    var traceDraws: Int = 1000

    @Option(help: "plain: bootstrap resamples over draws for the 95% interval.")
    var bootstrap: Int = 200

    @Option(help: "Parallel tasks (default: the active cores). Results do not depend on it.")
    var threads: Int?

    func validate() throws {
        guard seed >= 0 else { throw TwoScaleError.invalid("--seed", "\(seed)", allowed: "the seed must be a whole number ≥ 0") }
        guard trials >= 1, trials <= 10_000 else { throw TwoScaleError.invalid("--trials", "\(trials)", allowed: "give from 1 to 10000 trials") }
        if let t = threads, t < 1 || t > 1024 { throw TwoScaleError.invalid("--threads", "\(t)", allowed: "give a count from 1 to 1024") }
    }

    var threadCount: Int { threads ?? Swift.max(1, ProcessInfo.processInfo.activeProcessorCount) }
}

/// `twoscale toy`: exact 2sED and box-covering counts of diagonal toy models (docs/METHOD.md §8–9).
struct ToyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "toy",
        abstract: "Exact 2sED and box-covering counts of a diagonal toy model on a box.",
        discussion: """
        F(θ) = diag(λ_1(θ_1), …, λ_d(θ_d)) on [lo,hi]^d. d_ζ(ε) is exact (closed form for constant λ, \
        GSL QAGS quadrature otherwise). Box counts use the raw metric (c = 1): the exact minimal count for \
        constant λ, the two-scale cover count (meso-cubes of side ε^ζ) otherwise; log_det_bound is \
        log Π_i (1 + ε⁻¹∫√λ_i). Counts too large for a double's integers are given in log form only.
        """)

    @Option(help: "Per-axis Fisher family: constant, bernoulli (1/(t(1-t))), poisson (1/t), exponential (1/t²).")
    var family: Family = .constant

    @Option(help: ArgumentHelp("λ per axis for --family constant (comma-separated, each ≥ 0); d = count.", valueName: "list"))
    var lambdas: String?

    @Option(help: "Dimension d (required for non-constant families; with one λ, repeats it d times).")
    var dim: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Parameter box lo:hi, the same on every axis.", valueName: "lo:hi"))
    var box: String = "0:1"

    @OptionGroup var scale: ScaleOptions

    @Option(help: "Normalisation of the Fisher matrix for d_ζ: trace (c = d/E Tr F) or none (c = 1).")
    var normalize: Normalization = .trace

    @Option(help: "Largest greedy 1-D cover to compute per axis and ε (0 disables the greedy count).")
    var greedyMax: Int = 1_000_000

    @OptionGroup var monteCarlo: ToyMonteCarloOptions

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if let d = dim, d < 1 { throw TwoScaleError.invalid("--dim", "\(d)", allowed: "the dimension must be ≥ 1") }
        if greedyMax < 0 { throw TwoScaleError.invalid("--greedy-max", "\(greedyMax)", allowed: "give a count ≥ 0") }
    }

    func run() async throws {
        let lam: [Double] = try lambdas.map { try Grid.parseList($0, flag: "--lambdas") } ?? []
        if family == .constant && lambdas == nil {
            throw TwoScaleError.missing("--lambdas", "--family constant needs --lambdas, e.g. --lambdas 4,0.01")
        }
        let model = try ToyModel(family: family, lambdas: lam, dimension: dim,
                                 box: try Grid.parseInterval(box, flag: "--box"))
        let eps = try scale.eps()
        let zeta = try scale.checkedZeta()
        var result = try ToyReport.compute(model: model, eps: eps, zeta: zeta, normalization: normalize, greedyMax: greedyMax)
        if monteCarlo.mc {
            let o = monteCarlo
            let trials = try await (0..<o.trials).asyncMap { i in
                try await ToyMonteCarlo(model: model, estimator: o.estimator, paths: o.paths, seed: UInt64(o.seed + i),
                                        traceDraws: o.traceDraws, bootstrap: o.bootstrap)
                    .run(eps: eps, zeta: zeta, normalization: normalize, threads: o.threadCount)
            }
            result.addMonteCarlo(trials, options: o)
        }
        try output.emit(result.json) { result.human }
    }
}

/// A count as a table cell: exact below 2⁵³, `e^log` above, ∞ when no finite cover exists.
private func countCell(_ count: BoxCount) -> String {
    count.exact.map { String(format: "%.0f", $0) } ?? (count.log.isFinite ? "e^" + Fmt.num(count.log, 5) : "∞")
}

/// The numbers of one `toy` run, as JSON and as a table.
struct ToyReport {
    var json: JSONValue
    var human: String
    /// Exact d_ζ per grid point (for the Monte Carlo comparison).
    var exact: [Double] = []

    /// Adds the Monte Carlo estimate (first trial) and, over all trials, coverage and error statistics.
    mutating func addMonteCarlo(_ trials: [ToyMonteCarlo.Result], options o: ToyMonteCarloOptions) {
        guard case var .object(top) = json, let pi = top.firstIndex(where: { $0.0 == "points" }),
              case let .array(points) = top[pi].1, let first = trials.first else { return }
        var newPoints: [JSONValue] = []
        var rows: [[String]] = []
        for (i, p) in points.enumerated() {
            guard case var .object(kv) = p else { continue }
            let mc = first.points[i]
            let ex = exact[i]
            kv.append(("d_zeta_mc", .double(mc.dZeta)))
            kv.append(("ci95_mc", .numbers([mc.ci95.lowerBound, mc.ci95.upperBound])))
            kv.append(("error_mc", .double(mc.dZeta - ex)))
            if o.estimator == .smc {
                kv.append(("se_log_det", .number(mc.standardError)))
                kv.append(("normalization_share", .double(mc.normalizationShare)))
            }
            let ests = trials.map { $0.points[i].dZeta }
            let covered = trials.filter { $0.points[i].ci95.contains(ex) }.count
            let mean = ests.reduce(0, +) / Double(ests.count)
            let sd = ests.count > 1 ? (ests.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(ests.count - 1)).squareRoot() : 0
            let halfWidth = trials.reduce(0) { $0 + ($1.points[i].ci95.upperBound - $1.points[i].ci95.lowerBound) / 2 } / Double(trials.count)
            if trials.count > 1 {
                kv.append(("trials", .int(trials.count)))
                kv.append(("covered", .int(covered)))
                kv.append(("coverage", .double(Double(covered) / Double(trials.count))))
                kv.append(("mc_mean", .double(mean)))
                kv.append(("mc_bias", .double(mean - ex)))
                kv.append(("mc_sd", .double(sd)))
                kv.append(("mean_half_width", .double(halfWidth)))
            }
            newPoints.append(.object(kv))
            var row = [Fmt.num(mc.eps), Fmt.num(ex), Fmt.num(mc.dZeta),
                       "[\(Fmt.num(mc.ci95.lowerBound)), \(Fmt.num(mc.ci95.upperBound))]", Fmt.num(mc.dZeta - ex)]
            if trials.count > 1 { row += ["\(covered)/\(trials.count)", Fmt.num(mean - ex), Fmt.num(sd)] }
            rows.append(row)
        }
        top[pi].1 = .array(newPoints)
        var extra: [(String, JSONValue)] = [
            ("estimator", .string(o.estimator.rawValue)), ("paths", .int(o.paths)), ("seed", .int(o.seed)),
            ("mc_scale", .double(first.scale)),
        ]
        if let g = first.diagnostics {
            extra.append(("smc", SMCReport.json(g)))
        }
        if let e = first.minESS { extra.append(("min_ess", .double(e))) }
        if o.estimator == .smc { extra.append(("trace_draws", .int(o.traceDraws))) }
        top.insert(contentsOf: extra, at: pi)
        json = .object(top)
        var columns = ["eps", "exact d_zeta", "MC d_zeta", "MC 95% interval", "error"]
        if trials.count > 1 { columns += ["covered", "bias", "sd"] }
        human += "\nMonte Carlo (\(o.estimator.rawValue), K = \(o.paths), seed \(o.seed)\(trials.count > 1 ? ", \(trials.count) trials" : "")):\n"
            + Fmt.table(columns, rows)
    }

    /// The metric of each column, stated once per report.
    static let metricNote = "metric: d_zeta uses the chosen --normalize; the box counts, log_det_bound, d_zeta_raw, log_eps_pow_minus_d_zeta and log_cover_ratio all use the raw Fisher metric (c = 1), so a count is compared with ε^(−d_ζ) of the same metric"
    static let greedyNote = "greedy 1-D cover^d: the greedy cover is computed axis by axis and is left out (\"> --greedy-max\", null in JSON) where one axis would need more than --greedy-max boxes"

    static func compute(model: ToyModel, eps: [Double], zeta: Double, normalization: Normalization,
                        greedyMax: Int) throws -> ToyReport {
        var points: [JSONValue] = []
        var rows: [[String]] = []
        var exact: [Double] = []
        var logConstant = -Double.infinity  // max over ε of log(N(ε)·ε^(d_ζ,raw))
        var greedyCapped = false
        for e in eps {
            let dz = try model.twoScaleDimension(eps: e, zeta: zeta, normalization: normalization)
            exact.append(dz)
            let dzRaw = try model.twoScaleDimension(eps: e, zeta: zeta, normalization: .none)
            let count: BoxCount = model.family == .constant
                ? BoxCover.constantMinimal(model, eps: e)
                : try BoxCover.twoScale(model, eps: e, zeta: zeta)
            let greedy = greedyMax > 0 && model.family != .constant
                ? try BoxCover.greedy(model, eps: e, maxBoxes: greedyMax) : nil
            let detBound = BoxCover.logDetBound(model, eps: e)
            let absLogEps = Swift.abs(Foundation.log(e))
            var kv: [(String, JSONValue)] = [
                ("eps", .double(e)),
                ("d_zeta", .double(dz)),
                ("log_box_count", count.log.isFinite ? .double(count.log) : .null),
                ("box_count", .number(count.exact)),
                ("log_det_bound", detBound.isFinite ? .double(detBound) : .null),
                ("d_zeta_raw", .double(dzRaw)),
                ("cover_dimension", count.log.isFinite ? .double(count.log / absLogEps) : .null),
                ("log_eps_pow_minus_d_zeta", .double(dzRaw * absLogEps)),
                ("log_cover_ratio", count.log.isFinite ? .double(count.log - dzRaw * absLogEps) : .null),
            ]
            if count.log.isFinite { logConstant = Swift.max(logConstant, count.log - dzRaw * absLogEps) }
            if greedyMax > 0, model.family != .constant, greedy == nil { greedyCapped = true }
            if model.family == .constant {
                kv.append(("log_lower_bound", .double(BoxCover.constantLowerBound(model, eps: e))))
            } else {
                kv.append(("log_greedy_count", .number(greedy?.log)))
                kv.append(("greedy_count", .number(greedy?.exact)))
            }
            points.append(.object(kv))
            var row = [Fmt.num(e), Fmt.num(dz), Fmt.num(dzRaw), countCell(count),
                       Fmt.num(count.log.isFinite ? count.log : nil), Fmt.num(dzRaw * absLogEps), Fmt.num(detBound)]
            if model.family != .constant {
                row.append(greedyMax == 0 ? "off" : greedy.map(countCell) ?? "> --greedy-max")
            }
            rows.append(row)
        }
        var top: [(String, JSONValue)] = [
            ("dimension", .int(model.dimension)),
            ("zeta", .double(zeta)),
            ("normalization", .string(normalization.rawValue)),
            ("family", .string(model.family.rawValue)),
            ("box", .numbers([model.lo, model.hi])),
            ("box_count_kind", .string(model.family == .constant ? "exact-minimal" : "two-scale-cover")),
        ]
        if model.family != .constant {
            top.append(("mean_sqrt_lambda", .double(model.meanSqrtLambda[0])))
            top.append(("mean_lambda", .number(model.meanLambda?[0])))
            top.append(("quadrature_error", .numbers([model.quadratureError.sqrt, model.quadratureError.lambda].filter(\.isFinite))))
        }
        top.append(("metric_note", .string(Self.metricNote)))
        top.append(("log_covering_constant", logConstant.isFinite ? .double(logConstant) : .null))
        top.append(("covering_constant", logConstant.isFinite && logConstant < 700 ? .double(Foundation.exp(logConstant)) : .null))
        if model.family != .constant { top.append(("greedy_note", .string(Self.greedyNote))) }
        top.append(("points", .array(points)))
        let head = "toy model: family \(model.family.rawValue), d = \(model.dimension), box [\(model.lo), \(model.hi)]^d, ζ = \(Fmt.num(zeta)), normalisation \(normalization.rawValue)\n"
            + "box counts: \(model.family == .constant ? "exact minimal cover" : "two-scale cover (meso side ε^ζ)")\n"
            + Self.metricNote + "\n"
            + (logConstant.isFinite ? "covering constant max_ε N(ε)·ε^(d_ζ(c=1)) over this grid: \(Fmt.num(Foundation.exp(Swift.min(logConstant, 700)))) (log \(Fmt.num(logConstant)))\n" : "")
            + "\n"
        var columns = ["eps", "d_zeta", "d_zeta(c=1)", "box count (c=1)", "log count", "log ε^-d_zeta(c=1)", "log det bound (c=1)"]
        if model.family != .constant { columns.append("greedy 1-D cover^d") }
        let table = Fmt.table(columns, rows)
        let foot = greedyCapped ? "\n" + Self.greedyNote + "\n" : ""
        return ToyReport(json: .object(top), human: head + table + foot, exact: exact)
    }
}

/// SMC diagnostics as JSON (shared by `toy --mc` and the network report).
enum SMCReport {
    static func json(_ g: SMCDiagnostics) -> JSONValue {
        .object([
            ("samplers", .int(g.samplers)),
            ("mean_steps", .double(g.meanSteps)),
            ("max_steps", .int(g.maxSteps)),
            ("acceptance", .number(g.acceptanceRate)),
            ("min_stop_ess_fraction", .double(g.minStopESS)),
        ])
    }
}

extension Sequence {
    /// Sequential async map (order kept).
    func asyncMap<T>(_ f: (Element) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for x in self { out.append(try await f(x)) }
        return out
    }
}
