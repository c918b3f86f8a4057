import Foundation
import Sampling
import ToyModels
import Samplers
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// The layered toy's exact values against an independent computation, and the smc estimator against
/// them where its samplers must anneal.
final class LayeredToyTests: XCTestCase {
    /// Independent of `LayeredToy.exactTerms`: every activity pattern of the d_1 first-stage coordinates
    /// enumerated (no binomial law, no closed-form p̃), each coordinate's part integrated by GSL QAGS,
    /// stage 2's expectation integrated by QAGS per pattern; the trace normalisation by the same route.
    func enumerated(_ m: LayeredToy, eps: Double, zeta: Double) throws -> (dZeta: Double, lower: Double, ess: Double) {
        let d1 = m.d1, d2 = m.d2, lo = m.lo, hi = m.hi, b = m.threshold, w = hi - lo
        func q(_ f: @escaping (Double) -> Double, _ a: Double, _ c: Double) throws -> Double {
            try Quadrature.integrate(f, from: a, to: c, relTol: 1e-13).value
        }
        // Trace normalisation: E_U Tr F = d1 ⟨w²⟩ + d2 ⟨v²⟩ E_U h(κ), E_U h by the patterns' uniform probabilities.
        let meanSq = try q({ $0 * $0 }, lo, hi) / w
        let pActive = try q({ _ in 1 }, b, hi) / w
        var meanH = 0.0
        for pattern in 0..<(1 << d1) {
            let k = pattern.nonzeroBitCount
            meanH += Foundation.pow(pActive, Double(k)) * Foundation.pow(1 - pActive, Double(d1 - k)) * m.h(Double(k) / Double(d1))
        }
        let c = Double(d1 + d2) / (Double(d1) * meanSq + Double(d2) * meanSq * meanH)
        let s = ScaleParameters.t(eps: eps, zeta: zeta) * c.squareRoot()
        // Each first-stage coordinate: ∫ (1 + s w) over its inactive and active parts, over the box's width.
        let inactive = try q({ 1 + s * $0 }, lo, b) / w, active = try q({ 1 + s * $0 }, b, hi) / w
        var total = 0.0, second = 0.0, z1 = 0.0, lowerSum = 0.0
        var terms: [(weight: Double, z2: Double)] = []
        for pattern in 0..<(1 << d1) {
            let k = pattern.nonzeroBitCount
            let g1 = Foundation.pow(active, Double(k)) * Foundation.pow(inactive, Double(d1 - k))
            let root = m.h(Double(k) / Double(d1)).squareRoot()
            let perCoordinate = try q({ 1 + s * root * $0 }, lo, hi) / w
            let z2 = Foundation.pow(perCoordinate, Double(d2))
            terms.append((g1, z2))
            z1 += g1
        }
        for t in terms {
            total += t.weight * t.z2
            second += t.weight * t.z2 * t.z2
            lowerSum += t.weight / z1 * Foundation.log(t.z2)
        }
        let d = d1 + d2
        let dz = TwoScale.dimension(logMeanDet: Foundation.log(total), dimension: d, zeta: zeta, eps: eps)
        let lower = TwoScale.dimension(logMeanDet: Foundation.log(z1) + lowerSum, dimension: d, zeta: zeta, eps: eps)
        // ESS fraction of π_1-draws weighted by Z_2: (E_π Z_2)² / E_π Z_2².
        let ess = (total / z1) * (total / z1) / (second / z1)
        return (dz, lower, ess)
    }

    func testExactValuesAgainstPatternEnumeration() throws {
        let cases: [(units: [Int], size: [Int], box: (Double, Double), b: Double?, g: Double)] = [
            ([2, 3], [4, 2], (0.2, 1.5), 0.7, 1.3),
            ([1, 1], [3, 5], (0, 1), nil, -2.0),
            ([3, 2], [3, 4], (0.5, 2), 1.9, 6),
        ]
        for c in cases {
            let m = try LayeredToy(units: c.units, unitSize: c.size, box: c.box, threshold: c.b, coupling: c.g)
            for (eps, zeta) in [(1e-3, 2.0 / 3), (0.1, 0.5), (0.5, 0.0)] {
                let exact = try m.exact(eps: eps, zeta: zeta, normalization: .trace)
                let reference = try enumerated(m, eps: eps, zeta: zeta)
                let scale = Swift.max(1, abs(reference.dZeta))
                XCTAssertEqual(exact.dZeta, reference.dZeta, accuracy: 1e-10 * scale, "\(c) ε = \(eps)")
                XCTAssertEqual(exact.dZetaLower, reference.lower, accuracy: 1e-10 * scale, "\(c) ε = \(eps)")
                XCTAssertEqual(exact.outerESSFraction, reference.ess, accuracy: 1e-10, "\(c) ε = \(eps)")
                XCTAssertLessThanOrEqual(exact.dZetaLower, exact.dZeta + 1e-12, "Jensen")
            }
        }
    }

    /// The model as the estimator sees it: stage units' roots are the square roots of F's diagonal, the
    /// supremum bounds them, and the trace draw is Tr F of the θ it draws (same stream order).
    func testStagesCarryTheFisherDiagonal() throws {
        let m = try LayeredToy(units: [2, 3], unitSize: [4, 2], box: (0.2, 1.5), threshold: 0.7, coupling: 1.3)
        var rng = Xoshiro256(seed: 5, stream: [1])
        var state = m.emptyState()
        var w: [Double] = [], v: [Double] = []
        for u in 0..<2 {
            let x = (0..<4).map { _ in rng.uniform(0.2, 1.5) }
            w += x
            m.setUnit(&state, stage: 0, unit: u, parameters: x)
        }
        let first = try m.stage(state, 0, box: m.box)
        XCTAssertEqual(try first.unit.roots(Array(w[0..<4])), Array(w[0..<4]))
        let kappa = Double(w.filter { $0 > 0.7 }.count) / 8
        let second = try m.stage(state, 1, box: m.box)
        for _ in 0..<3 {
            let x = (0..<2).map { _ in rng.uniform(0.2, 1.5) }
            v += x
            let roots = try second.unit.roots(x)
            for (r, xi) in zip(roots, x) { XCTAssertEqual(r * r, Foundation.exp(1.3 * kappa) * xi * xi, accuracy: 1e-12) }
            let sup = try XCTUnwrap(second.supremumRoots)()
            for (r, t) in zip(roots, sup) { XCTAssertLessThanOrEqual(r, t) }
        }
        var a = Xoshiro256(seed: 9, stream: [2]), bRng = Xoshiro256(seed: 9, stream: [2])
        let tr = try m.uniformTrace(box: m.box, rng: &a)
        let ws = (0..<8).map { _ in bRng.uniform(0.2, 1.5) }, vs = (0..<6).map { _ in bRng.uniform(0.2, 1.5) }
        let k = Double(ws.filter { $0 > 0.7 }.count) / 8
        XCTAssertEqual(tr, ws.reduce(0) { $0 + $1 * $1 } + Foundation.exp(1.3 * k) * vs.reduce(0) { $0 + $1 * $1 }, accuracy: 1e-12)
        XCTAssertThrowsError(try LayeredToy(units: [1, 1], unitSize: [1, 1], box: (-1, 1), coupling: 1))
        XCTAssertThrowsError(try LayeredToy(units: [1, 1], unitSize: [1, 1], threshold: 1, coupling: 1))
        XCTAssertThrowsError(try LayeredToy(units: [1, 1, 1], unitSize: [1, 1, 1], coupling: 1))
    }

    /// The networks' smc estimator (`StagedSMC`, through `StagedModel`) on a small layered toy whose
    /// islands anneal at ε = 10⁻³ and whose outer weights are uneven (limit ESS/K 0.34–0.38): over 20 seeds
    /// the 2sED's 95% intervals hold the exact value in at least 17 (16 or fewer at a true 95% has
    /// probability 1.6%), and the mean of the 2sED and of the lower 2sED over the seeds lies within
    /// 4 standard errors of the exact value; the lower 2sED's intervals hold in at least 17 as well (its
    /// variance doubled for the population its outer particles come from); and where the diagnostics let
    /// the sampled interval stand, which here they do, the reported interval is it.
    func testSmcEstimatorAgainstExactValues() async throws {
        let m = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 3)
        let eps = [1e-3, 0.1]
        var r = try LayeredToyMeasurement.measure(model: m, eps: eps, zeta: 2.0 / 3, normalization: .trace)
        try await r.runMonteCarlo(paths: 64, inner: 32, seed: 1, trials: 20, traceDraws: nil, islandSweeps: 4, threads: 2)
        for p in r.points {
            let q = try XCTUnwrap(p.monteCarlo)
            XCTAssertGreaterThanOrEqual(q.covered ?? 0, 17, "ε = \(p.eps): 2sED covered \(q.covered ?? 0)/20")
            let se = (q.mcSd ?? 0) / 20.0.squareRoot()
            XCTAssertLessThan(abs(q.mcBias ?? .infinity), 4 * se + 1e-9, "ε = \(p.eps)")
            XCTAssertLessThan(abs(q.mcBiasLower ?? .infinity), 4 * se + 1e-9, "ε = \(p.eps): lower")
            XCTAssertEqual(q.bracketCovered, 20)
            XCTAssertGreaterThanOrEqual(q.coveredLower ?? 0, 17, "ε = \(p.eps): lower covered \(q.coveredLower ?? 0)/20")
            XCTAssertLessThanOrEqual(q.bracketFallbacks ?? 20, 2, "ε = \(p.eps): the sampled interval stands")
            XCTAssertGreaterThanOrEqual(q.coveredInterval ?? 0, 17, "ε = \(p.eps)")
        }
        let smc = try XCTUnwrap(r.monteCarlo?.smc)
        XCTAssertGreaterThanOrEqual(smc.stage1.meanSteps, 1, "stage 1 resamples and moves")
        XCTAssertGreaterThan(smc.islands.meanSteps, 1, "the islands anneal")
    }

    /// Where the outer weights are degenerate (coupling 10: limit ESS/K 2–4%), K = 64 draws have not met
    /// the weights' tail, so the counted ESS comes out high and the sampled intervals miss: over 20 seeds they
    /// hold the exact value in fewer than 18 at one ε at least. The spread of the log-weights gives that
    /// away, so the reported interval is the certified bracket in at least 18 runs at each ε, and it holds in
    /// at least 19 (the bracket's δ = 1%).
    func testReportedIntervalIsTheBracketWhereSamplingFails() async throws {
        let m = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 10)
        let eps = [1e-3, 0.1]
        var r = try LayeredToyMeasurement.measure(model: m, eps: eps, zeta: 2.0 / 3, normalization: .trace)
        XCTAssertLessThan(r.points.map(\.outerEssFraction).max() ?? 1, 0.05, "a degenerate case")
        try await r.runMonteCarlo(paths: 64, inner: 32, seed: 301, trials: 20, traceDraws: nil, islandSweeps: 4, threads: 2)
        let qs = try r.points.map { try XCTUnwrap($0.monteCarlo) }
        XCTAssertLessThan(qs.map { $0.covered ?? 20 }.min() ?? 20, 18, "the sampled intervals miss here")
        for (p, q) in zip(r.points, qs) {
            XCTAssertGreaterThanOrEqual(q.bracketFallbacks ?? 0, 18, "ε = \(p.eps)")
            XCTAssertGreaterThanOrEqual(q.coveredInterval ?? 0, 19, "ε = \(p.eps): reported covered \(q.coveredInterval ?? 0)/20")
            XCTAssertGreaterThanOrEqual(q.coveredIntervalLower ?? 0, 19, "ε = \(p.eps): lower")
            XCTAssertTrue(q.intervalMc.source == .bracket ? q.intervalMc.range == q.dZetaBracket : true)
        }
    }

    /// An island pools its stage's n exchangeable units and raises the estimate to the n-th power; that
    /// power of an unbiased estimate is biased upwards by about half the island's noise variance, so the 2sED's
    /// stage term must take it off (`StagedSMC.powerBias`). With coupling 0 stage 2 does not depend on stage
    /// 1, every bit of spread in the islands' logs is their own noise, and the exact term is
    /// `d_2 log(1 + s m)`. On n = 50 units of 2 coordinates with J = 8 (noise ≈ 1.5 nats²) and K = 400
    /// islands, raw F (no estimated normalisation), the stage term's error over four seeds averages within
    /// ±0.3 nats of 0, where without the correction it is ≈ +0.7 (the correction's own size, also checked
    /// against the noise the islands report).
    func testPooledIslandsPowerBiasIsTakenOff() async throws {
        let m = try LayeredToy(units: [1, 50], unitSize: [1, 2], coupling: 0)
        let eps = 0.1, zeta = 2.0 / 3
        let exact = try m.exact(eps: eps, zeta: zeta, normalization: .none).stageLogZ[1]
        var errors: [Double] = [], shifts: [Double] = []
        for seed in UInt64(1)...4 {
            let smc = try StagedSMC(model: m, box: m.box, seed: seed, paths: 400, inner: 8, traceDraws: 2)
            let r = try await smc.run(eps: [eps], zeta: zeta, normalization: .none, lower: false, threads: 2)
            let p = r.points[0]
            errors.append(p.stages[1].value - exact)
            // The correction is (1 − 1/n)/2 times the islands' mean noise, which is most of their spread here.
            let noise = p.stageIslandNoise[0] * p.stageLogVariance[0]
            shifts.append((1 - 1.0 / 50) / 2 * noise)
        }
        let meanError = errors.reduce(0, +) / 4, meanShift = shifts.reduce(0, +) / 4
        XCTAssertLessThan(abs(meanError), 0.3, "stage errors \(errors)")
        XCTAssertGreaterThan(meanShift, 0.5, "the islands are noisy enough for the bias to show: \(shifts)")
        XCTAssertLessThan(StagedSMC<LayeredToy>.powerBias(noise: [1.5, 1.5], units: 1).value, 1e-15, "one unit needs none")
        XCTAssertEqual(StagedSMC<LayeredToy>.powerBias(noise: [1, 2, 3], units: 4).value, 0.75 * 2 / 2, accuracy: 1e-15)
        XCTAssertEqual(StagedSMC<LayeredToy>.powerBias(noise: [1, 2, 3], units: 4).variance, 0.375 * 0.375 * 1.0 / 3, accuracy: 1e-15)
    }

    /// The certified bracket on a layered toy (the generic `StagedSMC.certifiedBracket`, at the exact c)
    /// against the exact values over 200 seeds: at δ = 1% every end holds in at least 198; and the Markov
    /// end's estimate is unbiased: the mean of `Ẑ/Z` over the seeds lies within 4 standard errors of 1.
    func testBracketCoversTheExactValuesAndItsEstimateIsUnbiased() async throws {
        let m = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 3)
        let eps = [1e-3, 0.1], zeta = 2.0 / 3
        let c = try m.scale(.trace)
        let exact = try eps.map { try m.exact(eps: $0, zeta: zeta, normalization: .trace) }
        let scales = eps.map { ScaleParameters.t(eps: $0, zeta: zeta) * c.squareRoot() }
        let logZ = scales.map { s in let t = m.exactTerms(scale: s); return t.logZ1 + t.logMeanZ2 }
        var covered = [0, 0], coveredLower = [0, 0], ratios: [[Double]] = [[], []]
        for seed in 1...200 {
            let smc = try StagedSMC<LayeredToy>(model: m, box: m.box, seed: UInt64(seed), paths: 8, inner: 8, traceDraws: 10)
            let b = try await smc.certifiedBracket(eps: eps, zeta: zeta, scale: c, draws: 50, threads: 2)
            for i in eps.indices {
                if b.points[i].dZeta.contains(exact[i].dZeta) { covered[i] += 1 }
                if b.points[i].dZetaLower.contains(exact[i].dZetaLower) { coveredLower[i] += 1 }
            }
            let z = try await StagedSMC<LayeredToy>.unbiasedLogZ(model: m, box: m.box, seed: UInt64(seed), scales: scales, threads: 2)
            for i in eps.indices { ratios[i].append(Foundation.exp(try XCTUnwrap(z.logZ[scales[i]]) - logZ[i])) }
        }
        for i in eps.indices {
            XCTAssertGreaterThanOrEqual(covered[i], 198, "ε = \(eps[i])")
            XCTAssertGreaterThanOrEqual(coveredLower[i], 198, "ε = \(eps[i])")
            let n = Double(ratios[i].count), mean = ratios[i].reduce(0, +) / n
            let sd = (ratios[i].reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (n - 1)).squareRoot()
            XCTAssertLessThan(abs(mean - 1), 4 * sd / n.squareRoot(), "ε = \(eps[i]): mean Ẑ/Z \(mean), sd \(sd)")
            XCTAssertGreaterThan(sd, 0.01, "the estimate varies, so the check is not vacuous")
        }
    }

    /// Several trials run side by side (one per thread) give the same numbers, in the same order, as one
    /// after the other on one thread: every trial has its own seed and streams.
    func testTrialsSideBySideMatchOneAfterTheOther() async throws {
        let m = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 10)
        var runs: [LayeredToyMeasurement] = [], results: [Data] = []
        for threads in [1, 2, 3] {
            var r = try LayeredToyMeasurement.measure(model: m, eps: [1e-3, 0.1], zeta: 2.0 / 3, normalization: .trace)
            try await r.runMonteCarlo(paths: 16, inner: 8, seed: 7, trials: 5, traceDraws: nil, islandSweeps: 4, joint: true, threads: threads)
            let enc = JSONEncoder()
            enc.outputFormatting = [.sortedKeys]
            runs.append(r)
            results.append(try enc.encode(r))
        }
        XCTAssertEqual(results[0], results[1])
        XCTAssertEqual(results[0], results[2])
        // The first trial's own numbers are those of a one-trial run at the same seed.
        var one = try LayeredToyMeasurement.measure(model: m, eps: [1e-3, 0.1], zeta: 2.0 / 3, normalization: .trace)
        try await one.runMonteCarlo(paths: 16, inner: 8, seed: 7, trials: 1, traceDraws: nil, islandSweeps: 4, threads: 2)
        for (p, q) in zip(one.points, runs[1].points) {
            XCTAssertEqual(p.monteCarlo?.dZetaMc, q.monteCarlo?.dZetaMc)
            XCTAssertEqual(p.monteCarlo?.dZetaBracket, q.monteCarlo?.dZetaBracket)
        }
    }

    /// Joint tempering (`JointSMC`: all stages moved together under the whole G_s) on the small layered
    /// toy: over 20 seeds its 95% intervals hold the exact 2sED in at least 17, its mean lies within 4
    /// standard errors of the exact value, and every sweep moves a first-stage unit under stage 2's factor
    /// (the acceptance rate is neither 0 nor 1).
    func testJointTemperingAgainstExactValues() async throws {
        let m = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 3)
        let eps = [1e-3, 0.1]
        var r = try LayeredToyMeasurement.measure(model: m, eps: eps, zeta: 2.0 / 3, normalization: .trace)
        try await r.runMonteCarlo(paths: 64, inner: 32, seed: 101, trials: 20, traceDraws: nil, islandSweeps: 4, joint: true, threads: 2)
        for p in r.points {
            let q = try XCTUnwrap(p.monteCarlo)
            XCTAssertGreaterThanOrEqual(q.coveredJoint ?? 0, 17, "ε = \(p.eps): covered \(q.coveredJoint ?? 0)/20")
            XCTAssertLessThan(abs(q.mcBiasJoint ?? .infinity), 4 * (q.mcSdJoint ?? 0) / 20.0.squareRoot() + 1e-9, "ε = \(p.eps)")
        }
        let j = try await JointSMC(model: m, box: m.box, seed: 3, particles: 32).run(stops: [5, 20], threads: 2)
        XCTAssertGreaterThan(j.steps, 2)
        XCTAssertGreaterThan(j.accepted, 0)
        XCTAssertLessThan(j.accepted, j.proposals)
        // Deterministic for a seed, whatever the threads.
        let again = try await JointSMC(model: m, box: m.box, seed: 3, particles: 32).run(stops: [5, 20], threads: 1)
        XCTAssertEqual(j.logZ, again.logZ)
    }

    /// The genealogy variance of a tempered SMC² stage (`eveVariance`, Lee & Whiteley 2018): with no
    /// resampling it is the delta method's relative variance of an importance-sampling mean,
    /// (K ΣW² − 1)/(K − 1); where every particle descends from one ancestor it is log 2 (V = 1); equal
    /// weights over distinct ancestors give V ≤ 0, clamped to 0.
    func testEveVariance() {
        typealias S = StagedSMC<LayeredToy>
        let lw = [0, log(2.0), log(3.0), 0]
        XCTAssertEqual(S.eveVariance(logWeights: lw, eve: [0, 1, 2, 3], resamplings: 0), log1p(11.0 / 147), accuracy: 1e-15)
        XCTAssertEqual(S.eveVariance(logWeights: lw, eve: [2, 2, 2, 2], resamplings: 3), log(2.0), accuracy: 1e-15)
        XCTAssertEqual(S.eveVariance(logWeights: [0, 0, 0, 0], eve: [0, 1, 2, 3], resamplings: 1), 0)
        // Two ancestors holding 3/7 and 4/7 after one resampling: V = 1 − (4/3)²(1 − 25/49).
        XCTAssertEqual(S.eveVariance(logWeights: lw, eve: [0, 0, 1, 1], resamplings: 1),
                       log1p(1 - 16.0 / 9 * (1 - (9.0 + 16) / 49)), accuracy: 1e-15)
    }

    /// Moving stage 1 under stage 2's weights (`--outer-moves`, SMC², docs/METHOD.md §22) on a layered toy
    /// whose stage-2 weights vary by about 80 nats² over θ_1 with precise islands (plain outer ESS a few % of
    /// K), at ε = 0.1 against the exact value over 8 seeds: the plain estimate is low by more than 4 of its
    /// standard errors; the moved one's intervals hold in at least 7, its mean error lies within 4 standard
    /// errors of 0, its spread over seeds is at most half the plain one's, and the stage was moved (steps > 0,
    /// some redraws of a stage-1 unit accepted, some refused). Off, or where the plain weights keep their
    /// ESS (coupling 0), the estimates are the plain ones to the bit.
    func testOuterMovesAgainstExactValues() async throws {
        let m = try LayeredToy(units: [10, 10], unitSize: [1, 3], coupling: 6)
        var plain = try LayeredToyMeasurement.measure(model: m, eps: [0.1], zeta: 2.0 / 3, normalization: .trace)
        var moved = plain
        try await plain.runMonteCarlo(paths: 64, inner: 16, seed: 101, trials: 8, traceDraws: nil, islandSweeps: 4, threads: 2)
        try await moved.runMonteCarlo(paths: 64, inner: 16, seed: 101, trials: 8, traceDraws: nil, islandSweeps: 4,
                                      moveProposals: 8, threads: 2)
        let root8 = 8.0.squareRoot()
        for (p, q) in zip(plain.points, moved.points) {
            let a = try XCTUnwrap(p.monteCarlo), b = try XCTUnwrap(q.monteCarlo)
            XCTAssertLessThan(a.stageEssFraction[0], 0.1, "the plain weights must degenerate for this test")
            XCTAssertLessThan(a.mcBias ?? 0, -4 * (a.mcSd ?? .infinity) / root8, "the plain estimate must be low for this test")
            XCTAssertGreaterThanOrEqual(b.covered ?? 0, 7, "covered \(b.covered ?? 0)/8")
            XCTAssertLessThan(abs(b.mcBias ?? .infinity), 4 * (b.mcSd ?? 0) / root8 + 1e-9, "mean error \(b.mcBias ?? 0)")
            XCTAssertLessThan(b.mcSd ?? .infinity, 0.5 * (a.mcSd ?? 0), "moved sd \(b.mcSd ?? 0), plain \(a.mcSd ?? 0)")
            let d = try XCTUnwrap(b.stageMoves.first)
            XCTAssertGreaterThan(d.steps, 0)
            XCTAssertGreaterThan(d.accepted, 0)
            XCTAssertLessThan(d.accepted, d.proposals)
            XCTAssertEqual(b.stageLogVarMc, a.stageLogVarMc, "the diagnostics are the plain weights'")
            XCTAssertEqual(b.errorLowerMc, a.errorLowerMc, "the lower 2sED keeps the plain islands")
        }
        let eps = [1e-3, 0.1]
        // No degeneracy, no moves: bit-identical to the plain run.
        let flat = try LayeredToy(units: [10, 10], unitSize: [1, 3], coupling: 0)
        var r0 = try LayeredToyMeasurement.measure(model: flat, eps: eps, zeta: 2.0 / 3, normalization: .trace)
        var r1 = r0
        try await r0.runMonteCarlo(paths: 64, inner: 16, seed: 7, trials: 1, traceDraws: nil, islandSweeps: 4, threads: 2)
        try await r1.runMonteCarlo(paths: 64, inner: 16, seed: 7, trials: 1, traceDraws: nil, islandSweeps: 4, moveProposals: 8, threads: 2)
        for (p, q) in zip(r0.points, r1.points) {
            XCTAssertEqual(p.monteCarlo?.dZetaMc, q.monteCarlo?.dZetaMc)
            XCTAssertEqual(q.monteCarlo?.stageMoves.first?.steps, 0)
        }
    }
}
