import Fisher
import Foundation
import Networks
import TwoScaleCore
import TwoScaleFormats

extension NetworkModelOptions {
    /// Loads the data and builds the Fisher estimator the flags ask for.
    func makeModel(architecture: Architecture) throws -> any FisherModel {
        let data = try DataSource.load(data, samples: samples, labels: labels, standardize: standardize,
                                       seed: UInt64(seed), inputSize: architecture.inputSize, inputShape: architecture.inputShape,
                                       declaredShape: try shape.map { try DataSource.parseShape($0) }, flag: "--data")
        switch fisher {
        case .markov:
            return try MarkovFisher(architecture: architecture, activation: activation, data: data.inputs,
                                    sigma2: sigma2, noiseSamples: noiseSamples, noiseSeed: UInt64(seed))
        case .output:
            return try OutputFisher(architecture: architecture, activation: activation, data: data.inputs)
        }
    }
}
