import Foundation
import Networks
import RandomStreams
import Training
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics
import XCTest

/// Projected training keeps θ in the box Θ at every step; free training in the same setting leaves it.
final class ProjectedTrainingTests: XCTestCase {
    func setting(projection: ParameterBox?) throws -> (TrainingConfig, Dataset) {
        let task = try TeacherTask.random(architecture: Architecture(sizes: [3, 6, 3], bias: true), activation: .tanh, seed: 21)
        var rng = Xoshiro256(seed: 22)
        let data = task.sample(count: 64, rng: &rng)
        let cfg = try TrainingConfig(architecture: Architecture(sizes: [3, 6, 3], bias: true), activation: .tanh,
                                     optimizer: OptimizerSettings(kind: .adam, learningRate: 0.05),
                                     batchSize: 8, epochs: 4, seed: 23, checkpointEverySteps: 1, projection: projection)
        return (cfg, data)
    }

    /// Every θ the trainer hands out (θ₀, every step, every epoch end) with a tiny box.
    func trajectory(projection: ParameterBox?, box: ParameterBox) throws -> (inBox: Int, total: Int, atBound: Int, result: TrainingResult) {
        let (cfg, data) = try setting(projection: projection)
        var inBox = 0, total = 0, atBound = 0
        let r = try Trainer(config: cfg).train(data: data) { cp in
            total += 1
            if box.contains(cp.network) { inBox += 1 }
            atBound += cp.network.parameters.filter { $0 == box.lo || $0 == box.hi }.count
        }
        return (inBox, total, atBound, r)
    }

    func testProjectionKeepsEveryStepInTheBoxAndFreeTrainingLeavesIt() throws {
        let box = try ParameterBox(lo: -0.05, hi: 0.05)
        let projected = try trajectory(projection: box, box: box)
        XCTAssertEqual(projected.total, 1 + 4 * 8)  // θ₀ and 8 steps per epoch (64/8), each handed out once
        XCTAssertEqual(projected.inBox, projected.total, "every projected iterate lies in [lo, hi]")
        XCTAssertTrue(box.contains(projected.result.network))
        XCTAssertGreaterThan(projected.atBound, 0, "the box is active: some coordinates sit on its faces")
        // Not vacuous: the same run without projection starts (Glorot) and moves outside the box.
        let free = try trajectory(projection: nil, box: box)
        XCTAssertEqual(free.total, projected.total)
        XCTAssertEqual(free.inBox, 0)
        XCTAssertFalse(box.contains(free.result.network))
        // Projected training still learns something inside its box, and differs from free training.
        XCTAssertLessThan(projected.result.epochs.last!.trainLoss, projected.result.epochs[0].trainLoss)
        XCTAssertNotEqual(projected.result.network.parameters, free.result.network.parameters)
    }

    /// A box that holds the whole trajectory changes nothing, bit for bit (the default, nil, is free training).
    func testWideBoxGivesTheFreeTrajectory() throws {
        let free = try trajectory(projection: nil, box: ParameterBox(lo: -1e6, hi: 1e6))
        let wide = try trajectory(projection: ParameterBox(lo: -1e6, hi: 1e6), box: ParameterBox(lo: -1e6, hi: 1e6))
        XCTAssertEqual(free.result.network.parameters, wide.result.network.parameters)
        XCTAssertEqual(free.result.epochs, wide.result.epochs)
        XCTAssertNil(try setting(projection: nil).0.projection)
    }

    func testBoxProjectionClampsEachCoordinate() throws {
        let box = try ParameterBox(lo: -0.5, hi: 1)
        var net = try Network(architecture: Architecture(sizes: [2, 2], bias: true), activation: .linear,
                              weights: [Matrix([[-3, 0.25], [1, 7]])], biases: [[-0.5, 0.9999]])
        XCTAssertFalse(box.contains(net))
        box.project(&net)
        XCTAssertEqual(net.parameters, [-0.5, 0.25, 1, 1, -0.5, 0.9999])
        XCTAssertTrue(box.contains(net))
        XCTAssertThrowsError(try ParameterBox(lo: 1, hi: 1)) { XCTAssertTrue($0 is TwoScaleError) }
        XCTAssertThrowsError(try ParameterBox(lo: .nan, hi: 1)) { XCTAssertTrue($0 is TwoScaleError) }
        XCTAssertThrowsError(try ParameterBox(lo: 0, hi: .infinity)) { XCTAssertTrue($0 is TwoScaleError) }
    }
}
