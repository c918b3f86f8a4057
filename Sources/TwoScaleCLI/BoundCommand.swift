import ArgumentParser
import Bounds
import Foundation
import ToyModels
import TwoScaleCore
import TwoScaleFormats

/// `twoscale bound`: the generalisation bound of docs/METHOD.md §15 at a grid of sample sizes.
struct BoundCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bound",
        abstract: "Generalisation bound: ε_n, deviation C·ε_n and log tail at each n; smallest n for a δ.",
        discussion: """
        ε_n = (log n/(γn))^(3/8) (natural log), P(sup_θ|R − R_n| ≥ C·ε_n) ≤ H·ε_n^(−d_ζ(ε_n))·n^(−K/γ). \
        The tail is reported as log_tail = log H − d_ζ(ε_n)·log ε_n − (K/γ)·log n. d_ζ(ε_n) is evaluated \
        exactly at every ε_n (never interpolated) from a toy model (the flags of `twoscale toy`; exact) or from a \
        spectra store written by `twoscale ed --store DIR` (--store DIR, with --estimator nested|lower|joint). From a \
        Markov-FIM store the tail uses d_zeta_used, the upper end of the 2sED's certified bracket (it holds by \
        construction; docs/METHOD.md §19), reported beside the point estimate d_zeta_estimate. Where the store's \
        model cannot be rebuilt (its data moved) or for the output FIM, it uses a one-sided 95% bootstrap upper \
        value instead, and says so; --estimator lower is then labelled non-conservative. That upper end is for \
        the store's inputs and noise draws; --population-fisher takes the population Fisher's (Gaussian inputs). \
        C, H, K are unknown constants of \
        the theorem: they are user-set (default 1) and labelled so in every output. With --delta, n_for_delta \
        is the smallest integer n in --delta-range whose tail is below δ (exhaustive scan on short ranges, \
        otherwise a log grid of 100 points per decade, integer bisection at the first crossing and a \
        verification window of 64 integers).
        """)

    @Option(name: .customLong("n"), help: ArgumentHelp(
        "Sample sizes n ≥ 2: a value, a list a,b,c or a log grid lo:hi:k (rounded, duplicates removed).",
        valueName: "grid"))
    var nText: String

    @Option(help: "γ ∈ (0, 1] in ε_n = (log n/(γn))^(3/8).")
    var gamma: Double = 1

    @Option(help: "Meso-scale exponent ζ ∈ [0, 1) (the theorem needs ζ ≥ 2/3).")
    var zeta: Double = 2.0 / 3.0

    @Option(name: .customLong("C"), help: "The theorem's constant C in the deviation C·ε_n (user-set, > 0).")
    var constC: Double = 1

    @Option(name: .customLong("H"), help: "The theorem's constant H in the tail (user-set, > 0).")
    var constH: Double = 1

    @Option(name: .customLong("K"), help: "The theorem's constant K in n^(−K/γ) (user-set, 0 to 10⁶).")
    var constK: Double = 1

    @Option(help: "Confidence level δ ∈ (0, 1): also report the smallest n whose tail is below δ.")
    var delta: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Integer range lo:hi searched for n_for_delta.", valueName: "lo:hi"))
    var deltaRange: String = "2:1e12"

    // Toy model flags (as `twoscale toy`).
    @Option(help: "Toy model family for d_ζ.")
    var family: Family?

    @Option(help: ArgumentHelp("λ per axis for --family constant (comma-separated, each ≥ 0); d = count.", valueName: "list"))
    var lambdas: String?

    @Option(help: "Dimension d (non-constant families; with one λ, repeats it d times).")
    var dim: Int?

    @Option(parsing: .unconditional, help: ArgumentHelp("Toy parameter box lo:hi, the same on every axis.", valueName: "lo:hi"))
    var box: String = "0:1"

    @Option(help: "Normalisation of the Fisher matrix for d_ζ: trace or none.")
    var normalize: Normalization = .trace

    @Option(help: ArgumentHelp("Spectra store (from `twoscale ed --store DIR`) giving d_ζ(ε_n) instead of a toy model.", valueName: "DIR"))
    var store: String?

    @Option(help: "With --store: the estimator giving d_ζ(ε_n).")
    var estimator: StoreEstimator = .nested

    @Option(help: "With --store and no certified bracket: resamples for the one-sided 95% upper value of d_ζ.")
    var bootstrap: Int = 200

    @Flag(help: "With --store on Gaussian inputs: the tail takes the population Fisher's certified upper end.")
    var populationFisher = false

    @OptionGroup var output: OutputOptions

    func validate() throws {
        try PathFlags.check(store, flag: "--store", what: "the spectra store's folder")
        if populationFisher && store == nil {
            throw ValidationError("--population-fisher: give a spectra store (--store DIR) of a network on Gaussian inputs")
        }
        guard (20...100_000).contains(bootstrap) else {
            throw ValidationError("--bootstrap: '\(bootstrap)' is not allowed; give from 20 to 100000 resamples (a 0.95 quantile needs at least 20)")
        }
    }

    func run() async throws {
        let constants = try BoundConstants(C: constC, H: constH, K: constK)
        let bound = try GeneralizationBound(gamma: gamma, zeta: zeta, constants: constants)
        if let w = bound.zetaWarning { Console.warn(w) }
        let ns = try SampleSizeGrid.parse(nText)
        if let store {
            guard family == nil, lambdas == nil, dim == nil else {
                throw TwoScaleError.usage("--store: give either a spectra store or a toy model (--family …), not both")
            }
            let s = try await StoreSource(directory: store, estimator: estimator, zeta: zeta, normalization: normalize, bootstrap: bootstrap,
                                          population: populationFisher)
            if let why = s.store.uncertified {
                Console.warn("bound --store: no certified upper end (\(why)); the tail uses a bootstrap upper value of d_ζ, which can understate it")
            }
            if !s.conservative {
                Console.warn("bound --estimator lower: the lower 2sED is a lower bound of d_ζ, so this tail is not conservative (use --estimator nested)")
            }
            var result = try BoundEvaluation.evaluate(bound: bound, ns: ns, delta: try deltaSearch(),
                                                      dimension: s.dimension, values: s.values, source: s.description,
                                                      method: s.method, conservative: s.conservative)
            let c = s.store.settings
            result.assumptions = TheoremAssumptions.check(.network(activation: c.activation.rawValue, boundedInputs: !c.data.hasPrefix("synthetic:"),
                                                                   markov: c.fisher == .markov, inputs: c.samples, noiseDraws: c.noiseSamples,
                                                                   population: populationFisher),
                                                          zeta: zeta)
            try output.emit(result) { BoundReport.text(result) }
            return
        }
        guard let family else {
            throw TwoScaleError.missing("--family",
                "give a toy model for d_ζ (e.g. --family constant --lambdas 4,0.01) or a spectra store (--store DIR)")
        }
        if family == .constant && lambdas == nil {
            throw TwoScaleError.missing("--lambdas", "--family constant needs --lambdas, e.g. --lambdas 4,0.01")
        }
        let lam: [Double] = try lambdas.map { try Grid.parseList($0, flag: "--lambdas") } ?? []
        let model = try ToyModel(family: family, lambdas: lam, dimension: dim, box: try Grid.parseInterval(box, flag: "--box"))
        _ = try model.scale(normalize)
        let z = zeta, norm = normalize
        let values: DimensionValues = { eps in
            let d = try model.twoScaleDimension(eps: eps, zeta: z, normalization: norm)
            return (d, d)  // exact: nothing to widen
        }
        let sourceText = "toy \(family.name), d = \(model.dimension), box [\(model.lo), \(model.hi)]^d, normalisation \(normalize.rawValue)"
        var result = try BoundEvaluation.evaluate(bound: bound, ns: ns, delta: try deltaSearch(),
                                                  dimension: model.dimension, values: values, source: sourceText,
                                                  method: "exact (toy model quadrature)", conservative: true)
        result.assumptions = TheoremAssumptions.check(.toy, zeta: zeta)
        try output.emit(result) { BoundReport.text(result) }
    }
}

extension BoundCommand {
    /// δ and the range of n to search, parsed only when δ is given.
    func deltaSearch() throws -> (value: Double, range: ClosedRange<Int>)? {
        try delta.map { ($0, try BoundReport.parseRange(deltaRange)) }
    }
}

/// How `bound` words a `BoundEvaluation`.
enum BoundReport {
    static func parseRange(_ text: String) throws -> ClosedRange<Int> {
        let (lo, hi) = try Grid.parseInterval(text, flag: "--delta-range")
        guard lo >= 2, hi < 9e15, lo == lo.rounded(), hi == hi.rounded() else {
            throw TwoScaleError.invalid("--delta-range", text, allowed: "give whole numbers lo:hi with 2 ≤ lo < hi < 9·10¹⁵")
        }
        return Int(lo)...Int(hi)
    }

    static func text(_ r: BoundEvaluation) -> String {
        let c = r.constants
        let head = "generalisation bound (docs/METHOD.md §15): γ = \(Fmt.num(r.gamma)), ζ = \(Fmt.num(r.zeta)), d_ζ from \(r.source)\n"
            + "d_zeta_used (enters the tail): \(r.dZetaUsedMethod)\n"
            + "C = \(Fmt.num(c.C)), H = \(Fmt.num(c.H)), K = \(Fmt.num(c.K)) — \(BoundConstants.note)\n\n"
        let table = Fmt.table(["n", "eps_n", "d_zeta_estimate", "d_zeta_used", "log_tail", "log10_tail", "deviation C·eps_n"],
                              r.points.map { p in
            [String(p.n), Fmt.num(p.epsN), Fmt.num(p.dZetaEstimate), Fmt.num(p.dZetaUsed), Fmt.num(p.logTail), Fmt.num(p.log10Tail), Fmt.num(p.deviation)]
        })
        var deltaLine = ""
        if let delta = r.delta, let n = r.nForDelta, let note = r.nForDeltaNote {
            deltaLine = "\nn for δ = \(Fmt.num(delta)): " + (n.map(String.init) ?? "not reached") + " — \(note)\n"
        }
        // The δ line already says why δ was not reached; otherwise the limit gets a line of its own.
        let reached = r.nForDelta.map { $0 != nil } ?? true
        let limit = r.tailLimit.map { $0.growing && reached ? "\nwhat limits the tail: " + $0.hint + "\n" : "" } ?? ""
        return head + table + deltaLine + limit + assumptionsText(r.assumptions)
    }

    /// The theorem's assumptions this run does not meet, and those it cannot tell.
    static func assumptionsText(_ list: [TheoremAssumption]) -> String {
        let unmet = list.filter { $0.met == false }, unknown = list.filter { $0.met == nil }
        guard !unmet.isEmpty || !unknown.isEmpty else { return "" }
        var text = "\n"
        if !unmet.isEmpty { text += "assumptions of the theorem NOT met by this run:\n" + unmet.map { "  - \($0.assumption): \($0.why)\n" }.joined() }
        if !unknown.isEmpty { text += "assumptions this run cannot check:\n" + unknown.map { "  - \($0.assumption): \($0.why)\n" }.joined() }
        return text
    }
}
