import Fisher
import Foundation
import Networks
import TwoScaleCore
import TwoScaleFormats

extension MarkovFisher {
    /// The model a run's settings describe (a spectra store's `meta.json`): its data read again from the
    /// same source, its noise drawn again from the same seed.
    public init(configuration c: NetworkRunConfiguration) throws {
        guard c.fisher == .markov, let sigma2 = c.sigma2, let r = c.noiseSamples else {
            throw TwoScaleError.failure("the settings describe the \(c.fisher.rawValue) FIM, not the Markov FIM")
        }
        let architecture = try Architecture(parsing: c.arch, bias: c.bias)
        let data = try DataSource.load(c.data, samples: c.samples, labels: LabelColumn(rawValue: c.labels) ?? .none,
                                       standardize: c.standardize, seed: c.seed, inputSize: architecture.inputSize,
                                       inputShape: architecture.inputShape)
        try self.init(architecture: architecture, activation: c.activation, data: data.inputs, sigma2: sigma2, noiseSamples: r,
                      noiseSeed: c.seed)
    }
}
