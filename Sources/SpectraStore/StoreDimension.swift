import Fisher
import Foundation
import TwoScaleCore

/// d_ζ(ε) evaluated exactly at any ε from a spectra store (the layered estimators of docs/METHOD.md §13,
/// no interpolation), as the generalisation bound needs it (docs/METHOD.md §15): the point estimate, and
/// the value that enters the bound's tail. For a Markov-FIM store whose model can be rebuilt from its
/// settings (the data are where they were) that value is the certified bracket's upper end (§19), which
/// holds by construction; otherwise the one-sided 95% upper value of a percentile bootstrap over the
/// store's paths (`LayeredEstimator.oneSided`), never below the estimate.
public struct StoreDimension: Sendable {
    public let estimator: LayeredEstimator
    public let which: LayeredEstimator.Estimate
    public let zeta: Double
    public let bootstrap: Int
    /// The bootstrap's seed: the run's own seed from the store's settings (1 when absent).
    public let seed: UInt64
    public let dimension: Int
    public let paths: Int
    /// The model's majorants (the certified upper end), when the store's model could be rebuilt.
    public let ceilings: [BlockCeiling]?
    /// The tilted chain of an MLP of three blocks or more (`TiltedChain(ceilings:)`), with them.
    public let chain: TiltedChain?
    /// c's interval as the certified bracket takes it (the upper end is taken at its upper end), with it.
    public let scale: ScaleRange?
    /// Why there is no certified upper end (nil when there is one).
    public let uncertified: String?
    /// The run's settings, as its meta.json records them.
    public let settings: NetworkRunConfiguration
    /// Whether the upper end is the population Fisher's (inputs `N(0, I)` and noise averaged) rather than
    /// the store's inputs and noise draws'.
    public let population: Bool

    /// With `population`, the upper end is that of the population Fisher (`MarkovFisher.populationCeilings`),
    /// which needs a Markov-FIM store of an MLP on Gaussian inputs (`synthetic:gaussian` or
    /// `synthetic:teacher:…`, not standardised).
    public init(directory: String, estimate which: LayeredEstimator.Estimate, zeta: Double, normalization: Normalization,
                bootstrap: Int = 200, population: Bool = false, threads: Int) async throws {
        let store = try SpectraStore.open(directory: directory)
        let spectra = try store.loadSpectra()
        estimator = try LayeredEstimator(spectra: spectra, normalization: normalization)
        seed = store.meta.configuration.seed
        self.which = which
        self.zeta = zeta
        self.bootstrap = bootstrap
        dimension = spectra.dimension
        paths = spectra.paths
        let c = store.meta.configuration
        settings = c
        self.population = population
        if population {
            let gaussian = c.data == "synthetic:gaussian" || c.data.hasPrefix("synthetic:teacher:")
            guard c.fisher == .markov, gaussian, !c.standardize else {
                throw TwoScaleError.invalid("\(Setting.populationFisher)", directory,
                                            allowed: "the population Fisher needs a Markov-FIM store on Gaussian inputs (synthetic:gaussian or synthetic:teacher, not standardised); this one has \(c.fisher.rawValue) on \(c.data)\(c.standardize ? ", standardised" : "")")
            }
            let model = try MarkovFisher(configuration: c)
            let share = CertifiedBracket.shares(delta: CertifiedBracket.defaultDelta, estimatedScale: true, stages: 1, points: 1).scale
            let majorants = try model.populationCeilings(box: c.box)
            let range = try await model.populationScaleRange(normalization, box: c.box, seed: c.seed, delta: share, threads: threads)
            (ceilings, scale, uncertified) = (majorants, range, nil)
        } else if c.fisher != .markov {
            (ceilings, scale, uncertified) = (nil, nil, "the output FIM has no certified bracket")
        } else {
            do {
                let model = try MarkovFisher(configuration: c)
                // c's interval from the bracket's own draws (as `ed`'s bracket for this store's seed), at its share of
                // the default δ.
                let share = CertifiedBracket.shares(delta: CertifiedBracket.defaultDelta, estimatedScale: true, stages: 1, points: 1).scale
                let majorants = try model.blockCeilings(box: c.box)
                let range = try await model.scaleRange(normalization, box: c.box, ceilings: majorants, seed: c.seed, delta: share, threads: threads)
                (ceilings, scale, uncertified) = (majorants, range, nil)
            } catch let e as TwoScaleError {
                (ceilings, scale, uncertified) = (nil, nil, "the store's model could not be rebuilt from its settings (\(e.message))")
            }
        }
        chain = ceilings.flatMap { TiltedChain(ceilings: $0) }
    }

    /// The point estimate and the value used in the tail at ε: the certified upper end where there is one,
    /// else the one-sided bootstrap upper value.
    public func values(eps: Double) throws -> (estimate: Double, upper: Double) {
        guard let ceilings, let scale else { return try estimator.oneSided(eps: eps, zeta: zeta, estimate: which, bootstrap: bootstrap, seed: seed) }
        let p = try estimator.points(eps: [eps], zeta: zeta)[0]
        let value = try estimator.value(which, of: p)
        let s = ScaleParameters.t(eps: eps, zeta: zeta) * scale.range.upperBound.squareRoot()
        return (value, BlockCeiling.dZetaUpper(ceilings, chain: chain, scale: s, eps: eps, zeta: zeta, dimension: dimension))
    }

    /// Whether the tail is conservative: always with the certified upper end (it bounds every estimator's
    /// quantity); from the bootstrap, not for the lower 2sED (a lower bound of d_ζ by Jensen).
    public var conservative: Bool { ceilings != nil || which != .lower }

    /// How the value used in the tail is obtained, for reports.
    public var method: String {
        if ceilings != nil {
            if population {
                let c = scale?.trace.map { "at the upper end of c's interval (the population's E Tr F from \($0.draws) uniform draws on fresh inputs and a deterministic bound; it holds with probability ≥ 1 − \($0.delta / 2))" }
                    ?? "at c = 1 (deterministic)"
                return "the certified upper end of the population Fisher's 2sED (inputs N(0, I) and the hidden noise averaged rather than the store's draws; every stage at its majorant over the box, or in the mean over the previous layer's weights, tilted where that is smaller; docs/METHOD.md §19), \(c): an upper value for the theorem's quantity of the stochastic network, not for the store's own inputs"
            }
            let c = scale?.trace.map { "at the upper end of c's interval, from \($0.draws) uniform draws of Tr F (it holds with probability ≥ 1 − \($0.delta / 2))" }
                ?? "at c = 1 (deterministic)"
            return "the certified upper end of the 2sED's bracket (every stage at its majorant over the box, or in the mean over the previous layer's weights, tilted where that is smaller; docs/METHOD.md §19), \(c), given the store's data inputs and noise draws: an upper value for that stand-in, not for the population Fisher the theorem needs; it bounds the \(which.rawValue) estimate's quantity too"
        }
        return "no certified upper end (\(uncertified ?? "")); one-sided 95% upper value of the \(which.rawValue) estimate: the 0.95 quantile of a percentile bootstrap over the K = \(paths) paths (\(bootstrap) resamples, seed \(seed)), never below the estimate; "
            + (which == .lower
               ? "NOT conservative: the lower 2sED is a lower bound of d_ζ, so the tail from it can understate the bound's tail (use \(Setting.estimator) nested)"
               : "the bootstrap does not see plain Monte Carlo's low bias in high dimension (docs/ESTIMATORS.md), so with few effective paths it can still understate d_ζ")
    }
}
