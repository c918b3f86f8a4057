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
    @Test func stageOneSamplerOnAWideProductUnit() throws {
        let p = 50, s = 17.0
        let unit = SMCUnit(dimension: p, box: 0...1, roots: { $0 })
        let exact = Double(p) * Foundation.log1p(s / 2)
        let settings = try SMCSettings(particles: 160, replicates: 8, essFraction: 0.8, moves: 20)  // StagedSMC.stageOneSweeps
        var decorrelations: [Double] = []
        let errors = try (1...10).map { seed -> Double in
            let est = try AnnealedSMC.run(unit, stops: [s], settings: settings, seed: UInt64(seed), stream: [7])
            decorrelations.append(est.diagnostics.minDecorrelation ?? 1)
            let c = est.combined(0)
            return LogEstimate.corrected(logZ: c.logZ, relVar: c.relVar).value - exact
        }
        // The check that sends such a run's interval to the bracket sees it in every seed.
        #expect(decorrelations.allSatisfy { $0 < ReportedInterval.minimumDecorrelation }, "\(decorrelations)")
        let mean = errors.reduce(0, +) / Double(errors.count)
        let sd = (errors.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(errors.count - 1)).squareRoot()
        let se = sd / Double(errors.count).squareRoot()
        withKnownIssue("stage 1's sampler is low by about 0.12 nats on a 50-coordinate unit") {
            #expect(Swift.abs(mean) < 2 * se, "bias-corrected log Ẑ − log Z: mean \(mean), standard error \(se)")
        }
    }

    /// The other side of the check: with enough sweeps the same unit's moves decorrelate past the threshold in
    /// every seed, and there the estimate has no shortfall that its seeds can see.
    @Test func enoughSweepsPassTheCheckAndRemoveTheShortfall() throws {
        let p = 50, s = 17.0
        let unit = SMCUnit(dimension: p, box: 0...1, roots: { $0 })
        let exact = Double(p) * Foundation.log1p(s / 2)
        let settings = try SMCSettings(particles: 160, replicates: 4, essFraction: 0.8, moves: 60)
        var decorrelations: [Double] = []
        let errors = try (1...4).map { seed -> Double in
            let est = try AnnealedSMC.run(unit, stops: [s], settings: settings, seed: UInt64(seed), stream: [7])
            decorrelations.append(est.diagnostics.minDecorrelation ?? 0)
            let c = est.combined(0)
            return LogEstimate.corrected(logZ: c.logZ, relVar: c.relVar).value - exact
        }
        #expect(decorrelations.allSatisfy { $0 >= ReportedInterval.minimumDecorrelation }, "\(decorrelations)")
        let mean = errors.reduce(0, +) / Double(errors.count)
        let sd = (errors.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(errors.count - 1)).squareRoot()
        #expect(Swift.abs(mean) < 3 * sd / Double(errors.count).squareRoot() + 0.01, "mean \(mean), sd \(sd)")
    }
}
