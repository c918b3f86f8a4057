import ArgumentParser
import Foundation
import Estimation
import NetworkEstimators
import Networks
import Samplers
import SpectraStore
import TwoScaleCore
import TwoScaleFormats

/// The measurement flags shared by `ed` and `analyze`: what to compute from the spectra.
struct AnalysisOptions: ParsableArguments {
    @OptionGroup var scale: ScaleOptions

    @Flag(help: "Also report the lower 2sED (layerwise; never above the nested 2sED on the same samples).")
    var lower = false

    @Option(help: "Normalisation: trace (c = d / mean Tr F) or none (c = 1).")
    var normalize: Normalization = .trace

    @Option(help: "plain: bootstrap resamples over paths for the 95% intervals (0: none; default 200).")
    var bootstrap: Int?

    @Option(name: .customLong("abbas-n"), help: ArgumentHelp(
        "Also report the Abbas et al. ED(n) at these sample sizes (a value, list or log grid).", valueName: "list"))
    var abbasN: String?

    @Option(help: "--abbas-n: γ ∈ (0,1] in κ = γn/(2π log n); default 1.")
    var gamma: Double?

    @Option(help: "Parallel tasks (default: the active cores).")
    var threads: Int?

    /// The validated measurement request.
    /// The estimator-specific flags given (`EstimatorRegistry.foreignSetting` refuses another estimator's).
    var given: [Setting] { bootstrap != nil ? [.bootstrap] : [] }

    func request() throws -> MeasurementRequest {
        let bootstrap = self.bootstrap ?? 200
        if gamma != nil, abbasN == nil {
            throw TwoScaleError.usage("--gamma sets the Abbas ED's γ, which only --abbas-n reports: add --abbas-n, or drop --gamma")
        }
        let gamma = self.gamma ?? 1
        guard bootstrap >= 0, bootstrap <= 100_000 else {
            throw TwoScaleError.invalid("--bootstrap", "\(bootstrap)", allowed: "give a resample count from 0 (off) to 100000")
        }
        if bootstrap == 1 {
            throw TwoScaleError.invalid("--bootstrap", "1", allowed: "an interval needs ≥ 2 resamples (0 disables it)")
        }
        let ns = try abbasN.map { try Grid.parse($0, flag: "--abbas-n") } ?? []
        for n in ns { _ = try AbbasED.kappa(n: n, gamma: gamma) }
        return MeasurementRequest(eps: try scale.eps(), zeta: try scale.checkedZeta(), lower: lower, normalization: normalize,
                                  bootstrap: bootstrap, abbasN: ns, gamma: gamma, threads: try checkedThreads())
    }

    func checkedThreads() throws -> Int {
        guard let t = threads else { return Swift.max(1, ProcessInfo.processInfo.activeProcessorCount) }
        guard t >= 1, t <= 1024 else { throw TwoScaleError.invalid("--threads", "\(t)", allowed: "give a count from 1 to 1024") }
        return t
    }
}

/// How `ed` and `analyze` print a network measurement (the numbers come from `PlainReport` and
/// `SMCReport` in NetworkEstimators; this only words them).
enum NetworkReport {
    /// The warning text for a degenerate stage (`WeightDegeneracy`, the rule lives in TwoScaleCore).
    static func essWarning(_ d: WeightDegeneracy?) -> String? {
        guard let d else { return nil }
        let head = "the stage-\(d.stage) weights have an effective sample size of \(Fmt.num(d.ess, 3)) of K = \(d.paths) paths at some ε: "
        guard let share = d.islandNoiseShare else {
            return head + "the average over θ is carried by very few paths, so the Monte Carlo error is larger than K suggests "
                + "(a bootstrap interval over paths can understate it); more --paths help only slowly (see docs/ESTIMATORS.md)"
        }
        let percent = Self.percent(share)
        return head + "the estimate rests on a few islands, and its interval on a lognormal model of their heavy tail (docs/ESTIMATORS.md §5); "
            + (d.islandsFirst ? "\(percent)% of the weights' spread is the islands' own noise, so raise the islands first (--inner J, or --island-sweeps on units with many weights)"
                            : "only \(percent)% of the weights' spread is island noise, the rest real variation over θ, so raise --paths (K)")
            + " (see docs/ESTIMATORS.md)"
    }

    static func essWarning(_ ess: [Double], paths: Int) -> String? { essWarning(WeightDegeneracy.check(ess: ess, paths: paths)) }

    /// The warning text for a lower 2sED whose interval lies wholly above the 2sED's (`LowerAboveNested`).
    static func orderWarning(_ v: LowerAboveNested?) -> String? {
        guard let v else { return nil }
        return "the lower 2sED at ε = \(Fmt.num(v.eps, 6)) is \(Fmt.num(v.excess, 4)) above the 2sED, beyond both intervals "
            + "(lower [\(Fmt.num(v.lowerInterval.lowerBound, 8)), \(Fmt.num(v.lowerInterval.upperBound, 8))], "
            + "2sED [\(Fmt.num(v.nestedInterval.lowerBound, 8)), \(Fmt.num(v.nestedInterval.upperBound, 8))]); the true values "
            + "cannot be in that order: the islands' replicates disagree by many nats there, so the lower term's log correction is "
            + "unreliable and the 2sED's own later-stage term is likely low (docs/ESTIMATORS.md, Limits); "
            + "neither is to be trusted there without a check at larger islands (--inner J, --island-sweeps)"
    }

    /// The warning text for an estimate whose interval lies wholly above its upper bound's (`EstimateAboveBound`).
    static func boundWarning(_ v: EstimateAboveBound?) -> String? {
        guard let v else { return nil }
        let name = v.quantity == "d_zeta" ? "2sED" : "lower 2sED"
        return "the \(name) at ε = \(Fmt.num(v.eps, 6)) is \(Fmt.num(v.estimate, 8)) [\(Fmt.num(v.interval.lowerBound, 8)), "
            + "\(Fmt.num(v.interval.upperBound, 8))], wholly above its upper bound \(Fmt.num(v.bound, 8)) [\(Fmt.num(v.boundInterval.lowerBound, 8)), "
            + "\(Fmt.num(v.boundInterval.upperBound, 8))] (the softmax stage at uniform probabilities, docs/METHOD.md §11); the true "
            + "values cannot be in that order, so the last stage's estimate there is wrong, not noisy: check it at larger islands "
            + "(--inner J, --island-sweeps) and report it (docs/ESTIMATORS.md, \"An upper bound\")"
    }

    /// The warning text for estimates outside their certified bracket (`BracketCheck`).
    static func bracketWarning(_ v: BracketCheck?) -> String? {
        guard let v, !v.isEmpty else { return nil }
        let cases = v.cases.map { c in
            "\(c.quantity == "d_zeta" ? "2sED" : "lower 2sED") \(Fmt.num(c.estimate, 8)) at ε = \(Fmt.num(c.eps, 6)) "
                + (c.quantity == "d_zeta" ? "outside" : "above the 2sED's")
                + " bracket [\(Fmt.num(c.bracket[0], 8)), \(Fmt.num(c.bracket[1], 8))]"
        }.joined(separator: "; ")
        return cases + ": the bracket holds by construction (up to δ), so the estimate is wrong there; "
            + "a lower 2sED above the bracket is printed at its upper end (bracket_check; docs/METHOD.md §19)"
    }

    /// The warning text for an upper bound whose own estimate is expected to fall short by more than its
    /// interval reaches (`SMCReport.boundShortfall`): the ceiling is then higher than printed.
    static func boundShortfallWarning(at p: EpsilonEstimate?, paths: Int) -> String? {
        guard let p, let u = p.bound else { return nil }
        return "at ε = \(Fmt.num(p.eps, 6)) the upper bound's last term, a mean of B over K = \(paths) outer particles whose log B "
            + "spreads over \(Fmt.num(u.stageLogVariance, 4)) nats², falls short of its limit by about \(Fmt.num(u.shortfall(eps: p.eps), 3)) "
            + "in d_ζ under a lognormal model, more than its interval's half-width \(Fmt.num((u.ci95.upperBound - u.ci95.lowerBound) / 2, 3)): "
            + "the bound there is likely higher than printed (shortfall_upper; docs/ESTIMATORS.md, \"An upper bound\")"
    }

    /// The warning text for a 2sED whose later stages are expected to fall short by more than its
    /// interval reaches (`TailShortfall`).
    static func tailWarning(_ v: TailShortfall?) -> String? {
        guard let v else { return nil }
        return "at ε = \(Fmt.num(v.eps, 6)) the outer log-weights spread over \(Fmt.num(v.logVariance, 4)) nats²: under a lognormal "
            + "model of that spread a mean of K = \(v.paths) such weights falls short of its limit by about \(Fmt.num(v.shortfall, 3)) "
            + "in d_ζ, more than the interval's half-width \(Fmt.num(v.halfWidth, 3)), which does not include it; the 2sED there is "
            + "likely higher than reported (how far the real tail follows the model is not known); "
            + tailAdvice(v) + " (docs/ESTIMATORS.md, Limits)"
    }

    /// Which budget the tail-shortfall warning says to raise, from the island-noise share of the widest stage.
    static func tailAdvice(_ v: TailShortfall) -> String {
        guard let share = v.islandNoiseShare else { return "more --paths (K) shrink the shortfall only slowly" }
        let percent = Self.percent(share)
        return v.islandsFirst
            ? "\(percent)% of that spread is the islands' own noise, so raise the islands first (--inner J, or --island-sweeps on "
                + "units with many weights): larger islands shrink the spread itself, and their logs also rise where the islands "
                + "are short of convergence"
            : "only \(percent)% of that spread is island noise, the rest real variation over the earlier layers' weights, which "
                + "more --paths (K) shrink only slowly; --tilt-moves N or --outer-moves N move those weights (docs/METHOD.md §22)"
    }

    /// A share as a whole percentage, as the warnings print it.
    static func percent(_ share: Double) -> String { Fmt.num((100 * share).rounded(), 3) }

    /// The table header's rank line.
    static func rankLine(_ rank: RankReport, dimension: Int) -> String {
        var line = rank.source.summary(dimension: dimension)
        if let g = rank.generic {
            line += g.proved
                ? "; generic rank \(g.bound) (proved: a witness θ* attains the closed-form bound)"
                : "; generic rank ≤ \(g.bound) (closed-form bound; the best witness reaches \(g.witness))"
        }
        switch rank.limitKind {
        case .exact:
            line += "; ε → 0 limit ζd + (1 − ζ)r = \(Fmt.num(rank.dZetaLimit)) (exact)"
        case .lowerBound:
            line += "; ε → 0 limit ζd + (1 − ζ)r ≥ \(Fmt.num(rank.dZetaLimit)) (lower bound: r = \(rank.limitRank), the largest rank seen)"
        }
        return line + "\n"
    }

    /// The certified bracket's cells of a table row: the 2sED's, and the lower 2sED's where asked for.
    static func bracketCells(_ b: CertifiedBracket.Point?, lower: Bool) -> [String] {
        [interval(b?.dZeta)] + (lower ? [interval(b?.dZetaLower)] : [])
    }

    static func interval(_ c: ClosedRange<Double>?) -> String {
        c.map { "[\(Fmt.num($0.lowerBound)), \(Fmt.num($0.upperBound))]" } ?? "—"
    }

    /// Every warning an estimate's checks call for, in the order `ed` prints them.
    static func warnings(_ e: NetworkEstimate) -> [String] {
        let d = e.diagnostics
        return [essWarning(d.degeneracy), orderWarning(d.lowerAboveNested), tailWarning(d.tailShortfall), boundWarning(d.aboveBound),
                boundShortfallWarning(at: d.boundShortfall, paths: e.paths), bracketWarning(d.bracketCheck),
                passesWarning(e.points)].compactMap { $0 }
    }

    /// Joint tempering's check that the sweeps suffice, at the points whose two passes lie further apart than their
    /// replicates' 95% half-widths (`EpsilonEstimate.passesApart`): the moves lag; the interval spans both passes, and
    /// more sweeps narrow it. Nil where none does (and for every other estimator, whose points have no reverse pass).
    static func passesWarning(_ points: [EpsilonEstimate]) -> String? {
        let apart = points.filter(\.passesApart).compactMap { p in
            p.passesGap.map { "at ε = \(Fmt.num(p.eps)) the reverse 2sED is \(Fmt.num(abs($0.gap), 4)) \($0.gap < 0 ? "below" : "above") "
                + "the forward one, beyond their replicates' 95% half-width \(Fmt.num($0.halfWidth, 3))" }
        }
        guard !apart.isEmpty else { return nil }
        return "joint tempering's two passes lie apart: " + apart.joined(separator: "; ")
            + " (ĉ's share, common to both, taken out). The moves lag behind the targets; the interval spans both passes, "
            + "and more --sweeps narrow it (docs/ESTIMATORS.md §8)"
    }

    /// The readable report of an estimate: its report's own where the CLI words it, else a table of
    /// the common points.
    static func text(_ e: NetworkEstimate, architecture: Architecture, narrowing: Bool) -> String {
        if let m = e.report as? SMCReport { return text(m, architecture: architecture, narrowing: narrowing) }
        if let m = e.report as? PlainReport { return text(m) }
        if let m = e.report as? TemperingReport { return text(m, architecture: architecture) }
        let lower = e.points.contains { $0.dZetaLower != nil }
        var header = ["eps", "d_zeta", "ci95"]
        if lower { header += ["lower", "ci95 lower"] }
        let rows = e.points.map { p -> [String] in
            [Fmt.num(p.eps), Fmt.num(p.dZeta), interval(p.ci95)] + (lower ? [Fmt.num(p.dZetaLower), interval(p.ci95Lower)] : [])
        }
        return "2sED of \(architecture) (Markov FIM, \(e.kind) estimator): K = \(e.paths), c = \(Fmt.num(e.scale)), \(Fmt.num(e.seconds, 3)) s\n\n"
            + Fmt.table(header, rows)
    }

    /// The readable report of the plain estimator.
    static func text(_ m: PlainReport) -> String {
        let c = m.settings
        var head = "2sED of \(c.arch) (\(c.fisher.rawValue) FIM): d = \(m.dimension), layers \(m.layers), K = \(m.paths) paths"
        head += m.inner > 0 ? ", J = \(m.inner) inner draws\n" : "\n"
        head += "ζ = \(Fmt.num(m.zeta)), normalisation \(m.normalization.rawValue) (c = \(Fmt.num(m.scale))), mean Tr F = \(Fmt.num(m.meanTrace))"
        head += ", \(Fmt.num(m.seconds, 3)) s\n"
        head += conditionLine(m.settings, normalization: m.normalization, traceDraws: nil, bracket: m.bracket?.scale)
        if !m.ess.isEmpty { head += "ESS per stage (min over ε): " + m.ess.map { Fmt.num($0, 4) }.joined(separator: ", ") + " of \(m.paths)\n" }
        head += rankLine(m.rank, dimension: m.dimension)
        head += "\n"
        let lower = m.points.first?.lower ?? false
        var header = ["eps", "d_zeta", "joint"]
        if lower { header.append("lower") }
        header.append("ci95 (nested)")
        let bracketed = m.points.contains { $0.bracket != nil }
        if bracketed { header += lower ? ["certified bracket", "bracket lower"] : ["certified bracket"] }
        let rows = m.points.map { p -> [String] in
            var row = [Fmt.num(p.eps), Fmt.num(p.dZeta), Fmt.num(p.dZetaJoint)]
            if lower { row.append(Fmt.num(p.dZetaLower)) }
            row.append(interval(p.ci95))
            if bracketed { row += bracketCells(p.bracket, lower: lower) }
            return row
        }
        let abbas = (m.abbas ?? []).map { a in
            "Abbas ED(n = \(Fmt.num(a.n))) = \(Fmt.num(a.ed))  (κ = \(Fmt.num(a.kappa)), γ = \(Fmt.num(m.gamma ?? 1)))\n"
        }.joined()
        return head + Fmt.table(header, rows) + (abbas.isEmpty ? "" : "\n" + abbas)
    }

    /// Samplers, steps, the acceptance rate, the share of proposals whose spectrum was computed and the
    /// smallest decorrelation of a move.
    static func samplerLine(_ d: SMCDiagnostics) -> String {
        var line = "\(d.samplers) samplers, \(Fmt.num(d.meanSteps, 3)) steps on average (max \(d.maxSteps)), acceptance \(Fmt.num(d.acceptanceRate, 3))"
        if let e = d.evaluatedFraction, e < 1 { line += ", \(Fmt.num(e, 3)) of proposals evaluated" }
        if let m = d.minDecorrelation { line += ", decorrelation ≥ \(Fmt.num(m, 2))" }
        return line
    }

    /// The readable report of the tempering estimator (joint tempering): per ε the 2sED, the interval to read (the hull of
    /// both passes' intervals), the forward and reverse passes' own, the certified bracket, and how far apart the replicates came out.
    static func text(_ m: TemperingReport, architecture: Architecture) -> String {
        var head = "2sED of \(architecture) (Markov FIM, tempering estimator: joint tempering): d = \(m.dimension), \(m.replicates) samplers of \(m.particles) particles, "
        head += "\(m.sweeps) sweeps per step, \(m.steps) tempering steps in all, acceptance \(Fmt.num(m.acceptance, 3))\n"
        head += "ζ = \(Fmt.num(m.zeta)), normalisation \(m.normalization.rawValue) (c = \(Fmt.num(m.scale)) from \(m.traceDraws) draws), \(Fmt.num(m.seconds, 3)) s\n"
        if let s = m.settings { head += conditionLine(s, normalization: m.normalization, traceDraws: m.traceDraws, bracket: m.bracket?.scale) }
        head += rankLine(m.rank, dimension: m.dimension) + "\n"
        let lower = m.points.first?.lower ?? false
        let rows = m.points.map { p -> [String] in
            let spread = (p.replicateLogZ.max() ?? 0) - (p.replicateLogZ.min() ?? 0)
            var row = [Fmt.num(p.eps), Fmt.num(p.dZeta), interval(p.interval?.range) + (p.interval?.source == .bracket ? " (bracket)" : ""),
                       interval(p.ci95), Fmt.num(p.dZetaReverse), interval(p.ci95Reverse), interval(p.bracket?.dZeta)]
            if lower { row += [Fmt.num(p.dZetaLower), reported(p.intervalLower, else: p.ci95Lower), interval(p.bracket?.dZetaLower)] }
            return row + [Fmt.num(spread, 3)]
        }
        var header = ["eps", "d_zeta", "interval", "forward ci95", "reverse", "reverse ci95", "certified bracket"]
        if lower { header += ["lower", "interval lower", "bracket lower"] }
        return head + Fmt.table(header + ["replicates' range (nats)"], rows)
            + "\ninterval: the hull of the forward and reverse passes' 95% intervals (Student's t over the replicates), cut to the bracket;\n"
            + "the passes lag in opposite directions where the sweeps fall short, so a wide hull asks for more --sweeps (docs/ESTIMATORS.md §8)\n"
            + (lower ? "interval lower: from tempering each prefix of layers, then islands of the next layer (docs/ESTIMATORS.md §8)\n" : "")
    }

    /// The readable report of the smc estimator; with `narrowing`, where an interval is the bracket, what narrows it
    /// (`narrowingLine`: not after `--target-width`, whose own summary says what stopped it).
    static func text(_ m: SMCReport, architecture: Architecture, narrowing: Bool) -> String {
        var head = "2sED of \(architecture) (Markov FIM, smc estimator): d = \(m.dimension), K = \(m.paths)"
        head += m.inner > 0 ? ", J = \(m.inner)" : ""
        head += m.chains > 1 ? ", \(m.chains) chains (estimates their mean, 95% intervals their spread; c the first's)\n" : "\n"
        head += "ζ = \(Fmt.num(m.zeta)), normalisation \(m.normalization.rawValue) (c = \(Fmt.num(m.scale)) from \(m.traceDraws) draws), \(Fmt.num(m.seconds, 3)) s\n"
        head += conditionLine(m.settings, normalization: m.normalization, traceDraws: m.traceDraws, bracket: m.bracket?.scale)
        head += "stage 1: " + samplerLine(m.stage1) + "\n"
        if !m.ess.isEmpty { head += "islands: " + samplerLine(m.islands) + "\n" }
        head += rankLine(m.rank, dimension: m.dimension)
        head += "\n"
        let lower = m.points.first?.lower ?? false
        var header = ["eps", "d_zeta", "interval"]
        if lower { header += ["lower", "interval lower"] }
        let bracketed = m.points.contains { $0.bracket != nil }
        if bracketed { header += lower ? ["certified bracket", "bracket lower"] : ["certified bracket"] }
        let bounded = m.points.contains { $0.bound != nil }
        if bounded { header += lower ? ["2sED ≤", "lower ≤"] : ["2sED ≤"] }
        header += ["outer ESS", "island noise"]
        let rows = m.points.map { p -> [String] in
            var row = [Fmt.num(p.eps), Fmt.num(p.dZeta), reported(p.interval, else: p.ci95)]
            if lower { row += [Fmt.num(p.dZetaLower), reported(p.intervalLower, else: p.ci95Lower)] }
            if bracketed { row += bracketCells(p.bracket, lower: lower) }
            if bounded { row += [Fmt.num(p.bound?.dZeta)] + (lower ? [Fmt.num(p.bound?.dZetaLower)] : []) }
            row.append(p.ess.map { Fmt.num($0, 3) }.joined(separator: ", "))
            row.append(p.islandNoise.map { "\(Fmt.num((100 * $0).rounded(), 3))%" }.joined(separator: ", "))
            return row
        }
        let note = bounded ? "\n2sED ≤, lower ≤: the upper bounds' estimates (the softmax stage at uniform probabilities, docs/METHOD.md §11); "
            + "the last stage's estimate is too low by at most the distance to them, given the shared earlier stages\n" : ""
        let fallback = m.points.contains { $0.interval?.source == .bracket || $0.intervalLower?.source == .bracket }
        let why = "\ninterval: the 95% interval cut to the certified bracket; `bracket`: the bracket itself, where with two or more hidden "
            + "layers the islands are noisy or the outer weights vary over the earlier layers, or the outer ESS (below "
            + "\(Fmt.num(100 * ReportedInterval.minimumESSFraction))% of K counted, or "
            + "\(Fmt.num(100 * ReportedInterval.minimumLimitESSFraction))% in the lognormal limit; not for the lower 2sED of one hidden layer, "
            + "which takes no outer weight, but its islands' noise above \(Fmt.num(ReportedInterval.maximumIslandNoiseVariance)) nat²) "
            + "says the sampled interval cannot be believed, "
            + "or stage 1's moves left its particles near their starts (decorrelation below \(Fmt.num(ReportedInterval.minimumDecorrelation)))"
            + (m.stage1.minDecorrelation.map { $0 < ReportedInterval.minimumDecorrelation
                ? ": here \(Fmt.num($0, 2)); more --stage1-sweeps raise it (about one per input: slower)" : "" } ?? "")
            + " (docs/ESTIMATORS.md §5)\n" + (narrowing ? narrowingLine(deep: m.ess.count >= 2) : "")
        return head + Fmt.table(header, rows) + note + (fallback ? why : "") + lowerAboveLine(m.points.map { ($0.eps, $0.dZeta, $0.dZetaLower) }, columns: ("lower", "d_zeta"))
            + movesLine(m.points) + tiltLine(m.points)
    }

    /// What every number of a network report is conditional on: the inputs, the noise draws and how c was
    /// found, with the bracket's own interval for c where it has one (a fresh data set or noise draw is
    /// another stand-in; how the 2sED moves with N: Reports/convergence-n.md).
    static func conditionLine(_ s: NetworkRunConfiguration, normalization: Normalization, traceDraws: Int?, bracket: ScaleRange?) -> String {
        var parts = ["the N = \(s.samples) inputs of \(s.data)" + (s.data.hasPrefix("synthetic:") ? " (seed \(s.seed))" : "")]
        if let r = s.noiseSamples { parts.append("\(r) noise draw\(r == 1 ? "" : "s") per input (seed \(s.seed))") }
        switch normalization {
        case .trace:
            var c = traceDraws.map { "the estimate's c from \($0) uniform draws" } ?? "the estimate's c from the paths"
            if let t = bracket?.trace, let r = bracket?.range {
                c += " (the bracket holds for the true c: c ∈ [\(Fmt.num(r.lowerBound, 6)), \(Fmt.num(r.upperBound, 6))] from \(t.draws) draws of its own)"
            }
            parts.append(c)
        case .none: parts.append("c = 1")
        }
        return "conditional on: " + parts.joined(separator: ", ")
            + " — every interval and bracket here holds for this stand-in, not for the population; how the 2sED moves with N: Reports/convergence-n.md\n"
    }

    /// Where an estimated lower 2sED is printed above the estimated 2sED: why that can be.
    static func lowerAboveLine(_ points: [(eps: Double, dZeta: Double, lower: Double?)], columns: (lower: String, dZeta: String)) -> String {
        let above = points.filter { ($0.lower ?? -.infinity) > $0.dZeta }.map { Fmt.num($0.eps) }
        guard !above.isEmpty else { return "" }
        return "\n\(columns.lower) is above \(columns.dZeta) at ε = \(above.joined(separator: ", ")): two estimates, each with its own "
            + "Monte Carlo error; the true lower 2sED is never above the 2sED, so read both with their intervals\n"
    }

    /// What `--outer-moves` did, per ε and moved layer (empty where nothing was moved).
    static func movesLine(_ points: [EpsilonEstimate]) -> String {
        movesLine(points.map { ($0.eps, $0.moves) }, stage: "layer")
    }

    /// The same from each point's ε and per-stage move diagnostics, naming stage m `stage` (`firstTrial`: a
    /// multi-trial run's first; `bound`: the run has an upper bound's last term to qualify).
    static func movesLine(_ points: [(eps: Double, moves: [OuterMoveDiagnostics])], stage: String, firstTrial: Bool = false,
                          bound: Bool = true) -> String {
        let parts = points.compactMap { p -> String? in
            let moved = p.moves.enumerated().filter { $0.element.steps > 0 }
            guard !moved.isEmpty else { return nil }
            return "ε = \(Fmt.num(p.eps)): " + moved.map { m, d in
                "\(stage) \(m + 1) under \(stage) \(m + 2)'s weights in \(d.steps) step\(d.steps == 1 ? "" : "s"), acceptance "
                    + "\(Fmt.num(d.acceptance, 2)), \(Fmt.num((100 * d.distinct).rounded(), 3))% distinct"
            }.joined(separator: ", ")
        }
        guard !parts.isEmpty else { return "" }
        let lastMoved = points.contains { ($0.moves.last?.steps ?? 0) > 0 }
        return "\nouter moves (docs/METHOD.md §22\(firstTrial ? "; the first trial" : "")): " + parts.joined(separator: "; ")
            + "; outer ESS and the interval's source are the unmoved weights'"
            + (lastMoved && bound ? ", and so is the bound's last term, which a moved last \(stage)'s estimate may exceed" : "") + "\n"
    }

    /// What `--tilt-moves` did, per ε and later layer: tilted (steps, acceptance, decorrelation) or why not.
    static func tiltLine(_ points: [EpsilonEstimate]) -> String {
        tiltLine(points.map { ($0.eps, $0.tilts, $0.islandNoise) }, stage: "layer")
    }

    /// The same from each point's ε, per-stage tilt diagnostics and islands' noise shares, naming stage m ≥ 2 `stage`
    /// (`firstTrial`: the diagnostics are a multi-trial run's first).
    static func tiltLine(_ points: [(eps: Double, tilts: [TiltDiagnostics], islandNoise: [Double])], stage: String,
                         firstTrial: Bool = false) -> String {
        let parts = points.compactMap { p -> String? in
            guard !p.tilts.isEmpty else { return nil }
            return "ε = \(Fmt.num(p.eps)): " + p.tilts.enumerated().map { m, d in
                let name = "\(stage) \(m + 2)", fit = "β \(Fmt.num(d.slope, 3)), R² \(Fmt.num(d.explained, 2))"
                guard d.engaged else {
                    return "\(name) not tilted (" + declinedWords(d, fit: fit, islandNoise: m < p.islandNoise.count ? p.islandNoise[m] : nil) + ")"
                }
                return "\(name) tilted (\(fit)) in \(d.steps) step\(d.steps == 1 ? "" : "s"), acceptance \(Fmt.num(d.acceptance, 2))"
                    + (d.decorrelation.map { ", decorrelation \(Fmt.num($0, 2))" } ?? "")
            }.joined(separator: ", ")
        }
        guard !parts.isEmpty else { return "" }
        return "\nmajorant tilt (docs/METHOD.md §22\(firstTrial ? "; the first trial" : "")): " + parts.joined(separator: "; ")
            + (points.contains { $0.tilts.contains(where: \.engaged) } ? "; outer ESS and the interval's source are the tilted weights'" : "") + "\n"
    }

    /// Why a stage was not tilted, in words; where the fit failed and the islands' noise is at least half of the outer
    /// log-weights' spread, that no majorant can explain half of it (the noise is independent of θ_{<m}).
    static func declinedWords(_ d: TiltDiagnostics, fit: String, islandNoise: Double?) -> String {
        let noisy = islandNoise.flatMap { $0 >= 0.5
            ? "; the islands' noise is \(Fmt.num((100 * $0).rounded(), 3))% of the outer log-weights' spread, so no fit can explain half "
                + "of it: larger islands first (--inner)"
            : nil } ?? ""
        switch d.declined {
        case .essAtLeastHalf?: return "\(fit): its outer ESS is at least half of K"
        case .slopeNotPositive?: return "\(fit): the slope is not positive" + noisy
        case .explainedBelowHalf?:
            return "\(fit): the majorant explains less than \(Fmt.num(MarkovSMC.Staged.tiltExplainedFraction)) of its outer log-weights' spread" + noisy
        case .noFit?: return "no fit: no majorant, or it or the islands' logs did not vary"
        case nil: return fit
        }
    }

    /// What narrows a reported bracket: `--target-width`, and with two or more hidden layers (`deep`) joint
    /// tempering, whose interval is the one that can stand there (docs/ESTIMATORS.md §5, §8).
    static func narrowingLine(deep: Bool) -> String {
        "to narrow it: --target-width W raises the budget until every interval is at most W of its estimate, or says what stops it"
            + (deep ? "; with two or more hidden layers the smc interval seldom stands, and joint tempering (--estimator tempering, "
                + "with --target-width) is the sampler whose interval can, at a far higher cost (docs/ESTIMATORS.md §8)" : "") + "\n"
    }

    /// A reported interval, marked `bracket` where it is the certified bracket; else `sampled` as it is.
    static func reported(_ r: ReportedInterval?, else sampled: ClosedRange<Double>?) -> String {
        guard let r else { return interval(sampled) }
        return interval(r.range) + (r.source == .bracket ? " bracket" : "")
    }
}
