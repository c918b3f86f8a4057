import ArgumentParser
import Networks
import TwoScaleCore

/// How the smc estimator's islands move their particles: `--island-sweeps`, `--island-kernel`,
/// `--island-leapfrog` and `--island-metric`, shared by `ed` and `compare`. They are settings of the smc
/// estimator only: a command that runs plain refuses them (`given`), never ignores them.
struct IslandOptions: ParsableArguments {
    @Option(help: "smc: Metropolis–Hastings sweeps per island step (default 4; with --island-kernel hamiltonian, the softmax unit's trajectories per particle, default 2). Each sweep moves every island particle once in all of its unit's coordinates; units with many weights (a softmax over many hidden units) need more: on 784-32-10 (320 weights per unit) sweeps raised the islands' logs more than the same cost in particles (64 sweeps: +63 nats, 16× the particles: +32) and the 2sED by 8 units, without converging (docs/ESTIMATORS.md).")
    var islandSweeps: Int?

    @Option(help: "smc: the islands' move kernel: random-walk (the default: a screened Metropolis–Hastings random walk in all of a unit's coordinates) or hamiltonian (Hamiltonian Monte Carlo for the softmax unit, steered by the analytic gradient of its log-determinant, --island-leapfrog steps per trajectory; Gaussian units keep the random walk). With hamiltonian, --island-sweeps counts the softmax unit's trajectories per particle and step (default 2). See docs/lab/ESTIMATORS-LOG.md, \"Hamiltonian islands\".")
    var islandKernel: IslandKernelKind?

    @Option(help: "smc with --island-kernel hamiltonian: leapfrog steps per trajectory, 1 to 1000 (default 16, with two trajectories per step: on 784-32-10 this made the islands' replicates agree where one trajectory of 32 steps, at the same cost, did not; docs/ESTIMATORS.md); each step solves the unit's eigenproblem with vectors.")
    var islandLeapfrog: Int?

    @Option(help: "smc: the softmax islands' move metric, for either --island-kernel (default diagonal: each weight scaled by the island particles' spread). kronecker, for study: also the correlations between the softmax unit's class rows and within a row, taken from a scout sampler run before each island's replicates (one more sampler per island, JSON smc.islands.scouts); flights reflect exactly at the box faces. With the scout it is low at the default J on 54-16-7 and meets the diagonal walk at J = 320 on the seeds checked (fitted to its own particles, as before this version, it was high); on 784-32-10 with hamiltonian its 2sED lies within the noise of diagonal's. Other units use diagonal. See docs/lab/ESTIMATORS-LOG.md, \"The scout\", \"Hamiltonian islands\" and \"A Kronecker random walk\".")
    var islandMetric: MoveMetric?

    /// The Hamiltonian kernel's defaults: two trajectories of 16 leapfrog steps per particle and step, the
    /// setting whose islands agreed on 784-32-10 (one of 32 steps, at the same cost, did not;
    /// docs/lab/ESTIMATORS-LOG.md, "Hamiltonian islands").
    static let defaultLeapfrog = 16, defaultTrajectories = 2

    /// The island flags given, as typed: an error where the run uses plain (they would be ignored).
    var given: [String] {
        [(islandSweeps != nil, "--island-sweeps"), (islandKernel != nil, "--island-kernel"),
         (islandLeapfrog != nil, "--island-leapfrog"), (islandMetric != nil, "--island-metric")].filter(\.0).map(\.1)
    }

    /// The islands' kernel from `--island-kernel`, `--island-leapfrog` (only with hamiltonian) and
    /// `--island-metric` (default diagonal for both kernels).
    func kernel() throws -> SMCMoveKernel {
        switch islandKernel ?? .randomWalk {
        case .randomWalk:
            if islandLeapfrog != nil {
                throw TwoScaleError.usage("--island-leapfrog sets the Hamiltonian kernel's trajectories: add --island-kernel hamiltonian, or drop it")
            }
            return .randomWalk(metric: islandMetric ?? .standard)
        case .hamiltonian:
            let steps = islandLeapfrog ?? Self.defaultLeapfrog
            guard (1...1000).contains(steps) else {
                throw TwoScaleError.invalid("--island-leapfrog", "\(steps)", allowed: "give from 1 to 1000 leapfrog steps per trajectory")
            }
            return .hamiltonian(steps: steps, metric: islandMetric ?? .standard)
        }
    }

    /// Sweeps (random walk) or trajectories (hamiltonian) per particle and island step: `--island-sweeps`,
    /// else the kernel's default.
    func sweeps(for kernel: SMCMoveKernel) -> Int {
        islandSweeps ?? (kernel.isRandomWalk ? NetworkSMC.defaultIslandSweeps : Self.defaultTrajectories)
    }
}

extension MoveMetric: ExpressibleByArgument {}

/// `--island-kernel`: how the smc islands move their particles.
enum IslandKernelKind: String, CaseIterable, ExpressibleByArgument {
    case randomWalk = "random-walk"
    case hamiltonian
}
