import ArgumentParser
import Fisher
import Foundation
import Estimation
import NetworkEstimators
import SpectraStore
import TwoScaleCore

/// `twoscale analyze DIR`: the 2sED (nested, joint, lower), intervals, ESS and Abbas ED from a stored run.
struct AnalyzeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "2sED of a network from a spectra store (the output of twoscale ed --store).",
        discussion: """
        Reads DIR/meta.json and the .npy spectra and prints the same report as twoscale ed on the same run \
        (every number identical; only "seconds" differs). Any ε grid, ζ, normalisation, bootstrap or \
        Abbas n is a cheap pass over the stored eigenvalues. A shard store must be merged first \
        (twoscale merge); an unfinished store is continued with twoscale ed --resume.
        """)

    @Argument(help: ArgumentHelp("The spectra store folder.", valueName: "DIR"))
    var directory: String

    @Option(help: "plain only; for smc run twoscale ed --estimator smc.")
    var estimator: EstimatorKind = .plain

    @OptionGroup var analysis: AnalysisOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        try PathFlags.check(directory, flag: "analyze", what: "the spectra store's folder")
    }

    func run() async throws {
        let request = try analysis.request()
        if !(try EstimatorRegistry.estimator(estimator)).storesSpectra {
            throw TwoScaleError.usage("--estimator \(estimator): a spectra store holds uniform-path spectra, and the \(estimator) estimator's samples depend on ε, ζ and the normalisation — this needs a new run: twoscale ed --estimator \(estimator) with the same model flags and the ε grid you want")
        }
        let start = Date()
        let store = try SpectraStore.open(directory: directory)
        let spectra = try store.loadSpectra()
        // The store's Markov model, rebuilt from its settings where its data are still there, gives the generic
        // rank and the certified bracket, as ed did.
        var model: MarkovFisher?
        if store.meta.configuration.fisher == .markov {
            do { model = try MarkovFisher(configuration: store.meta.configuration) } catch let e as TwoScaleError {
                Console.note("analyze: the store's model could not be rebuilt (\(e.message)): no generic rank or certified bracket")
            }
        }
        var measurement = try await PlainReport.measure(spectra: spectra, meta: store.meta, request: request, model: model)
        measurement.seconds = Date().timeIntervalSince(start)
        if let w = NetworkReport.essWarning(measurement.degeneracy) { Console.warn(w) }
        if let w = NetworkReport.bracketWarning(measurement.bracketCheck) { Console.warn(w) }
        try output.emit(measurement) { NetworkReport.text(measurement) }
    }
}
