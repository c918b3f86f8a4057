import ArgumentParser
import Bounds
import Foundation
import SpectraStore
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

/// The CLI's view of a `StoreDimension`: the values the bound report takes, and a description.
struct StoreSource {
    let store: StoreDimension
    let description: String

    init(directory: String, estimator: StoreEstimator, zeta: Double, normalization: Normalization, bootstrap: Int = 200,
         population: Bool = false) async throws {
        store = try await StoreDimension(directory: directory, estimate: estimator.estimate, zeta: zeta, normalization: normalization,
                                         bootstrap: bootstrap, population: population, threads: ProcessInfo.processInfo.activeProcessorCount)
        description = "spectra store \(directory) (\(estimator.rawValue) estimator, d = \(store.dimension), \(store.paths) paths, normalisation \(normalization.rawValue)"
            + (population ? "; tail with the population Fisher)" : ")")
    }

    /// ε ↦ (the point estimate, the value used in the tail): one bootstrap per ε.
    var values: DimensionValues { { [store] eps in let v = try store.values(eps: eps); return (v.estimate, v.upper) } }
    var dimension: Int { store.dimension }
    var method: String { store.method }
    var conservative: Bool { store.conservative }
}
