import Foundation
import Networks
import TwoScaleCore

extension NetworkModelOptions {
    /// Placeholder until the Fisher estimators (branch fisher) are merged.
    func makeModel(architecture: Architecture) throws -> any FisherModel {
        throw TwoScaleError.failure("the Fisher estimators are not available in this build")
    }
}
