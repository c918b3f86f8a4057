import Foundation
import Samplers
import Testing
import ToyModels
import TwoScaleCore

/// Joint tempering's two passes against the exact values of a layered toy whose units are too wide for its
/// sweeps (two stages of two units of 20 coordinates, coupling 3, P = 32, 5 sweeps: the forward pass lags,
/// docs/METHOD.md §21). Over 12 seeds at the exact scales of ε = 10⁻³ and 0.1: the forward pass's 95%
/// interval around its point estimate misses the exact `log E G_s` in at least 3 (it is low), and the hull
/// of the two passes' intervals from their means of logs (`ReportedInterval.bidirectional`) holds in at
/// least 11. More sweeps narrow the gap between the passes.
@Suite struct JointReverseTests {
    let model: LayeredToy
    let stops: [Double]
    let exact: [Double]

    init() throws {
        let m = try LayeredToy(units: [2, 2], unitSize: [20, 20], coupling: 3)
        let c = try m.scale(.trace)
        let s = [1e-3, 0.1].map { ScaleParameters.t(eps: $0, zeta: 2.0 / 3) * c.squareRoot() }.sorted()
        model = m
        stops = s
        exact = s.map { s in
            let e = m.exactStages(scale: s)
            return e.logZ1 + e.logMean.reduce(0, +)
        }
    }

    func runs(sweeps: Int, seeds: Int) async throws -> [JointSMC<LayeredToy>.Result] {
        var out: [JointSMC<LayeredToy>.Result] = []
        for k in 0..<seeds {
            out.append(try await JointSMC(model: model, box: model.box, seed: 30_001 + UInt64(k), particles: 32, sweeps: sweeps)
                .run(stops: stops, threads: 2))
        }
        return out
    }

    func ci(_ e: LogEstimate) -> ClosedRange<Double> {
        let h = 1.959963984540054 * e.variance.squareRoot()
        return (e.value - h)...(e.value + h)
    }

    /// The mean of R = 4 values ± t₃ · s/√R (t₃ = 3.182446, the 97.5% quantile of Student's t with 3 degrees of freedom).
    func meanLogCI(_ l: [Double]) -> ClosedRange<Double> {
        #expect(l.count == 4)
        let m = l.reduce(0, +) / 4, s = (l.reduce(0) { $0 + ($1 - m) * ($1 - m) } / 3).squareRoot()
        let h = 3.182446305284263 * s / 2
        return (m - h)...(m + h)
    }

    @Test func theHullHoldsWhereTheForwardPassLags() async throws {
        let rs = try await runs(sweeps: 5, seeds: 12)
        for t in stops.indices {
            let missed = rs.map { ci($0.estimates[t]) }.filter { !$0.contains(exact[t]) }.count
            let forward = rs.map { meanLogCI($0.logZ[t]) }, reverse = rs.map { meanLogCI($0.reverseLogZ[t]) }
            for (r, (f, b)) in zip(rs, zip(forward, reverse)) {
                let (low, high) = (r.meanLog[t], r.reverseMeanLog[t])
                #expect(abs(ci(low).lowerBound - f.lowerBound) < 1e-9 && abs(ci(high).upperBound - b.upperBound) < 1e-9)
            }
            let hull = zip(forward, reverse).map { ReportedInterval.bidirectional(forward: $0, reverse: $1, bracket: nil).range }
            let held = hull.filter { $0.contains(exact[t]) }.count
            #expect(missed >= 3, "stop \(t): the forward pass missed in \(missed) of 12, so the case is not hard")
            #expect(held >= 11, "stop \(t): the hull held in \(held) of 12")
            // Every replicate ran both passes.
            #expect(rs.allSatisfy { $0.reverseLogZ[t].count == 4 && $0.reverseLogZ[t].allSatisfy(\.isFinite) })
        }
    }

    /// More sweeps close the gap between the passes: over seeds 30001–30004 the reverse pass's mean excess over
    /// the forward pass at 20 sweeps is under half of that at 5, and both are positive.
    @Test func moreSweepsCloseTheGap() async throws {
        let few = try await runs(sweeps: 5, seeds: 4), more = try await runs(sweeps: 20, seeds: 4)
        for t in stops.indices {
            func gap(_ rs: [JointSMC<LayeredToy>.Result]) -> Double {
                rs.map { $0.reverseEstimates[t].value - $0.estimates[t].value }.reduce(0, +) / Double(rs.count)
            }
            let a = gap(few), b = gap(more)
            #expect(a > 0 && b > 0, "stop \(t): mean gaps \(a) (5 sweeps) and \(b) (20)")
            #expect(b < 0.5 * a, "stop \(t): mean gaps \(a) (5 sweeps) and \(b) (20)")
        }
    }

    /// The hull is the forward and reverse intervals' union, cut to the bracket; disjoint from it, the bracket.
    @Test func bidirectionalInterval() {
        let r = ReportedInterval.bidirectional(forward: 10...11, reverse: 10.5...12, bracket: 9...11.5)
        #expect(r.range == 10...11.5 && r.source == .sampled)
        #expect(ReportedInterval.bidirectional(forward: 10...11, reverse: 12...13, bracket: nil).range == 10...13)
        #expect(ReportedInterval.bidirectional(forward: 10...11, reverse: 10...12, bracket: 13...14).source == .bracket)
    }
}
