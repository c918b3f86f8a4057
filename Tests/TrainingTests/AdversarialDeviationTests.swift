import Foundation
import Networks
import RandomStreams
import Training
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics
import XCTest

/// The adversarial search for sup_{θ∈Θ} |R(θ) − R_n(θ)| against a brute-force grid where the answer is known.
final class AdversarialDeviationTests: XCTestCase {
    /// A 1-input, 2-class student: logits (w₀x + b₀, w₁x + b₁) (biases optional), so
    /// p₁(x) = σ(d_w x + d_b) with d_w = w₁ − w₀, d_b = b₁ − b₀, and g depends on (d_w, d_b) alone.
    struct TwoClassCase {
        let xs: [Double], ys: [Int]          // training set
        let px: [Double], q1: [Double]       // population inputs and p*(1|x)

        /// g = R − R_n for ℓ = 1 − p_y, in closed form (independent of the library).
        func gap(dw: Double, db: Double) -> Double {
            func p1(_ x: Double) -> Double { 1 / (1 + exp(-(dw * x + db))) }
            var r = 0.0
            for (x, q) in zip(px, q1) { let p = p1(x); r += 1 - ((1 - q) * (1 - p) + q * p) }
            var rn = 0.0
            for (x, y) in zip(xs, ys) { let p = p1(x); rn += 1 - (y == 1 ? p : 1 - p) }
            return r / Double(px.count) - rn / Double(xs.count)
        }

        func gap(_ net: Network) -> Double {
            let w = net.weights[0], b = net.biases[0]
            return gap(dw: w[1, 0] - w[0, 0], db: b.isEmpty ? 0 : b[1] - b[0])
        }

        /// ½(mean |x| + 1) over population and training set bounds |∂g/∂d| in either coordinate
        /// (ℓ is ½-Lipschitz in the logits under ‖·‖_∞, R and R_n each contribute).
        var slope: Double {
            0.5 * (px.map(abs).reduce(0, +) / Double(px.count) + 1) + 0.5 * (xs.map(abs).reduce(0, +) / Double(xs.count) + 1)
        }
    }

    func twoClassTask(bias: Bool, n: Int, m: Int, seed: UInt64) throws -> (TeacherTask, Dataset, PopulationSample, TwoClassCase) {
        let task = try TeacherTask.random(architecture: Architecture(sizes: [1, 2], bias: bias), activation: .linear, seed: seed)
        var rng = Xoshiro256(seed: seed, stream: [1])
        let data = task.sample(count: n, rng: &rng)
        let pop = task.population(count: m, rng: &rng)
        let c = TwoClassCase(xs: data.inputs.data, ys: data.labels!, px: pop.inputs.data,
                             q1: (0..<m).map { pop.labelProbabilities[$0, 1] })
        return (task, data, pop, c)
    }

    /// No bias: g depends on d = w₁ − w₀ ∈ [−6, 6] over Θ = [−3, 3]², a fine 1-D grid gives the sup.
    func testSearchReachesTheGridMaximumWithoutBias() async throws {
        let box = try ParameterBox(lo: -3, hi: 3)
        let arch = try Architecture(sizes: [1, 2], bias: false)
        let (_, data, pop, c) = try twoClassTask(bias: false, n: 12, m: 400, seed: 31)
        let h = 0.001
        let grid = (0...12000).map { abs(c.gap(dw: -6 + Double($0) * h, db: 0)) }
        let gridMax = grid.max()!
        // Not a corner: the maximum lies inside (−6, 6) (g is odd in d here — swapping the classes — so ±d).
        XCTAssertLessThan(abs(-6 + Double(grid.firstIndex(of: gridMax)!) * h), 5.5)
        let settings = try AdversarialSettings(starts: 4, iterations: 300, stepFraction: 0.01, seed: 32)
        let res = try await AdversarialDeviation.search(architecture: arch, activation: .linear, box: box, data: data,
                                                        population: pop, settings: settings)
        try checkResult(res, c, box: box, gridMax: gridMax, truthBound: gridMax + c.slope * h / 2, settings: settings,
                        arch: arch, data: data, pop: pop)
    }

    /// With biases: g depends on (d_w, d_b) ∈ [−2, 2]², a 2-D grid.
    func testSearchReachesTheGridMaximumWithBias() async throws {
        let box = try ParameterBox(lo: -1, hi: 1)
        let arch = try Architecture(sizes: [1, 2], bias: true)
        let (_, data, pop, c) = try twoClassTask(bias: true, n: 10, m: 200, seed: 41)
        let h = 0.02, steps = 200
        var gridMax = 0.0, argDb = 0.0
        for i in 0...steps {
            for j in 0...steps {
                let v = abs(c.gap(dw: -2 + Double(i) * h, db: -2 + Double(j) * h))
                if v > gridMax { gridMax = v; argDb = -2 + Double(j) * h }
            }
        }
        XCTAssertLessThan(abs(argDb), 1.9, "the maximum is inside the box in d_b, not at a corner")
        let settings = try AdversarialSettings(starts: 4, iterations: 300, stepFraction: 0.01, seed: 42)
        let res = try await AdversarialDeviation.search(architecture: arch, activation: .linear, box: box, data: data,
                                                        population: pop, settings: settings)
        try checkResult(res, c, box: box, gridMax: gridMax, truthBound: gridMax + c.slope * h, settings: settings,
                        arch: arch, data: data, pop: pop)
    }

    func checkResult(_ res: AdversarialResult, _ c: TwoClassCase, box: ParameterBox, gridMax: Double, truthBound: Double,
                     settings: AdversarialSettings, arch: Architecture, data: Dataset, pop: PopulationSample,
                     file: StaticString = #filePath, line: UInt = #line) throws {
        // The search reaches the brute-force maximum and cannot pass the true sup.
        XCTAssertGreaterThan(gridMax, 0.01, file: file, line: line)
        XCTAssertGreaterThanOrEqual(res.deviation, gridMax - 1e-4, "grid \(gridMax)", file: file, line: line)
        XCTAssertLessThanOrEqual(res.deviation, truthBound + 1e-12, file: file, line: line)
        // θ* is in Θ and attains the reported value (closed form), with the reported sign.
        XCTAssertTrue(box.contains(res.network), file: file, line: line)
        let g = c.gap(res.network)
        XCTAssertEqual(res.deviation, abs(g), accuracy: 1e-12, file: file, line: line)
        XCTAssertEqual(res.sign, g >= 0 ? 1 : -1, file: file, line: line)
        XCTAssertEqual(res.populationRisk - res.empiricalRisk, g, accuracy: 1e-12, file: file, line: line)
        XCTAssertGreaterThan(res.populationRiskError, 0, file: file, line: line)
        XCTAssertLessThan(res.populationRiskError, 0.05, file: file, line: line)
        XCTAssertEqual(res.populationSize, pop.count, file: file, line: line)
        // At least the best of random points of Θ, and of every start's own θ₀.
        var rng = Xoshiro256(seed: 99)
        for _ in 0..<300 {
            let net = box.uniform(architecture: arch, activation: .linear, rng: &rng)
            XCTAssertGreaterThanOrEqual(res.deviation, abs(c.gap(net)), file: file, line: line)
        }
        // Every climb and iterate accounted for, all in Θ.
        XCTAssertEqual(res.climbs.count, 2 * settings.starts, file: file, line: line)
        XCTAssertEqual(res.perStart.count, settings.starts, file: file, line: line)
        XCTAssertEqual(res.perStart.max()!, res.deviation, accuracy: 1e-12, file: file, line: line)
        XCTAssertEqual(res.iteratesChecked, 2 * settings.starts * (settings.iterations + 1), file: file, line: line)
        XCTAssertTrue(res.allIteratesInBox, file: file, line: line)
        for cl in res.climbs {
            let theta0 = AdversarialDeviation.startingPoint(cl.start, architecture: arch, activation: .linear, box: box, seed: settings.seed)
            XCTAssertEqual(cl.initialGap, c.gap(theta0), accuracy: 1e-12, file: file, line: line)
            XCTAssertGreaterThanOrEqual(cl.best, Double(cl.sign) * cl.initialGap, file: file, line: line)
        }
    }

    /// The same seed gives the same result at 1 and 2 threads (a hidden layer, so every layer's gradient
    /// is used); another seed gives another.
    func testSameSeedSameResultAtOneAndTwoThreads() async throws {
        let arch = try Architecture(sizes: [3, 4, 3], bias: true)
        let task = try TeacherTask.random(architecture: arch, activation: .tanh, seed: 51)
        var rng = Xoshiro256(seed: 52)
        let data = task.sample(count: 30, rng: &rng)
        let pop = task.population(count: 300, rng: &rng)
        let box = try ParameterBox(lo: -1, hi: 1)
        func run(_ seed: UInt64, threads: Int) async throws -> AdversarialResult {
            try await AdversarialDeviation.search(architecture: arch, activation: .tanh, box: box, data: data, population: pop,
                                                  settings: AdversarialSettings(starts: 3, iterations: 25, seed: seed), threads: threads)
        }
        let one = try await run(53, threads: 1)
        let two = try await run(53, threads: 2)
        XCTAssertEqual(one, two)
        XCTAssertTrue(one.allIteratesInBox)
        // The climbs do climb: each ends above its start.
        for cl in one.climbs { XCTAssertGreaterThan(cl.best, Double(cl.sign) * cl.initialGap) }
        let other = try await run(54, threads: 2)
        XCTAssertNotEqual(one.climbs.map(\.initialGap), other.climbs.map(\.initialGap))
    }

    func testBadSettingsAndDataThrowTypedErrors() async throws {
        XCTAssertThrowsError(try AdversarialSettings(starts: 0, iterations: 10, seed: 1)) { XCTAssertTrue($0 is TwoScaleError) }
        XCTAssertThrowsError(try AdversarialSettings(starts: 1, iterations: -1, seed: 1)) { XCTAssertTrue($0 is TwoScaleError) }
        XCTAssertThrowsError(try AdversarialSettings(starts: 1, iterations: 1, stepFraction: 0, seed: 1)) { XCTAssertTrue($0 is TwoScaleError) }
        XCTAssertThrowsError(try AdversarialSettings(starts: 1, iterations: 1, stepFraction: .nan, seed: 1)) { XCTAssertTrue($0 is TwoScaleError) }
        let (_, data, pop, _) = try twoClassTask(bias: false, n: 5, m: 20, seed: 61)
        let wrong = try Architecture(sizes: [2, 2])
        do {
            _ = try await AdversarialDeviation.search(architecture: wrong, activation: .linear, box: ParameterBox(lo: -1, hi: 1),
                                                      data: data, population: pop,
                                                      settings: AdversarialSettings(starts: 1, iterations: 1, seed: 1))
            XCTFail("a data set of the wrong width must be refused")
        } catch {
            XCTAssertTrue(error is TwoScaleError)
        }
    }
}
