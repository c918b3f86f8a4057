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
