import ArgumentParser
import Bounds
import Networks
import TwoScaleCore

/// Which estimator of a spectra store gives d_ζ(ε) in `bound` and `gap`.
enum StoreEstimator: String, ExpressibleByArgument, CaseIterable {
    case nested, lower, joint
}

/// d_ζ(ε) evaluated exactly at any ε from a spectra store (docs/METHOD.md §13 estimators, no interpolation).
struct StoreSource {
    let source: TwoScaleSource
    let dimension: Int
    let description: String

    init(directory: String, estimator: StoreEstimator, zeta: Double, normalization: Normalization) throws {
        let spectra = try SpectraStore.open(directory: directory).loadSpectra()
        let est = try LayeredEstimator(spectra: spectra, normalization: normalization)
        source = { eps in
            let p = try est.points(eps: [eps], zeta: zeta)[0]
            switch estimator {
            case .nested: return p.dZeta
            case .lower: return p.dZetaLower
            case .joint: return p.dZetaJoint
            }
        }
        dimension = spectra.dimension
        description = "spectra store \(directory) (\(estimator.rawValue) estimator, d = \(spectra.dimension), K = \(spectra.paths), normalisation \(normalization.rawValue))"
    }
}
