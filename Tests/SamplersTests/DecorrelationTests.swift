import Foundation
import RandomStreams
@testable import Samplers
import Testing
import TwoScaleCore

/// The moves' decorrelation (`RandomWalk.decorrelation`, reported as `min_decorrelation`): exact on a hand
/// case, about 1 for independent redraws, and on a product unit small after a few sweeps and near 1 after
/// many, where the sampler's shortfall is gone (`WideUnitShortfallTests`: −0.12 nats at decorrelation ≈ 0.57).
@Suite struct DecorrelationTests {
    func decorrelation(_ start: [Double], _ end: [Double], particles n: Int, dimension p: Int) -> Double? {
        RandomWalk.decorrelation(from: start, to: end, variances: RandomWalk.variances(start, particles: n, dimension: p), particles: n, dimension: p)
    }

    @Test func handCase() throws {
        // Start 0 and 1 (variance sum 0.5), end swapped: moved 2, so 2 / (2 · 0.5) = 2.
        #expect(decorrelation([0, 1], [1, 0], particles: 2, dimension: 1) == 2)
        #expect(decorrelation([0, 1], [0, 1], particles: 2, dimension: 1) == 0)
        #expect(decorrelation([0.3, 0.3], [1, 0], particles: 2, dimension: 1) == nil)
        // Two coordinates, particles in rows: (0, 0), (2, 4) → spread 2 + 8 = 10; moved 1 + 1 = 2 → 0.1.
        let d = try #require(decorrelation([0, 0, 2, 4], [1, 0, 2, 3], particles: 2, dimension: 2))
        #expect(Swift.abs(d - 0.1) < 1e-15)
    }

    @Test func independentRedrawsAreDecorrelated() throws {
        var rng = Xoshiro256(seed: 3, stream: [1])
        let n = 20_000, p = 5
        let a = (0..<(n * p)).map { _ in rng.uniform(0, 1) }, b = (0..<(n * p)).map { _ in rng.uniform(0, 1) }
        let d = try #require(decorrelation(a, b, particles: n, dimension: p))
        #expect(Swift.abs(d - 1) < 0.03, "\(d)")
    }

    @Test func fewSweepsOnAProductUnitLeaveTheParticlesNearTheirStarts() throws {
        let unit = SMCUnit(dimension: 20, box: 0...1, roots: { $0 })
        func smallest(sweeps: Int) throws -> Double {
            let settings = try SMCSettings(particles: 160, replicates: 2, essFraction: 0.8, moves: sweeps)
            return try #require(try AnnealedSMC.run(unit, stops: [17], settings: settings, seed: 1, stream: [7]).diagnostics.minDecorrelation)
        }
        let few = try smallest(sweeps: 8), many = try smallest(sweeps: 60)
        #expect(few < 0.7, "8 sweeps: \(few)")
        #expect(many > 0.9, "60 sweeps: \(many)")
    }
}
