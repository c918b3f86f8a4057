import Bounds
import Experiments
import Foundation
import NetworkEstimators
import Networks
import RandomStreams
import Training
import TwoScaleCore
import TwoScaleFormats
import XCTest

/// The bound put to the test through `gap` (issue 41, item 2): projected training, the Lipschitz loss
/// 1 − p_θ(y|x), the adversarial search of sup_{θ∈Θ}|R − R_n| per n and trial, and the tail's d_ζ.
final class BoundTestCommandTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        ShippedEstimators.install()
    }

    static let small = ["gap", "--teacher", "4-3-3", "--student", "4-5-3", "--n", "30,200", "--trials", "2",
                        "--population", "1000", "--random-draws", "2", "--epochs", "2", "--seed", "5", "--json"]

    /// --project: every training iterate (a checkpoint after every step, --checkpoint-every 1) lies in Θ;
    /// the same run without it leaves Θ, so the check can fail.
    func testProjectKeepsEveryTrainingIterateInTheBox() async throws {
        let args = ["gap", "--teacher", "4-3-3", "--student", "4-5-3", "--n", "40,120", "--trials", "2", "--population", "500",
                    "--random-draws", "0", "--epochs", "3", "--batch", "8", "--lr", "0.05", "--checkpoint-every", "1",
                    "--box", "-0.3:0.3", "--loss", "probability", "--seed", "6", "--json"]
        let free = try await runJSON(args)
        let freeOutside = try XCTUnwrap(free["points"]?.arrayValue).map { $0["checkpoints_outside_box"]!.doubleValue! }.reduce(0, +)
        XCTAssertGreaterThan(freeOutside, 0, "free training with lr 0.05 leaves the box [−0.3, 0.3]^d")
        XCTAssertNil(free["projected"])

        let projected = try await runJSON(args + ["--project"])
        XCTAssertEqual(projected["projected"], .bool(true))
        for (p, n) in zip(try XCTUnwrap(projected["points"]?.arrayValue), [40, 120]) {
            // θ₀, every step (⌈n/8⌉ per epoch) and every epoch end, per trial.
            let steps = 3 * ((n + 7) / 8)
            XCTAssertGreaterThanOrEqual(p["checkpoints"]!.doubleValue!, Double(2 * (1 + steps)))
            XCTAssertEqual(p["checkpoints_outside_box"]?.doubleValue, 0)
            XCTAssertEqual(p["final_outside_box"]?.doubleValue, 0)
            XCTAssertEqual(p["sup_gap_outside_box"]?.doubleValue, 0)
            XCTAssertGreaterThan(p["sup_gap"]!.doubleValue!, 0)
        }
    }

    /// --adversarial: per n the sup over trials is at least the best random start, every iterate is in Θ
    /// and accounted for; the result does not depend on --threads.
    func testAdversarialSupIsAtLeastItsStartsAndStaysInTheBox() async throws {
        let args = Self.small + ["--loss", "probability", "--project", "--adversarial", "3", "--adversarial-iterations", "20"]
        let j = try await runJSON(args + ["--threads", "1"])
        XCTAssertEqual(j["loss"]?.stringValue, "probability")
        XCTAssertEqual(j["adversarial_starts"]?.doubleValue, 3)
        XCTAssertEqual(j["adversarial_iterations"]?.doubleValue, 20)
        let pts = try XCTUnwrap(j["points"]?.arrayValue)
        XCTAssertEqual(pts.count, 2)
        for p in pts {
            let sup = try XCTUnwrap(p["adversarial_sup"]?.doubleValue)
            XCTAssertGreaterThan(sup, 0)
            XCTAssertLessThanOrEqual(sup, 1)
            XCTAssertGreaterThanOrEqual(sup, try XCTUnwrap(p["adversarial_best_start"]?.doubleValue))
            XCTAssertEqual(p["adversarial_iterates_outside_box"]?.doubleValue, 0)
            XCTAssertEqual(p["adversarial_iterates_checked"]?.doubleValue, Double(2 * 2 * 3 * 21))
            let se = try XCTUnwrap(p["adversarial_risk_error"]?.doubleValue)
            XCTAssertGreaterThan(se, 0)
            XCTAssertLessThan(se, 0.05)
            let dev = try XCTUnwrap(p["deviation"]?.doubleValue)
            XCTAssertEqual(p["adversarial_exceeds"], .bool(sup > dev))
            XCTAssertEqual(p["adversarial_exceeds_beyond_noise"], .bool(sup - 2 * se > dev))
            XCTAssertEqual(p["checkpoints_outside_box"]?.doubleValue, 0)
            // c_fit covers the largest gap seen, the adversarial search's included (by hand from the JSON).
            let checkpoints = try XCTUnwrap(p["sup_gap"]?.doubleValue), eps = try XCTUnwrap(p["eps_n"]?.doubleValue)
            XCTAssertEqual(try XCTUnwrap(p["c_fit"]?.doubleValue), Swift.max(checkpoints, sup) / eps, accuracy: 1e-15)
            XCTAssertEqual(p["c_fit_source"]?.stringValue, sup > checkpoints ? "adversarial" : "checkpoints and random draws")
        }
        XCTAssertTrue(pts.contains { $0["c_fit_source"]?.stringValue == "adversarial" }, "the search must find more than the checkpoints here")
        XCTAssertEqual(j["c_fit"]?.doubleValue, try XCTUnwrap(j["c_fit_per_n"]?.arrayValue?.compactMap(\.doubleValue).max()))
        let two = try await runJSON(args + ["--threads", "2"])
        XCTAssertEqual(withoutTimingKeys(j), withoutTimingKeys(two))
        let other = try await runJSON(args.map { $0 == "5" ? "6" : $0 } + ["--threads", "2"])
        XCTAssertNotEqual(pts[0]["adversarial_sup"], other["points"]?.arrayValue?[0]["adversarial_sup"])
    }

    /// Gradient ascent needs a Lipschitz loss: --adversarial with 0-1 (the default) or cross-entropy is
    /// refused before any training, with a message naming --loss probability. Likewise other misuses.
    func testRefusesAdversarialWithANonLipschitzLossAndOtherMisuses() async throws {
        let base = Array(Self.small.dropLast())
        for extra in [["--adversarial", "2"], ["--adversarial", "2", "--loss", "zero-one"], ["--adversarial", "2", "--loss", "cross-entropy"]] {
            let (status, out, err) = await runCLICapturingErrors(base + extra)
            XCTAssertEqual(status, 2, extra.joined(separator: " "))
            XCTAssertEqual(out, "")
            XCTAssertTrue(err.contains("--loss probability"), err)
        }
        for extra in [["--adversarial", "-1", "--loss", "probability"], ["--adversarial", "2", "--loss", "probability", "--adversarial-step", "0"],
                      ["--adversarial", "2", "--loss", "probability", "--adversarial-iterations", "-3"],
                      ["--d-zeta", "store"], ["--delta", "0.05"], ["--d-zeta", "parameters", "--delta", "2"],
                      ["--d-zeta", "rank-limit", "--store", "/nonexistent"], ["--d-zeta", "bracket"]] {
            let (status, out, err) = await runCLICapturingErrors(base + extra)
            XCTAssertEqual(status, 2, extra.joined(separator: " "))
            XCTAssertEqual(out, "")
            XCTAssertFalse(err.isEmpty)
        }
        // The library refuses it too.
        let task = try TeacherTask.random(architecture: try Architecture(parsing: "4-3-3"), activation: .relu, seed: 1)
        let arch = try Architecture(parsing: "4-5-3")
        let cfg = try TrainingConfig(architecture: arch, activation: .relu, optimizer: try OptimizerSettings(kind: .adam, learningRate: 0.01),
                                     batchSize: 8, epochs: 1, seed: 1)
        var e = try GapExperiment(task: task, student: arch, studentActivation: .relu, training: cfg, sampleSizes: [20], trials: 1,
                                  randomDraws: 0, box: -1...1, populationSize: 100, seed: 1)
        e.adversarial = try AdversarialSettings(starts: 1, iterations: 1, seed: 1)
        do {
            _ = try await GapStudy.run(e, loss: .zeroOne, gamma: 1, constants: try BoundConstants(), tail: nil, threads: 1)
            XCTFail("the adversarial search with the 0-1 loss must be refused")
        } catch let error as TwoScaleError {
            XCTAssertEqual(error.kind, .usage)
        }
    }

    /// A 2-parameter student (1 input, 2 classes, no bias): R − R_n depends on δ = w₁ − w₀ ∈ [−2, 2] only,
    /// so a fine grid of δ, evaluated in closed form on the very sample and population `gap` draws, gives
    /// sup_Θ|R − R_n| to within the grid's Lipschitz slack. The search must reach it from below and never
    /// pass it by more than that slack.
    func testAdversarialSupMatchesABruteForceGrid() async throws {
        let seed: UInt64 = 12, ns = [15, 60], population = 2000
        let j = try await runJSON(["gap", "--teacher", "1-2", "--student", "1-2", "--n", ns.map(String.init).joined(separator: ","),
                                   "--trials", "1", "--population", "\(population)", "--random-draws", "0", "--epochs", "1",
                                   "--loss", "probability", "--project", "--adversarial", "4", "--adversarial-iterations", "150",
                                   "--temperature", "0.5", "--seed", "\(seed)", "--json"])
        let task = try TeacherTask.random(architecture: try Architecture(parsing: "1-2"), activation: .relu, temperature: 0.5, seed: seed)
        var popRng = Xoshiro256(seed: seed, stream: [202])
        let pop = task.population(count: population, rng: &popRng)
        let px = pop.inputs.data, q1 = (0..<population).map { pop.labelProbabilities[$0, 1] }
        for (p, n) in zip(try XCTUnwrap(j["points"]?.arrayValue), ns) {
            var rng = Xoshiro256(seed: seed, stream: [200, UInt64(n), 0])
            let data = task.sample(count: n, rng: &rng)
            let xs = data.inputs.data, ys = try XCTUnwrap(data.labels)
            func gap(_ delta: Double) -> Double {
                func p1(_ x: Double) -> Double { 1 / (1 + exp(-delta * x)) }
                var r = 0.0, rn = 0.0
                for (x, q) in zip(px, q1) { let s = p1(x); r += 1 - ((1 - q) * (1 - s) + q * s) }
                for (x, y) in zip(xs, ys) { let s = p1(x); rn += 1 - (y == 1 ? s : 1 - s) }
                return r / Double(px.count) - rn / Double(xs.count)
            }
            let h = 0.002
            let gridMax = (0...2000).map { abs(gap(-2 + Double($0) * h)) }.max()!
            // |∂g/∂δ| ≤ ½(mean|x| over the population + mean|x| over the sample): ℓ is ½-Lipschitz in the logits.
            let slope = 0.5 * (px.map(abs).reduce(0, +) / Double(px.count) + xs.map(abs).reduce(0, +) / Double(xs.count))
            let sup = try XCTUnwrap(p["adversarial_sup"]?.doubleValue)
            XCTAssertGreaterThan(gridMax, 0.003, "n = \(n): a case where the sup is not trivially 0")
            XCTAssertGreaterThanOrEqual(sup, gridMax - 1e-3, "n = \(n): the search falls short of the grid's \(gridMax)")
            XCTAssertLessThanOrEqual(sup, gridMax + slope * h / 2 + 1e-12, "n = \(n): above the true sup")
            // On an independent population sample the maximiser's gap agrees within Monte Carlo error.
            let se = try XCTUnwrap(p["adversarial_risk_error"]?.doubleValue), seFresh = try XCTUnwrap(p["adversarial_risk_error_fresh"]?.doubleValue)
            XCTAssertLessThan(abs(try XCTUnwrap(p["adversarial_sup_fresh"]?.doubleValue) - sup), 5 * (se * se + seFresh * seFresh).squareRoot())
        }
    }

    /// The tail without a store: d_ζ = d (parameters) or ζd + (1 − ζ)r (rank-limit), both labelled not
    /// conservative; with δ, n₀ is the first n whose tail is below δ.
    func testTailFromTheParameterCountAndTheRankLimitWithN0() async throws {
        let args = Self.small + ["--loss", "probability", "--K", "200", "--delta", "0.05", "--delta-range", "2:1e9"]
        let d = try await runJSON(args + ["--d-zeta", "parameters"])
        let params = 5 * 4 + 3 * 5  // 4-5-3 without biases
        XCTAssertEqual(d["student_parameters"]?.doubleValue, Double(params))
        XCTAssertEqual(d["conservative"], .bool(false))
        XCTAssertTrue(try XCTUnwrap(d["d_zeta_used_method"]?.stringValue).contains("NOT an upper bound"))
        for p in try XCTUnwrap(d["points"]?.arrayValue) {
            XCTAssertEqual(p["d_zeta_used"]?.doubleValue, Double(params))
            let eps = p["eps_n"]!.doubleValue!, n = p["n"]!.doubleValue!
            XCTAssertEqual(p["log_tail"]!.doubleValue!, -Double(params) * log(eps) - 200 * log(n), accuracy: 1e-9)
        }
        let n0 = try XCTUnwrap(d["n_for_delta"]?.doubleValue.map { Int($0) })
        func logTail(_ n: Int) throws -> Double {
            let e = try GeneralizationBoundEps.eps(n)
            return -Double(params) * log(e) - 200 * log(Double(n))
        }
        XCTAssertLessThan(try logTail(n0), log(0.05))
        XCTAssertGreaterThanOrEqual(try logTail(n0 - 1), log(0.05))

        let r = try await runJSON(args + ["--d-zeta", "rank-limit", "--rank-samples", "50"])
        XCTAssertEqual(r["conservative"], .bool(false))
        XCTAssertTrue(try XCTUnwrap(r["d_zeta_used_method"]?.stringValue).contains("NOT an upper bound"))
        let used = try XCTUnwrap(r["points"]?.arrayValue?.first?["d_zeta_used"]?.doubleValue)
        let zeta = 2.0 / 3.0
        let rank = (used - zeta * Double(params)) / (1 - zeta)
        XCTAssertEqual(rank, rank.rounded(), accuracy: 1e-9)
        XCTAssertGreaterThan(rank, 0)
        XCTAssertLessThanOrEqual(rank, Double(params))
    }
}

/// ε_n at γ = 1, computed here.
enum GeneralizationBoundEps {
    static func eps(_ n: Int) throws -> Double { pow(log(Double(n)) / Double(n), 3.0 / 8.0) }
}
