import ArgumentParser
import NetworkEstimators
import TwoScaleCore

/// How the smc estimator's islands move their particles (`--island-sweeps`), shared by `ed` and
/// `compare`. A setting of the smc estimator only: a command that runs plain refuses it (`given`).
struct IslandOptions: ParsableArguments {
    @Option(help: "smc: Metropolis–Hastings sweeps per island step (default 4); units with many weights may need more.")
    var islandSweeps: Int?

    /// The island flags given: an error where the run uses plain (they would be ignored).
    var given: [String] { islandSweeps != nil ? ["--island-sweeps"] : [] }

    /// Sweeps per particle and island step: `--island-sweeps`, else the default.
    var sweeps: Int { islandSweeps ?? NetworkSMC.defaultIslandSweeps }
}
