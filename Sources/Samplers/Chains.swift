import Foundation
import RandomStreams
import TwoScaleCore

/// Independent chains of the whole run (docs/ESTIMATORS.md §5, "Chains").
///
/// One run's later stages start from K draws of stage 1's population and pass their particles on from stage
/// to stage, so stage m's term is estimated over what stage m − 1's weighted particles make of π_{m−1}. That
/// population's error reaches the later terms through their dependence on the earlier weights, which with two
/// or more later stages and degenerate outer weights only the genealogy records, and there the lineages
/// coalesce to a handful of ancestors. With `chains` = R ≥ 2 the whole run (ĉ, stage 1, the later stages)
/// runs R times, each chain on a seed of its own (chain 0 on the run's), so the chains' estimates of
/// `log E det` are independent. Their mean is the estimate, and its variance their sample variance over R,
/// divided by R and widened to Student's t with R − 1 degrees of freedom; the lower 2sED's likewise.
extension StagedSMC {
    /// The most chains a run may ask for.
    public static var maximumChains: Int { 64 }

    /// Refuses a number of chains out of range.
    public static func checkChains(_ r: Int) throws {
        guard (1...maximumChains).contains(r) else {
            throw TwoScaleError.invalid("\(Setting.chains)", "\(r)", allowed: "give from 1 (one chain) to \(maximumChains) chains")
        }
    }

    /// Chain c's estimator: the run's own for c = 0, else the same settings on a seed drawn from stream
    /// [SMCN, 30, c] of the run's seed.
    func chain(_ c: Int) -> StagedSMC {
        guard c > 0 else { return self }
        var me = self
        var rng = Xoshiro256(seed: seed, stream: [Self.stream, 30, UInt64(c)])
        me.seed = rng.next()
        return me
    }
}

extension StageSum {
    /// R ≥ 2 independent chains' sums at one ε joined: each estimate (2sED and lower 2sED) is the chains' mean,
    /// its variance their sample variance over R, divided by R and widened by `StudentT.varianceInflation`, the
    /// whole variance (`chained`: no stage-1 widening, no correlation bound, no ĉ term is added to it); each
    /// stage's term is the chains' mean with the variance of that mean; the slope and every per-stage diagnostic
    /// the rule reads (outer ESS, log-weight spread, islands' noise, shortfall) the chains' mean; the first
    /// chain's island sizes, moves, tilts and bound.
    init(chains parts: [StageSum]) {
        precondition(parts.count >= 2)
        self = parts[0]
        chained = true
        let r = Double(parts.count), inflation = StudentT.varianceInflation(replicates: parts.count)
        func mean(_ x: [Double]) -> Double { x.reduce(0, +) / r }
        func joined(_ x: [Double]) -> LogEstimate {
            var m = LogEstimate.mean(x)
            m.variance *= inflation
            return m
        }
        joint = joined(parts.map(\.joint.value))
        low = joined(parts.map(\.low.value))
        slope = mean(parts.map(\.slope))
        stageTerms = parts[0].stageTerms.indices.map { m in LogEstimate.mean(parts.map { $0.stageTerms[m].value }) }
        func perStage(_ key: KeyPath<StageSum, [Double]>) -> [Double] {
            (0..<(parts.map { $0[keyPath: key].count }.min() ?? 0)).map { m in mean(parts.map { $0[keyPath: key][m] }) }
        }
        stageESS = perStage(\.stageESS)
        stageNoise = perStage(\.stageNoise)
        stageLogVariance = perStage(\.stageLogVariance)
        stageIslandNoiseVariance = perStage(\.stageIslandNoiseVariance)
        stageShortfall = perStage(\.stageShortfall)
    }
}
