import Cluster
import Foundation
import TwoScaleCore
import XCTest

/// How a process was started, from the launcher's variables alone; the cores it may use.
final class LaunchTests: XCTestCase {
    func testLaunchersAreRecognisedFromTheirVariables() {
        XCTAssertEqual(Launch.detect([:]), .single)
        XCTAssertEqual(Launch.detect(["PATH": "/usr/bin", "SLURM_JOB_ID": "3"]), .single, "a SLURM job is not an MPI rank")
        XCTAssertEqual(Launch.detect(["OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4"]),
                       .mpi(MPIEnvironment(rank: 2, size: 4, variable: "OMPI_COMM_WORLD_RANK")))
        XCTAssertEqual(Launch.detect(["PMIX_RANK": "1", "SLURM_STEP_NUM_TASKS": "8"]),
                       .mpi(MPIEnvironment(rank: 1, size: 8, variable: "PMIX_RANK")))
        XCTAssertEqual(Launch.detect(["PMI_RANK": "0", "PMI_SIZE": "2"]),
                       .mpi(MPIEnvironment(rank: 0, size: 2, variable: "PMI_RANK")))
        XCTAssertEqual(Launch.detect(["PMIX_RANK": "0"]).mpi?.size, nil, "size known only after MPI_Init")
        for off in ["off", "0", "no", "OFF"] {
            XCTAssertEqual(Launch.detect(["OMPI_COMM_WORLD_RANK": "1", "TWOSCALE_MPI": off]), .single, off)
        }
        XCTAssertEqual(Launch.detect(["OMPI_COMM_WORLD_RANK": "x"]), .single, "not a rank")
    }

    func testSharesAreDisjointAndCoverTheList() {
        let todo = [0, 2, 3, 5, 8, 9, 11]
        for ranks in 1...9 {
            let shares = (0..<ranks).map { DistributedSpectraRun.share(of: $0, ranks: ranks, todo: todo) }
            XCTAssertEqual(shares.flatMap { $0 }.sorted(), todo, "\(ranks) ranks")
            XCTAssertLessThanOrEqual((shares.map(\.count).max() ?? 0) - (shares.map(\.count).min() ?? 0), 1, "balanced")
        }
        XCTAssertEqual(DistributedSpectraRun.share(of: 1, ranks: 3, todo: todo), [2, 8])
    }

    func testAffinityCountsTheUsableCores() throws {
        let n = try XCTUnwrap(CPUAffinity.count())
        XCTAssertGreaterThanOrEqual(n, 1)
        XCTAssertLessThanOrEqual(n, ProcessInfo.processInfo.processorCount)
    }
}
