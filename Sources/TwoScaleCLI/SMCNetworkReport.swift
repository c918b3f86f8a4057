import Foundation
import Networks
import TwoScaleCore
import TwoScaleFormats

/// The report of `ed --estimator smc`.
///
/// JSON: `{"dimension", "estimator": "smc", "points": [{"eps", "zeta", "d_zeta", "d_zeta_joint" (the same
/// estimate: for smc the nested and joint 2sED are one quantity and one estimate), "ci95", "ci95_joint",
/// "d_zeta_lower", "ci95_lower" (with --lower), "se_log_det", "normalization_share", "stage_ess", "ess_min" (the smallest stage ESS, for plots)}],
/// "ess" (per stage m ≥ 2: the smallest outer ESS over the grid), "smc": {"stage1": …, "islands": …},
/// "paths", "inner", "trace_draws", "scale", "mean_trace", "settings", "seconds"}`.
struct SMCNetworkReport {
    var json: JSONValue
    var human: String

    init(result r: NetworkSMC.Result, architecture: Architecture, settings: [StoreSetting], request: AnalysisRequest,
         paths: Int, inner: Int, seconds: Double) {
        func interval(_ c: ClosedRange<Double>?) -> JSONValue { c.map { .numbers([$0.lowerBound, $0.upperBound]) } ?? .null }
        var points: [JSONValue] = []
        var rows: [[String]] = []
        for p in r.points {
            var kv: [(String, JSONValue)] = [
                ("eps", .double(p.eps)), ("zeta", .double(p.zeta)),
                ("d_zeta", .double(p.dZeta)), ("d_zeta_joint", .double(p.dZeta)),
            ]
            if request.lower { kv.append(("d_zeta_lower", .number(p.dZetaLower))) }
            kv.append(("ci95", interval(p.ci95)))
            kv.append(("ci95_joint", interval(p.ci95)))
            if request.lower { kv.append(("ci95_lower", interval(p.ci95Lower))) }
            kv.append(("se_log_det", .number(p.standardError)))
            kv.append(("normalization_share", .double(p.normalizationShare)))
            kv.append(("stage_ess", .numbers(p.stageESS)))
            kv.append(("ess_min", .number(p.stageESS.min())))
            kv.append(("stage_log_z", .numbers(p.stages.map(\.value))))
            kv.append(("stage_se", .numbers(p.stages.map { $0.variance.squareRoot() })))
            points.append(.object(kv))
            var row = [Fmt.num(p.eps), Fmt.num(p.dZeta), "[\(Fmt.num(p.ci95.lowerBound)), \(Fmt.num(p.ci95.upperBound))]"]
            if request.lower {
                row.append(Fmt.num(p.dZetaLower))
                row.append(p.ci95Lower.map { "[\(Fmt.num($0.lowerBound)), \(Fmt.num($0.upperBound))]" } ?? "—")
            }
            row.append(p.stageESS.map { Fmt.num($0, 3) }.joined(separator: ", "))
            rows.append(row)
        }
        let stages = Swift.max(0, architecture.layers - 1)
        let ess = (0..<stages).map { m in r.points.map { $0.stageESS[m] }.min() ?? 0 }
        if let w = NetworkReport.essWarning(ess, paths: paths) { Console.warn(w) }
        var top: [(String, JSONValue)] = [
            ("dimension", .int(architecture.parameterCount)),
            ("estimator", .string("smc")),
            ("points", .array(points)),
            ("ess", .numbers(ess)),
            ("seconds", .double(seconds)),
            ("layers", .array(architecture.blockParameterCounts.map { .int($0) })),
            ("paths", .int(paths)),
            ("inner", .int(architecture.layers > 1 ? inner : 0)),
            ("trace_draws", .int(r.trace.draws)),
            ("settings", .object(settings.map { ($0.key, $0.value) })),
            ("zeta", .double(request.zeta)),
            ("normalization", .string(request.normalization.rawValue)),
            ("scale", .double(r.scale)),
            ("mean_trace", .double(r.trace.meanTrace)),
            ("smc", .object([("stage1", SMCReport.json(r.stage1)), ("islands", SMCReport.json(r.islands))])),
        ]
        top.append(contentsOf: NetworkReport.rankFields(r.rank, zeta: request.zeta, dimension: architecture.parameterCount))
        json = .object(top)
        var head = "2sED of \(architecture) (Markov FIM, smc estimator): d = \(architecture.parameterCount), K = \(paths)"
        head += architecture.layers > 1 ? ", J = \(inner)\n" : "\n"
        head += "ζ = \(Fmt.num(request.zeta)), normalisation \(request.normalization.rawValue) (c = \(Fmt.num(r.scale)) from \(r.trace.draws) draws), \(Fmt.num(seconds, 3)) s\n"
        head += "stage 1: \(r.stage1.samplers) samplers, \(Fmt.num(r.stage1.meanSteps, 3)) steps on average (max \(r.stage1.maxSteps)), acceptance \(Fmt.num(r.stage1.acceptanceRate, 3))\n"
        if stages > 0 {
            head += "islands: \(r.islands.samplers) samplers, \(Fmt.num(r.islands.meanSteps, 3)) steps on average (max \(r.islands.maxSteps)), acceptance \(Fmt.num(r.islands.acceptanceRate, 3))\n"
        }
        head += NetworkReport.rankLine(r.rank, zeta: request.zeta, dimension: architecture.parameterCount)
        head += "\n"
        var header = ["eps", "d_zeta", "ci95"]
        if request.lower { header += ["lower", "ci95 lower"] }
        header.append("outer ESS")
        human = head + Fmt.table(header, rows)
    }
}
