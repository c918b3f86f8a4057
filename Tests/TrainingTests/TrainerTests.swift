import Foundation
import Networks
import RandomStreams
import Training
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics
import XCTest

final class TrainerTests: XCTestCase {
    /// Two Gaussian blobs per class around ±3·e_c, linearly separable with overwhelming probability.
    func separable(n: Int, seed: UInt64) -> Dataset {
        var rng = Xoshiro256(seed: seed)
        var x = Matrix(rows: n, cols: 4)
        var y = [Int](repeating: 0, count: n)
        for i in 0..<n {
            let c = rng.index(3)
            y[i] = c
            for j in 0..<4 { x[i, j] = 0.5 * rng.normal() + (j == c ? 3 : 0) }
        }
        return Dataset(inputs: x, labels: y, classes: 3, source: "blobs")
    }

    func config(_ kind: OptimizerKind, lr: Double, seed: UInt64 = 3, epochs: Int = 15, bias: Bool = true) throws -> TrainingConfig {
        try TrainingConfig(architecture: Architecture(sizes: [4, 8, 3], bias: bias), activation: .tanh,
                           optimizer: OptimizerSettings(kind: kind, learningRate: lr, momentum: 0.9),
                           batchSize: 16, epochs: epochs, seed: seed)
    }

    func testAdamAndSGDReduceTheLossOnASeparableTask() throws {
        let data = separable(n: 400, seed: 1)
        let test = separable(n: 200, seed: 2)
        for (kind, lr) in [(OptimizerKind.adam, 0.01), (.sgd, 0.05)] {
            let r = try Trainer(config: config(kind, lr: lr)).train(data: data, holdout: test)
            let first = r.epochs[0], last = r.epochs.last!
            XCTAssertEqual(r.epochs.count, 16)
            XCTAssertLessThan(last.trainLoss, 0.2 * first.trainLoss, "\(kind)")
            XCTAssertLessThan(last.trainLoss, 0.1, "\(kind)")
            XCTAssertGreaterThan(last.trainAccuracy ?? 0, 0.97, "\(kind)")
            XCTAssertGreaterThan(last.holdoutAccuracy ?? 0, 0.95, "\(kind)")
            XCTAssertEqual(r.steps, 15 * 25)
            XCTAssertEqual(r.samplesProcessed, 15 * 400)
        }
    }

    func testSameSeedSameNetworkDifferentSeedDifferent() throws {
        let data = separable(n: 100, seed: 4)
        let a = try Trainer(config: config(.adam, lr: 0.01, epochs: 3)).train(data: data)
        let b = try Trainer(config: config(.adam, lr: 0.01, epochs: 3)).train(data: data)
        let c = try Trainer(config: config(.adam, lr: 0.01, seed: 4, epochs: 3)).train(data: data)
        XCTAssertEqual(a.network.parameters, b.network.parameters)
        XCTAssertEqual(a.epochs, b.epochs)
        XCTAssertNotEqual(a.network.parameters, c.network.parameters)
        XCTAssertEqual(try WeightsFile.json(a.network).serialized(), try WeightsFile.json(b.network).serialized())
    }

    /// One Adam step moves each coordinate by lr·g/(|g| + ϵ) ≈ lr·sign(g); one SGD step by lr·g.
    func testOptimizerFirstSteps() throws {
        let arch = try Architecture(sizes: [2, 2])
        let net0 = try Network(architecture: arch, activation: .linear, weights: [Matrix([[0.5, -0.25], [1, 2]])])
        let g = [0.3, -2.0, 1e-3, 0]
        var adam = Optimizer(settings: try OptimizerSettings(kind: .adam, learningRate: 0.1), parameterCount: 4)
        var net = net0
        adam.step(&net, gradient: g)
        for i in 0..<4 {
            XCTAssertEqual(net.parameters[i], net0.parameters[i] - 0.1 * g[i] / (abs(g[i]) + 1e-8), accuracy: 1e-12)
        }
        var sgd = Optimizer(settings: try OptimizerSettings(kind: .sgd, learningRate: 0.1, momentum: 0.5), parameterCount: 4)
        net = net0
        sgd.step(&net, gradient: g)
        sgd.step(&net, gradient: g)  // v₂ = 0.5 g + g
        for i in 0..<4 { XCTAssertEqual(net.parameters[i], net0.parameters[i] - 0.1 * (g[i] + 1.5 * g[i]), accuracy: 1e-12) }
    }

    func testCheckpointsCoverTheTrajectory() throws {
        let data = separable(n: 100, seed: 4)
        var cfg = try config(.sgd, lr: 0.05, epochs: 3)
        cfg.checkpointEverySteps = 3  // 7 steps per epoch (batch 16 of 100)
        var seen: [(Int, Int, Bool)] = []
        let r = try Trainer(config: cfg).train(data: data) { seen.append(($0.epoch, $0.step, $0.endOfEpoch)) }
        XCTAssertEqual(seen.filter { $0.2 }.map(\.0), [0, 1, 2, 3])
        XCTAssertEqual(seen.filter { !$0.2 }.map(\.1), [3, 6, 9, 12, 15, 18])
        XCTAssertEqual(r.steps, 21)
    }

    func testValidationErrors() throws {
        let data = separable(n: 30, seed: 1)
        func usage(_ body: () throws -> Void, _ text: String, line: UInt = #line) {
            do { try body(); XCTFail("no error", line: line) } catch let e as TwoScaleError {
                XCTAssertEqual(e.kind, .usage, line: line)
                XCTAssertTrue(e.message.contains(text), e.message, line: line)
            } catch { XCTFail("\(error)", line: line) }
        }
        usage({ _ = try OptimizerSettings(kind: .adam, learningRate: 0) }, "\(Setting.learningRate)")
        usage({ _ = try OptimizerSettings(kind: .sgd, learningRate: -1) }, "\(Setting.learningRate)")
        usage({ _ = try OptimizerSettings(kind: .sgd, learningRate: 0.1, momentum: 1) }, "\(Setting.momentum)")
        usage({ _ = try self.config(.adam, lr: 0.1, epochs: 0) }, "\(Setting.epochs)")
        usage({
            var c = try self.config(.adam, lr: 0.1)
            c.batchSize = 31
            _ = try Trainer(config: c).train(data: data)
        }, "\(Setting.batch)")
        usage({
            let c = try TrainingConfig(architecture: Architecture(sizes: [5, 3]), activation: .relu,
                                       optimizer: OptimizerSettings(kind: .adam, learningRate: 0.1), batchSize: 4, epochs: 1, seed: 1)
            _ = try Trainer(config: c).train(data: data)
        }, "input size")
        usage({
            let c = try TrainingConfig(architecture: Architecture(sizes: [4, 2]), activation: .relu,
                                       optimizer: OptimizerSettings(kind: .adam, learningRate: 0.1), batchSize: 4, epochs: 1, seed: 1)
            _ = try Trainer(config: c).train(data: data)
        }, "labels must lie in 0..<2")
        usage({
            var d = data
            d.labels = nil
            _ = try Trainer(config: self.config(.adam, lr: 0.1)).train(data: d)
        }, "labels")
    }

    func testHoldoutSplit() throws {
        let data = separable(n: 50, seed: 9)
        let (tr, ho) = try HoldoutSplit.split(data, fraction: 0.2, seed: 3)
        XCTAssertEqual(tr.count, 40)
        XCTAssertEqual(ho.count, 10)
        let rows = Set((0..<50).map { Array(data.inputs.row($0)) })
        let parts = (0..<40).map { Array(tr.inputs.row($0)) } + (0..<10).map { Array(ho.inputs.row($0)) }
        XCTAssertEqual(Set(parts), rows)
        XCTAssertThrowsError(try HoldoutSplit.split(data, fraction: 1, seed: 3))
        XCTAssertThrowsError(try HoldoutSplit.split(data, fraction: 0.001, seed: 3))
    }

    func testWeightsFileFormat() throws {
        let arch = try Architecture(sizes: [3, 2, 2], bias: true)
        var rng = Xoshiro256(seed: 1)
        let net = Network.uniform(architecture: arch, activation: .relu, box: -1...1, rng: &rng)
        let json = try JSONValue.parse(Data(try WeightsFile.json(net).serialized().utf8), source: "w.json")
        let w = try XCTUnwrap(json["weights"]?.arrayValue)
        XCTAssertEqual(w.count, 2)
        XCTAssertEqual(w[0].arrayValue?.count, 2)  // n_1 rows
        XCTAssertEqual(w[0].arrayValue?[0].arrayValue?.count, 3)  // of n_0 numbers
        XCTAssertEqual(w[0].arrayValue?[1].arrayValue?[2].doubleValue, net.weights[0][1, 2])
        XCTAssertEqual(json["biases"]?.arrayValue?[1].arrayValue?.map { $0.doubleValue! }, net.biases[1])
        // Round trip through the reader of `fisher --weights`.
        XCTAssertEqual(try WeightsFile.parse(json, path: "w.json", architecture: arch, activation: .relu), net)
        let noBias = Network.uniform(architecture: try Architecture(sizes: [3, 2]), activation: .relu, box: -1...1, rng: &rng)
        XCTAssertNil(WeightsFile.json(noBias)["biases"])
    }

    func testGlorotInitialization() throws {
        let arch = try Architecture(sizes: [30, 10, 4], bias: true)
        var rng = Xoshiro256(seed: 2)
        let net = Initialization.glorot.network(architecture: arch, activation: .relu, rng: &rng)
        XCTAssertLessThanOrEqual(net.weights[0].data.map(abs).max()!, (6.0 / 40).squareRoot())
        XCTAssertGreaterThan(net.weights[0].data.map(abs).max()!, 0.9 * (6.0 / 40).squareRoot())
        XCTAssertLessThanOrEqual(net.weights[1].data.map(abs).max()!, (6.0 / 14).squareRoot())
        XCTAssertTrue(net.biases.joined().allSatisfy { $0 == 0 })
    }

    /// A CNN with pooling trains (the loss falls), and every checkpoint it writes is a weights file that
    /// reads back to the same network (parametric layers only: the pooling layer has no entry).
    func testCNNTrainsAndItsCheckpointsReadBack() throws {
        var rng = Xoshiro256(seed: 5)
        let n = 60
        var x = Matrix(rows: n, cols: 6 * 6 * 2)
        var y = [Int](repeating: 0, count: n)
        for i in 0..<n {
            y[i] = rng.index(2)
            for j in 0..<72 { x[i, j] = 0.3 * rng.normal() + (j % 2 == y[i] ? 1 : 0) }  // class = brighter channel
        }
        let data = Dataset(inputs: x, labels: y, classes: 2, source: "channels", shape: [6, 6, 2])
        let arch = try Architecture(parsing: "6x6x2-conv3k3-maxpool2-2", bias: true)
        let cfg = try TrainingConfig(architecture: arch, activation: .relu,
                                     optimizer: OptimizerSettings(kind: .adam, learningRate: 0.01, momentum: 0.9),
                                     batchSize: 16, epochs: 8, seed: 2)
        var written: [Network] = []
        let r = try Trainer(config: cfg).train(data: data) { cp in
            let text = try WeightsFile.json(cp.network).serialized()
            written.append(try WeightsFile.decode(Data(text.utf8), path: "cp.json", architecture: arch, activation: .relu))
            XCTAssertEqual(written.last?.blocks, cp.network.blocks)
        }
        XCTAssertEqual(written.count, 9)
        XCTAssertLessThan(r.epochs.last!.trainLoss, 0.5 * r.epochs.first!.trainLoss)
    }
}
