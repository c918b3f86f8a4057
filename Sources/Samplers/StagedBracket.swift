import Foundation
import RandomStreams
import TwoScaleCore

/// A `StagedModel` that can be bracketed (docs/METHOD.md §19): it draws θ uniformly, and knows deterministic
/// ceilings of its stages.
public protocol UniformStagedModel: StagedModel {
    /// θ uniform on the box, drawn from `rng`.
    func uniformState(box: ClosedRange<Double>, rng: inout Xoshiro256) -> State
}

public protocol CertifiedStagedModel: UniformStagedModel {
    /// Deterministic ceilings at scale s (`StageCeilings`).
    func ceilings(box: ClosedRange<Double>, scale s: Double) throws -> StageCeilings
    /// A bound on `Tr F(θ)` at every θ in the box (the range of the trace draws behind c's interval).
    func traceCeiling(box: ClosedRange<Double>) -> Double
    /// Whether, on the box and at every scale, each stage's `G_m` and each later stage's `E_{θ_m} log G_m` are
    /// nondecreasing in every coordinate of the stages before it, so that the tilted laws `π_{<m} ∝ Π_{j<m} G_j`
    /// give the latter a mean at least its uniform one (Harris's inequality; docs/METHOD.md §19). False unless
    /// the model proves it.
    func laterStagesAssociated(box: ClosedRange<Double>) -> Bool
}

extension CertifiedStagedModel {
    public func laterStagesAssociated(box: ClosedRange<Double>) -> Bool { false }
}

/// What a bracket's upper end and its Jensen samples' ranges rest on, at one scale: `stage[m]` with
/// `log Z ≤ Σ_m stage[m]` (each at least the largest `log Z_m(θ_{<m})`, or the largest `log G_m`);
/// `unitRange` ≥ `log g_u` of a first-stage unit at every x in the box; `stageRange[m]` ≥ `log G_m` at every
/// θ (m ≥ 1; entry 0 unused); `floor[m]` ≤ the smallest `log Z_m(θ_{<m}) = log E_{θ_m} G_m` over the earlier
/// stages (m ≥ 1; entry 0 unused: stage 1 is bounded from draws, as a network's), zeros where nothing is proved
/// beyond `G_m ≥ 1`.
public struct StageCeilings: Sendable, Equatable {
    public var stage: [Double]
    public var unitRange: Double
    public var stageRange: [Double]
    public var floor: [Double]
    public init(stage: [Double], unitRange: Double, stageRange: [Double], floor: [Double]? = nil) {
        self.stage = stage
        self.unitRange = unitRange
        self.stageRange = stageRange
        self.floor = floor ?? stage.map { _ in 0 }
    }
}

extension StagedSMC {
    static var bracketStream: UInt64 { 0x4252_4B54 }  // "BRKT"

    /// An unbiased estimate `Ẑ(s)` of `Z(s) = E_θ Π_m G_m` at every scale, returned as its logarithm, and of
    /// stage 1's `Z_1` (the Markov lower end, docs/METHOD.md §19). Every sampler replays a fixed schedule
    /// (`FrozenSchedule`):
    ///
    /// * stage 1: one adaptive pilot of the first-stage unit, then one replay per unit on its own stream;
    ///   the product of their `Ẑ_u` is unbiased for `Z_1`, and their weighted populations for the
    ///   unnormalised law of θ_1;
    /// * later stages, per scale: `outerParticles` outer particles drawn from those populations (a unit's
    ///   weights picked independently per unit), an island per outer particle that replays, for each of the
    ///   stage's units, one schedule piloted on the first outer particle's stage (fixed with respect to
    ///   every island's own draws), the stage's factor `mean_k Ẑ_m^k`, and multinomial resampling in
    ///   proportion to `Ẑ_m^k` before the next stage, whose θ_m come from the islands' populations.
    ///
    /// This is a particle filter with unbiased weights (random-weight resampling, Fearnhead et al. 2008),
    /// so `Ẑ = Ẑ_1 Π_{m≥2} mean_k Ẑ_m^k` is unbiased for Z. Without `laterStages` only stage 1 runs.
    public static func unbiasedLogZ(model: Model, box: ClosedRange<Double>, seed: UInt64, scales: [Double], laterStages: Bool = true,
                                    sharing: any WorkSharing = LocalSharing(), threads: Int) async throws
        -> (logZ: [Double: Double], logZ1: [Double: Double]) {
        let stops = Array(Set(scales)).sorted()
        let units = model.stageUnits
        let L = units.count
        let B = CertifiedBracket.self
        let stream = Self.bracketStream
        let first = try model.stage(model.emptyState(), 0, box: box).unit
        let stageOne = try SMCSettings(particles: B.unitParticles, replicates: 2, essFraction: 0.8, moves: B.unitSweeps)
        let schedule1 = try FrozenSchedule.pilot(first, stops: stops, settings: stageOne, seed: seed, stream: [stream, 1])
        let n1 = units[0].count
        let stage1: [Replay] = try await sharing.map(n1, threads: threads) { u in
            let r = try schedule1.replayKeeping(first, stops: stops, particles: B.unitParticles, seed: seed, stream: [stream, 2, UInt64(u)])
            return Replay(logZ: r.logZ, populations: r.populations)
        }
        var out: [Double: Double] = [:], outStage1: [Double: Double] = [:]
        for (t, s) in stops.enumerated() {
            var logZ = stage1.reduce(0) { $0 + $1.logZ[t] }
            outStage1[s] = logZ
            guard laterStages else { continue }
            if L > 1 {
                var states: [Model.State] = (0..<B.outerParticles).map { k in
                    var rng = Xoshiro256(seed: seed, stream: [stream, 3, UInt64(t), UInt64(k)])
                    var state = model.emptyState()
                    for u in 0..<n1 { model.setUnit(&state, stage: 0, unit: u, parameters: Self.pick(stage1[u].populations[t], rng: &rng)) }
                    return state
                }
                for m in 1..<L {
                    let last = m == L - 1
                    let n = units[m].count
                    let pilotUnit = try model.stage(states[0], m, box: box).unit
                    let islandSettings = try SMCSettings(particles: B.islandParticles, replicates: 2, essFraction: Self.islandESSFraction,
                                                         moves: Self.defaultIslandSweeps)
                    let schedule = try FrozenSchedule.pilot(pilotUnit, stops: [s], settings: islandSettings, seed: seed,
                                                            stream: [stream, 4, UInt64(t), UInt64(m)])
                    let current = states
                    let islands: [FrozenIsland] = try await sharing.map(current.count, threads: threads) { k in
                        let unit = try model.stage(current[k], m, box: box).unit
                        var rng = Xoshiro256(seed: seed, stream: [stream, 6, UInt64(t), UInt64(m), UInt64(k)])
                        var lz = 0.0
                        var drawn: [[Double]] = []
                        for u in 0..<n {
                            let r = try schedule.replayKeeping(unit, stops: [s], particles: B.islandParticles, seed: seed,
                                                               stream: [stream, 5, UInt64(t), UInt64(m), UInt64(k), UInt64(u)])
                            lz += r.logZ[0]
                            if !last { drawn.append(Self.pick(r.populations[0], rng: &rng)) }
                        }
                        return FrozenIsland(logZ: lz, units: drawn)
                    }
                    let lz = islands.map(\.logZ)
                    logZ += LogSpace.logMeanExp(lz)
                    if !last {
                        var rng = Xoshiro256(seed: seed, stream: [stream, 7, UInt64(t), UInt64(m)])
                        let w = LogSpace.normalizedWeights(logWeights: lz)
                        states = (0..<islands.count).map { _ in
                            let k = Tempering.pick(w, u: rng.uniform())
                            var state = current[k]
                            for (u, x) in islands[k].units.enumerated() { model.setUnit(&state, stage: m, unit: u, parameters: x) }
                            return state
                        }
                    }
                }
            }
            out[s] = logZ
        }
        return (out, outStage1)
    }

    /// `draws` uniform draws of `Tr F(θ)` on the bracket's streams ("BRKT", 8, k), for c's interval.
    public static func bracketTraces(model: Model, box: ClosedRange<Double>, seed: UInt64, draws: Int,
                                     sharing: any WorkSharing = LocalSharing(), threads: Int) async throws -> [Double] {
        guard draws >= 2 else {
            throw TwoScaleError.failure("internal error: c's interval needs ≥ 2 trace draws (\(draws))")
        }
        return try await sharing.map(draws, threads: threads) { k in
            var rng = Xoshiro256(seed: seed, stream: [bracketStream, 8, UInt64(k)])
            let t = try model.uniformTrace(box: box, rng: &rng)
            guard t.isFinite else { throw TwoScaleError.failure("Tr F(θ) is not finite at the bracket's trace draw \(k); use a smaller \(Setting.box)") }
            return t
        }
    }

    /// c's interval for a certified bracket of `model` (`ScaleRange`; `none`: c = 1 exactly, no draws): from
    /// `draws` uniform draws of Tr F (`bracketTraces`), each in `[0, ceiling]`, with the deterministic bound
    /// `meanBound` on their mean where the model has one, at δ_c = `delta`.
    public static func bracketScale(model: Model, normalization: Normalization, box: ClosedRange<Double>, seed: UInt64, draws: Int,
                                    ceiling: Double, meanBound: Double?, delta: Double, sharing: any WorkSharing = LocalSharing(),
                                    threads: Int) async throws -> ScaleRange {
        guard normalization == .trace else { return .exact(1) }
        let traces = try await bracketTraces(model: model, box: box, seed: seed, draws: draws, sharing: sharing, threads: threads)
        return try CertifiedBracket.scaleRange(normalization, traces: traces, dimension: model.parameterCount, ceiling: ceiling,
                                               meanBound: meanBound, delta: delta)
    }

    /// A frozen-schedule replay of a first-stage unit: log Ẑ per stop and the weighted populations.
    struct Replay: Codable, Sendable {
        var logZ: [Double]
        var populations: [SMCPopulation]
    }

    /// A frozen-schedule island: its stage factor and the draws of the stage's units it passes on.
    struct FrozenIsland: Codable, Sendable {
        var logZ: Double
        var units: [[Double]]
    }

    /// One particle of a weighted population, drawn in proportion to its weight.
    public static func pick(_ pop: SMCPopulation, rng: inout Xoshiro256) -> [Double] {
        let i = Tempering.pick(pop.weights, u: rng.uniform())
        let p = pop.x.count / pop.weights.count
        return Array(pop.x[(i * p)..<((i + 1) * p)])
    }
}

extension StagedSMC where Model: CertifiedStagedModel {
    /// The certified bracket of the 2sED and the lower 2sED at every ε (`CertifiedBracket`, docs/METHOD.md
    /// §19) with the normalisation c inside (for `trace`, its interval from `traceDraws` uniform draws of
    /// Tr F, `bracketScale`, with the model's `traceCeiling` as range): the upper ends from the model's
    /// `ceilings` at c's upper end; the lower ends, at c's lower end, from `draws` uniform draws of θ
    /// (streams "BRKT", 0, k: per draw every first-stage unit's `log g_u` and each later stage's `log G_m`,
    /// each mean bounded below by the empirical Bernstein inequality) and from Markov's inequality on
    /// `unbiasedLogZ`, at their shares of δ (`CertifiedBracket.shares`).
    public func certifiedBracket(eps: [Double], zeta: Double, normalization: Normalization, draws: Int = CertifiedBracket.defaultDraws,
                                 traceDraws: Int = CertifiedBracket.traceDraws, delta: Double = CertifiedBracket.defaultDelta,
                                 threads: Int) async throws -> CertifiedBracket {
        try ScaleParameters.checkZeta(zeta)
        for e in eps { try ScaleParameters.checkEpsilon(e) }
        let units = model.stageUnits
        let L = units.count, n1 = units[0].count
        let share = CertifiedBracket.shares(delta: delta, estimatedScale: normalization == .trace, stages: L, points: eps.count)
        let c = try await Self.bracketScale(model: model, normalization: normalization, box: box, seed: seed, draws: traceDraws,
                                            ceiling: model.traceCeiling(box: box), meanBound: nil, delta: share.scale, sharing: sharing,
                                            threads: threads)
        let me = self
        let scales = eps.map { ScaleParameters.t(eps: $0, zeta: zeta) * c.range.lowerBound.squareRoot() }
        let upperScales = eps.map { ScaleParameters.t(eps: $0, zeta: zeta) * c.range.upperBound.squareRoot() }
        // Per draw and scale: every first-stage unit's log g_u, then each later stage's log G_m.
        let samples: [[[Double]]] = try await sharing.map(draws, threads: threads) { k in
            var rng = Xoshiro256(seed: me.seed, stream: [Self.bracketStream, 0, UInt64(k)])
            let state = me.model.uniformState(box: me.box, rng: &rng)
            var roots: [[Double]] = []
            let first = try me.model.stage(state, 0, box: me.box).unit
            for u in 0..<n1 { roots.append(try first.roots(me.model.unitParameters(state, stage: 0, unit: u))) }
            var later: [[[Double]]] = []
            for m in 1..<Swift.max(1, L) {
                let unit = try me.model.stage(state, m, box: me.box).unit
                later.append(try (0..<units[m].count).map { u in try unit.roots(me.model.unitParameters(state, stage: m, unit: u)) })
            }
            return scales.map { s in
                roots.map { LogSpace.logDetSqrt(roots: $0, scale: s) }
                    + later.map { stage in stage.reduce(0) { $0 + LogSpace.logDetSqrt(roots: $1, scale: s) } }
            }
        }
        let level = share.jensen
        let markovLevel = Foundation.log(share.markov)
        let markov = try await Self.unbiasedLogZ(model: model, box: box, seed: seed, scales: scales, sharing: sharing, threads: threads)
        let d = model.parameterCount
        let points = try eps.indices.map { ei -> CertifiedBracket.Point in
            let s = scales[ei]
            let ceil = try model.ceilings(box: box, scale: s)
            let upper = try model.ceilings(box: box, scale: upperScales[ei]).stage
            let unitSamples = samples.flatMap { $0[ei][0..<n1] }
            var lower = [Double(n1) * Swift.max(0, try EmpiricalBernstein.lowerMean(unitSamples, range: ceil.unitRange, delta: level))]
            for m in 1..<Swift.max(1, L) {
                let xs = samples.map { $0[ei][n1 + m - 1] }
                lower.append(Swift.max(0, try EmpiricalBernstein.lowerMean(xs, range: ceil.stageRange[m], delta: level)))
            }
            return CertifiedBracket.Point(eps: eps[ei], zeta: zeta, dimension: d, stageUpper: upper, stageLower: lower,
                                          markov: markov.logZ[s].map { Swift.max(0, $0 + markovLevel) },
                                          stageOneMarkov: Swift.max(0, markov.logZ1[s]! + markovLevel),
                                          stageFloor: ceil.floor, associated: model.laterStagesAssociated(box: box))
        }
        return CertifiedBracket(delta: delta, draws: draws, points: points, scale: c)
    }
}
