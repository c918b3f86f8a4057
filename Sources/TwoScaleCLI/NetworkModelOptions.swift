import ArgumentParser
import Fisher
import Foundation
import Networks
import SpectraStore
import TwoScaleFormats
import TwoScaleCore

extension FisherKind: ExpressibleByArgument {}
extension Activation: ExpressibleByArgument {}
extension LabelColumn: ExpressibleByArgument {}

/// The flags that define a stochastic network, its data and its Fisher matrix (docs/METHOD.md §10–12), shared by the
/// commands that compute network spectra (`ed`, `bench`).
struct NetworkModelOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Layer sizes (54-16-7) or image layers (28x28x1-conv8k5-maxpool2-10); docs/GUIDE.md.", valueName: "arch"))
    var arch: String

    @Option(help: ArgumentHelp("csv:PATH, idx:…, fashion-mnist[:test] or synthetic:… (docs/FORMATS.md).", valueName: "source"))
    var data: String = "synthetic:gaussian"

    @Option(help: "N: the number of data inputs the Fisher expectation averages over (the first N).")
    var samples: Int = 100

    @Option(help: "CSV label column (a label column is never a feature).")
    var labels: LabelColumn = .none

    @Flag(help: "Z-score every input feature over the loaded samples.")
    var standardize = false

    @Option(help: ArgumentHelp("One input's shape, e.g. 28x28x1, for CSV rows that are images (channels fastest; docs/GUIDE.md).", valueName: "HxWxC"))
    var shape: String?

    @Flag(help: "Give every layer a bias (θ_m = (vec W_m, b_m)).")
    var bias = false

    @Option(help: "markov: stochastic network; output: deterministic.")
    var fisher: FisherKind = .markov

    @Option(help: "Hidden activation.")
    var activation: Activation = .relu

    @Option(help: "σ² > 0 of the Gaussian hidden-layer noise (markov; docs/METHOD.md §10).")
    var sigma2: Double = 0.1

    @Option(name: .customLong("noise-samples"), help: "R: noise draws per input for the hidden states (markov; common random numbers).")
    var noiseSamples: Int = 1

    @Option(help: "Seed of every random draw (paths, inner draws, noise, synthetic data, bootstrap).")
    var seed: UInt64 = 1

    /// Validates the flags that need no files; returns the architecture.
    func checkedArchitecture() throws -> Architecture {
        let a = try Architecture(parsing: arch, bias: bias)
        guard samples >= 1 else { throw TwoScaleError.invalid("--samples", "\(samples)", allowed: "the number of inputs N must be ≥ 1") }
        guard sigma2.isFinite, sigma2 > 0 else {
            throw TwoScaleError.invalid("--sigma2", "\(sigma2)", allowed: "the noise variance σ² must be a finite number > 0")
        }
        guard noiseSamples >= 1 else {
            throw TwoScaleError.invalid("--noise-samples", "\(noiseSamples)", allowed: "the number of noise draws R must be ≥ 1")
        }
        _ = try shape.map { try DataSource.parseShape($0) }
        return a
    }

    /// The run configuration a store's meta.json records (σ² and R only for the Markov FIM).
    func configuration(architecture: Architecture, box: ClosedRange<Double>) -> NetworkRunConfiguration {
        NetworkRunConfiguration(fisher: fisher, arch: architecture.notation, bias: bias, activation: activation, box: box,
                                seed: UInt64(seed), data: data, samples: samples, labels: labels.rawValue, standardize: standardize,
                                sigma2: sigma2, noiseSamples: noiseSamples)
    }
}
