import Foundation
import RandomStreams
import ToyModels
@testable import Samplers
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// The layered toy's exact values against an independent computation, and the smc estimator against
/// them where its samplers must anneal.
final class LayeredToyTests: XCTestCase {
    /// Independent of `LayeredToy.exactStages`: every activity pattern of the coordinates of stages 1…L−1
    /// enumerated (no binomial law, no closed-form p̃, no forward recursion), each coordinate's part
    /// integrated by GSL QAGS; a stage's `Z_m` given the patterns before it is the sum over its own patterns
    /// (the last stage's, QAGS to the power d_L); the trace normalisation by the same route. Returns the 2sED
    /// from the total over all patterns, the lower 2sED from the stage terms, and each stage's limit ESS.
    func enumerated(_ m: LayeredToy, eps: Double, zeta: Double) throws -> (dZeta: Double, lower: Double, ess: [Double]) {
        let L = m.stageUnits.count, dims = (0..<L).map { m.dimension(ofStage: $0) }
        let lo = m.lo, hi = m.hi, b = m.threshold, w = hi - lo
        func q(_ f: @escaping (Double) -> Double, _ a: Double, _ c: Double) throws -> Double {
            try Quadrature.integrate(f, from: a, to: c, relTol: 1e-13).value
        }
        // Trace normalisation: E_U Tr F = ⟨w²⟩ (d_1 + Σ d_m E_U h(κ̄_{m−1})), E_U h by the uniform probabilities
        // of every pattern of the D_{m−1} coordinates before stage m.
        let meanSq = try q({ $0 * $0 }, lo, hi) / w
        let pActive = try q({ _ in 1 }, b, hi) / w
        var weighted = Double(dims[0])
        for s in 1..<L {
            let pooled = dims[0..<s].reduce(0, +)
            var meanH = 0.0
            for pattern in 0..<(1 << pooled) {
                let k = pattern.nonzeroBitCount
                meanH += Foundation.pow(pActive, Double(k)) * Foundation.pow(1 - pActive, Double(pooled - k)) * m.h(Double(k) / Double(pooled))
            }
            weighted += Double(dims[s]) * meanH
        }
        let c = Double(dims.reduce(0, +)) / (meanSq * weighted)
        let s = ScaleParameters.t(eps: eps, zeta: zeta) * c.squareRoot()
        // Every pattern of stages 1…m as (Π_{j≤m} g_j, active coordinates so far); g_j the pattern's share of G_j.
        var paths: [(weight: Double, active: Int)] = [(1, 0)]
        var logZ1 = 0.0, lowerTerms = 0.0, ess: [Double] = []
        for stage in 0..<L {
            let d = dims[stage], pooled = dims[0..<stage].reduce(0, +)
            // Z_stage at each path of the stages before: a sum over this stage's patterns, or for the last
            // stage one quadrature to the power d.
            var z: [Double] = [], next: [(weight: Double, active: Int)] = []
            for path in paths {
                let root = stage == 0 ? 1 : m.h(Double(path.active) / Double(pooled)).squareRoot()
                if stage == L - 1 {
                    z.append(Foundation.pow(try q({ 1 + s * root * $0 }, lo, hi) / w, Double(d)))
                    continue
                }
                let inactive = try q({ 1 + s * root * $0 }, lo, b) / w, active = try q({ 1 + s * root * $0 }, b, hi) / w
                var total = 0.0
                for pattern in 0..<(1 << d) {
                    let k = pattern.nonzeroBitCount
                    let g = Foundation.pow(active, Double(k)) * Foundation.pow(inactive, Double(d - k))
                    total += g
                    next.append((path.weight * g, path.active + k))
                }
                z.append(total)
            }
            let norm = paths.reduce(0) { $0 + $1.weight }
            if stage == 0 {
                logZ1 = Foundation.log(z[0])
            } else {
                let mean = zip(paths, z).reduce(0) { $0 + $1.0.weight * $1.1 } / norm
                let second = zip(paths, z).reduce(0) { $0 + $1.0.weight * $1.1 * $1.1 } / norm
                lowerTerms += zip(paths, z).reduce(0) { $0 + $1.0.weight * Foundation.log($1.1) } / norm
                ess.append(mean * mean / second)
            }
            if stage == L - 1 {
                let total = zip(paths, z).reduce(0) { $0 + $1.0.weight * $1.1 }
                let dz = TwoScale.dimension(logMeanDet: Foundation.log(total), dimension: dims.reduce(0, +), zeta: zeta, eps: eps)
                let lower = TwoScale.dimension(logMeanDet: logZ1 + lowerTerms, dimension: dims.reduce(0, +), zeta: zeta, eps: eps)
                return (dz, lower, ess)
            }
            paths = next
        }
        fatalError("unreachable: the last stage returns")
    }

    func testExactValuesAgainstPatternEnumeration() throws {
        let cases: [(units: [Int], size: [Int], box: (Double, Double), b: Double?, g: Double)] = [
            ([2, 3], [4, 2], (0.2, 1.5), 0.7, 1.3),
            ([1, 1], [3, 5], (0, 1), nil, -2.0),
            ([3, 2], [3, 4], (0.5, 2), 1.9, 6),
            // More stages: each coupled to the one before.
            ([2, 1, 2], [2, 3, 1], (0.2, 1.5), 0.7, 1.3),
            ([1, 2, 1], [3, 2, 4], (0, 1), nil, -2.0),
            ([1, 1, 1, 1], [2, 3, 2, 2], (0.5, 2), 1.2, 4),
        ]
        for c in cases {
            let m = try LayeredToy(units: c.units, unitSize: c.size, box: c.box, threshold: c.b, coupling: c.g)
            for (eps, zeta) in [(1e-3, 2.0 / 3), (0.1, 0.5), (0.5, 0.0)] {
                let exact = try m.exact(eps: eps, zeta: zeta, normalization: .trace)
                let reference = try enumerated(m, eps: eps, zeta: zeta)
                let scale = Swift.max(1, abs(reference.dZeta))
                XCTAssertEqual(exact.dZeta, reference.dZeta, accuracy: 1e-10 * scale, "\(c) ε = \(eps)")
                XCTAssertEqual(exact.dZetaLower, reference.lower, accuracy: 1e-10 * scale, "\(c) ε = \(eps)")
                XCTAssertEqual(exact.stageOuterESSFraction.count, c.units.count - 1)
                for (a, r) in zip(exact.stageOuterESSFraction, reference.ess) { XCTAssertEqual(a, r, accuracy: 1e-10, "\(c) ε = \(eps)") }
                XCTAssertLessThanOrEqual(exact.dZetaLower, exact.dZeta + 1e-12, "Jensen")
            }
        }
    }

    /// The forward recursion on stages of 10³ coordinates, where the binomial laws are narrow and most values
    /// of S are pruned: finite values in Jensen's order, and stage 2's terms equal to those of the two-stage toy
    /// made of the first two stages (which the enumeration above checks).
    func testForwardRecursionOnLargeStages() throws {
        let m = try LayeredToy(units: [10, 10, 10], unitSize: [100, 100, 100], coupling: 0.12)
        let e = try m.exact(eps: 0.1, zeta: 2.0 / 3, normalization: .trace)
        XCTAssertTrue(e.dZeta.isFinite && e.dZetaLower.isFinite)
        XCTAssertLessThanOrEqual(e.dZetaLower, e.dZeta)
        XCTAssertEqual(e.stageLogZ.count, 3)
        // Stage 2's terms are those of the two-stage toy made of the first two stages.
        let two = try LayeredToy(units: [10, 10], unitSize: [100, 100], coupling: 0.12)
        let s = ScaleParameters.t(eps: 0.1, zeta: 2.0 / 3) * (try m.scale(.trace)).squareRoot()
        let a = m.exactStages(scale: s), b2 = two.exactStages(scale: s)
        XCTAssertEqual(a.logMean[0], b2.logMean[0], accuracy: 1e-9)
        XCTAssertEqual(a.outerESSFraction[0], b2.outerESSFraction[0], accuracy: 1e-12)
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
        XCTAssertEqual(w.map(try XCTUnwrap(first.unit.coordinateRoot)), w)
        let kappa = Double(w.filter { $0 > 0.7 }.count) / 8
        let second = try m.stage(state, 1, box: m.box)
        for _ in 0..<3 {
            let x = (0..<2).map { _ in rng.uniform(0.2, 1.5) }
            v += x
            let roots = try second.unit.roots(x)
            for (r, xi) in zip(roots, x) { XCTAssertEqual(r * r, Foundation.exp(1.3 * kappa) * xi * xi, accuracy: 1e-12) }
            // Root j is coordinate j's alone, as the blocked sweeps' per-coordinate path assumes.
            XCTAssertEqual(x.map(try XCTUnwrap(second.unit.coordinateRoot)), roots)
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
        // A third stage sees the pooled share of active coordinates of stages 1 and 2.
        let three = try LayeredToy(units: [2, 1, 1], unitSize: [2, 3, 2], box: (0.2, 1.5), threshold: 0.7, coupling: 1.3)
        var st = three.emptyState()
        three.setUnit(&st, stage: 0, unit: 0, parameters: [0.9, 0.3])
        three.setUnit(&st, stage: 0, unit: 1, parameters: [0.8, 1.1])
        three.setUnit(&st, stage: 1, unit: 0, parameters: [0.2, 0.71, 1.4])
        let third = try three.stage(st, 2, box: three.box)
        let roots3 = try third.unit.roots([0.5, 1.2])
        XCTAssertEqual(roots3[0] * roots3[0], Foundation.exp(1.3 * 5 / 7) * 0.25, accuracy: 1e-12)
        XCTAssertEqual(roots3[1] * roots3[1], Foundation.exp(1.3 * 5 / 7) * 1.44, accuracy: 1e-12)
        let second3 = try three.stage(st, 1, box: three.box)
        XCTAssertEqual(try second3.unit.roots([1])[0], Foundation.exp(1.3 * 3 / 4).squareRoot(), accuracy: 1e-12)
        XCTAssertThrowsError(try LayeredToy(units: [1, 1, 1], unitSize: [1, 1], coupling: 1))
        XCTAssertThrowsError(try LayeredToy(units: [1], unitSize: [1], coupling: 1))
        XCTAssertThrowsError(try LayeredToy(units: [Int](repeating: 1, count: 9), unitSize: [Int](repeating: 1, count: 9), coupling: 1))
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
        var r = try StagedToyMeasurement.measure(family: "layered", model: m, eps: eps, zeta: 2.0 / 3, normalization: .trace)
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

    /// `median_interval_width` over trials: trial i is the run at seed + i, so three single runs at seeds 7, 8
    /// and 9 give the three reported intervals whose middle relative width (2sED and lower 2sED) a three-trial
    /// run at seed 7 must report.
    func testMedianIntervalWidthIsTheMiddleOfTheTrialsWidths() async throws {
        let m = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 3)
        let eps = [1e-3, 0.1]
        func measured(seed: UInt64, trials: Int) async throws -> StagedToyMeasurement<LayeredToy> {
            var r = try StagedToyMeasurement.measure(family: "layered", model: m, eps: eps, zeta: 2.0 / 3, normalization: .trace)
            try await r.runMonteCarlo(paths: 16, inner: 8, seed: seed, trials: trials, traceDraws: nil, islandSweeps: 4, threads: 2)
            return r
        }
        var singles: [StagedToyMeasurement<LayeredToy>] = []
        for seed: UInt64 in [7, 8, 9] { singles.append(try await measured(seed: seed, trials: 1)) }
        let three = try await measured(seed: 7, trials: 3)
        for (i, p) in three.points.enumerated() {
            let q = try XCTUnwrap(p.monteCarlo)
            let widths = try singles.map { r -> (Double, Double) in
                let s = try XCTUnwrap(r.points[i].monteCarlo)
                let a = s.intervalMc.range, b = try XCTUnwrap(s.intervalLowerMc).range
                return ((a.upperBound - a.lowerBound) / p.dZeta, (b.upperBound - b.lowerBound) / p.dZetaLower)
            }
            XCTAssertEqual(try XCTUnwrap(q.medianIntervalWidth), widths.map(\.0).sorted()[1], accuracy: 1e-15, "ε = \(p.eps)")
            XCTAssertEqual(try XCTUnwrap(q.medianIntervalLowerWidth), widths.map(\.1).sorted()[1], accuracy: 1e-15, "ε = \(p.eps)")
        }
    }

    /// Where the outer weights are degenerate (coupling 10: limit ESS/K 2–4%), K = 64 draws have not met
    /// the weights' tail, so the counted ESS comes out high and the sampled intervals miss: over 20 seeds they
    /// hold the exact value in fewer than 18 at one ε at least. The spread of the log-weights gives that
    /// away, so the reported interval is the certified bracket in at least 18 runs at each ε, and it holds in
    /// at least 19 (the bracket's δ = 1%). The lower 2sED's later term takes no outer weight (one later stage),
    /// so its sampled interval stands wherever stage 1 decorrelated and the islands are quiet: in at least 18
    /// runs at each ε here, and it holds in all but at most one of those (`ReportedInterval.lowerSamplingHolds`;
    /// 20 of 20 at both ε when written).
    func testReportedIntervalIsTheBracketWhereSamplingFails() async throws {
        let m = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 10)
        let eps = [1e-3, 0.1]
        var r = try StagedToyMeasurement.measure(family: "layered", model: m, eps: eps, zeta: 2.0 / 3, normalization: .trace)
        XCTAssertLessThan(r.points.map(\.outerEssFraction).max() ?? 1, 0.05, "a degenerate case")
        try await r.runMonteCarlo(paths: 64, inner: 32, seed: 301, trials: 20, traceDraws: nil, islandSweeps: 4, threads: 2)
        let qs = try r.points.map { try XCTUnwrap($0.monteCarlo) }
        XCTAssertLessThan(qs.map { $0.covered ?? 20 }.min() ?? 20, 18, "the sampled intervals miss here")
        for (p, q) in zip(r.points, qs) {
            XCTAssertGreaterThanOrEqual(q.bracketFallbacks ?? 0, 18, "ε = \(p.eps)")
            XCTAssertGreaterThanOrEqual(q.coveredInterval ?? 0, 19, "ε = \(p.eps): reported covered \(q.coveredInterval ?? 0)/20")
            XCTAssertGreaterThanOrEqual(q.coveredIntervalLower ?? 0, 19, "ε = \(p.eps): lower")
            XCTAssertTrue(q.intervalMc.source == .bracket ? q.intervalMc.range == q.dZetaBracket : true)
            let lowerSampled = 20 - (q.bracketFallbacksLower ?? 20)
            XCTAssertGreaterThanOrEqual(lowerSampled, 18, "ε = \(p.eps): the lower 2sED's sampled interval stands")
            XCTAssertGreaterThanOrEqual(q.coveredSampledLower ?? 0, lowerSampled - 1, "ε = \(p.eps): and holds")
        }
    }

    /// Four stages (three later ones; pooled coupling 3, limit outer ESS/K 0.34–0.71 per stage): each stage's
    /// particles descend from the previous stage's resampled few, so the stages' errors are correlated.
    /// The run's variance then takes the genealogy's where it exceeds the stages' sum
    /// (`StagedSMC.genealogyVariance`); with two stages it is stage 1's, widened to Student's t, and stage
    /// 2's at their Cauchy–Schwarz bound. Even so the sampled
    /// intervals miss here (fewer than 18 of 20 at one ε; lab/ESTIMATORS-LOG.md, "Several later
    /// stages"), though the islands are quiet: stage 2's outer log-weights spread over 1–2.5 nats², above
    /// `ReportedInterval.maximumLaterLogVariance`, so the reported interval is the certified bracket in at
    /// least 17 runs at each ε (5 of 200 seeds let the sampled one stand in the lab's run at ε = 0.1), and it
    /// holds in at least 19.
    func testSeveralLaterStagesReportTheBracket() async throws {
        let m = try LayeredToy(units: [2, 2, 2, 2], unitSize: [3, 3, 3, 3], coupling: 3)
        let eps = [1e-3, 0.1]
        var r = try StagedToyMeasurement.measure(family: "layered", model: m, eps: eps, zeta: 2.0 / 3, normalization: .trace)
        try await r.runMonteCarlo(paths: 64, inner: 32, seed: 1, trials: 20, traceDraws: nil, islandSweeps: 4, threads: 2)
        let qs = try r.points.map { try XCTUnwrap($0.monteCarlo) }
        XCTAssertLessThan(qs.map { $0.covered ?? 20 }.min() ?? 20, 18, "the sampled intervals miss here")
        for (p, q) in zip(r.points, qs) {
            XCTAssertGreaterThanOrEqual(q.bracketFallbacks ?? 0, 17, "ε = \(p.eps)")
            XCTAssertLessThan(q.stageIslandNoiseVar.max() ?? 1, ReportedInterval.maximumIslandNoiseVariance, "ε = \(p.eps): quiet islands")
            XCTAssertGreaterThanOrEqual(q.coveredInterval ?? 0, 19, "ε = \(p.eps)")
            XCTAssertGreaterThanOrEqual(q.coveredIntervalLower ?? 0, 19, "ε = \(p.eps): lower")
        }
        // The variance: more than the stages' sum with four stages; with two, stage 1's (widened to Student's
        // t over its R replicates) and stage 2's joined at their Cauchy–Schwarz bound (√V₁ + √V₂)²
        // (`StageSum.correlated`), above their sum.
        for (model, more) in [(m, true), (try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 3), false)] {
            let smc = try StagedSMC(model: model, box: model.box, seed: 4, paths: 64, inner: 32, traceDraws: 500)
            let r = StagedSMC<LayeredToy>.stageOneTasks(units: 2) * smc.replicates
            for p in try await smc.run(eps: eps, zeta: 2.0 / 3, normalization: .trace, lower: true, threads: 2).points {
                let se = try XCTUnwrap(p.standardError), total = se * se, c = p.normalizationShare * total
                let summed = p.stages.reduce(0) { $0 + $1.variance } + c
                XCTAssertGreaterThan(total, summed * 1.05, "ε = \(p.eps)")
                if !more {
                    let v1 = p.stages[0].variance * StudentT.varianceInflation(replicates: r)
                    let bound = v1.squareRoot() + p.stages[1].variance.squareRoot()
                    XCTAssertEqual(total, bound * bound + c, accuracy: 1e-12 * total, "ε = \(p.eps)")
                }
            }
        }
    }

    /// `StagedSMC.genealogyVariance`: the lower 2sED's part is K/(K − 1) Σ_e X_e²; with one later stage
    /// (X_e = (l_e − l̄)/K) the sample variance over k divided by K; the 2sED's part is `eveVariance`.
    func testGenealogyVariance() {
        typealias S = StagedSMC<LayeredToy>
        let l = [1.0, 4.0, 2.0, 7.0], mean = 3.5
        let g = S.genealogyVariance(logWeights: [0, 0, 0, 0], eve: [0, 1, 2, 3], lowerByEve: l.map { ($0 - mean) / 4 }, resamplings: 0)
        XCTAssertEqual(g.lower, LogEstimate.sampleVariance(l) / 4, accuracy: 1e-15)
        XCTAssertEqual(g.nested, 0)
        // Two ancestors carry everything: X = (±1.5, 0, 0, 0) after two stages.
        let h = S.genealogyVariance(logWeights: [0, log(3.0), 0, 0], eve: [0, 0, 0, 1], lowerByEve: [1.5, -1.5, 0, 0], resamplings: 1)
        XCTAssertEqual(h.lower, 4.0 / 3 * 4.5, accuracy: 1e-15)
        XCTAssertEqual(h.nested, S.eveVariance(logWeights: [0, log(3.0), 0, 0], eve: [0, 0, 0, 1], resamplings: 1))
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
            let noise = p.islandNoise[0] * p.logVariance[0]
            shifts.append((1 - 1.0 / 50) / 2 * noise)
        }
        let meanError = errors.reduce(0, +) / 4, meanShift = shifts.reduce(0, +) / 4
        XCTAssertLessThan(abs(meanError), 0.3, "stage errors \(errors)")
        XCTAssertGreaterThan(meanShift, 0.5, "the islands are noisy enough for the bias to show: \(shifts)")
        XCTAssertLessThan(StagedSMC<LayeredToy>.powerBias(noise: [1.5, 1.5], units: 1).value, 1e-15, "one unit needs none")
        XCTAssertEqual(StagedSMC<LayeredToy>.powerBias(noise: [1, 2, 3], units: 4).value, 0.75 * 2 / 2, accuracy: 1e-15)
        XCTAssertEqual(StagedSMC<LayeredToy>.powerBias(noise: [1, 2, 3], units: 4).variance, 0.375 * 0.375 * 1.0 / 3, accuracy: 1e-15)
    }

    /// The later stages' floors (`StageCeilings.floor`, docs/METHOD.md §19) against every pooled active count: on
    /// toys of two and three stages with γ of both signs, `floor[m]` is the least of
    /// `log Z_m(T) = d_m log(1 + s m̄ √h(T/D_{m−1}))` over T = 0…D_{m−1} (to 10⁻⁹ relative), and at most the exact
    /// lower 2sED's stage term.
    func testFloorsAreTheLeastLaterStageTerms() throws {
        let cases: [([Int], [Int], Double)] = [([2, 2], [3, 3], 3), ([2, 2], [3, 3], -3), ([3, 2, 2], [10, 10, 10], 0.5),
                                               ([3, 2, 2], [10, 10, 10], -2), ([10, 10], [100, 100], 0.12)]
        for (units, sizes, g) in cases {
            let m = try LayeredToy(units: units, unitSize: sizes, coupling: g)
            let mean = (m.lo + m.hi) / 2
            for s in [0.5, 4.0, 30.0] {
                let c = try m.ceilings(box: m.box, scale: s)
                let exact = m.exactStages(scale: s)
                XCTAssertEqual(c.floor.count, units.count)
                var pooled = 0
                for j in 1..<units.count {
                    pooled += m.dimension(ofStage: j - 1)
                    let terms = (0...pooled).map { t in
                        Double(m.dimension(ofStage: j)) * Foundation.log1p(s * mean * Foundation.exp(g * Double(t) / Double(pooled)).squareRoot())
                    }
                    let least = try XCTUnwrap(terms.min())
                    XCTAssertEqual(c.floor[j], least, accuracy: 1e-9 * least, "\(units) γ = \(g) s = \(s) stage \(j + 1)")
                    XCTAssertLessThanOrEqual(c.floor[j], exact.meanLog[j - 1] + 1e-9 * least)
                }
            }
        }
    }

    /// Why the toy claims association only for γ ≥ 0 (`laterStagesAssociated`, Harris's inequality): on two stages,
    /// the exact lower 2sED's later term `E_{π_1} log Z_2` against the Jensen mean under the uniform law,
    /// `E_U E_{w_2} log G_2`, computed independently (a binomial sum over stage 1's active count, each
    /// coordinate's `E log(1 + a w)` in closed form). With γ ≥ 0 the term is at least that mean at every scale;
    /// with γ < 0 the mean is above it, so a lower end that took it there would not hold.
    func testHarrisInequalityHoldsWhereTheToyClaimsIt() throws {
        func uniformJensen(_ m: LayeredToy, s: Double) -> Double {
            let d1 = m.dimension(ofStage: 0), d2 = Double(m.dimension(ofStage: 1))
            let q = (m.hi - m.threshold) / (m.hi - m.lo)
            func meanLog(_ a: Double) -> Double {
                let f = { (w: Double) in ((1 + a * w) * Foundation.log1p(a * w) - (1 + a * w)) / a }
                return (f(m.hi) - f(m.lo)) / (m.hi - m.lo)
            }
            return (0...d1).reduce(0.0) { sum, t in
                let logP = lgamma(Double(d1 + 1)) - lgamma(Double(t + 1)) - lgamma(Double(d1 - t + 1))
                    + Double(t) * Foundation.log(q) + Double(d1 - t) * Foundation.log1p(-q)
                return sum + Foundation.exp(logP) * d2 * meanLog(s * Foundation.exp(m.coupling * Double(t) / Double(d1) / 2))
            }
        }
        for g in [0, 0.12, 3, 10] {
            let m = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: g)
            XCTAssertTrue(m.laterStagesAssociated(box: m.box))
            for s in [1.0, 5, 20] {
                XCTAssertGreaterThanOrEqual(m.exactStages(scale: s).meanLog[0], uniformJensen(m, s: s), "γ = \(g) s = \(s)")
            }
        }
        for g in [-3.0, -10] {
            let m = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: g)
            XCTAssertFalse(m.laterStagesAssociated(box: m.box))
            for s in [1.0, 5, 20] {
                XCTAssertLessThan(m.exactStages(scale: s).meanLog[0], uniformJensen(m, s: s), "γ = \(g) s = \(s)")
            }
        }
    }

    /// c's interval (`ScaleRange`) from the bracket's own trace draws covers the exact `E_θ Tr F` of layered
    /// toys: over 200 seeds at δ_c = 1%, on a weakly and a strongly coupled toy, it holds in at least 198, and
    /// it is not vacuous: its mean relative width at 2 000 draws is below 30% (the strongly coupled toy's trace
    /// varies twentyfold over the box).
    func testScaleIntervalCoversTheExactTrace() async throws {
        for m in [try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 3), try LayeredToy(units: [3, 2, 2], unitSize: [10, 10, 10], coupling: 0.5)] {
            var held = 0, width = 0.0
            for seed in 1...200 {
                let x = try await StagedSMC<LayeredToy>.bracketTraces(model: m, box: m.box, seed: UInt64(seed), draws: 2000, threads: 2)
                let r = try ScaleRange.estimated(traces: x, dimension: m.parameterCount, ceiling: m.traceCeiling(box: m.box),
                                                 meanBound: nil, delta: 0.01)
                let t = try XCTUnwrap(r.trace)
                if t.mean.contains(m.meanTrace) { held += 1 }
                XCTAssertTrue(r.range.contains(try m.scale(.trace)) == t.mean.contains(m.meanTrace))
                width += (t.mean.upperBound - t.mean.lowerBound) / m.meanTrace / 200
            }
            XCTAssertGreaterThanOrEqual(held, 198, "\(m.stageUnits)")
            XCTAssertLessThan(width, 0.3, "\(m.stageUnits)")
        }
    }

    /// The certified bracket on layered toys (the generic `StagedSMC.certifiedBracket`, with c's interval
    /// from each seed's own trace draws, as on networks) against the exact values over 200 seeds, on two stages
    /// with γ = 3 (floors and Harris's Jensen terms) and γ = −3 (floors only) and on three stages: at δ = 1%
    /// every end holds in at least 198; the lower 2sED's lower end closes, on average, more than a quarter of the gap
    /// that stage 1's term alone leaves below the exact value; and the Markov end's estimate is unbiased: the
    /// mean of `Ẑ/Z` over the seeds lies within 4 standard errors of 1.
    func testBracketCoversTheExactValuesAndItsEstimateIsUnbiased() async throws {
        let models = [try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 3), try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: -3),
                      try LayeredToy(units: [3, 2, 2], unitSize: [4, 4, 4], coupling: 1)]
        for m in models {
            let eps = [1e-3, 0.1], zeta = 2.0 / 3
            let c = try m.scale(.trace)
            let exact = try eps.map { try m.exact(eps: $0, zeta: zeta, normalization: .trace) }
            let scales = eps.map { ScaleParameters.t(eps: $0, zeta: zeta) * c.squareRoot() }
            let logZ = scales.map { s in let t = m.exactStages(scale: s); return t.logZ1 + t.logMean.reduce(0, +) }
            var covered = [0, 0], coveredLower = [0, 0], ratios: [[Double]] = [[], []], closed: [Double] = [0, 0]
            for seed in 1...200 {
                let smc = try StagedSMC<LayeredToy>(model: m, box: m.box, seed: UInt64(seed), paths: 8, inner: 8, traceDraws: 10)
                let b = try await smc.certifiedBracket(eps: eps, zeta: zeta, normalization: .trace, draws: 50, traceDraws: 2000, threads: 2)
                for i in eps.indices {
                    let p = b.points[i]
                    if p.dZeta.contains(exact[i].dZeta) { covered[i] += 1 }
                    if p.dZetaLower.contains(exact[i].dZetaLower) { coveredLower[i] += 1 }
                    let stageOne = zeta * Double(m.parameterCount)
                        + Swift.max(p.stageLower[0], p.stageOneMarkov ?? 0) / Swift.abs(Foundation.log(eps[i]))
                    closed[i] += (p.dZetaLower.lowerBound - stageOne) / (exact[i].dZetaLower - stageOne) / 200
                }
                let z = try await StagedSMC<LayeredToy>.unbiasedLogZ(model: m, box: m.box, seed: UInt64(seed), scales: scales, threads: 2)
                for i in eps.indices { ratios[i].append(Foundation.exp(try XCTUnwrap(z.logZ[scales[i]]) - logZ[i])) }
            }
            for i in eps.indices {
                let tag = "\(m.stageUnits.count) stages, γ = \(m.coupling), ε = \(eps[i])"
                XCTAssertGreaterThanOrEqual(covered[i], 198, tag)
                XCTAssertGreaterThanOrEqual(coveredLower[i], 198, tag)
                XCTAssertGreaterThan(closed[i], 0.25, "\(tag): the later stages lift the lower 2sED's end")
                let n = Double(ratios[i].count), mean = ratios[i].reduce(0, +) / n
                let sd = (ratios[i].reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (n - 1)).squareRoot()
                XCTAssertLessThan(abs(mean - 1), 4 * sd / n.squareRoot(), "\(tag): mean Ẑ/Z \(mean), sd \(sd)")
                XCTAssertGreaterThan(sd, 0.01, "the estimate varies, so the check is not vacuous")
            }
        }
    }

    /// Several trials run side by side (one per thread) give the same numbers, in the same order, as one
    /// after the other on one thread: every trial has its own seed and streams.
    func testTrialsSideBySideMatchOneAfterTheOther() async throws {
        let m = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 10)
        var runs: [StagedToyMeasurement<LayeredToy>] = [], results: [Data] = []
        for threads in [1, 2, 3] {
            var r = try StagedToyMeasurement.measure(family: "layered", model: m, eps: [1e-3, 0.1], zeta: 2.0 / 3, normalization: .trace)
            try await r.runMonteCarlo(paths: 16, inner: 8, seed: 7, trials: 5, traceDraws: nil, islandSweeps: 4, joint: true, threads: threads)
            let enc = JSONEncoder()
            enc.outputFormatting = [.sortedKeys]
            runs.append(r)
            results.append(try enc.encode(r))
        }
        XCTAssertEqual(results[0], results[1])
        XCTAssertEqual(results[0], results[2])
        // The first trial's own numbers are those of a one-trial run at the same seed.
        var one = try StagedToyMeasurement.measure(family: "layered", model: m, eps: [1e-3, 0.1], zeta: 2.0 / 3, normalization: .trace)
        try await one.runMonteCarlo(paths: 16, inner: 8, seed: 7, trials: 1, traceDraws: nil, islandSweeps: 4, threads: 2)
        for (p, q) in zip(one.points, runs[1].points) {
            XCTAssertEqual(p.monteCarlo?.dZetaMc, q.monteCarlo?.dZetaMc)
            XCTAssertEqual(p.monteCarlo?.dZetaBracket, q.monteCarlo?.dZetaBracket)
        }
    }

    /// `--joint`'s lower 2sED takes its islands from the default J whatever the smc run's `inner`, as `ed --estimator
    /// tempering` does: at J = 8 its islands start at 4 × 32 and it gives the numbers of a run at the default J, while
    /// smc's own differ. (Below the default, islands whose noise passes the gate still fell short by more than their
    /// interval on units of 40 coordinates: lab log, "The tempered lower 2sED's islands below the default J".)
    func testTheJointLowerTakesTheDefaultJ() async throws {
        let m = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 3)
        func points(inner: Int) async throws -> [StagedToyMeasurement<LayeredToy>.MonteCarloPoint] {
            var r = try StagedToyMeasurement.measure(family: "layered", model: m, eps: [1e-3, 0.1], zeta: 2.0 / 3, normalization: .trace)
            try await r.runMonteCarlo(paths: 16, inner: inner, seed: 5, trials: 1, traceDraws: nil, islandSweeps: 4, joint: true, threads: 2)
            return try r.points.map { try XCTUnwrap($0.monteCarlo) }
        }
        let small = try await points(inner: 8), standard = try await points(inner: StagedSMC<LayeredToy>.defaultInner)
        for (p, q) in zip(small, standard) {
            let j = try XCTUnwrap(p.stageIslandInnerLowerJoint)
            XCTAssertTrue(j.allSatisfy { $0 >= StagedSMC<LayeredToy>.temperedLowerInnerFactor * StagedSMC<LayeredToy>.defaultInner }, "J \(j)")
            XCTAssertEqual(p.dZetaLowerJointMc, q.dZetaLowerJointMc)
            XCTAssertEqual(p.ci95LowerJointMc, q.ci95LowerJointMc)
            XCTAssertEqual(p.stageIslandNoiseVarLowerJoint, q.stageIslandNoiseVarLowerJoint)
            XCTAssertNotEqual(p.dZetaMc, q.dZetaMc, "smc's own run keeps its J")
        }
    }

    /// Joint tempering (`JointSMC`: all stages moved together under the whole G_s) on the small layered
    /// toy: over 20 seeds its 95% intervals hold the exact 2sED in at least 17, its mean lies within 4
    /// standard errors of the exact value, and every sweep moves a first-stage unit under stage 2's factor
    /// (the acceptance rate is neither 0 nor 1).
    func testJointTemperingAgainstExactValues() async throws {
        let m = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 3)
        let eps = [1e-3, 0.1]
        var r = try StagedToyMeasurement.measure(family: "layered", model: m, eps: eps, zeta: 2.0 / 3, normalization: .trace)
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
        XCTAssertEqual(j.reverseLogZ, again.reverseLogZ)
        XCTAssertTrue(j.reverseLogZ.allSatisfy { $0.count == 4 && $0.allSatisfy(\.isFinite) })
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
        for (a, b) in try await degenerateCase(moveProposals: 8) {
            let d = try XCTUnwrap(b.stageMoves.first)
            XCTAssertGreaterThan(d.steps, 0)
            XCTAssertGreaterThan(d.accepted, 0)
            XCTAssertLessThan(d.accepted, d.proposals)
            XCTAssertEqual(b.stageLogVarMc, a.stageLogVarMc, "the diagnostics are the plain weights'")
            XCTAssertEqual(b.errorLowerMc, a.errorLowerMc, "the lower 2sED keeps the plain islands")
        }
        // No degeneracy, no moves: bit-identical to the plain run.
        for q in try await flatCase(moveProposals: 8) { XCTAssertEqual(q.stageMoves.first?.steps, 0) }
    }

    /// The majorant tilt (`--tilt-moves`, docs/METHOD.md §22) on the case of `testOuterMovesAgainstExactValues`
    /// (plain outer ESS a few % of K), at ε = 0.1 against the exact value over 8 seeds: the tilted estimate's
    /// intervals hold in at least 7, its mean error lies within 4 standard errors of 0, its spread over seeds is
    /// at most half the plain one's, and the stage was tilted (the majorant explains most of the outer
    /// log-weights' variance; steps > 0; some proposals accepted, some refused). The lower 2sED keeps the plain
    /// islands. Where the majorant does not vary (coupling 0) nothing is tilted and the estimates are the plain
    /// ones to the bit.
    func testTiltAgainstExactValues() async throws {
        for (a, b) in try await degenerateCase(tiltProposals: 100) {
            let d = try XCTUnwrap(b.stageTilt.first)
            XCTAssertTrue(d.engaged)
            XCTAssertNil(d.declined)
            XCTAssertGreaterThan(d.explained, 0.9)
            XCTAssertGreaterThan(d.steps, 0)
            XCTAssertGreaterThan(d.accepted, 0)
            XCTAssertLessThan(d.accepted, d.proposals)
            XCTAssertGreaterThan(b.stageEssFraction[0], a.stageEssFraction[0], "the tilted weights are the flatter")
            XCTAssertEqual(b.errorLowerMc, a.errorLowerMc, "the lower 2sED keeps the plain islands")
        }
        for q in try await flatCase(tiltProposals: 100) {
            XCTAssertEqual(q.stageTilt.first?.engaged, false)
            XCTAssertEqual(q.stageTilt.first?.declined, .essAtLeastHalf, "the weights do not vary at coupling 0")
        }
    }

    /// The degenerate case of the two tests above (10 × 1 then 10 × 3 coordinates, γ = 6, K = 64, J = 16, 8 seeds at
    /// ε = 0.1), plain and moved or tilted: checks that the plain weights degenerate and its estimate is low, and
    /// that the other run's intervals hold in at least 7 of 8, its mean error lies within 4 standard errors of 0
    /// and its spread is at most half the plain one's; returns both runs' points.
    func degenerateCase(moveProposals: Int = 0, tiltProposals: Int = 0) async throws
        -> [(StagedToyMeasurement<LayeredToy>.MonteCarloPoint, StagedToyMeasurement<LayeredToy>.MonteCarloPoint)] {
        let m = try LayeredToy(units: [10, 10], unitSize: [1, 3], coupling: 6)
        var plain = try StagedToyMeasurement.measure(family: "layered", model: m, eps: [0.1], zeta: 2.0 / 3, normalization: .trace)
        var other = plain
        try await plain.runMonteCarlo(paths: 64, inner: 16, seed: 101, trials: 8, traceDraws: nil, islandSweeps: 4, threads: 2)
        try await other.runMonteCarlo(paths: 64, inner: 16, seed: 101, trials: 8, traceDraws: nil, islandSweeps: 4,
                                      moveProposals: moveProposals, tiltProposals: tiltProposals, threads: 2)
        let root8 = 8.0.squareRoot()
        return try zip(plain.points, other.points).map { p, q in
            let a = try XCTUnwrap(p.monteCarlo), b = try XCTUnwrap(q.monteCarlo)
            XCTAssertLessThan(a.stageEssFraction[0], 0.1, "the plain weights must degenerate for this test")
            XCTAssertLessThan(a.mcBias ?? 0, -4 * (a.mcSd ?? .infinity) / root8, "the plain estimate must be low for this test")
            XCTAssertGreaterThanOrEqual(b.covered ?? 0, 7, "covered \(b.covered ?? 0)/8")
            XCTAssertLessThan(abs(b.mcBias ?? .infinity), 4 * (b.mcSd ?? 0) / root8 + 1e-9, "mean error \(b.mcBias ?? 0)")
            XCTAssertLessThan(b.mcSd ?? .infinity, 0.5 * (a.mcSd ?? 0), "sd \(b.mcSd ?? 0), plain \(a.mcSd ?? 0)")
            return (a, b)
        }
    }

    /// The same shape at coupling 0 (no degeneracy) at ε = 10⁻³ and 0.1, one seed: the other run's estimates are the
    /// plain ones to the bit; returns its points.
    func flatCase(moveProposals: Int = 0, tiltProposals: Int = 0) async throws -> [StagedToyMeasurement<LayeredToy>.MonteCarloPoint] {
        let flat = try LayeredToy(units: [10, 10], unitSize: [1, 3], coupling: 0)
        var r0 = try StagedToyMeasurement.measure(family: "layered", model: flat, eps: [1e-3, 0.1], zeta: 2.0 / 3, normalization: .trace)
        var r1 = r0
        try await r0.runMonteCarlo(paths: 64, inner: 16, seed: 7, trials: 1, traceDraws: nil, islandSweeps: 4, threads: 2)
        try await r1.runMonteCarlo(paths: 64, inner: 16, seed: 7, trials: 1, traceDraws: nil, islandSweeps: 4,
                                   moveProposals: moveProposals, tiltProposals: tiltProposals, threads: 2)
        return try zip(r0.points, r1.points).map { p, q in
            XCTAssertEqual(p.monteCarlo?.dZetaMc, q.monteCarlo?.dZetaMc)
            return try XCTUnwrap(q.monteCarlo)
        }
    }

    /// Three stages of 4 × 25 coordinates (γ = 4) at a θ_1 with 60 of stage 1's 100 coordinates active (κ̄_1 = 0.6).
    private func handoverToy() throws -> (LayeredToy, LayeredToy.State) {
        let m = try LayeredToy(units: [4, 4, 4], unitSize: [25, 25, 25], coupling: 4)
        var state = m.emptyState()
        for u in 0..<4 { m.setUnit(&state, stage: 0, unit: u, parameters: (0..<25).map { u * 25 + $0 < 60 ? 0.8 : 0.2 }) }
        return (m, state)
    }

    /// The handover's moves keep the law they are given where it is the unit's target: 4 000 units of 25
    /// coordinates drawn exactly from a stage-2 unit's target (each coordinate independently with density ∝ 1 + a w
    /// on [0, 1], a = s √h(κ̄_1), by inverting its CDF) keep, after the default sweeps, their exact mean active count
    /// and mean coordinate within four standard errors; units drawn from the wrong law (uniform) are pulled towards
    /// it, their mean active count's gap to the target's cut to under a fifth.
    func testHandoverMovesKeepTheUnitsTarget() throws {
        let (m, state) = try handoverToy()
        let s = 1.6, a = s * m.h(0.6).squareRoot()
        let unit = try m.stage(state, 1, box: m.box).unit
        let active = 25 * m.activeProbability(scale: a), meanW = (0.5 + a / 3) / (1 + a / 2)
        func moved(_ slope: Double) throws -> (active: Double, activeSE: Double, w: Double, wSE: Double) {
            var rng = Xoshiro256(seed: 11, stream: [1])
            // F(w) = (w + c w²/2)/(1 + c/2) inverted (c = 0: uniform).
            let units = (0..<4_000).map { _ in (0..<25).map { _ -> Double in
                let u = rng.uniform()
                return slope == 0 ? u : (-1 + (1 + 2 * slope * u * (1 + slope / 2)).squareRoot()) / slope
            } }
            let out = try StagedSMC<LayeredToy>.handover(units, unit: unit, scale: s,
                                                         sweepsPerCoordinate: StagedSMC<LayeredToy>.defaultHandoverSweepsPerCoordinate, rng: &rng)
            let counts = out.map { Double($0.filter { $0 > m.threshold }.count) }, ws = out.map { $0.reduce(0, +) / 25 }
            let c = LogEstimate.mean(counts), w = LogEstimate.mean(ws)
            return (c.value, c.variance.squareRoot(), w.value, w.variance.squareRoot())
        }
        let kept = try moved(a)
        XCTAssertEqual(kept.active, active, accuracy: 4 * kept.activeSE, "\(kept)")
        XCTAssertEqual(kept.w, meanW, accuracy: 4 * kept.wSE, "\(kept)")
        let pulled = try moved(0), start = 25 * m.activeProbability(scale: 0)
        XCTAssertLessThan(abs(pulled.active - active), (active - start) / 5, "from the uniform law (\(start)): \(pulled)")
    }

    /// The units an island hands to the next stage follow their conditional law given θ_{<m} once the islands
    /// are selected ∝ their weights `Ẑ_u^n`, as the next stage's outer particles are. At one θ_1 (60 of stage 1's
    /// 100 coordinates active), 2 000 islands of stage 2 (4 pooled units of 25 coordinates, J = 32) each hand
    /// on 4 units; weighted ∝ Ẑ_u^4, the mean active count of those 100 coordinates is compared with its exact
    /// value `100 p̃(s √h(0.6))`. The draws as they are lean high by more than three standard errors (the
    /// power favours populations that overweight large g_u); after the default handover sweeps the lean is
    /// within three standard errors and under a third of the draws'.
    func testHandedOverUnitsFollowTheirConditionalLaw() throws {
        let (m, state) = try handoverToy()
        let s = 1.6
        let exact = 100 * m.activeProbability(scale: s * m.h(0.6).squareRoot())
        func lean(sweeps: Int) throws -> (bias: Double, se: Double) {
            var smc = try StagedSMC(model: m, box: m.box, seed: 7, paths: 4, inner: 32, traceDraws: 2)
            smc.handoverSweepsPerCoordinate = sweeps
            let settings = try smc.islandSettings(block: 1)
            var lw: [Double] = [], count: [Double] = []
            for k in 0..<2_000 {
                let i = try smc.island(state, stage: 1, scale: s, settings: settings, stream: [1, UInt64(k)], drawStream: [2, UInt64(k)])
                lw.append(i.logZ)
                count.append(Double(i.units.joined().filter { $0 > m.threshold }.count))
            }
            let w = LogSpace.normalizedWeights(logWeights: lw)
            let mean = zip(w, count).reduce(0) { $0 + $1.0 * $1.1 }
            let v = zip(w, count).reduce(0) { $0 + $1.0 * $1.0 * ($1.1 - mean) * ($1.1 - mean) }
            return (mean - exact, v.squareRoot())
        }
        let drawn = try lean(sweeps: 0), moved = try lean(sweeps: StagedSMC<LayeredToy>.defaultHandoverSweepsPerCoordinate)
        XCTAssertGreaterThan(drawn.bias, 3 * drawn.se, "the draws lean: \(drawn)")
        XCTAssertLessThan(abs(moved.bias), 3 * moved.se, "moved: \(moved)")
        XCTAssertLessThan(abs(moved.bias), drawn.bias / 3, "moved: \(moved), drawn: \(drawn)")
    }
}
