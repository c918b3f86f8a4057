import Foundation
import TwoScaleCore

/// d_ζ(ε) evaluated exactly at any ε from a spectra store (the layered estimators of docs/METHOD.md §13,
/// no interpolation), as the generalisation bound needs it (docs/METHOD.md §15): the point estimate, and
/// the value that enters the bound's tail — the one-sided 95% upper value of a percentile bootstrap over
/// the store's paths (`LayeredEstimator.oneSided`), never below the estimate.
public struct StoreDimension: Sendable {
    public let estimator: LayeredEstimator
    public let which: LayeredEstimator.Estimate
    public let zeta: Double
    public let bootstrap: Int
    /// The bootstrap's seed: the run's own seed from the store's settings (1 when absent).
    public let seed: UInt64
    public let dimension: Int
    public let paths: Int

    public init(directory: String, estimate which: LayeredEstimator.Estimate, zeta: Double, normalization: Normalization,
                bootstrap: Int = 200) throws {
        let store = try SpectraStore.open(directory: directory)
        let spectra = try store.loadSpectra()
        estimator = try LayeredEstimator(spectra: spectra, normalization: normalization)
        seed = store.meta.configuration.seed
        self.which = which
        self.zeta = zeta
        self.bootstrap = bootstrap
        dimension = spectra.dimension
        paths = spectra.paths
    }

    /// The point estimate and the one-sided upper value at ε.
    public func values(eps: Double) throws -> (estimate: Double, upper: Double) {
        try estimator.oneSided(eps: eps, zeta: zeta, estimate: which, bootstrap: bootstrap, seed: seed)
    }

    /// False for the lower 2sED: a lower bound of d_ζ (Jensen), whose upper value is still not an
    /// upper value of d_ζ.
    public var conservative: Bool { which != .lower }

    /// How the value used in the tail is obtained, for reports.
    public var method: String {
        "one-sided 95% upper value of the \(which.rawValue) estimate: the 0.95 quantile of a percentile bootstrap over the K = \(paths) paths (\(bootstrap) resamples, seed \(seed)), never below the estimate; "
            + (which == .lower
               ? "NOT conservative: the lower 2sED is a lower bound of d_ζ, so the tail from it can understate the bound's tail (use --estimator nested)"
               : "the bootstrap does not see plain Monte Carlo's low bias in high dimension (docs/ESTIMATORS.md), so with few effective paths it can still understate d_ζ")
    }
}
