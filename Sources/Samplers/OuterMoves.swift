import Foundation
import RandomStreams
import TwoScaleCore

/// Moving the earlier stage under a later stage's weights (docs/METHOD.md §22).
///
/// Stage m's outer particles θ_{<m} come from π̂_{m−1}, the populations the earlier samplers left (stage
/// 1's pooled sampler, then each particle's island); the plain term `log E_{π̂_{m−1}} Z_m` is the log-mean
/// of their islands' `Ẑ_m`. Where those weights degenerate, `moveEarlier` tempers them in instead, as a
/// density-tempered SMC² (Chopin, Jacob & Papaspiliopoulos 2013; Duan & Fulop 2015): targets
/// `γ_λ(θ_{<m}, u) ∝ π̂_{m−1}(θ_{<m}) ψ(u) Ẑ_m(θ_{<m}, u)^λ` from λ = 0 to 1 (u the island's random
/// numbers), each step's λ chosen so the weights keep an ESS of `moveESSFraction`·K, then systematic
/// resampling and `moveProposals` pseudo-marginal Metropolis–Hastings proposals per particle: one unit of
/// stage m − 1, chosen at random, redrawn from the population it was drawn from (an independence proposal
/// from its own factor of π̂_{m−1}), a fresh island for `Ẑ_m(θ')`, accepted with `(Ẑ_m(θ')/Ẑ_m(θ))^λ`.
/// That leaves γ_λ invariant, so for a fixed schedule of λ the product of the steps' mean incremental
/// weights is unbiased for `E_{π̂_{m−1}} E Ẑ_m` — the quantity the plain weighting estimates — however well
/// the moves mix (the schedule here adapts to the weights, as every sampler's in this module does). The
/// term's variance is the larger of the steps' summed (delta method with the lognormal floor, as for one
/// step) and the genealogy's (`eveVariance`), which sees what resampling correlates between steps.
///
/// Random streams: [SMCN, 8, t, m, step] resampling, [SMCN, 9, t, m, step, k] a particle's proposals,
/// [SMCN, 10 and 11, t, m, step, proposal, k] its islands (distinct from `MarkovSMC`'s [SMCN, 8, k]).
extension StagedSMC {
    /// The ESS fraction below which a stage's weights are tempered in, and that each step keeps.
    public static var moveESSFraction: Double { 0.5 }

    /// The weighted population a particle's units of stage m − 1 were drawn from, at one stop.
    struct UnitSource: Sendable {
        var population: SMCUnitEstimate
        var stop: Int
    }

    struct MovedParticle: Codable, Sendable {
        var units: [Int: [Double]]
        var island: Island
        var proposals: Int
        var accepted: Int
    }

    /// Tempers stage m's outer weights in, moving θ_{m−1} between the steps; returns the stage's term
    /// (value, variance, the lognormal shortfall summed over the steps), the final particles, their
    /// islands and last log-weights, and what the moves did.
    func moveEarlier(_ states: [Model.State], sources: [UnitSource], islands: [Island], stage m: Int, scale s: Double,
                     stop t: Int, settings: SMCSettings, threads: Int, progress: (String) -> Void = { _ in }) async throws
        -> (term: (estimate: LogEstimate, shortfall: Double), logWeights: [Double], states: [Model.State],
            islands: [Island], diagnostics: OuterMoveDiagnostics) {
        let me = self
        let K = states.count
        let units = model.stageUnits[m - 1].count
        var states = states, sources = sources, islands = islands
        var lambda = 0.0
        var lw = [Double](repeating: 0, count: K)
        var value = 0.0, variance = 0.0, shortfall = 0.0
        var diag = OuterMoveDiagnostics()
        // Each particle's ancestor at λ = 0 ("Eve"), for the variance (`eveVariance`).
        var eve = Array(0..<K)
        let threshold = Self.moveESSFraction * Double(K)
        while true {
            let lz = islands.map(\.logZ), base = lw, from = lambda
            let next = diag.steps >= Self.maxMoveSteps ? 1 : Tempering.nextScale(from: lambda, to: 1, threshold: threshold) { l2 in
                LogSpace.effectiveSampleSize(logWeights: (0..<K).map { base[$0] + (l2 - from) * lz[$0] })
            }
            for k in 0..<K { lw[k] += (next - lambda) * lz[k] }
            lambda = next
            let step = LogEstimate.logMeanAndShortfall(lw)
            value += step.estimate.value
            variance += step.estimate.variance
            shortfall += step.shortfall
            if lambda >= 1 { break }
            progress("tempering step \(diag.steps + 1) at λ = \(String(format: "%.3g", lambda)), \(K)×\(moveProposals) islands")
            var rng = Xoshiro256(seed: seed, stream: [Self.stream, 8, UInt64(t), UInt64(m), UInt64(diag.steps)])
            let idx = Tempering.systematic(LogSpace.normalizedWeights(logWeights: lw), u: rng.uniform())
            eve = idx.map { eve[$0] }
            states = idx.map { states[$0] }
            sources = idx.map { sources[$0] }
            islands = idx.map { islands[$0] }
            lw = [Double](repeating: 0, count: K)
            let (cur, src, isl, lam, step0) = (states, sources, islands, lambda, diag.steps)
            let moved: [MovedParticle] = try await sharing.map(K, threads: threads) { k in
                var rng = Xoshiro256(seed: me.seed, stream: [Self.stream, 9, UInt64(t), UInt64(m), UInt64(step0), UInt64(k)])
                var out = MovedParticle(units: [:], island: isl[k], proposals: 0, accepted: 0)
                var state = cur[k]
                for proposal in 0..<me.moveProposals {
                    // One unit of stage m − 1, chosen at random, redrawn from the population it came from.
                    let u = Swift.min(units - 1, Int(rng.uniform() * Double(units)))
                    let y = src[k].population.draw(stop: src[k].stop, rng: &rng)
                    var q = state
                    me.model.setUnit(&q, stage: m - 1, unit: u, parameters: y)
                    let tail: [UInt64] = [UInt64(t), UInt64(m), UInt64(step0), UInt64(proposal), UInt64(k)]
                    let iy = try me.island(q, stage: m, scale: s, settings: settings, stream: [Self.stream, 10] + tail,
                                           drawStream: [Self.stream, 11] + tail, bound: false)
                    let logA = lam * (iy.logZ - out.island.logZ)
                    out.proposals += 1
                    if rng.metropolisAccepts(logRatio: logA) {
                        state = q
                        out.units[u] = y
                        out.island = iy
                        out.accepted += 1
                    }
                }
                return out
            }
            var acc = 0, props = 0
            for k in 0..<K {
                for (u, x) in moved[k].units { model.setUnit(&states[k], stage: m - 1, unit: u, parameters: x) }
                islands[k] = moved[k].island
                acc += moved[k].accepted
                props += moved[k].proposals
            }
            diag.steps += 1
            diag.proposals += props
            diag.accepted += acc
        }
        diag.distinct = Double(Set(islands.map { $0.logZ.bitPattern }).count) / Double(K)
        diag.ancestors = Double(Set(eve).count) / Double(K)
        variance = Swift.max(variance, Self.eveVariance(logWeights: lw, eve: eve, resamplings: diag.steps))
        return ((LogEstimate(value: value, variance: variance), shortfall), lw, states, islands, diag)
    }

    /// The variance of `log Ẑ` from one run's genealogy (Chan & Lai 2013; Lee & Whiteley 2018): with W the
    /// final normalised weights, S_e the weight of the particles descended from initial particle e and n
    /// resamplings, the relative variance of Ẑ is estimated by `1 − (K/(K−1))^{n+1} (1 − Σ_e S_e²)`,
    /// which sees the correlation that resampling leaves and the per-step sum does not; returned as
    /// `log(1 + V)`. With no resampling it is the delta method's `(K Σ W² − 1)/(K − 1)`. Its theory assumes
    /// multinomial resampling of independent initial particles (here: systematic, and the initial
    /// particles of a stage ≥ 3 hold duplicates); where all particles descend from one ancestor it is
    /// log 2 whatever the error (`OuterMoveDiagnostics.ancestors` says how far it has collapsed).
    public static func eveVariance(logWeights lw: [Double], eve: [Int], resamplings n: Int) -> Double {
        let k = Double(lw.count)
        guard lw.count >= 2 else { return 0 }
        let w = LogSpace.normalizedWeights(logWeights: lw)
        // Summed in ancestor order (a dictionary's order, and so the last bits, would change from run to run).
        var mass = [Double](repeating: 0, count: (eve.max() ?? -1) + 1)
        for (i, e) in eve.enumerated() { mass[e] += w[i] }
        let concentration = mass.reduce(0) { $0 + $1 * $1 }
        let v = 1 - Foundation.pow(k / (k - 1), Double(n + 1)) * (1 - concentration)
        return Foundation.log1p(Swift.max(0, v))
    }

    /// At most this many tempering steps per stage (each costs K·`moveProposals` islands); a stage that
    /// needs more ends its last step at λ = 1 with whatever ESS that leaves.
    static var maxMoveSteps: Int { 200 }
}
