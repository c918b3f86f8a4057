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

/// The CLI's view of a `StoreDimension`: the two sources the bound report takes, and a description.
struct StoreSource {
    let store: StoreDimension
    let description: String

    init(directory: String, estimator: StoreEstimator, zeta: Double, normalization: Normalization, bootstrap: Int = 200) throws {
        store = try StoreDimension(directory: directory, estimate: estimator.estimate, zeta: zeta,
                                   normalization: normalization, bootstrap: bootstrap)
        description = "spectra store \(directory) (\(estimator.rawValue) estimator, d = \(store.dimension), K = \(store.paths), normalisation \(normalization.rawValue))"
    }

    /// ε ↦ the value used in the tail (the one-sided upper value).
    var source: TwoScaleSource { { [store] eps in try store.values(eps: eps).upper } }
    /// ε ↦ the point estimate.
    var estimate: TwoScaleSource { { [store] eps in try store.values(eps: eps).estimate } }
    var dimension: Int { store.dimension }
    var method: String { store.method }
    var conservative: Bool { store.conservative }
}
