import Foundation
import RandomStreams
import TwoScaleCore

/// Stages 0..<`count` of a staged model as a model of their own: the earlier layers' prior `π_{m−1} ∝
/// Π_{j<m} G_j · U` is this prefix's tempering target (docs/METHOD.md §6). A state still holds every stage's
/// coordinates; the prefix's stages never read the later ones.
struct StagePrefix<Model: UniformStagedModel>: UniformStagedModel {
    typealias State = Model.State
    let model: Model
    let count: Int

    var parameterCount: Int { stageUnits.reduce(0) { $0 + $1.count * $1.dimension } }
    var stageUnits: [StageUnits] { Array(model.stageUnits.prefix(count)) }
    func emptyState() -> State { model.emptyState() }
    func setUnit(_ state: inout State, stage m: Int, unit u: Int, parameters: [Double]) {
        model.setUnit(&state, stage: m, unit: u, parameters: parameters)
    }
    func stage(_ state: State, _ m: Int, box: ClosedRange<Double>) throws -> StageUnit {
        precondition(m < count)
        return try model.stage(state, m, box: box)
    }
    func uniformTrace(box: ClosedRange<Double>, rng: inout Xoshiro256) throws -> Double {
        throw TwoScaleError.failure("a stage prefix has no trace normalisation of its own")
    }
    func uniformState(box: ClosedRange<Double>, rng: inout Xoshiro256) -> State { model.uniformState(box: box, rng: &rng) }
    func unitParameters(_ state: State, stage m: Int, unit u: Int) -> [Double] { model.unitParameters(state, stage: m, unit: u) }
}

/// The lower 2sED's later terms `E_{π_{m−1}}[log I_m]` with the earlier layers drawn by joint tempering
/// (docs/ESTIMATORS.md §8, "The lower 2sED"), where the staged filter's outer particles degenerate.
///
/// For each later stage m and each of R replicates: joint tempering (`JointSMC`, forward pass) on the prefix
/// of stages before m anneals P particles from s = 0 through the stops, so that at stop s its weighted
/// particles sample `π_{m−1}`; `islands` of them are drawn by their weights (systematic), and an island at
/// each (`StagedSMC.island`) gives the unbiased log estimate of `I_m` at it. The replicate's term is the
/// islands' mean; the estimate is the mean over replicates, its variance their spread over R times
/// `StudentT.varianceInflation` (replicates are independent: their own tempering runs and islands).
public struct TemperedLower: Sendable, Equatable {
    /// Stage 1's term `log I_1` at each stop: the staged run's pooled first-stage sampler (`corrected`), at more
    /// sweeps where it did not decorrelate (`decorrelatedStageOne`), and its replicates (its variance is their spread).
    public var first: [LogEstimate]
    public var firstReplicates: Int
    /// `terms[t][m − 1]`: stage m's term at stop t; `replicates[t][m − 1]`: each replicate's.
    public var terms: [[LogEstimate]]
    public var replicates: [[[Double]]]
    /// `islandNoise[t][m − 1]`: stage m's islands' mean noise variance σ̄² at stop t (nats², over every replicate's
    /// pilot islands at the chosen J where they reached the sizing target, else at the starting J), which
    /// `ReportedInterval.temperedLower` reads; `islandInner[t][m − 1]`: the largest
    /// J its replicates' islands were sized to; `islandNoiseSized[t][m − 1]`: the pilot's σ̄² at the J each replicate's
    /// islands ran at, averaged over them (above the target where the cap came first); `islandCapped[t][m − 1]`: how
    /// many replicates' pilots stopped at the cap above the target, which the gate reads as unvalidated; and stage 1's
    /// smallest decorrelation of a move (nil: none measured).
    public var islandNoise: [[Double]]
    public var islandInner: [[Int]]
    public var islandNoiseSized: [[Double]]
    public var islandCapped: [[Int]]
    public var firstDecorrelation: Double?
    /// Stage 1's sweeps per step and whether independence sweeps followed them, as last run (`raiseStageOne`).
    public var firstSweeps: Int
    public var firstIndependenceMoves: Bool

    /// The terms summed at stop t (independent stages: variances add).
    public func sum(_ t: Int) -> LogEstimate { terms[t].reduce(LogEstimate()) { $0 + $1 } }

    /// The lower 2sED's `log I_1 + Σ_m E log I_m` at stop t: stage 1's term (its variance widened to Student's t
    /// for its replicates) and the later stages' terms, all independent, plus ĉ's variance at `slope` (the
    /// 2sED's, as for smc); and that added variance.
    public func lowerLog(_ t: Int, slope: Double, logVarianceOfC: Double) -> (estimate: LogEstimate, normalizationVariance: Double) {
        var one = first[t]
        if firstReplicates >= 2 { one.variance *= StudentT.varianceInflation(replicates: firstReplicates) }
        var low = one + sum(t)
        let cv = TraceEstimate.addedVariance(slope: slope, logVarianceOfC: logVarianceOfC)
        low.variance += cv
        return (low, cv)
    }

    /// Sets point `p`'s lower 2sED from stop t (`lowerLog`) and the diagnostics its reported interval reads
    /// (`ReportedInterval.temperedLower`): the later stages' islands' noise and J, and stage 1's decorrelation.
    public func setLower(on p: inout EpsilonEstimate, stop t: Int, slope: Double, logVarianceOfC: Double, dimension d: Int) {
        let low = lowerLog(t, slope: slope, logVarianceOfC: logVarianceOfC)
        p.setLower(low.estimate, dimension: d, normalizationVariance: low.normalizationVariance)
        (p.islandNoiseVariance, p.islandInner, p.stageOneDecorrelation) = (islandNoise[t], islandInner[t], firstDecorrelation)
        (p.islandNoiseVarianceSized, p.islandReplicatesCapped) = (islandNoiseSized[t], islandCapped[t])
    }
}

/// One replicate's islands at one stop of `temperedLower`: their mean log, the σ̄² the gate reads, its pilot's σ̄² at
/// the chosen J, that J, and whether sizing stopped at the cap above the target.
struct StopIslands: Codable, Equatable {
    var log, noise, sized: Double
    var inner: Int
    var capped: Bool
}

extension StagedSMC where Model: UniformStagedModel {
    static var temperedLowerStream: UInt64 { 0x544C_4F57 }  // "TLOW"

    /// The sweeps a prefix sampler's particles are given at each stop before their islands, as a multiple of its
    /// sweeps per step. A tempering step's sweeps leave wide units lagging behind the target, towards the prior;
    /// the 2sED's `Ẑ` carries that lag as a low bias that the reverse pass brackets, but the draws of `π_{m−1}`
    /// themselves must be in place, and more sweeps at the stop (the weights stay valid: each leaves `π_s`
    /// invariant) put them there (docs/ESTIMATORS.md §8).
    public static var temperedLowerSettleFactor: Int { 16 }

    /// The tempered lower's islands' J as a multiple of this run's J, and the most the pilot sizes it to. The log
    /// of an island's estimate falls short of `log I_m` by more than the lognormal correction restores where J is
    /// small, a shortfall the replicates share and the interval cannot see (docs/ESTIMATORS.md §8).
    public static var temperedLowerInnerFactor: Int { 4 }
    public static var temperedLowerMaximumInnerFactor: Int { 32 }
    /// The islands' mean noise variance σ̄² (nats²) the pilot sizes them to: noisier islands of wide units fall
    /// short by more than the lognormal correction restores (docs/ESTIMATORS.md §8).
    public static var temperedLowerSizingTarget: Double { 0.05 }
    /// Islands of the pilot that sizes J (per replicate and stop).
    public static var temperedLowerPilotIslands: Int { 4 }
    /// Stage 1's particles for the lower 2sED as a multiple of the staged run's, for the same reason.
    public static var temperedLowerStageOneParticleFactor: Int { 4 }

    /// `TemperedLower` through the ascending `stops`: R = `replicates` prefix samplers of `particles` each
    /// per later stage (`sweeps` nil: each prefix's `JointSMC.defaultSweeps`; at each stop `settleFactor` times
    /// as many again, nil: `temperedLowerSettleFactor`), `islands` islands per replicate and stop, with this
    /// run's island settings at `innerFactor` (nil: `temperedLowerInnerFactor`) times its J. A pilot of
    /// `temperedLowerPilotIslands` of them on streams of its own gives their mean noise variance σ̄² at that J, which
    /// `ReportedInterval.temperedLower` reads; with `sizeIslands` (and only where stage 1 decorrelated) the pilot is
    /// run again at twice the J while its σ̄² exceeds `temperedLowerSizingTarget`, up to `maximumInnerFactor` (nil:
    /// `temperedLowerMaximumInnerFactor`) times this run's J, and the islands then run once at the chosen J. An
    /// island's log estimate and its noise come from the same replicates and move together, so an estimate kept,
    /// or read, because its own noise was small is low; the pilot keeps both choices apart from the estimate. The
    /// gate reads the chosen J's σ̄² where the pilot reached the target; where the cap came first the replicate is
    /// counted (`islandCapped`) and the gate gives the bracket, since islands left above the target fall short by more
    /// than their interval allows and no run has validated reading them (its σ̄² is then the starting J's, as unsized;
    /// each replicate judges its own, so replicates stay independent). With `raiseStageOne`, stage 1 is run again at
    /// more sweeps while it does not decorrelate (`decorrelatedStageOne`). Stage 1 and the islands take independence sweeps (`independenceMoves`) whatever
    /// this run's setting: without them the islands of wide units fall short by more than their interval.
    /// With `checkpoints`, stage 1's term is saved once it is done (`lower-stage1`), and each (stage, replicate) task
    /// saves its prefix run's progress after every tempering step and each stop's settling sweeps, and its islands
    /// after each stop (`lower-m-r`); a rerun continues from them to the same bytes. `progress` is told where the tasks
    /// stand at most once a minute (`StepReporter`).
    public func temperedLower(stops: [Double], particles: Int, replicates: Int, sweeps: Int?, islands: Int,
                              settleFactor: Int? = nil, innerFactor: Int? = nil, maximumInnerFactor: Int? = nil, sizeIslands: Bool = true,
                              raiseStageOne: Bool = true, checkpoints: (any SamplerCheckpoints)? = nil,
                              threads: Int, progress: @escaping @Sendable (String) -> Void = { _ in }) async throws -> TemperedLower {
        guard islands >= 1 else { throw TwoScaleError.failure("tempered lower 2sED: at least one island per replicate") }
        var base = self
        base.independenceMoves = true
        let one = try await base.lowerStageOne(stops: stops, raise: raiseStageOne, checkpoints: checkpoints, threads: threads, progress: progress)
        let mixed = one.decorrelation
        let later = model.stageUnits.count - 1
        func result(terms: [[LogEstimate]], replicates: [[[Double]]], noise: [[Double]], inner: [[Int]], sized: [[Double]],
                    capped: [[Int]]) -> TemperedLower {
            TemperedLower(first: one.first, firstReplicates: one.replicates, terms: terms, replicates: replicates, islandNoise: noise,
                          islandInner: inner, islandNoiseSized: sized, islandCapped: capped, firstDecorrelation: mixed,
                          firstSweeps: one.sweeps, firstIndependenceMoves: one.independenceMoves)
        }
        guard later >= 1 else {
            let none = stops.map { _ in [Int]() }
            return result(terms: stops.map { _ in [] }, replicates: stops.map { _ in [] }, noise: stops.map { _ in [] }, inner: none,
                          sized: stops.map { _ in [] }, capped: none)
        }
        let me = base
        let settings = try (1...later).map { try me.islandSettings(block: $0) }
        // Where stage 1 did not decorrelate, the interval is the bracket whatever the islands' noise: no sizing.
        let sized = sizeIslands && (mixed ?? 1) >= ReportedInterval.minimumDecorrelation
        let prefixes = try (1...later).map { m in
            try JointSMC(model: StagePrefix(model: model, count: m), box: box, seed: seed, particles: particles,
                         replicates: replicates, sweeps: sweeps)
        }
        // One task per (stage, replicate): its prefix run, then its islands at every stop, J doubled while their
        // mean noise exceeds the target (`sizeIslands`); per stop its islands' mean log, mean noise variance and J.
        let target = Self.temperedLowerSizingTarget
        let reporter = StepReporter(say: progress), top = StepReporter.scale(stops[stops.count - 1])
        let perTask: [[StopIslands]] = try await sharing.map(later * replicates, threads: threads) { i in
            let m = i / replicates + 1, r = i % replicates
            var rng = Xoshiro256(seed: me.seed, stream: [Self.temperedLowerStream, UInt64(m), UInt64(r)])
            let settle = (settleFactor ?? Self.temperedLowerSettleFactor) * prefixes[m - 1].sweeps
            let cap = settings[m - 1].particles * (maximumInnerFactor ?? Self.temperedLowerMaximumInnerFactor)
            let inner = innerFactor ?? Self.temperedLowerInnerFactor
            // The task's checkpoint: where it stands, continued from where a rerun finds one.
            let name = LowerTask<Model>.name(stage: m, replicate: r)
            let mark = me.fingerprint(LowerTask<Model>.magic, stops: stops,
                                       [m, r, particles, replicates, prefixes[m - 1].sweeps, settle, islands, inner, cap, sized ? 1 : 0])
            func save(_ phase: LowerTask<Model>.Phase, final: Bool) throws {
                try checkpoints?.save(name, final: final) { LowerTask(phase).encoded(fingerprint: mark, prefix: prefixes[m - 1]) }
            }
            var done: [StopIslands] = [], forward: JointSMC<StagePrefix<Model>>.ForwardProgress?, kept: [JointSMC<StagePrefix<Model>>.Draws]?
            if let data = try checkpoints?.load(name) {
                switch try LowerTask<Model>(decoding: data, name: name, fingerprint: mark, prefix: prefixes[m - 1], stops: stops.count).phase {
                case .done(let islands):
                    progress("lower 2sED: stage \(m + 1), replicate \(r + 1) finished earlier (\(name))")
                    return islands
                case .forward(let p):
                    forward = p
                    progress("lower 2sED: stage \(m + 1), replicate \(r + 1) continues from \(name) (prefix forward pass, scale \(p.joint.cursor?.weights.scale ?? 0))")
                case .islands(let d, let islands, let g):
                    (kept, done, rng) = (d, islands, g)
                    progress("lower 2sED: stage \(m + 1), replicate \(r + 1) continues from \(name) (islands, \(islands.count) of \(stops.count) scales done)")
                }
            }
            let draws = try kept ?? prefixes[m - 1].forwardDraws(stops: stops, settleSweeps: settle, rng: &rng, from: forward,
                                                                 saved: checkpoints == nil ? nil : { try save(.forward($0), final: $1) }) { scale, steps in
                reporter.report("lower 2sED: stage \(m + 1), replicate \(r + 1): prefix forward pass at scale \(StepReporter.scale(scale)) of \(top), "
                                + "\(steps) tempering steps")
            }
            for t in done.count..<stops.count {
                let idx = Tempering.systematic(draws[t].weights, u: rng.uniform(), count: islands)
                // The islands `idx[..<count]` at settings s; the pilot's on streams of its own.
                func islandsAt(_ s: SMCSettings, count: Int, pilot: Bool) throws -> [Island] {
                    try idx.prefix(count).enumerated().map { k, j in
                        try me.island(draws[t].states[j], stage: m, scale: stops[t], settings: s,
                                      stream: [Self.temperedLowerStream, UInt64(m), UInt64(r), UInt64(t), UInt64(k)] + (pilot ? [1] : []),
                                      drawStream: [], bound: false, draws: false)
                    }
                }
                var s = settings[m - 1]
                s.particles *= inner
                let count = Swift.min(islands, Self.temperedLowerPilotIslands)
                let startNoise = Self.meanNoise(try islandsAt(s, count: count, pilot: true))
                var noise = startNoise
                while sized, noise > target, s.particles * 2 <= cap {
                    s.particles *= 2
                    noise = Self.meanNoise(try islandsAt(s, count: count, pilot: true))
                }
                let run = try islandsAt(s, count: islands, pilot: false)
                // The gate's σ̄²: the chosen J's where the pilot reached the target, else the starting J's; sized islands
                // that stopped at the cap above the target are counted, and the gate reads them as unvalidated.
                done.append(StopIslands(log: run.reduce(0) { $0 + $1.lower } / Double(run.count), noise: noise <= target ? noise : startNoise,
                                        sized: noise, inner: s.particles * s.replicates, capped: sized && noise > target))
                try save(done.count == stops.count ? .done(done) : .islands(draws: draws, done: done, rng: rng), final: true)
                reporter.report("lower 2sED: stage \(m + 1), replicate \(r + 1): islands done at \(done.count) of \(stops.count) scales, J = \(s.particles * s.replicates)")
            }
            return done
        }
        let inflation = StudentT.varianceInflation(replicates: replicates)
        func perStage<T>(_ t: Int, _ value: (StopIslands) -> T) -> [[T]] {
            (1...later).map { m in (0..<replicates).map { r in value(perTask[(m - 1) * replicates + r][t]) } }
        }
        let reps = stops.indices.map { perStage($0, \.log) }
        func meanOverReplicates(_ value: KeyPath<StopIslands, Double>) -> [[Double]] {
            stops.indices.map { perStage($0, { $0[keyPath: value] }).map { $0.reduce(0, +) / Double(replicates) } }
        }
        let noise = meanOverReplicates(\.noise), sizedNoise = meanOverReplicates(\.sized)
        let inner = stops.indices.map { perStage($0, \.inner).map { $0.max() ?? 0 } }
        let capped = stops.indices.map { perStage($0, \.capped).map { $0.filter { $0 }.count } }
        let terms = reps.map { byStage in
            byStage.map { l -> LogEstimate in
                var e = LogEstimate.mean(l)
                e.variance *= inflation
                return e
            }
        }
        return result(terms: terms, replicates: reps, noise: noise, inner: inner, sized: sizedNoise, capped: capped)
    }

    /// The largest stage-1 sweeps `decorrelatedStageOne` reaches, as a multiple of this run's.
    public static var temperedLowerStageOneFactor: Int { 8 }

    /// Stage 1's term at each stop as `temperedLower` reads it (`decorrelatedStageOne`), from `checkpoints` where a
    /// run saved it (`lower-stage1`), else run and then saved there.
    func lowerStageOne(stops: [Double], raise: Bool, checkpoints: (any SamplerCheckpoints)?, threads: Int,
                       progress: @escaping @Sendable (String) -> Void) async throws -> LowerStageOne {
        let mark = fingerprint(LowerStageOne.magic, stops: stops, [raise ? 1 : 0, Self.temperedLowerStageOneParticleFactor])
        if let data = try checkpoints?.load(LowerStageOne.name) {
            progress("lower 2sED: stage 1 finished earlier (\(LowerStageOne.name))")
            return try LowerStageOne(decoding: data, fingerprint: mark, stops: stops.count)
        }
        let (stage, one) = try await decorrelatedStageOne(stops: stops, raise: raise, threads: threads, progress: progress)
        let n1 = model.stageUnits[0].count
        let term = LowerStageOne(first: stops.indices.map { Self.block(stage.estimate, units: n1, stop: $0).corrected },
                                 replicates: stage.estimate.logZ.first?.count ?? 0, decorrelation: stage.estimate.diagnostics.minDecorrelation,
                                 sweeps: one.stageOneSweeps, independenceMoves: one.independenceMoves)
        try checkpoints?.save(LowerStageOne.name, final: true) { term.encoded(fingerprint: mark) }
        return term
    }

    /// Stage 1's pooled sampler (`stageOne`) at `temperedLowerStageOneParticleFactor` times the particles, and the
    /// run it came from. With `raise`, while its smallest decorrelation
    /// is below `ReportedInterval.minimumDecorrelation` it is run again with more: twice the sweeps, then, where one
    /// doubling did not do it, independence sweeps as well, then doublings, up to `temperedLowerStageOneFactor`
    /// times this run's sweeps (at most `maximumStageOneSweeps`): smc's precision target's steps
    /// (`PrecisionTarget.raisedStageOne`). The islands keep this run's settings.
    func decorrelatedStageOne(stops: [Double], raise: Bool, threads: Int, progress: @escaping @Sendable (String) -> Void) async throws
        -> (stage: (estimate: SMCUnitEstimate, stage: StageUnit, settings: SMCSettings), run: Self) {
        var one = self
        one.paths *= Self.temperedLowerStageOneParticleFactor
        var stage = try await one.stageOne(stops: stops, threads: threads, progress: { _ in })
        let cap = Swift.min(Self.maximumStageOneSweeps, Self.temperedLowerStageOneFactor * stageOneSweeps)
        while raise, let d = stage.estimate.diagnostics.minDecorrelation, d < ReportedInterval.minimumDecorrelation,
              let next = PrecisionTarget.raisedStageOne(sweeps: one.stageOneSweeps, independence: one.independenceMoves,
                                                        start: stageOneSweeps, cap: cap) {
            (one.stageOneSweeps, one.independenceMoves) = next
            progress("lower 2sED: stage 1 decorrelated to \(String(format: "%.2f", d)); again at \(one.stageOneSweeps) sweeps\(one.independenceMoves ? " with independence sweeps" : "")")
            stage = try await one.stageOne(stops: stops, threads: threads, progress: { _ in })
        }
        return (stage, one)
    }
}
