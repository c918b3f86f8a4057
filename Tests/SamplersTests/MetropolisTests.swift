import Foundation
import RandomStreams
@testable import Samplers
import Testing

/// The Metropolis–Hastings test every kernel here shares (`Xoshiro256.metropolisAccepts`): its acceptance
/// probability min(1, e^a), and the uniforms it takes from the stream, on which the samplers' bytes depend.
@Suite struct MetropolisTests {
    /// A sure move (a ≥ 0) is accepted without drawing; a NaN or −∞ ratio is refused.
    @Test func sureMovesDrawNothing() {
        var rng = Xoshiro256(seed: 5)
        for a in [0.0, 1e-300, 3, Double.infinity] {
            var copy = rng
            let accepted = rng.metropolisAccepts(logRatio: a)
            #expect(accepted)
            #expect(rng.next() == copy.next())
        }
        let refusedNaN = rng.metropolisAccepts(logRatio: .nan), refusedInfinity = rng.metropolisAccepts(logRatio: -.infinity)
        #expect(!refusedNaN && !refusedInfinity)
    }

    /// For a < 0 one uniform is drawn and the move accepted where it is below e^a: 200 000 tests at e^a = 0.3
    /// accept within 5 binomial standard deviations of 0.3, each decision the copied stream's `u < 0.3`.
    @Test func acceptsWithProbabilityExpA() {
        var rng = Xoshiro256(seed: 11)
        var copy = rng
        let n = 200_000, p = 0.3
        var accepted = 0, differing = 0
        for _ in 0..<n {
            let a = rng.metropolisAccepts(logRatio: Foundation.log(p))
            if a != (Foundation.log(copy.uniform()) < Foundation.log(p)) { differing += 1 }
            if a { accepted += 1 }
        }
        #expect(differing == 0)
        let f = Double(accepted) / Double(n)
        #expect(Swift.abs(f - p) < 5 * (p * (1 - p) / Double(n)).squareRoot())
    }
}
