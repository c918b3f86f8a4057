import ArgumentParser
import Bounds
import Networks
import TwoScaleCore

/// Which estimator of a spectra store gives d_ζ(ε) in `bound` and `gap`.
enum StoreEstimator: String, ExpressibleByArgument, CaseIterable {
    case nested, lower, joint

    var estimate: LayeredEstimator.Estimate {
        switch self {
        case .nested: .nested
        case .lower: .lower
        case .joint: .joint
        }
    }
}

/// d_ζ(ε) evaluated exactly at any ε from a spectra store (the layered estimators of docs/METHOD.md §13, no
/// interpolation): the point estimate, and the value that enters the bound's tail — the one-sided 95%
/// upper value of a percentile bootstrap over the store's paths (`LayeredEstimator.oneSided`), never
/// below the estimate.
struct StoreSource {
    /// ε ↦ the value used in the tail (the one-sided upper value).
    let source: TwoScaleSource
    /// ε ↦ the point estimate.
    let estimate: TwoScaleSource
    let dimension: Int
    let description: String
    /// How `source` is obtained, for reports.
    let method: String
    /// False for the lower 2sED: a lower bound of d_ζ (Jensen), whose upper value is still not an upper
    /// value of d_ζ.
    let conservative: Bool

    init(directory: String, estimator: StoreEstimator, zeta: Double, normalization: Normalization, bootstrap: Int = 200) throws {
        let store = try SpectraStore.open(directory: directory)
        let spectra = try store.loadSpectra()
        let est = try LayeredEstimator(spectra: spectra, normalization: normalization)
        let seed: UInt64
        if case let .int(s)? = store.meta.setting("seed") { seed = UInt64(bitPattern: Int64(s)) } else { seed = 1 }
        let which = estimator.estimate
        source = { eps in try est.oneSided(eps: eps, zeta: zeta, estimate: which, bootstrap: bootstrap, seed: seed).upper }
        estimate = { eps in try est.oneSided(eps: eps, zeta: zeta, estimate: which, bootstrap: bootstrap, seed: seed).estimate }
        dimension = spectra.dimension
        description = "spectra store \(directory) (\(estimator.rawValue) estimator, d = \(spectra.dimension), K = \(spectra.paths), normalisation \(normalization.rawValue))"
        conservative = estimator != .lower
        method = "one-sided 95% upper value of the \(estimator.rawValue) estimate: the 0.95 quantile of a percentile bootstrap over the K = \(spectra.paths) paths (\(bootstrap) resamples, seed \(seed)), never below the estimate; "
            + (estimator == .lower
               ? "NOT conservative: the lower 2sED is a lower bound of d_ζ, so the tail from it can understate the bound's tail (use --estimator nested)"
               : "the bootstrap does not see plain Monte Carlo's low bias in high dimension (docs/ESTIMATORS.md), so with few effective paths it can still understate d_ζ")
    }
}
