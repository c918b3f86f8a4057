import Foundation
import RandomStreams
@testable import Samplers
import Testing
import ToyModels
import TwoScaleCore

/// The lower 2sED's later terms with the earlier layers drawn by tempering (`TemperedLower`) against a layered
/// toy's exact `E_{π_{m−1}} log I_m` (three stages of two units of 6 coordinates, coupling 3, at the exact
/// scales of ε = 10⁻³ and 0.1). Over 8 seeds each later stage's 95% interval holds the exact term in at least 7
/// at every stop, and the terms' mean lies within 3 standard errors (their spread over the seeds) of it. The
/// same islands at θ_{<m} drawn from the uniform prior instead of `π_{m−1}` average further than that from it,
/// so a prefix that was not tempered would fail; and stage 1's term is the staged run's, which holds too.
@Suite struct TemperedLowerTests {
    let model: LayeredToy
    let stops: [Double]
    /// `exact[t][m − 1]`: `E_{π_{m−1}} log I_m` at stop t; `firstExact[t]`: `log I_1`.
    let exact: [[Double]]
    let firstExact: [Double]

    init() throws {
        let m = try LayeredToy(units: [2, 2, 2], unitSize: [6, 6, 6], coupling: Double(ProcessInfo.processInfo.environment["GAMMA"] ?? "3")!)
        let c = try m.scale(.trace)
        let s = [1e-3, 0.1].map { ScaleParameters.t(eps: $0, zeta: 2.0 / 3) * c.squareRoot() }.sorted()
        model = m
        stops = s
        exact = s.map { m.exactStages(scale: $0).meanLog }
        firstExact = s.map { m.exactStages(scale: $0).logZ1 }
    }

    func smc(seed: UInt64) throws -> StagedSMC<LayeredToy> {
        try StagedSMC(model: model, box: model.box, seed: seed, paths: 16, inner: 32, traceDraws: 100)
    }

    func run(seed: UInt64) async throws -> TemperedLower {
        try await smc(seed: seed).temperedLower(stops: stops, particles: 32, replicates: 4, sweeps: nil, islands: 8, threads: 2)
    }

    func ci(_ e: LogEstimate) -> ClosedRange<Double> {
        let h = 1.959963984540054 * e.variance.squareRoot()
        return (e.value - h)...(e.value + h)
    }

    @Test func theTermsHoldTheExactValues() async throws {
        var runs: [TemperedLower] = []
        for k in 0..<8 { runs.append(try await run(seed: 61_001 + UInt64(k))) }
        let staged = try smc(seed: 61_001)
        var rng = Xoshiro256(seed: 9, stream: [1])
        for t in stops.indices {
            // Stage 1's term is the staged run's own, its variance widened to Student's t by `lowerLog`.
            let firstHeld = runs.filter { r in
                var e = r.first[t]
                e.variance *= StudentT.varianceInflation(replicates: r.firstReplicates)
                return ci(e).contains(firstExact[t])
            }.count
            #expect(firstHeld >= 7, "stop \(t): stage 1 held in \(firstHeld) of 8")
            for m in exact[t].indices {
                let terms = runs.map { $0.terms[t][m] }
                let held = terms.filter { ci($0).contains(exact[t][m]) }.count
                let mean = LogEstimate.mean(terms.map(\.value))
                let se = mean.variance.squareRoot()
                #expect(held >= 7, "stop \(t), stage \(m + 2): held in \(held) of 8")
                #expect(abs(mean.value - exact[t][m]) < 3 * se, "stop \(t), stage \(m + 2): mean \(mean.value), exact \(exact[t][m]), se \(se)")
                #expect(runs.allSatisfy { $0.replicates[t][m].count == 4 })
                // The uniform prior in place of π_{m−1}: 64 islands at uniform θ_{<m}.
                let lows = try (0..<64).map { k in
                    try staged.island(model.uniformState(box: model.box, rng: &rng), stage: m + 1, scale: stops[t],
                                      settings: staged.islandSettings(block: m + 1), stream: [99, UInt64(t), UInt64(m), UInt64(k)],
                                      drawStream: [], bound: false, draws: false).lower
                }
                let uniform = lows.reduce(0, +) / Double(lows.count)
                #expect(abs(uniform - exact[t][m]) > 3 * se, "stop \(t), stage \(m + 2): E_U log I ≈ \(uniform), exact \(exact[t][m]), se \(se)")
            }
        }
    }
}

/// Island sizing in `TemperedLower` (two stages of two units of 24 coordinates, coupling 3, islands starting at the
/// staged run's J = 8, not at `temperedLowerInnerFactor` times it; on units of 16, whose fits of 4 particles now
/// propose blocks of 2 coordinates, the islands start quiet): unsized, the later stage's islands are noisier
/// than `ReportedInterval.maximumIslandNoiseVariance` at the larger scale; sized, each replicate's pilot doubles its J
/// until they are below `temperedLowerSizingTarget` (or J reaches the cap), the σ̄² the gate reads is the pilot's at the
/// chosen J where it reached the target and at the starting J where it did not, and the term still holds the exact
/// `E_{π_1} log I_2`. An island kept because its own noise was small is low, which is
/// why a pilot, not the islands, chooses J. Where stage 1 did not decorrelate (units of 60 coordinates, one sweep per
/// step) nothing is sized, and the interval to read is the bracket; run again at more sweeps, it does decorrelate. On
/// units of 40 the islands need the independence sweeps the tempered lower gives them.
@Suite struct TemperedLowerSizingTests {
    func setUp(unitSize: Int) throws -> (LayeredToy, [Double]) {
        let m = try LayeredToy(units: [2, 2], unitSize: [unitSize, unitSize], coupling: 3)
        let c = try m.scale(.trace)
        return (m, [1e-3, 0.1].map { ScaleParameters.t(eps: $0, zeta: 2.0 / 3) * c.squareRoot() }.sorted())
    }

    func run(_ m: LayeredToy, _ stops: [Double], seed: UInt64, sized: Bool, raised: Bool = true, innerFactor: Int? = nil,
             stageOneSweeps: Int = StagedSMC<LayeredToy>.defaultStageOneSweeps, independence: Bool = false) async throws -> TemperedLower {
        var smc = try StagedSMC(model: m, box: m.box, seed: seed, paths: 16, inner: 8, traceDraws: 100, stageOneSweeps: stageOneSweeps)
        smc.independenceMoves = independence
        return try await smc.temperedLower(stops: stops, particles: 32, replicates: 4, sweeps: nil, islands: 8, innerFactor: innerFactor, sizeIslands: sized,
                                           raiseStageOne: raised, threads: 2)
    }

    @Test func noisyIslandsAreSized() async throws {
        let (m, stops) = try setUp(unitSize: 24)
        let quiet = ReportedInterval.maximumIslandNoiseVariance, target = StagedSMC<LayeredToy>.temperedLowerSizingTarget
        let base = 8, cap = 8 * StagedSMC<LayeredToy>.temperedLowerMaximumInnerFactor
        var noisyUnsized = 0, held = 0, runs = 0, readAfterSizing = 0
        for k in 0..<6 {
            let seed = 62_001 + UInt64(k)
            let plain = try await run(m, stops, seed: seed, sized: false, innerFactor: 1)
            let sized = try await run(m, stops, seed: seed, sized: true, innerFactor: 1)
            #expect(plain.islandInner.allSatisfy { $0 == [base] })
            guard (sized.firstDecorrelation ?? 1) >= ReportedInterval.minimumDecorrelation else {
                #expect(sized.islandInner == plain.islandInner, "seed \(seed): stage 1 did not decorrelate, nothing sized")
                continue
            }
            runs += 1
            for t in stops.indices {
                if plain.islandNoise[t][0] > quiet { noisyUnsized += 1 }
                let (j, noise, start) = (sized.islandInner[t][0], sized.islandNoise[t][0], plain.islandNoise[t][0])
                // Each replicate's gate σ̄² is its pilot's at the chosen J if that reached the target, else at the starting
                // J (the same pilot, sized or not): unsized, the starting J's; sized, no more than it; reaching the
                // target in every replicate, at most the target.
                #expect(j >= base && j <= cap && noise > 0 && noise <= start, "seed \(seed), stop \(t): J \(j), noise \(noise), start \(start)")
                if j == base { #expect(noise == start, "seed \(seed), stop \(t): not sized, yet σ̄² \(noise) ≠ \(start)") }
                if j < cap { #expect(noise <= target, "seed \(seed), stop \(t): J \(j) below the cap, yet σ̄² \(noise)") }
                if start > target { #expect(j > base, "seed \(seed), stop \(t): noisy islands not sized") }
                if start > quiet && noise <= target { readAfterSizing += 1 }
                // The pilot's σ̄² at the chosen J, reported beside the gate's: the gate's where the target was reached;
                // above the target only where the cap came first.
                let atJ = sized.islandNoiseSized[t][0]
                if j < cap { #expect(atJ == noise, "seed \(seed), stop \(t): σ̄² at J \(atJ), gate \(noise)") }
                // Replicates stopped at the cap above the target are counted; none counted, every one reached it.
                let capped = sized.islandCapped[t][0]
                #expect(plain.islandCapped[t][0] == 0 && capped >= 0 && capped <= 4)
                if capped > 0 { #expect(j == cap, "seed \(seed), stop \(t): \(capped) replicates capped at J \(j)") }
                if capped == 0 { #expect(noise <= target, "seed \(seed), stop \(t): none capped, yet σ̄² \(noise)") }
                var p = EpsilonEstimate(eps: 1e-3, zeta: 2.0 / 3, dZeta: 100, dZetaJoint: 100)
                sized.setLower(on: &p, stop: t, slope: 1, logVarianceOfC: 0, dimension: m.parameterCount)
                let r = ReportedInterval.temperedLower(sampled: try #require(p.ci95Lower), islandNoiseVariance: p.islandNoiseVariance,
                                                       cappedReplicates: p.islandReplicatesCapped, decorrelation: p.stageOneDecorrelation,
                                                       bracket: -1_000...1_000)
                #expect(r.source == (capped == 0 ? .sampled : .bracket), "seed \(seed), stop \(t): \(capped) capped, read \(r.source)")
                if j == base { #expect(atJ == start, "seed \(seed), stop \(t): not sized, yet σ̄² at J \(atJ) ≠ \(start)") }
                let exact = m.exactStages(scale: stops[t]).meanLog[0]
                let e = sized.terms[t][0], h = 1.959963984540054 * e.variance.squareRoot()
                if abs(e.value - exact) <= h { held += 1 }
            }
        }
        #expect(runs >= 4, "stage 1 decorrelated in \(runs) of 6 seeds")
        #expect(noisyUnsized >= runs / 2, "unsized islands above the target in \(noisyUnsized) of \(2 * runs) stops")
        #expect(held >= 2 * runs - 1, "the sized terms held in \(held) of \(2 * runs)")
        // Islands noisy at the starting J, sized until quiet, are read at the chosen J's σ̄² (the starting J's gated them out).
        #expect(readAfterSizing >= 1 && readAfterSizing >= noisyUnsized - 1, "noisy at the start in \(noisyUnsized) stops, sized to the target in \(readAfterSizing)")
    }

    /// Islands whose pilot stops at the cap above the target (here a cap of twice the starting J = 8, on units of 16)
    /// are counted per stage, and the gate reads them as unvalidated: the bracket, also where the starting J's σ̄²,
    /// which the gate read before, is below `ReportedInterval.maximumIslandNoiseVariance` (`noisyIslandsAreSized`
    /// checks the other side: with none counted, the sampled interval is read).
    @Test func islandsStoppedAtTheCapGiveTheBracket() async throws {
        let (m, stops) = try setUp(unitSize: 16)
        let target = StagedSMC<LayeredToy>.temperedLowerSizingTarget
        var quietButCapped = 0, capped = 0, runs = 0
        for k in 0..<2 {
            var smc = try StagedSMC(model: m, box: m.box, seed: 62_401 + UInt64(k), paths: 16, inner: 8, traceDraws: 100)
            smc.independenceMoves = false
            let low = try await smc.temperedLower(stops: stops, particles: 32, replicates: 4, sweeps: nil, islands: 8, innerFactor: 1,
                                                  maximumInnerFactor: 2, threads: 2)
            guard (low.firstDecorrelation ?? 1) >= ReportedInterval.minimumDecorrelation else { continue }
            runs += 1
            for t in stops.indices {
                let (n, noise, atJ, j) = (low.islandCapped[t][0], low.islandNoise[t][0], low.islandNoiseSized[t][0], low.islandInner[t][0])
                // Counted replicates stopped at J = 16 above the target; the sized σ̄² is the mean over all four.
                #expect(j <= 16 && (n == 0 || (j == 16 && atJ > 0)), "seed \(62_401 + k), stop \(t): \(n) capped, J \(j)")
                if n == 0 { #expect(noise <= target) }
                capped += n
                var p = EpsilonEstimate(eps: 1e-3, zeta: 2.0 / 3, dZeta: 100, dZetaJoint: 100)
                low.setLower(on: &p, stop: t, slope: 1, logVarianceOfC: 0, dimension: m.parameterCount)
                #expect(p.islandReplicatesCapped == [n])
                let sampled = try #require(p.ci95Lower)
                let r = ReportedInterval.temperedLower(sampled: sampled, islandNoiseVariance: p.islandNoiseVariance,
                                                       cappedReplicates: p.islandReplicatesCapped, decorrelation: p.stageOneDecorrelation,
                                                       bracket: -1_000...1_000)
                if n > 0 {
                    #expect(r.source == .bracket, "seed \(62_401 + k), stop \(t): \(n) replicates capped, yet read")
                    if noise <= ReportedInterval.maximumIslandNoiseVariance { quietButCapped += 1 }
                }
            }
        }
        #expect(runs >= 1 && capped >= 2 * runs, "\(capped) replicates capped over \(runs) runs")
        #expect(quietButCapped >= 1, "no stop whose capped islands the starting J's σ̄² alone would have let through")
    }

    /// A run at seed 62 301 with islands of J = `inner`, a θ_1 of the uniform prior, the larger scale and the exact
    /// `log I_2` there (`Z_2 = (1 + s m̄ r)^{d_2}`), on units of `unitSize`.
    func oneTheta(unitSize: Int, inner: Int) throws -> (smc: StagedSMC<LayeredToy>, state: LayeredToy.State, scale: Double, exact: Double) {
        let (m, stops) = try setUp(unitSize: unitSize)
        let smc = try StagedSMC(model: m, box: m.box, seed: 62_301, paths: 16, inner: inner, traceDraws: 100)
        var rng = Xoshiro256(seed: 62_301, stream: [1])
        let state = m.uniformState(box: m.box, rng: &rng), s = stops[1]
        let active = Double(state.stages[0].filter { $0 > m.threshold }.count) / Double(m.dimension(ofStage: 0))
        return (smc, state, s, Double(m.dimension(ofStage: 1)) * Foundation.log1p(s * (m.lo + m.hi) / 2 * m.h(active).squareRoot()))
    }

    /// At one θ_1 of the uniform prior, 400 islands of J = 8 at the larger scale against the exact `log I_2`: the mean
    /// over those whose own σ̄² is at most the target lies more than 3 of its standard errors below it, and below the
    /// mean over all of them (low too, by less: J = 8) by as much.
    @Test func anIslandKeptForItsOwnQuietIsLow() throws {
        let (smc, state, s, exact) = try oneTheta(unitSize: 16, inner: 8)
        let islands = try (0..<400).map { k in
            try smc.island(state, stage: 1, scale: s, settings: smc.islandSettings(block: 1), stream: [7, UInt64(k)],
                           drawStream: [], bound: false, draws: false)
        }
        let all = LogEstimate.mean(islands.map(\.lower))
        let kept = LogEstimate.mean(islands.filter { $0.noise <= ReportedInterval.maximumIslandNoiseVariance }.map(\.lower))
        let se = kept.variance.squareRoot()
        #expect(exact - kept.value > 3 * se && all.value - kept.value > 3 * se,
                "kept: \(kept.value), all: \(all.value), exact \(exact), se \(se)")
    }

    /// Stage 1 at one sweep per step (with the independence sweeps the tempered lower always takes) does not
    /// decorrelate on units of 60 coordinates; not raised, its islands are not sized and the interval is the
    /// bracket. The run's own `independenceMoves` changes nothing.
    @Test func aFirstStageThatDidNotDecorrelateGivesTheBracket() async throws {
        let (m, stops) = try setUp(unitSize: 60)
        let low = try await run(m, stops, seed: 62_101, sized: true, raised: false, stageOneSweeps: 1)
        let same = try await run(m, stops, seed: 62_101, sized: true, raised: false, stageOneSweeps: 1, independence: true)
        #expect(low.terms.map { $0.map(\.value) } == same.terms.map { $0.map(\.value) } && low.first.map(\.value) == same.first.map(\.value))
        #expect(low.firstIndependenceMoves && low.firstSweeps == 1)
        let mixed = try #require(low.firstDecorrelation)
        #expect(mixed < ReportedInterval.minimumDecorrelation)
        #expect(low.islandInner.allSatisfy { $0 == [8 * StagedSMC<LayeredToy>.temperedLowerInnerFactor] })
        var p = EpsilonEstimate(eps: 1e-3, zeta: 2.0 / 3, dZeta: 100, dZetaJoint: 100)
        low.setLower(on: &p, stop: 0, slope: 1, logVarianceOfC: 0, dimension: m.parameterCount)
        #expect(p.stageOneDecorrelation == mixed && p.islandNoiseVariance == low.islandNoise[0])
        let sampled = try #require(p.ci95Lower)
        let r = ReportedInterval.temperedLower(sampled: sampled, islandNoiseVariance: p.islandNoiseVariance,
                                               decorrelation: p.stageOneDecorrelation, bracket: 0...1_000)
        #expect(r.source == .bracket)
    }

    /// At one θ_1 of the uniform prior on units of 40 coordinates (coupling 3, ε = 10⁻³), 40 islands at the tempered
    /// lower's J = 128 against the exact `log I_2`. With the independence sweeps the tempered lower takes, their mean
    /// lower estimate holds it and their noise is small; with the random walk alone their median noise variance is
    /// several times larger (their mean falls short too, though 40 heavy-tailed islands do not show it at three
    /// standard errors; lab log).
    @Test func wideIslandsTakeIndependenceSweeps() throws {
        var (smc, state, s, exact) = try oneTheta(unitSize: 40, inner: 32)
        func islands(independence: Bool) throws -> (lower: LogEstimate, medianNoise: Double) {
            smc.independenceMoves = independence
            var settings = try smc.islandSettings(block: 1)
            settings.particles *= StagedSMC<LayeredToy>.temperedLowerInnerFactor
            let all = try (0..<40).map { k in
                try smc.island(state, stage: 1, scale: s, settings: settings, stream: [7, UInt64(k)], drawStream: [], bound: false, draws: false)
            }
            return (LogEstimate.mean(all.map(\.lower)), all.map(\.noise).sorted()[all.count / 2])
        }
        let with = try islands(independence: true), without = try islands(independence: false)
        let se = with.lower.variance.squareRoot()
        #expect(abs(with.lower.value - exact) < 3 * se + 0.02, "with: \(with.lower.value), exact \(exact), se \(se)")
        #expect(with.medianNoise < 0.1 && without.medianNoise > 3 * with.medianNoise,
                "median σ̄²: \(with.medianNoise) with, \(without.medianNoise) without")
    }

    /// Stage 1 on units of 60 coordinates at the default 20 sweeps decorrelates to about 0.6; run again at twice
    /// the sweeps, then with independence sweeps (the order of smc's precision target), it passes 0.85 within
    /// the cap, and its term still holds the exact `log I_1` at both scales.
    @Test func aFirstStageThatDidNotDecorrelateIsRunAgain() async throws {
        let (m, stops) = try setUp(unitSize: 60)
        let n1 = m.stageUnits[0].count, mixed = ReportedInterval.minimumDecorrelation
        let cap = StagedSMC<LayeredToy>.defaultStageOneSweeps * StagedSMC<LayeredToy>.temperedLowerStageOneFactor
        var held = 0, seeds = 0
        for k in 0..<3 {
            let smc = try StagedSMC(model: m, box: m.box, seed: 62_201 + UInt64(k), paths: 16, inner: 8, traceDraws: 100)
            let plain = try await smc.decorrelatedStageOne(stops: stops, raise: false, threads: 2, progress: { _ in })
            let raised = try await smc.decorrelatedStageOne(stops: stops, raise: true, threads: 2, progress: { _ in })
            let before = try #require(plain.stage.estimate.diagnostics.minDecorrelation)
            let after = try #require(raised.stage.estimate.diagnostics.minDecorrelation)
            #expect(before < mixed && plain.run.stageOneSweeps == smc.stageOneSweeps && !plain.run.independenceMoves)
            #expect(after >= mixed, "seed \(k): \(after) at \(raised.run.stageOneSweeps) sweeps")
            #expect(raised.run.stageOneSweeps > smc.stageOneSweeps && raised.run.stageOneSweeps <= cap)
            seeds += 1
            for t in stops.indices {
                var e = StagedSMC<LayeredToy>.block(raised.stage.estimate, units: n1, stop: t).corrected
                e.variance *= StudentT.varianceInflation(replicates: raised.stage.estimate.logZ.first?.count ?? 2)
                let exact = m.exactStages(scale: stops[t]).logZ1
                if abs(e.value - exact) <= 1.959963984540054 * e.variance.squareRoot() { held += 1 }
            }
        }
        #expect(held >= 2 * seeds - 1, "stage 1 held in \(held) of \(2 * seeds)")
    }
}
