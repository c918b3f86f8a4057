import ArgumentParser
import Foundation
import ToyModels
import TwoScaleCore

extension Family: ExpressibleByArgument {}

/// `twoscale toy`: exact 2sED and box-covering counts of diagonal toy models (SPEC §3).
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
        let result = try ToyReport.compute(model: model, eps: eps, zeta: zeta, normalization: normalize, greedyMax: greedyMax)
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

    static func compute(model: ToyModel, eps: [Double], zeta: Double, normalization: Normalization,
                        greedyMax: Int) throws -> ToyReport {
        var points: [JSONValue] = []
        var rows: [[String]] = []
        for e in eps {
            let dz = try model.twoScaleDimension(eps: e, zeta: zeta, normalization: normalization)
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
                ("log_eps_pow_minus_d_zeta", .double(dz * absLogEps)),
            ]
            if model.family == .constant {
                kv.append(("log_lower_bound", .double(BoxCover.constantLowerBound(model, eps: e))))
            } else {
                kv.append(("log_greedy_count", .number(greedy?.log)))
                kv.append(("greedy_count", .number(greedy?.exact)))
            }
            points.append(.object(kv))
            var row = [Fmt.num(e), Fmt.num(dz), Fmt.num(dzRaw), countCell(count),
                       Fmt.num(count.log.isFinite ? count.log : nil), Fmt.num(detBound)]
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
        top.append(("points", .array(points)))
        let head = "toy model: family \(model.family.rawValue), d = \(model.dimension), box [\(model.lo), \(model.hi)]^d, ζ = \(Fmt.num(zeta)), normalisation \(normalization.rawValue)\n"
            + "box counts: \(model.family == .constant ? "exact minimal cover" : "two-scale cover (meso side ε^ζ)"), raw metric\n\n"
        var columns = ["eps", "d_zeta", "d_zeta(c=1)", "box count", "log count", "log det bound"]
        if model.family != .constant { columns.append("greedy 1-D cover^d") }
        let table = Fmt.table(columns, rows)
        return ToyReport(json: .object(top), human: head + table)
    }
}
