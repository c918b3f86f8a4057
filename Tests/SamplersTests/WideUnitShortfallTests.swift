import Foundation
import RandomStreams
@testable import Samplers
import Testing
import TwoScaleCore

/// A known defect, pinned on an exact case (the precision issue's item 3): on a unit of 50 coordinates whose
/// `Z(s) = (1 + s/2)^50` is exact (roots `x` on [0, 1]), the annealed sampler at stage 1's settings (160
/// particles per replicate, 8 replicates, ESS fraction 0.8, 20 sweeps) returns a bias-corrected `log Ẑ`
/// that is low by about 0.12 nats, three standard errors over 10 seeds; raised to the n₁ units of a first
/// layer it makes a network's 2sED low by more than its sampled interval (lab/ESTIMATORS-LOG.md,
/// 27 Nov 2026). The expectation inside is what a sound sampler meets; while the defect stands it is a
/// known issue, and the test fails once the sampler is fixed, so the fix removes `withKnownIssue`.
@Suite struct WideUnitShortfallTests {
    /// The annealed sampler on the 50-coordinate unit at s = 17 (160 particles per replicate, ESS fraction
    /// 0.8, stage 1's settings but for the replicates and sweeps), one run per seed: each run's bias-corrected
    /// `log Ẑ − log Z` and smallest decorrelation, with the errors' mean and standard deviation.
    static func runs(replicates: Int, sweeps: Int, seeds: Int) throws
        -> (errors: [Double], decorrelations: [Double], mean: Double, sd: Double) {
        let p = 50, s = 17.0
        let unit = SMCUnit(dimension: p, box: 0...1, roots: { $0 })
        let exact = Double(p) * Foundation.log1p(s / 2)
        let settings = try SMCSettings(particles: 160, replicates: replicates, essFraction: 0.8, moves: sweeps)
        var errors: [Double] = [], decorrelations: [Double] = []
        for seed in 1...seeds {
            let est = try AnnealedSMC.run(unit, stops: [s], settings: settings, seed: UInt64(seed), stream: [7])
            decorrelations.append(try #require(est.diagnostics.minDecorrelation))
            let c = est.combined(0)
            errors.append(LogEstimate.corrected(logZ: c.logZ, relVar: c.relVar).value - exact)
        }
        let mean = errors.reduce(0, +) / Double(seeds)
        let sd = (errors.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(seeds - 1)).squareRoot()
        return (errors, decorrelations, mean, sd)
    }

    @Test func stageOneSamplerOnAWideProductUnit() throws {
        let r = try Self.runs(replicates: 8, sweeps: 20, seeds: 10)  // 20: StagedSMC.defaultStageOneSweeps
        // The check that sends such a run's interval to the bracket sees it in every seed.
        #expect(r.decorrelations.allSatisfy { $0 < ReportedInterval.minimumDecorrelation }, "\(r.decorrelations)")
        let se = r.sd / Double(r.errors.count).squareRoot()
        withKnownIssue("stage 1's sampler is low by about 0.12 nats on a 50-coordinate unit") {
            #expect(Swift.abs(r.mean) < 2 * se, "bias-corrected log Ẑ − log Z: mean \(r.mean), standard error \(se)")
        }
    }

    /// The other side of the check: with enough sweeps the same unit's moves decorrelate past the threshold in
    /// every seed, and there the estimate has no shortfall that its seeds can see.
    @Test func enoughSweepsPassTheCheckAndRemoveTheShortfall() throws {
        let r = try Self.runs(replicates: 4, sweeps: 60, seeds: 4)
        #expect(r.decorrelations.allSatisfy { $0 >= ReportedInterval.minimumDecorrelation }, "\(r.decorrelations)")
        #expect(Swift.abs(r.mean) < 3 * r.sd / Double(r.errors.count).squareRoot() + 0.01, "mean \(r.mean), sd \(r.sd)")
    }
}
