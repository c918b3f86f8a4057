import ArgumentParser
import Foundation
import SpectraStore
import TwoScaleCore
import TwoScaleFormats

/// `twoscale merge DIR1 DIR2 … --out DIR`: shard stores → the store of the unsharded run.
struct MergeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge",
        abstract: "Merge the shard stores of one run (twoscale ed --shard i/n) into one spectra store.",
        discussion: """
        Checks that the shards were made with the same settings, are distinct and together complete \
        (shards 1/n … n/n, each finished), then writes the store the unsharded run writes — byte for byte. \
        Nothing is written unless every check passes; --out must not hold a store.
        """)

    @Argument(help: ArgumentHelp("The shard stores.", valueName: "DIR"))
    var directories: [String] = []

    @Option(help: ArgumentHelp("The merged store's folder (created).", valueName: "DIR"))
    var out: String

    @OptionGroup var output: OutputOptions

    func validate() throws {
        try PathFlags.check(out, flag: "--out", what: "a folder for the merged store")
        for d in directories { try PathFlags.check(d, flag: "merge", what: "the shard stores' folders") }
        if directories.isEmpty { throw TwoScaleError.usage("merge: give the shard stores to merge, e.g. twoscale merge runs/a runs/b --out runs/all") }
    }

    func run() async throws {
        let summary = try StoreMergeSummary.merge(directories, into: out)
        try output.emit(summary) {
            "merged \(summary.shards) shards into \(summary.store): K = \(summary.paths) paths, d = \(summary.dimension)\n"
        }
    }
}
