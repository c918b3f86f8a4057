import Foundation
import RandomStreams
@testable import Samplers
import Testing
import TwoScaleCore

/// The reverse pass of bidirectional Monte Carlo (`Tempering.reverse`) on a target with a closed form,
/// `π_s(x) ∝ e^{s x}` on [0, 1] (`Z(s) = (e^s − 1)/s`), moved by exact redraws from `π_s`: started from exact
/// draws of `π_top` and led down a fixed ladder of scales, its `Ẑ` is unbiased for `Z(s)/Z(top)` at every
/// stop on the way, as the forward run's is for `Z(s)`.
@Suite struct TemperingReverseTests {
    /// Particles in [0, 1] with `ℓ_s(x) = s x`; `move` redraws each from `π_s` by its inverse CDF.
    struct Exponential: TemperedSystem {
        var x: [Double]
        var logZ: [Double] = []
        var count: Int { x.count }
        func logTarget(_ i: Int, at s: Double) -> Double { s * x[i] }
        mutating func resample(_ idx: [Int]) { x = idx.map { x[$0] } }
        mutating func move(at s: Double, ell: inout [Double], rng: inout Xoshiro256) throws {
            for i in x.indices {
                x[i] = Self.draw(s, rng.uniform())
                ell[i] = s * x[i]
            }
        }
        mutating func collect(stop s: Double, logZ: Double, weights: TemperingWeights) { self.logZ.append(logZ) }

        static func draw(_ s: Double, _ u: Double) -> Double { s == 0 ? u : Foundation.log1p(u * Foundation.expm1(s)) / s }
        static func logZ(_ s: Double) -> Double { s == 0 ? 0 : Foundation.log(Foundation.expm1(s) / s) }
    }

    /// The mean of `e^{l − truth}` over runs, and its standard error.
    func ratio(_ l: [Double], truth: Double) -> (mean: Double, se: Double) {
        let r = l.map { Foundation.exp($0 - truth) }
        let mean = r.reduce(0, +) / Double(r.count)
        return (mean, (LogEstimate.sampleVariance(r) / Double(r.count)).squareRoot())
    }

    @Test func reverseIsUnbiasedFromExactDraws() throws {
        // 8 particles down a fixed ladder of 15 scales from 30 (the ratios to estimate: e^{−3.6} and e^{−26.6}).
        let top = 30.0, middle = 8.0, runs = 3_000
        let schedule = stride(from: 28.0, through: 2, by: -2).map { $0 }
        var down: [[Double]] = [[], []], up: [[Double]] = [[], []]
        var rng = Xoshiro256(seed: 11, stream: [1])
        for _ in 0..<runs {
            var system = Exponential(x: (0..<8).map { _ in Exponential.draw(top, rng.uniform()) })
            let cum = try Tempering.reverse(&system, from: top, schedule: schedule, stops: [middle, 0], rng: &rng)
            #expect(cum.count == 2)
            down[0].append(cum[0])
            down[1].append(cum[1])
            var forward = Exponential(x: (0..<8).map { _ in rng.uniform() })
            _ = try Tempering.run(&forward, stops: [middle, top], essFraction: 0.5, rng: &rng)
            up[0].append(forward.logZ[0])
            up[1].append(forward.logZ[1])
        }
        let checks = [(down[0], Exponential.logZ(middle) - Exponential.logZ(top), "Z(8)/Z(30), down"),
                      (down[1], -Exponential.logZ(top), "1/Z(30), down"), (up[0], Exponential.logZ(middle), "Z(8), up")]
        for (l, truth, what) in checks {
            let (mean, se) = ratio(l, truth: truth)
            #expect(se > 0 && se < 0.1, "\(what): se \(se)")
            #expect(Swift.abs(mean - 1) < 4 * se, "\(what): mean ratio \(mean) ± \(se)")
        }
        // Reversed signs or a missed segment would be off by far more than that: Z(30) is e^{26.6}.
        #expect(Exponential.logZ(top) > 26)
    }
}
