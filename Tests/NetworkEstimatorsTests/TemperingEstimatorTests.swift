@testable import Fisher
import Estimation
import Foundation
@testable import NetworkEstimators
@testable import Networks
@testable import Samplers
import TestSupport
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// `--estimator joint` (joint tempering over the whole network, docs/ESTIMATORS.md §8).
final class TemperingEstimatorTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        ShippedEstimators.install()
    }

    /// Against the exact 2sED and lower 2sED of the 1-1-2 relu network (3 weights; midpoint quadrature, c = 1)
    /// over 20 seeds at ε = 10⁻³ and 0.1: each 95% interval (from the replicates' spread; the lower 2sED's from
    /// `TemperedLower`) holds the exact value in at least 17 of 20 (16 or fewer at a true 95% has probability
    /// 1.6%), the mean errors lie within 4 standard errors of 0, and the certified bracket is attached and holds.
    func testAgainstQuadrature() async throws {
        let (m, _) = try tinyReluNetwork()
        let eps = [1e-3, 0.1], zeta = 2.0 / 3
        let quadrature = try eps.map { e in try tinyNetworkQuadrature(m, scale: ScaleParameters.t(eps: e, zeta: zeta)) }
        let exact = zip(eps, quadrature).map { zeta * 3 + $1.logZ / Swift.abs(Foundation.log($0)) }
        let exactLower = zip(eps, quadrature).map { zeta * 3 + $1.lower / Swift.abs(Foundation.log($0)) }
        var held = [0, 0], heldLower = [0, 0], errors: [[Double]] = [[], []], lowerErrors: [[Double]] = [[], []]
        let request = MeasurementRequest(eps: eps, zeta: zeta, lower: true, normalization: .none, threads: 2)
        for seed in 1...20 {
            let problem = EstimatorProblem(model: m, box: -1...1, seed: UInt64(seed), budget: EstimatorBudget(paths: 32, inner: 4))
            let r = try await TemperingEstimator.estimate(problem, request: request) { _ in }
            for i in eps.indices {
                let p = r.points[i], ci = try XCTUnwrap(p.ci95), ciLower = try XCTUnwrap(p.ci95Lower)
                if ci.contains(exact[i]) { held[i] += 1 }
                if ciLower.contains(exactLower[i]) { heldLower[i] += 1 }
                errors[i].append(p.dZeta - exact[i])
                lowerErrors[i].append(try XCTUnwrap(p.dZetaLower) - exactLower[i])
                XCTAssertEqual(p.dZetaJoint, p.dZeta)
                XCTAssertTrue(try XCTUnwrap(r.bracket?.points[i].dZeta).contains(exact[i]))
                XCTAssertEqual(p.intervalLower?.source, .sampled)
            }
        }
        for i in eps.indices {
            for (name, h, e) in [("2sED", held[i], errors[i]), ("lower 2sED", heldLower[i], lowerErrors[i])] {
                XCTAssertGreaterThanOrEqual(h, 17, "ε = \(eps[i]), \(name): held \(h) of 20")
                let mean = e.reduce(0, +) / 20
                let sd = LogEstimate.sampleVariance(e).squareRoot()
                XCTAssertLessThan(Swift.abs(mean), 4 * sd / 20.0.squareRoot() + 1e-12, "ε = \(eps[i]), \(name): mean error \(mean)")
                XCTAssertGreaterThan(sd, 0, "the estimate varies, so the check is not vacuous")
            }
            // The network's 2sED and lower 2sED differ by more than the lower one's spread, so the check tells them apart.
            XCTAssertGreaterThan(exact[i] - exactLower[i], 0)
        }
    }

    /// The replicates' log Ẑ combine into `log mean_r Ẑ_r` plus half its relative variance, and that variance
    /// is widened by `(t_{R−1}/z)²` (R = 4: t₃ = 3.18245), so a normal-quantile interval on it is Student's.
    func testReplicateVarianceIsStudents() async throws {
        let (m, _) = try tinyReluNetwork()
        XCTAssertEqual(StudentT.varianceInflation(replicates: 4), pow(3.182446305284263 / 1.959963984540054, 2), accuracy: 1e-10)
        let j = try await JointSMC(model: m, box: -1...1, seed: 5, particles: 16, replicates: 4, sweeps: 2).run(stops: [0.5, 3], threads: 2)
        for t in 0..<2 {
            let l = j.logZ[t]
            XCTAssertEqual(l.count, 4)
            let mean = l.map { Foundation.exp($0 - l[0]) }.reduce(0, +) / 4
            let rel = l.map { pow(Foundation.exp($0 - l[0]) / mean - 1, 2) }.reduce(0, +) / 3 / 4
            XCTAssertGreaterThan(rel, 0)
            XCTAssertEqual(j.estimates[t].value, l[0] + Foundation.log(mean) + rel / 2, accuracy: 1e-10)
            XCTAssertEqual(j.estimates[t].variance, rel * StudentT.varianceInflation(replicates: 4), accuracy: 1e-12 * rel)
        }
    }

    /// A network's joint samplers stopped after any save, in the forward pass or the reverse pass, and continued from
    /// their snapshots (`JointSMC.checkpoints`) end with the same bits as a run never stopped: each particle's
    /// stages and roots, recomputed from its weights, are what the moves had left (two hidden relu layers).
    func testCheckpointedNetworkRunContinuesToTheSameBytes() async throws {
        let data = Matrix(rows: 6, cols: 3, data: (0..<18).map { Foundation.sin(Double($0) * 1.7) })
        let m = try MarkovFisher(architecture: try Architecture(parsing: "3-2-2-3"), activation: .relu, data: data, sigma2: 0.5,
                                 noiseSamples: 1, noiseSeed: 3)
        func sampler(_ store: MemoryCheckpoints?) throws -> JointSMC<MarkovFisher> {
            var j = try JointSMC(model: m, box: -1...1, seed: 4, particles: 8, replicates: 2, sweeps: 2)
            j.checkpoints = store
            return j
        }
        let stops = [20.0, 1000.0]
        let reference = try await sampler(nil).run(stops: stops, threads: 1)
        let full = MemoryCheckpoints()
        _ = try await sampler(full).run(stops: stops, threads: 1)
        let phases = try full.log.map { save in
            try JointSMC<MarkovFisher>.Snapshot(decoding: save.data, name: save.name, sampler: sampler(nil),
                                                replicate: save.name == "joint-0" ? 0 : 1, stops: stops).phase
        }
        XCTAssertGreaterThan(phases.filter { $0 == .forward }.count, 2, "\(phases)")
        XCTAssertGreaterThan(phases.filter { if case .reverse = $0 { true } else { false } }.count, 2, "\(phases)")
        // Stopped after every save but the last.
        for kill in 1..<phases.count {
            let store = MemoryCheckpoints()
            store.killAt = kill + 1
            do {
                _ = try await sampler(store).run(stops: stops, threads: 1)
                XCTFail("not stopped")
            } catch is MemoryCheckpoints.Killed {}
            store.killAt = nil
            let continued = try await sampler(store).run(stops: stops, threads: 2)
            XCTAssertEqual(continued.logZ, reference.logZ, "stopped after save \(kill)")
            XCTAssertEqual(continued.reverseLogZ, reference.reverseLogZ)
            XCTAssertEqual(continued.slope, reference.slope)
            XCTAssertEqual([continued.steps, continued.proposals, continued.accepted], [reference.steps, reference.proposals, reference.accepted])
            XCTAssertEqual(store.log.count, phases.count, "the continued run saves only the steps after its snapshots")
        }
    }

    /// The same numbers whatever the threads (the lower 2sED's too); a budget out of range is refused.
    func testDeterministicAndRefusals() async throws {
        let (m, _) = try tinyReluNetwork()
        let problem = EstimatorProblem(model: m, box: -1...1, seed: 9, budget: EstimatorBudget(paths: 16, inner: 3))
        let one = try await TemperingEstimator.estimate(problem, request: MeasurementRequest(eps: [0.01, 0.2], zeta: 0.5, lower: true, threads: 1)) { _ in }
        let two = try await TemperingEstimator.estimate(problem, request: MeasurementRequest(eps: [0.01, 0.2], zeta: 0.5, lower: true, threads: 3)) { _ in }
        XCTAssertEqual(one.points, two.points)
        XCTAssertTrue(one.points.allSatisfy { $0.dZetaLower != nil && $0.ci95Lower != nil })
        // The lower 2sED's run leaves the 2sED's numbers as they are without it.
        let plain = try await TemperingEstimator.estimate(problem, request: MeasurementRequest(eps: [0.01, 0.2], zeta: 0.5, threads: 2)) { _ in }
        XCTAssertEqual(plain.points.map(\.dZeta), one.points.map(\.dZeta))
        XCTAssertEqual(plain.points.map(\.ci95), one.points.map(\.ci95))
        XCTAssertTrue(plain.points.allSatisfy { $0.dZetaLower == nil })
        XCTAssertThrowsError(try TemperingEstimator.checkBudget(EstimatorBudget(paths: 3, inner: 4), layers: 2))
        XCTAssertThrowsError(try TemperingEstimator.checkBudget(EstimatorBudget(paths: 16, inner: 1), layers: 2))
        XCTAssertThrowsError(try TemperingEstimator.checkBudget(EstimatorBudget(paths: 16, inner: 3, settings: EstimatorSettings([.sweeps: 0])), layers: 2))
        XCTAssertThrowsError(try TemperingEstimator.checkBudget(EstimatorBudget(paths: 16, inner: 3, settings: EstimatorSettings([.sweeps: 1_001])), layers: 2))
        XCTAssertNoThrow(try TemperingEstimator.checkBudget(EstimatorBudget(paths: 16, inner: 3, settings: EstimatorSettings([.sweeps: 1])), layers: 2))
        XCTAssertTrue(TemperingEstimator.estimatesLower)
        XCTAssertTrue(EstimatorRegistry.kinds.contains(.tempering))
        XCTAssertTrue(try EstimatorRegistry.estimator(EstimatorKind(rawValue: "joint")) == TemperingEstimator.self, "the former name")
    }

    /// The default sweeps: a quarter of the widest unit's weights, at least 5. On 54-13-11-9-7 (no biases) the first
    /// layer's neurons have 54 weights and the softmax unit 9·7 = 63, so ⌈63/4⌉ = 16; on 54-16-7 the softmax unit's
    /// 112 give 28; with biases 784-32-10's neurons have 785, so 197; a 1-1-2 network's widest unit (2) gives the floor 5.
    /// A value given is used as given.
    func testDefaultSweepsFromTheWidestUnit() throws {
        func sweeps(_ arch: String, bias: Bool = false, inputs: Int = 54, given: Int? = nil) throws -> Int {
            let x = Matrix(rows: 3, cols: inputs, data: (0..<(3 * inputs)).map { Double($0 % 7) / 7 - 0.5 })
            let m = try MarkovFisher(architecture: try Architecture(parsing: arch, bias: bias), activation: .relu, data: x, sigma2: 0.1,
                                     noiseSamples: 1, noiseSeed: 1)
            let settings = given.map { EstimatorSettings([.sweeps: $0]) } ?? EstimatorSettings()
            return TemperingEstimator.sweeps(EstimatorBudget(paths: 16, inner: 2, settings: settings), model: m)
        }
        XCTAssertEqual(try sweeps("54-13-11-9-7"), 16)
        XCTAssertEqual(try sweeps("54-16-7"), 28)
        XCTAssertEqual(try sweeps("784-32-10", bias: true, inputs: 784), 197)
        XCTAssertEqual(try sweeps("1-1-2", inputs: 1), 5)
        XCTAssertEqual(try sweeps("54-13-11-9-7", given: 3), 3)
        XCTAssertEqual(JointSMC<MarkovFisher>.defaultSweeps(units: [StageUnits(count: 2, dimension: 20), StageUnits(count: 2, dimension: 30)]), 8)
        XCTAssertEqual(JointSMC<MarkovFisher>.defaultSweeps(units: [StageUnits(count: 10, dimension: 1_000)]), 250)
        XCTAssertEqual(JointSMC<MarkovFisher>.defaultSweeps(units: [StageUnits(count: 1, dimension: 10_000)]), 1_000)
    }
}
