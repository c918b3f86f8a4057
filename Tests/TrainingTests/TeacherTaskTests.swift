import Foundation
import Networks
import RandomStreams
import Training
import TwoScaleCore
import TwoScaleNumerics
import XCTest

final class TeacherTaskTests: XCTestCase {
    /// The exact-label population risk agrees with a plain Monte Carlo estimate over sampled (x, y)
    /// within a few combined standard errors, for cross-entropy and 0-1 loss.
    func testExactLabelRiskMatchesLargeSampleEstimate() throws {
        let task = try TeacherTask.random(architecture: Architecture(sizes: [5, 6, 3]), activation: .tanh, temperature: 0.7, seed: 11)
        var rng = Xoshiro256(seed: 12)
        let student = Network.uniform(architecture: try Architecture(sizes: [5, 4, 3]), activation: .relu, box: -1...1, rng: &rng)
        var prng = Xoshiro256(seed: 13)
        let pop = task.population(count: 20_000, rng: &prng)
        let r = pop.risk(of: student)
        XCTAssertGreaterThan(r.crossEntropyError, 0)
        XCTAssertGreaterThan(r.zeroOneError, 0)

        var srng = Xoshiro256(seed: 14)
        let n = 100_000
        let data = task.sample(count: n, rng: &srng)
        let lp = Softmax.logProbabilities(student.forward(data.inputs).logits)
        var ce = [Double](), zo = [Double]()
        for i in 0..<n {
            let y = data.labels![i]
            ce.append(-lp[i, y])
            let arg = (0..<3).max { lp[i, $0] < lp[i, $1] }!
            zo.append(arg == y ? 0 : 1)
        }
        func meanSE(_ v: [Double]) -> (Double, Double) {
            let m = v.reduce(0, +) / Double(v.count)
            let s = (v.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(v.count - 1)).squareRoot()
            return (m, s / Double(v.count).squareRoot())
        }
        let (ceM, ceS) = meanSE(ce), (zoM, zoS) = meanSE(zo)
        XCTAssertLessThan(abs(r.crossEntropy - ceM), 4 * (r.crossEntropyError * r.crossEntropyError + ceS * ceS).squareRoot())
        XCTAssertLessThan(abs(r.zeroOne - zoM), 4 * (r.zeroOneError * r.zeroOneError + zoS * zoS).squareRoot())
        // And the exact-label estimate is the more precise one.
        XCTAssertLessThan(r.zeroOneError * r.zeroOneError * 20_000, zoS * zoS * Double(n))
    }

    /// Per-input risk by hand: −Σ_y p*(y|x) log p_θ(y|x) and 1 − p*(argmax_θ|x).
    func testRiskOfOneInputByHand() throws {
        let teacher = try Network(architecture: Architecture(sizes: [2, 3]), activation: .relu, weights: [Matrix([[1, 0], [0, 1], [1, 1]])])
        let task = try TeacherTask(teacher: teacher, temperature: 2)
        let student = try Network(architecture: Architecture(sizes: [2, 3]), activation: .relu, weights: [Matrix([[0, 1], [2, 0], [0, 0]])])
        let x = Matrix([[0.3, -0.8]])
        let pop = PopulationSample(inputs: x, labelProbabilities: task.labelProbabilities(x))
        let zt: [Double] = [0.15, -0.4, -0.25]  // teacher logits (0.3, −0.8, −0.5) / T
        let st: Double = exp(0.15) + exp(-0.4) + exp(-0.25)
        let pt: [Double] = zt.map { exp($0) / st }
        let zs: [Double] = [-0.8, 0.6, 0]      // student logits
        let lse: Double = log(exp(-0.8) + exp(0.6) + 1)
        var want = 0.0
        for j in 0..<3 { want -= pt[j] * (zs[j] - lse) }
        let r = pop.risk(of: student)
        XCTAssertEqual(r.crossEntropy, want, accuracy: 1e-14)
        XCTAssertEqual(r.zeroOne, 1 - pt[1], accuracy: 1e-14)
        XCTAssertEqual(r.crossEntropyError, 0)
    }

    /// Labels follow p*(y|x): with a very cold teacher they are the teacher's argmax wherever it is
    /// unique. (A ReLU teacher without biases gives all-zero logits — a tie, so uniform labels — on the
    /// inputs that switch every hidden unit off; those rows are left out.)
    func testSampledLabelsFollowTheTeacher() throws {
        let task = try TeacherTask.random(architecture: Architecture(sizes: [4, 5, 3]), activation: .relu, temperature: 1e-6, seed: 3)
        var rng = Xoshiro256(seed: 4)
        let d = task.sample(count: 500, rng: &rng)
        let logits = task.teacher.forward(d.inputs).logits
        var checked = 0
        for i in 0..<500 {
            let row = (0..<3).map { logits[i, $0] }.sorted()
            guard row[2] - row[1] > 1e-3 else { continue }  // p of a non-argmax label < e^(−1000)
            checked += 1
            XCTAssertEqual(d.labels![i], (0..<3).max { logits[i, $0] < logits[i, $1] }!, "row \(i)")
        }
        XCTAssertGreaterThan(checked, 400)
        XCTAssertThrowsError(try TeacherTask(teacher: task.teacher, temperature: 0))
    }

    /// Gaps shrink with n on a small teacher task, and the run is reproducible.
    func testEmpiricalGapsShrinkWithN() async throws {
        let task = try TeacherTask.random(architecture: Architecture(sizes: [6, 5, 3]), activation: .relu, seed: 21)
        let student = try Architecture(sizes: [6, 8, 3])
        let cfg = try TrainingConfig(architecture: student, activation: .relu,
                                     optimizer: OptimizerSettings(kind: .adam, learningRate: 0.02), batchSize: 32, epochs: 8, seed: 1)
        let e = try GapExperiment(task: task, student: student, studentActivation: .relu, training: cfg, sampleSizes: [40, 2000],
                                  trials: 4, randomDraws: 5, box: -1...1, populationSize: 5000, seed: 5)
        let g = try await EmpiricalGap.run(e)
        XCTAssertEqual(g.count, 8)
        let s = GapSummary.summarize(g, sampleSizes: [40, 2000], C: 1) { n in pow(log(Double(n)) / Double(n), 0.375) }
        XCTAssertGreaterThan(s[0].gapMean, 2 * s[1].gapMean)
        XCTAssertGreaterThan(s[0].supGapEstimate, 2 * s[1].supGapEstimate)
        XCTAssertGreaterThan(s[0].supGapEstimate01, s[1].supGapEstimate01)
        for p in s {
            if p.finalOutsideBox == 0 { XCTAssertGreaterThanOrEqual(p.supGapEstimate, p.gapMax) }
            XCTAssertEqual(p.loss, .zeroOne)
            XCTAssertEqual(p.supGap, p.supGapEstimate01)
            XCTAssertEqual(p.cFit!, p.supGap / p.epsN!, accuracy: 1e-15)
            XCTAssertEqual(p.checkpoints, 4 * 9)
        }
        let ce = GapSummary.summarize(g, sampleSizes: [40, 2000], C: 1, loss: .crossEntropy) { n in pow(log(Double(n)) / Double(n), 0.375) }
        XCTAssertEqual(ce.map(\.supGap), s.map(\.supGapEstimate))
        XCTAssertEqual(ce.map(\.noiseFloor), s.map { 2 * $0.riskError })
        let again = try await EmpiricalGap.run(e)
        XCTAssertEqual(again.map(\.supGap), g.map(\.supGap))
        XCTAssertEqual(again.map(\.finalGap01), g.map(\.finalGap01))
    }
}

/// One teacher generator (RandomStreams' `Teacher`): `gap --teacher` (`TeacherTask.random`) and the data source
/// `synthetic:teacher` (`DataSource.teacher`) draw the same teacher for the same seed, and it is the
/// generator's parameter sequence laid out as an MLP.
final class TeacherGeneratorTests: XCTestCase {
    func testBothTeacherPathsDrawTheSameTeacher() throws {
        for (sizes, bias) in [([5, 4, 3], true), ([6, 3], false), ([3, 7, 5, 2], true)] {
            let arch = try Architecture(sizes: sizes, bias: bias)
            for seed: UInt64 in [1, 2, 99] {
                let task = try TeacherTask.random(architecture: arch, activation: .tanh, seed: seed)
                let (_, net) = DataSource.teacher(architecture: arch, activation: .tanh, samples: 3, seed: seed)
                XCTAssertEqual(task.teacher, net)
                XCTAssertEqual(net.parameters, Teacher.parameters(count: arch.parameterCount, seed: seed))
                XCTAssertTrue(net.parameters.allSatisfy { Teacher.box.contains($0) })
            }
        }
        XCTAssertNotEqual(Teacher.parameters(count: 10, seed: 1), Teacher.parameters(count: 10, seed: 2))
    }
}
