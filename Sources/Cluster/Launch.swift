import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How this process was started, read from the launcher's environment only (MPI itself is not touched):
/// alone, or as one rank of an MPI job. A plain `twoscale …` never loads or initialises MPI.
///
/// Launchers and the variables that reveal them:
///
/// | launcher | rank | size |
/// |---|---|---|
/// | Open MPI's `mpirun`/`mpiexec` (4.x, 5.x) | `OMPI_COMM_WORLD_RANK` | `OMPI_COMM_WORLD_SIZE` |
/// | a PMIx launcher (`srun --mpi=pmix`, `prterun`) | `PMIX_RANK` | `SLURM_STEP_NUM_TASKS` (else known after `MPI_Init`) |
/// | a PMI launcher (MPICH's Hydra, `srun --mpi=pmi2`) | `PMI_RANK` | `PMI_SIZE` |
///
/// `TWOSCALE_MPI=off` (or `0`, `no`) ignores all of them: the process runs alone even inside an MPI job
/// (e.g. a helper command run by a job script that itself was started by a launcher).
public enum Launch: Sendable, Equatable {
    case single
    case mpi(MPIEnvironment)

    /// The launch of this process.
    public static let current = detect(ProcessInfo.processInfo.environment)

    /// Reads the launcher's variables from `env`.
    public static func detect(_ env: [String: String]) -> Launch {
        if let off = env["TWOSCALE_MPI"]?.lowercased(), ["off", "0", "no", "false"].contains(off) { return .single }
        func int(_ key: String) -> Int? { env[key].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } }
        if let r = int("OMPI_COMM_WORLD_RANK") {
            return .mpi(MPIEnvironment(rank: r, size: int("OMPI_COMM_WORLD_SIZE"), variable: "OMPI_COMM_WORLD_RANK"))
        }
        if let r = int("PMIX_RANK") {
            return .mpi(MPIEnvironment(rank: r, size: int("SLURM_STEP_NUM_TASKS"), variable: "PMIX_RANK"))
        }
        if let r = int("PMI_RANK") {
            return .mpi(MPIEnvironment(rank: r, size: int("PMI_SIZE"), variable: "PMI_RANK"))
        }
        return .single
    }

    /// The MPI environment, if launched as a rank.
    public var mpi: MPIEnvironment? {
        if case let .mpi(e) = self { return e }
        return nil
    }
}

/// What the launcher told this rank before `MPI_Init`.
public struct MPIEnvironment: Sendable, Equatable {
    /// This process's rank in `MPI_COMM_WORLD` (0-based).
    public var rank: Int
    /// The number of ranks, when the launcher exports it.
    public var size: Int?
    /// The variable the rank was read from (for messages).
    public var variable: String

    public init(rank: Int, size: Int?, variable: String) {
        self.rank = rank
        self.size = size
        self.variable = variable
    }
}

/// The CPUs this process may run on (`sched_getaffinity`): under mpirun, the cores its binding gives
/// the rank (one with Open MPI's default binding of up to 2 ranks, a socket's beyond). Foundation's
/// `activeProcessorCount` counts the machine's cores whatever the binding.
public enum CPUAffinity {
    public static func count() -> Int? {
        // glibc declares sched_getaffinity only under _GNU_SOURCE, which Swift's Glibc module lacks.
        typealias GetAffinity = @convention(c) (Int32, Int, UnsafeMutableRawPointer) -> Int32
        guard let process = dlopen(nil, RTLD_NOW), let sym = dlsym(process, "sched_getaffinity") else { return nil }
        let getAffinity = unsafeBitCast(sym, to: GetAffinity.self)
        var mask = [UInt8](repeating: 0, count: 1024)  // up to 8192 CPUs
        let rc = mask.withUnsafeMutableBytes { getAffinity(0, $0.count, $0.baseAddress!) }
        guard rc == 0 else { return nil }
        let n = mask.reduce(0) { $0 + $1.nonzeroBitCount }
        return n > 0 ? n : nil
    }
}
