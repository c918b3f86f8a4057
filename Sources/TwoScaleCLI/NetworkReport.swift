import ArgumentParser
import Foundation
import Networks
import TwoScaleCore
import TwoScaleFormats

/// The measurement flags shared by `ed` and `analyze`: what to compute from the spectra.
struct AnalysisOptions: ParsableArguments {
    @OptionGroup var scale: ScaleOptions

    @Flag(help: "Also report the lower 2sED (layerwise; never above the nested 2sED on the same samples).")
    var lower = false

    @Option(help: "Normalisation of the Fisher matrix: trace (c = d / mean_k Tr F(θ^k)) or none (c = 1).")
    var normalize: Normalization = .trace

    @Option(help: "Bootstrap resamples over paths for the 95% intervals (0 disables them; seeded by the run's --seed).")
    var bootstrap: Int = 200

    @Option(name: .customLong("abbas-n"), help: ArgumentHelp(
        "Also report the Abbas et al. effective dimension ED(n) for these sample sizes (a value, list or log grid).", valueName: "list"))
    var abbasN: String?

    @Option(help: "γ ∈ (0,1] in the Abbas ED's κ = γn/(2π log n).")
    var gamma: Double = 1

    @Option(help: "Parallel tasks (default: the active cores; for ed under mpirun, the cores the rank is bound to). Results do not depend on it.")
    var threads: Int?

    /// The validated measurement request.
    func request() throws -> AnalysisRequest {
        guard bootstrap >= 0, bootstrap <= 100_000 else {
            throw TwoScaleError.invalid("--bootstrap", "\(bootstrap)", allowed: "give a resample count from 0 (off) to 100000")
        }
        if bootstrap == 1 {
            throw TwoScaleError.invalid("--bootstrap", "1", allowed: "an interval needs ≥ 2 resamples (0 disables it)")
        }
        let ns = try abbasN.map { try Grid.parse($0, flag: "--abbas-n") } ?? []
        for n in ns { _ = try AbbasED.kappa(n: n, gamma: gamma) }
        if abbasN == nil, gamma != 1 {
            _ = try AbbasED.kappa(n: 1e6, gamma: gamma)  // validates γ even when unused
        }
        return AnalysisRequest(eps: try scale.eps(), zeta: try scale.checkedZeta(), lower: lower, normalization: normalize,
                               bootstrap: bootstrap, abbasN: ns, gamma: gamma, threads: try checkedThreads())
    }

    func checkedThreads() throws -> Int {
        guard let t = threads else { return Swift.max(1, ProcessInfo.processInfo.activeProcessorCount) }
        guard t >= 1, t <= 1024 else { throw TwoScaleError.invalid("--threads", "\(t)", allowed: "give a count from 1 to 1024") }
        return t
    }
}

/// A validated measurement request.
struct AnalysisRequest: Sendable {
    var eps: [Double]
    var zeta: Double
    var lower: Bool
    var normalization: Normalization
    var bootstrap: Int
    var abbasN: [Double]
    var gamma: Double
    var threads: Int
}

/// The 2sED report of a network run (`ed` and `analyze` print the same thing from the same spectra).
///
/// JSON: `{"dimension": d, "points": [{"eps", "zeta", "d_zeta" (nested), "d_zeta_joint",
/// "d_zeta_lower" (with --lower), "ci95": [lo, hi] (nested; null without bootstrap), "ci95_joint",
/// "ci95_lower", "ess": [per stage]}], "ess": [per stage m ≥ 2: the minimum over the ε grid],
/// "seconds", …extras}`. Extras: the run's settings (`layers`, `paths`, `inner`, `settings`),
/// `zeta`, `normalization`, `scale` (c), `mean_trace`, `clamped` (round-off negatives set to 0),
/// `bootstrap`, the Fisher rank (`rankFields`), and `abbas: [{"n", "kappa", "ed"}]` with --abbas-n.
struct NetworkReport {
    var json: JSONValue
    var human: String

    /// The warning text for a degenerate stage (`WeightDegeneracy`, the rule lives in TwoScaleCore).
    static func essWarning(_ ess: [Double], paths: Int) -> String? {
        guard let d = WeightDegeneracy.check(ess: ess, paths: paths) else { return nil }
        return "the stage-\(d.stage) weights have an effective sample size of \(Fmt.num(d.ess, 3)) of K = \(d.paths) paths at some ε: "
            + "the average over θ is carried by very few paths, so the Monte Carlo error is larger than K suggests "
            + "(a bootstrap interval over paths can understate it); more --paths help only slowly (see README, Estimators)"
    }

    /// JSON fields of the Fisher rank: `rank` (total, the largest over the draws), `rank_min`,
    /// `rank_draws`, `rank_blocks` (per layer block: layer, parameters, rank, rank_min, rank_mean),
    /// `rank_threshold` and `d_zeta_limit` = ζd + (1 − ζ)·rank, the ε → 0 limit of the 2sED.
    static func rankFields(_ rank: FisherRank, zeta: Double, dimension: Int) -> [(String, JSONValue)] {
        [
            ("rank", .int(rank.rank)), ("rank_min", .int(rank.rankMin)), ("rank_draws", .int(rank.draws)),
            ("rank_blocks", .array(rank.blocks.map { b in
                .object([("layer", .int(b.layer)), ("parameters", .int(b.parameters)), ("rank", .int(b.rank)),
                         ("rank_min", .int(b.rankMin)), ("rank_mean", .double(b.rankMean))])
            })),
            ("rank_threshold", .string(FisherRank.thresholdNote)),
            ("d_zeta_limit", .double(rank.limit(zeta: zeta, dimension: dimension))),
        ]
    }

    /// The table header's rank line.
    static func rankLine(_ rank: FisherRank, zeta: Double, dimension: Int) -> String {
        rank.summary(dimension: dimension) + "; ε → 0 limit ζd + (1 − ζ)r = \(Fmt.num(rank.limit(zeta: zeta, dimension: dimension)))\n"
    }

    static func compute(spectra: LayeredSpectra, meta: StoreMeta, request r: AnalysisRequest, seconds: Double) async throws -> NetworkReport {
        let est = try LayeredEstimator(spectra: spectra, normalization: r.normalization)
        let seed: UInt64
        if case let .int(s)? = meta.setting("seed") { seed = UInt64(bitPattern: Int64(s)) } else { seed = 1 }
        let pts = try await est.points(eps: r.eps, zeta: r.zeta, bootstrap: r.bootstrap, seed: seed, threads: r.threads)
        let stages = Swift.max(0, spectra.layers - 1)
        let ess = (0..<stages).map { m in pts.map { $0.ess[m] }.min() ?? 0 }
        if let w = essWarning(ess, paths: spectra.paths) { Console.warn(w) }
        func interval(_ c: ClosedRange<Double>?) -> JSONValue { c.map { .numbers([$0.lowerBound, $0.upperBound]) } ?? .null }

        var points: [JSONValue] = []
        var rows: [[String]] = []
        for p in pts {
            var kv: [(String, JSONValue)] = [
                ("eps", .double(p.eps)), ("zeta", .double(p.zeta)),
                ("d_zeta", .double(p.dZeta)), ("d_zeta_joint", .double(p.dZetaJoint)),
            ]
            if r.lower { kv.append(("d_zeta_lower", .double(p.dZetaLower))) }
            kv.append(("ci95", interval(p.ci95)))
            kv.append(("ci95_joint", interval(p.ci95Joint)))
            if r.lower { kv.append(("ci95_lower", interval(p.ci95Lower))) }
            kv.append(("ess", .numbers(p.ess)))
            kv.append(("ess_min", .number(p.ess.min())))
            points.append(.object(kv))
            var row = [Fmt.num(p.eps), Fmt.num(p.dZeta), Fmt.num(p.dZetaJoint)]
            if r.lower { row.append(Fmt.num(p.dZetaLower)) }
            row.append(p.ci95.map { "[\(Fmt.num($0.lowerBound)), \(Fmt.num($0.upperBound))]" } ?? "—")
            rows.append(row)
        }

        var abbas: [JSONValue] = []
        var abbasLines = ""
        if !r.abbasN.isEmpty {
            let perPath = (0..<spectra.paths).map { k in spectra.own.map { $0[k] } }
            for n in r.abbasN {
                let ed = try AbbasED.dimension(spectra: perPath, scale: est.scale, n: n, gamma: r.gamma)
                guard ed.isFinite else { throw TwoScaleError.failure("Abbas ED at n = \(n) is not finite") }
                let kappa = try AbbasED.kappa(n: n, gamma: r.gamma)
                abbas.append(.object([("n", .double(n)), ("kappa", .double(kappa)), ("ed", .double(ed))]))
                abbasLines += "Abbas ED(n = \(Fmt.num(n))) = \(Fmt.num(ed))  (κ = \(Fmt.num(kappa)), γ = \(Fmt.num(r.gamma)))\n"
            }
        }

        var top: [(String, JSONValue)] = [
            ("dimension", .int(spectra.dimension)),
            ("points", .array(points)),
            ("ess", .numbers(ess)),
            ("seconds", .double(seconds)),
            ("layers", .array(meta.layers.map { .int($0) })),
            ("paths", .int(meta.paths)),
            ("inner", .int(meta.inner)),
            ("settings", .object(meta.settings.map { ($0.key, $0.value) })),
            ("zeta", .double(r.zeta)),
            ("normalization", .string(r.normalization.rawValue)),
            ("scale", .double(est.scale)),
            ("mean_trace", .double(spectra.meanTrace)),
            ("clamped", .int(spectra.clampedCount)),
            ("bootstrap", .int(r.bootstrap)),
        ]
        let fisher = meta.setting("fisher")?.stringValue ?? "?"
        let rank = try FisherRank(spectra: spectra, wholeNetwork: fisher == "output")
        top.append(contentsOf: Self.rankFields(rank, zeta: r.zeta, dimension: spectra.dimension))
        if !r.abbasN.isEmpty {
            top.append(("gamma", .double(r.gamma)))
            top.append(("abbas", .array(abbas)))
        }

        let arch = meta.setting("arch")?.stringValue ?? "?"
        var head = "2sED of \(arch) (\(fisher) FIM): d = \(spectra.dimension), layers \(meta.layers), K = \(meta.paths) paths"
        head += meta.inner > 0 ? ", J = \(meta.inner) inner draws\n" : "\n"
        head += "ζ = \(Fmt.num(r.zeta)), normalisation \(r.normalization.rawValue) (c = \(Fmt.num(est.scale))), mean Tr F = \(Fmt.num(spectra.meanTrace))"
        head += ", \(Fmt.num(seconds, 3)) s\n"
        if stages > 0 { head += "ESS per stage (min over ε): " + ess.map { Fmt.num($0, 4) }.joined(separator: ", ") + " of \(meta.paths)\n" }
        head += Self.rankLine(rank, zeta: r.zeta, dimension: spectra.dimension)
        head += "\n"
        var header = ["eps", "d_zeta", "joint"]
        if r.lower { header.append("lower") }
        header.append("ci95 (nested)")
        let human = head + Fmt.table(header, rows) + (abbasLines.isEmpty ? "" : "\n" + abbasLines)
        return NetworkReport(json: .object(top), human: human)
    }
}
