import ArgumentParser
import Foundation
import Estimation
import NetworkEstimators
import ToyModels
import Samplers
import TwoScaleCore
import TwoScaleFormats

/// `--family NAME`: `constant` or an axis family in `AxisFamilies` (the parser lists them on an unknown one).
extension Family: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
    public static var allValueStrings: [String] { Family.names }
    public var defaultValueDescription: String { name }
}
/// `--estimator NAME`: a name in `EstimatorRegistry` (the parser lists them on an unknown one).
extension EstimatorKind: ExpressibleByArgument {
    /// A current name, or a former one (`EstimatorRegistry.renamed`, kept as given so that the command notes it).
    public init?(argument: String) {
        guard let kind = (EstimatorRegistry.kinds + EstimatorRegistry.renamed.keys).first(where: { $0.rawValue == argument }) else { return nil }
        self = kind
    }

    public static var allValueStrings: [String] { EstimatorRegistry.kinds.map(\.rawValue) }
}

/// `toy --family`: a separable family of `ToyModel` (`Family`), or a staged one (`StagedToyFamilies`). Equal when
/// their names are.
enum ToyFamily: Equatable, ExpressibleByArgument {
    case separable(Family)
    case staged(any StagedToyFamily)

    static let constant = ToyFamily.separable(.constant)

    init?(argument: String) {
        if let f = StagedToyFamilies.named(argument) { self = .staged(f); return }
        guard let f = Family(name: argument) else { return nil }
        self = .separable(f)
    }

    static var allValueStrings: [String] { Family.names + StagedToyFamilies.all.map(\.name) }

    var name: String {
        switch self {
        case .separable(let f): return f.name
        case .staged(let f): return f.name
        }
    }

    var defaultValueDescription: String { name }

    static func == (a: ToyFamily, b: ToyFamily) -> Bool { a.name == b.name }

    var axis: Family? {
        if case .separable(let f) = self { return f }
        return nil
    }

    var staged: (any StagedToyFamily)? {
        if case .staged(let f) = self { return f }
        return nil
    }
}

/// `toy --mc`: the Monte Carlo estimators run on the exact toy model, beside the exact value.
struct ToyMonteCarloOptions: ParsableArguments {
    @Flag(help: "Also estimate d_ζ by Monte Carlo (d_zeta_mc, ci95_mc) beside the exact d_zeta.")
    var mc = false

    static let defaultEstimator = EstimatorRegistry.edDefault

    @Option(help: "smc (annealed SMC per axis) or plain (uniform draws of θ).")
    var estimator: EstimatorKind = Self.defaultEstimator

    @Option(help: "K: plain: draws of θ; smc: particles per axis (default 100); layered: outer particles (64).")
    var paths: Int?

    @Option(help: "Layered: J, island particles per stage-2 unit (default 32, as ed); --joint's lower 2sED keeps 32.")
    var inner: Int?

    @Option(help: "Staged families (layered): Metropolis–Hastings sweeps per island step (default 4, as ed).")
    var islandSweeps: Int?

    @Option(name: .customLong("stage1-sweeps"), help: "Staged families (layered): sweeps per stage-1 step (default 20, as ed).")
    var stageOneSweeps: Int?

    @Flag(inversion: .prefixedNo, help: "Layered: independence sweeps in stage 1 and the islands (default: on for units of ≥ 100 coordinates).")
    var independenceMoves: Bool?

    @Option(help: ArgumentHelp("Layered: rerun, raising what limits it, until every reported interval is at most W of its estimate.", valueName: "W"))
    var targetWidth: Double?

    @Option(help: "With --target-width: the largest K (default 8 × the starting K).")
    var maxPaths: Int?

    @Option(help: "Seed of the Monte Carlo draws (trial i uses seed + i − 1).")
    var seed: UInt64 = 1

    @Option(help: "Repetitions with seeds seed, seed+1, …; reports how often the 95% interval holds.")
    var trials: Int = 1

    @Option(help: "smc: uniform draws of θ for the trace normalisation (default: one per two axes, ≥ 1000).")
    var traceDraws: Int?

    @Option(help: "plain: bootstrap resamples over draws for the 95% interval (default 200).")
    var bootstrap: Int?

    @Option(help: "Parallel tasks (default: the active cores). Results do not depend on it.")
    var threads: Int?

    func validate() throws {
        guard trials >= 1, trials <= 10_000 else { throw TwoScaleError.invalid("--trials", "\(trials)", allowed: "give from 1 to 10000 trials") }
        if let t = threads, t < 1 || t > 1024 { throw TwoScaleError.invalid("--threads", "\(t)", allowed: "give a count from 1 to 1024") }
    }

    var threadCount: Int { threads ?? Swift.max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// `--independence-moves` or `--no-independence-moves`, as given (for messages).
    var independenceMovesFlag: String { independenceMoves == false ? "--no-independence-moves" : "--independence-moves" }

    /// The estimator-specific flags given (`--trace-draws` smc's, `--bootstrap` plain's, as for networks).
    var given: [Setting] { (traceDraws != nil ? [.traceDraws] : []) + (bootstrap != nil ? [.bootstrap] : []) }
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
        log Π_i (1 + ε⁻¹∫√λ_i). Counts too large for a double's integers are given in log form only. \
        --family layered: stages w_1, w_2, …, F = diag(w_1², e^(γκ_1) w_2², …) with κ_m the share of the \
        coordinates of stages 1…m above --threshold; exact 2sED and lower 2sED by binomial sums, and --mc runs \
        the networks' smc estimator on it (docs/METHOD.md §20).
        """)

    @Option(help: "Family of λ.")
    var family: ToyFamily = .constant

    @Option(help: ArgumentHelp("--family layered: units per stage, n1,n2[,n3…] (default 10,10; 2 to 8 stages).", valueName: "n1,n2,…"))
    var units: String?

    @Option(help: ArgumentHelp("--family layered: coordinates per unit, one per stage (default 1000 each: d = 2·10⁴).", valueName: "p1,p2,…"))
    var unitSize: String?

    @Option(help: "--family layered: b, the level above which a coordinate is active (default: the box's midpoint).")
    var threshold: Double?

    @Flag(help: "Staged families with --mc: also run joint tempering (all stages moved together; docs/METHOD.md §21).")
    var joint = false

    @Option(help: "--joint: Metropolis sweeps per tempering step (default: a quarter of the widest unit, 5 to 1000).")
    var sweeps: Int?

    @Option(help: "Staged families with --mc: as ed's --outer-moves, on stage 1 (default 0, off).")
    var outerMoves: Int = 0

    @Option(help: ArgumentHelp("Staged families with --mc: as ed's --tilt-moves (default 0, off).", valueName: "N"))
    var tiltMoves: Int = 0

    @Option(help: ArgumentHelp("Staged families with --mc: R independent runs joined, their spread the variance.", valueName: "R"))
    var chains: Int = 1

    @Option(help: "--family layered: γ in h = e^(γκ), κ the earlier stages' share of active coordinates (default 0.12).")
    var coupling: Double?

    @Option(help: ArgumentHelp("λ per axis for --family constant (comma-separated, each ≥ 0); d = count.", valueName: "list"))
    var lambdas: String?

    @Option(help: "Dimension d (required for non-constant families; with one λ, repeats it d times).")
    var dim: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Parameter box lo:hi, the same on every axis.", valueName: "lo:hi"))
    var box: String = "0:1"

    @OptionGroup var scale: ScaleOptions

    @Option(help: "Normalisation: trace (c = d / E Tr F) or none (c = 1).")
    var normalize: Normalization = .trace

    @Option(help: "Largest greedy 1-D cover to compute per axis and ε (0 disables the greedy count).")
    var greedyMax: Int = 1_000_000

    @OptionGroup var monteCarlo: ToyMonteCarloOptions

    @OptionGroup var output: OutputOptions

    /// A registered staged family's own settings (`stagedSettings` reads them).
    @Argument(parsing: .allUnrecognized, help: .hidden)
    var familyWords: [String] = []

    func validate() throws {
        _ = try stagedSettings()
        if let d = dim, d < 1 { throw TwoScaleError.invalid("--dim", "\(d)", allowed: "the dimension must be ≥ 1") }
        if greedyMax < 0 { throw TwoScaleError.invalid("--greedy-max", "\(greedyMax)", allowed: "give a count ≥ 0") }
    }

    /// A staged family's settings given to another family, the staged estimators' flags given to a separable
    /// family, and a separable family's flags given to a staged one: each an error, not ignored.
    func checkFamilyFlags() throws {
        let staged = StagedToyFamilies.all.map(\.name).joined(separator: " or ")
        for (setting, _) in try stagedSettings() where family.staged?.settings.contains(setting) != true {
            let owner = StagedToyFamilies.owners[setting]?.name ?? staged
            throw TwoScaleError.usage("\(FlagSpelling.flag(for: setting)) is a setting of --family \(owner); drop it, or use --family \(owner)")
        }
        let stagedOnly = [(monteCarlo.inner != nil, "--inner"), (monteCarlo.islandSweeps != nil, "--island-sweeps"),
                          (monteCarlo.stageOneSweeps != nil, "--stage1-sweeps"),
                          (monteCarlo.independenceMoves != nil, monteCarlo.independenceMovesFlag),
                          (monteCarlo.targetWidth != nil, "--target-width"), (monteCarlo.maxPaths != nil, "--max-paths"),
                          (joint, "--joint"), (sweeps != nil, "--sweeps"), (outerMoves != 0, "--outer-moves"),
                          (tiltMoves != 0, "--tilt-moves"), (chains != 1, "--chains")].filter(\.0).map(\.1)
        if family.staged == nil, let flag = stagedOnly.first {
            throw TwoScaleError.usage("\(flag) is a setting of --family \(staged); drop it, or use --family \(staged)")
        }
        if family.staged != nil {
            let others = [(lambdas != nil, "--lambdas"), (dim != nil, "--dim"), (greedyMax != 1_000_000, "--greedy-max"),
                          (monteCarlo.bootstrap != nil, "--bootstrap")].filter(\.0).map(\.1)
            if let flag = others.first {
                throw TwoScaleError.usage("\(flag) does not apply to --family \(family.name) (its dimension comes from its stages); drop it")
            }
            if !(try EstimatorRegistry.estimator(monteCarlo.estimator)).estimatesStagedToys {
                let estimators = EstimatorRegistry.all.filter { $0.estimatesStagedToys }.map { $0.kind.rawValue }.joined(separator: " or ")
                throw TwoScaleError.usage("--family \(family.name) is estimated by \(estimators) only (the estimator it exists to test); drop --estimator \(monteCarlo.estimator)")
            }
        }
        if monteCarlo.mc {
            // Another estimator's settings: an error, not ignored (the rule of ed and compare).
            try EstimatorFlags.refuseForeign(monteCarlo.given, kind: monteCarlo.estimator,
                                             choice: monteCarlo.estimator == ToyMonteCarloOptions.defaultEstimator ? .byDefault : .given)
        }
    }

    /// The staged families' settings given: the shipped family's flags, then a registered family's own
    /// (`familyWords`: `--name v` or `--name=v`, a list of numbers each); any other word is an error, as the parser's own.
    func stagedSettings() throws -> [(Setting, [Double])] {
        var out: [(Setting, [Double])] = []
        if let u = units { out.append((.units, try Grid.parseList(u, flag: "--units"))) }
        if let p = unitSize { out.append((.unitSize, try Grid.parseList(p, flag: "--unit-size"))) }
        if let b = threshold { out.append((.threshold, [b])) }
        if let g = coupling { out.append((.coupling, [g])) }
        let own: Set<Setting> = [.units, .unitSize, .threshold, .coupling]
        for w in try FlagSpelling.pluginValues(familyWords, settings: StagedToyFamilies.owners.keys.filter { !own.contains($0) }) {
            out.append((w.setting, try Grid.parseList(w.value, flag: w.flag)))
        }
        return out
    }

    func run() async throws {
        try checkFamilyFlags()
        if let staged = family.staged {
            let model = try staged.model(Dictionary(try stagedSettings(), uniquingKeysWith: { _, b in b }),
                                         box: try Grid.parseInterval(box, flag: "--box"))
            return try await runStaged(family: staged.name, model: model)
        }
        guard let axisFamily = family.axis else { return }
        let lam: [Double] = try lambdas.map { try Grid.parseList($0, flag: "--lambdas") } ?? []
        if family == .constant && lambdas == nil {
            throw TwoScaleError.missing("--lambdas", "--family constant needs --lambdas, e.g. --lambdas 4,0.01")
        }
        let model = try ToyModel(family: axisFamily, lambdas: lam, dimension: dim,
                                 box: try Grid.parseInterval(box, flag: "--box"))
        let eps = try scale.eps()
        let zeta = try scale.checkedZeta()
        var result = try ToyMeasurement.measure(model: model, eps: eps, zeta: zeta, normalization: normalize, greedyMax: greedyMax)
        if monteCarlo.mc {
            let o = monteCarlo
            try await result.runMonteCarlo(method: try EstimatorRegistry.toyMethod(o.estimator), paths: o.paths ?? 100, seed: UInt64(o.seed), trials: o.trials,
                                           traceDraws: o.traceDraws, bootstrap: o.bootstrap ?? 200, threads: o.threadCount)
        }
        try output.emit(result) { ToyReport.text(result) }
    }

    /// A staged family: exact values, and with `--mc` the smc estimator beside them.
    func runStaged<Model: ExactStagedToy>(family: String, model: Model) async throws {
        var result = try StagedToyMeasurement.measure(family: family, model: model, eps: try scale.eps(), zeta: try scale.checkedZeta(),
                                                       normalization: normalize)
        if joint && !monteCarlo.mc { throw TwoScaleError.usage("--joint runs beside the smc estimator: add --mc") }
        if sweeps != nil && !joint { throw TwoScaleError.usage("--sweeps is a setting of joint tempering: add --joint") }
        if let s = sweeps { try JointSMC<Model>.checkSweeps(s) }
        if outerMoves != 0 && !monteCarlo.mc { throw TwoScaleError.usage("--outer-moves is a setting of the smc estimator: add --mc") }
        if tiltMoves != 0 && !monteCarlo.mc { throw TwoScaleError.usage("--tilt-moves is a setting of the smc estimator: add --mc") }
        if chains != 1 && !monteCarlo.mc { throw TwoScaleError.usage("--chains is a setting of the smc estimator: add --mc") }
        if monteCarlo.independenceMoves != nil && !monteCarlo.mc {
            throw TwoScaleError.usage("\(monteCarlo.independenceMovesFlag) is a setting of the smc estimator: add --mc")
        }
        if monteCarlo.maxPaths != nil && monteCarlo.targetWidth == nil {
            throw TwoScaleError.usage("--max-paths caps --target-width's rounds: add --target-width W, or drop --max-paths")
        }
        if monteCarlo.targetWidth != nil {
            if !monteCarlo.mc { throw TwoScaleError.usage("--target-width is a setting of the smc estimator: add --mc") }
            if monteCarlo.trials != 1 { throw TwoScaleError.usage("--target-width runs one trial: drop --trials, and vary --seed instead") }
            if joint { throw TwoScaleError.usage("--target-width sets the smc estimator's budget, not joint tempering's: drop --joint") }
        }
        var target: PrecisionTarget?
        if monteCarlo.mc {
            let o = monteCarlo
            let paths = o.paths ?? StagedSMC<Model>.defaultPaths, inner = o.inner ?? StagedSMC<Model>.defaultInner
            let draws = o.traceDraws ?? TraceEstimate.defaultDraws(parameters: model.parameterCount)
            let sweeps = o.islandSweeps ?? StagedSMC<Model>.defaultIslandSweeps
            let firstSweeps = o.stageOneSweeps ?? StagedSMC<Model>.defaultStageOneSweeps
            try StagedSMC<Model>.checkBudget(paths: paths, inner: inner, traceDraws: draws, layers: model.stageUnits.count, islandSweeps: sweeps,
                                             stageOneSweeps: firstSweeps, moveProposals: outerMoves)
            try StagedSMC<Model>.checkTilt(proposals: tiltMoves, moveProposals: outerMoves)
            try StagedSMC<Model>.checkChains(chains)
            let progress = PhaseProgress(label: "toy", threads: o.threadCount)
            let exact = result, joint = self.joint, outerMoves = self.outerMoves, tiltMoves = self.tiltMoves, chains = self.chains
            let jointSweeps = self.sweeps ?? JointSMC<Model>.defaultSweeps(units: model.stageUnits)
            // One run of the estimator at a budget, beside the exact values; its first trial's points.
            @Sendable func run(_ b: PrecisionTarget.Budget) async throws -> (result: StagedToyMeasurement<Model>, points: [EpsilonEstimate]) {
                var r = exact
                let points = try await r.runMonteCarlo(paths: b.paths, inner: b.inner, seed: UInt64(o.seed), trials: o.trials, traceDraws: b.traceDraws,
                                                       islandSweeps: sweeps, stageOneSweeps: b.stageOneSweeps, moveProposals: outerMoves,
                                                       tiltProposals: tiltMoves, chains: chains,
                                                       independenceMoves: b.independenceMoves, joint: joint,
                                                       jointSweeps: jointSweeps, threads: o.threadCount) {
                    progress.phase($0)
                }
                return (r, points)
            }
            let independence = o.independenceMoves ?? StagedToyMeasurement<Model>.independenceMovesByDefault(model)
            let start = PrecisionTarget.Budget(paths: paths, inner: inner, stageOneSweeps: firstSweeps, independenceMoves: independence,
                                               traceDraws: draws)
            if let w = o.targetWidth {
                let say: @Sendable (String) -> Void = { progress.phase($0) }
                let out = try await progress.observing {
                    try await PrecisionTarget.run(start: start, width: w, maxPaths: o.maxPaths,
                                                  defaultStageOneSweeps: StagedSMC<Model>.defaultStageOneSweeps,
                                                  maximumStageOneSweeps: StagedSMC<Model>.maximumStageOneSweeps, progress: say, round: run)
                }
                (result, target) = (out.result, out.target)
            } else {
                result = try await progress.observing { try await run(start).result }
            }
        }
        try output.emit(result, extra: try target.map { [("precision_target", try JSONValue(encoding: $0))] } ?? []) {
            StagedToyReport.text(result) + (target.map { "\n" + $0.summary + "\n" } ?? "")
        }
    }
}

/// A count as a table cell: exact below 2⁵³, `e^log` above, ∞ when no finite cover exists.
private func countCell(_ count: BoxCount) -> String {
    count.exact.map { String(format: "%.0f", $0) } ?? (count.log.isFinite ? "e^" + Fmt.num(count.log, 5) : "∞")
}

/// How `toy` words a `ToyMeasurement` as tables.
enum ToyReport {
    static func text(_ r: ToyMeasurement) -> String {
        let model = r.model
        var rows: [[String]] = []
        for p in r.points {
            var row = [Fmt.num(p.eps), Fmt.num(p.dZeta), Fmt.num(p.dZetaRaw), countCell(p.count),
                       Fmt.num(p.count.log.isFinite ? p.count.log : nil), Fmt.num(p.logEpsPowMinusDZeta), Fmt.num(p.logDetBound)]
            if !r.constant {
                row.append(r.greedyMax == 0 ? "off" : p.greedy.map(countCell) ?? "> --greedy-max")
            }
            rows.append(row)
        }
        let c = r.logCoveringConstant
        let head = "toy model: family \(model.family.name), d = \(model.dimension), box [\(model.lo), \(model.hi)]^d, ζ = \(Fmt.num(r.zeta)), normalisation \(r.normalization.rawValue)\n"
            + "box counts: \(r.constant ? "exact minimal cover" : "two-scale cover (meso side ε^ζ)")\n"
            + ToyMeasurement.metricNote + "\n"
            + (c.isFinite ? "covering constant max_ε N(ε)·ε^(d_ζ(c=1)) over this grid: \(Fmt.num(Foundation.exp(Swift.min(c, 700)))) (log \(Fmt.num(c)))\n" : "")
            + "\n"
        var columns = ["eps", "d_zeta", "d_zeta(c=1)", "box count (c=1)", "log count", "log ε^-d_zeta(c=1)", "log det bound (c=1)"]
        if !r.constant { columns.append("greedy 1-D cover^d") }
        var text = head + Fmt.table(columns, rows) + (r.greedyCapped ? "\n" + ToyMeasurement.greedyNote + "\n" : "")
        if let mc = r.monteCarlo {
            var columns = ["eps", "exact d_zeta", "MC d_zeta", "MC 95% interval", "error"]
            if mc.trials > 1 { columns += ["covered", "bias", "sd"] }
            let rows = r.points.compactMap { p -> [String]? in
                guard let q = p.monteCarlo else { return nil }
                var row = [Fmt.num(p.eps), Fmt.num(p.dZeta), Fmt.num(q.dZetaMc),
                           "[\(Fmt.num(q.ci95Mc.lowerBound)), \(Fmt.num(q.ci95Mc.upperBound))]", Fmt.num(q.errorMc)]
                if let t = q.trials, let k = q.covered { row += ["\(k)/\(t)", Fmt.num(q.mcBias), Fmt.num(q.mcSd)] }
                return row
            }
            text += "\nMonte Carlo (\(mc.estimator.rawValue), K = \(mc.paths), seed \(mc.seed)\(mc.trials > 1 ? ", \(mc.trials) trials" : "")):\n"
                + Fmt.table(columns, rows)
        }
        return text
    }
}

/// How `toy` words a staged family's `StagedToyMeasurement`.
enum StagedToyReport {
    static func text<Model>(_ r: StagedToyMeasurement<Model>) -> String {
        let m = r.model
        let parts = ["stages \(m.stageUnits.map { "\($0.count)×\($0.dimension)" }.joined(separator: ", ")) (d = \(m.parameterCount))",
                     "box [\(Fmt.num(m.box.lowerBound)), \(Fmt.num(m.box.upperBound))]"]
            + m.parameters.map { "\($0.name) \(Fmt.num($0.value))" }
            + ["ζ = \(Fmt.num(r.zeta))", "normalisation \(r.normalization.rawValue) (c = \(Fmt.num(r.scale)))"]
        var text = "\(r.family) toy: " + parts.joined(separator: ", ") + "\n\n"
        text += Fmt.table(["eps", "d_zeta", "d_zeta_lower", "outer ESS/K (K → ∞)"],
                          r.points.map { [Fmt.num($0.eps), Fmt.num($0.dZeta), Fmt.num($0.dZetaLower), $0.stageOuterEssFraction.map { Fmt.num($0) }.joined(separator: ", ")] })
        if let mc = r.monteCarlo {
            var columns = ["eps", "MC d_zeta", "95% interval", "error", "MC lower", "lower interval", "outer ESS/K", "interval",
                           "certified bracket", "bracket lower"]
            if mc.trials > 1 { columns += ["covered", "covered lower", "interval covered", "bracket used", "sampled held", "median width", "bias", "sd"] }
            let rows = r.points.compactMap { p -> [String]? in
                guard let q = p.monteCarlo else { return nil }
                var row = [Fmt.num(p.eps), Fmt.num(q.dZetaMc), "[\(Fmt.num(q.ci95Mc.lowerBound)), \(Fmt.num(q.ci95Mc.upperBound))]",
                           Fmt.num(q.errorMc), Fmt.num(q.dZetaLowerMc),
                           q.ci95LowerMc.map { "[\(Fmt.num($0.lowerBound)), \(Fmt.num($0.upperBound))]" } ?? "",
                           q.stageEssFraction.map { Fmt.num($0) }.joined(separator: ", "),
                           "[\(Fmt.num(q.intervalMc.range.lowerBound)), \(Fmt.num(q.intervalMc.range.upperBound))] \(q.intervalMc.source.rawValue)",
                           NetworkReport.interval(q.dZetaBracket), NetworkReport.interval(q.dZetaLowerBracket)]
                if let t = q.trials {
                    row += ["\(q.covered ?? 0)/\(t)", "\(q.coveredLower ?? 0)/\(t)", "\(q.coveredInterval ?? 0)/\(t)",
                            "\(q.bracketFallbacks ?? 0)/\(t)", "\(q.coveredSampled ?? 0)/\(t - (q.bracketFallbacks ?? 0))",
                            q.medianIntervalWidth.map { Fmt.num(100 * $0, 3) + "%" } ?? "", Fmt.num(q.mcBias), Fmt.num(q.mcSd)]
                }
                return row
            }
            text += "\nsmc estimator (K = \(mc.paths), J = \(mc.inner), seed \(mc.seed)\(mc.trials > 1 ? ", \(mc.trials) trials" : "")\(mc.independenceMoves == true ? ", independence sweeps" : "")):\n"
                + Fmt.table(columns, rows)
            text += NetworkReport.lowerAboveLine(r.points.compactMap { p in p.monteCarlo.map { (p.eps, $0.dZetaMc, $0.dZetaLowerMc) } },
                                                 columns: ("MC lower", "MC d_zeta"))
            text += NetworkReport.movesLine(r.points.compactMap { p in p.monteCarlo.map { (p.eps, $0.stageMoves) } }, stage: "stage",
                                            firstTrial: mc.trials > 1, bound: false)
            text += NetworkReport.tiltLine(r.points.compactMap { p in p.monteCarlo.map { (p.eps, $0.stageTilt, $0.stageIslandNoise) } },
                                           stage: "stage", firstTrial: mc.trials > 1)
            text += jointText(r)
        }
        return text
    }

    /// Joint tempering's table, where `--joint` asked for it.
    static func jointText<Model>(_ r: StagedToyMeasurement<Model>) -> String {
        guard let mc = r.monteCarlo, r.points.contains(where: { $0.monteCarlo?.dZetaJointMc != nil }) else { return "" }
        var columns = ["eps", "joint d_zeta", "forward 95%", "reverse 95%", "interval", "error"]
        if mc.trials > 1 { columns += ["forward covered", "interval covered", "bias", "sd"] }
        let rows = r.points.compactMap { p -> [String]? in
            guard let q = p.monteCarlo, let j = q.dZetaJointMc else { return nil }
            var row = [Fmt.num(p.eps), Fmt.num(j), NetworkReport.interval(q.ci95JointMc), NetworkReport.interval(q.ci95ReverseJointMc),
                       NetworkReport.interval(q.intervalJointMc?.range), Fmt.num(q.errorJointMc)]
            if let t = q.trials {
                row += ["\(q.coveredJoint ?? 0)/\(t)", "\(q.coveredJointInterval ?? 0)/\(t)", Fmt.num(q.mcBiasJoint), Fmt.num(q.mcSdJoint)]
            }
            return row
        }
        return "\njoint tempering (all stages moved together; \(mc.jointSweeps.map { "\($0) sweeps per step, " } ?? "")seed \(mc.seed)):\n"
            + Fmt.table(columns, rows)
    }
}
