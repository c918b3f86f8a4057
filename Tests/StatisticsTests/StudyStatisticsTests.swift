import Foundation
import RandomStreams
import Testing
@testable import Statistics
import TwoScaleCore

/// The study's rank statistics against known answers: the hierarchical bootstrap of τ, paired τ
/// differences, Holm's correction and the rank-partialled τ.
@Suite struct StudyStatisticsTests {
    /// Per architecture a (0…5) and seed s (0…4) the measure is 8a + s + 1 and the target a strictly
    /// affine function of it (3x + 7, or −3x + 7), in integers, so sums are exact. Concordance must hold
    /// for seed averages too: a replicate that draws an architecture twice, with different seeds, treats
    /// the two as two units, so their means must rank alike (a merely monotone, non-affine link would
    /// not do: mean(x²) does not order like mean(x) across seed multisets).
    static func concordant(reversed: Bool = false) -> (measure: [[Double]], target: [[Double]]) {
        let m = (0..<6).map { (a: Int) -> [Double] in (0..<5).map { (s: Int) -> Double in Double(8 * a + s + 1) } }
        let sign: Double = reversed ? -1 : 1
        let t = m.map { (seeds: [Double]) -> [Double] in seeds.map { 3 * sign * $0 + 7 } }
        return (m, t)
    }

    @Test func concordantAndReversedDataGiveOneAndMinusOne() async throws {
        let b = try HierarchicalBootstrap(replicates: 500, seed: 3)
        for (reversed, expected) in [(false, 1.0), (true, -1.0)] {
            let d = Self.concordant(reversed: reversed)
            let r = try await StudyStatistics.kendall(measure: d.measure, target: d.target, bootstrap: b)
            #expect(r.estimate == expected)
            #expect(r.lower == expected && r.upper == expected)
            #expect(r.sd == 0)
            #expect(r.replicates + r.undefined == 500)
        }
    }

    /// The same seed gives the same bytes whatever the thread count; another seed other replicates.
    @Test func deterministicAndIndependentOfThreads() async throws {
        let (m, t) = Self.simulated(rho: 0.5, architectures: 12, seeds: 4, noise: 0.3, stream: 1)
        let one = try await StudyStatistics.kendall(measure: m, target: t, bootstrap: try HierarchicalBootstrap(replicates: 300, seed: 8, threads: 1))
        let three = try await StudyStatistics.kendall(measure: m, target: t, bootstrap: try HierarchicalBootstrap(replicates: 300, seed: 8, threads: 3))
        let other = try await StudyStatistics.kendall(measure: m, target: t, bootstrap: try HierarchicalBootstrap(replicates: 300, seed: 9, threads: 3))
        #expect(one == three)
        #expect(one.estimate == other.estimate)
        #expect(one.lower != other.lower || one.upper != other.upper || one.sd != other.sd)
    }

    /// Per architecture (m, t) bivariate normal with correlation ρ, plus independent seed noise of SD σ on
    /// each of S seeds: the seed means are bivariate normal with correlation ρ/(1 + σ²/S).
    static func simulated(rho: Double, architectures: Int, seeds: Int, noise: Double, stream: UInt64) -> ([[Double]], [[Double]]) {
        var rng = Xoshiro256(seed: 41, stream: [stream])
        var m: [[Double]] = [], t: [[Double]] = []
        for _ in 0..<architectures {
            let z1 = rng.normal(), z2 = rng.normal()
            let mu = z1, tu = rho * z1 + (1 - rho * rho).squareRoot() * z2
            m.append((0..<seeds).map { _ in mu + noise * rng.normal() })
            t.append((0..<seeds).map { _ in tu + noise * rng.normal() })
        }
        return (m, t)
    }

    /// Over 200 simulated studies (25 architectures, 5 seeds) the 95% interval covers the population
    /// τ = (2/π) arcsin ρ_eff of the seed means in about 95% of them: at least 88%, and not in all.
    @Test func intervalCoversThePopulationTau() async throws {
        let rho = 0.6, seeds = 5, noise = 0.1
        let population = 2 / Double.pi * asin(rho / (1 + noise * noise / Double(seeds)))
        let studies = 200
        let covered = try await Parallel.map(studies, threads: 2) { k -> Bool in
            let (m, t) = Self.simulated(rho: rho, architectures: 25, seeds: seeds, noise: noise, stream: UInt64(100 + k))
            let table = try SeedTable(columns: [m, t])
            let b = try HierarchicalBootstrap(replicates: 300, seed: UInt64(k))
            let means = table.means()
            let draws = (0..<b.replicates).map { r -> Double? in let x = b.resample(table, replicate: r); return KendallTau.tauB(x[0], x[1]) }
            let point = try #require(KendallTau.tauB(means[0], means[1]))
            return try b.interval(estimate: point, draws: draws).contains(population)
        }
        let rate = Double(covered.filter { $0 }.count) / Double(studies)
        #expect(rate >= 0.88, "coverage \(rate)")
        #expect(rate < 1, "coverage \(rate)")
    }

    /// A measure that ranks the target perfectly against a noisy one: τ_A − τ_B > 0 with a small
    /// p-value, and the difference is the paired one (estimate = τ_A − τ_B, p-value recomputed from the
    /// replicates by its definition); a measure against itself: difference 0, interval [0, 0], p = 1.
    @Test func pairedDifferences() async throws {
        let (m, t) = Self.simulated(rho: 0.3, architectures: 15, seeds: 4, noise: 0.2, stream: 7)
        let perfect = t.map { seeds in seeds.map { 2 * $0 + 1 } }
        let b = try HierarchicalBootstrap(replicates: 400, seed: 5)
        let d = try await StudyStatistics.pairedDifference(measureA: perfect, measureB: m, target: t, bootstrap: b)
        #expect(d.first.estimate == 1)
        #expect(d.difference.estimate == d.first.estimate - d.second.estimate)
        #expect(d.difference.lower > 0)
        #expect(d.pValue < 0.01)
        let table = try SeedTable(columns: [perfect, m, t])
        let diffs = (0..<400).compactMap { r -> Double? in
            let x = b.resample(table, replicate: r)
            guard let a = KendallTau.tauB(x[0], x[2]), let c = KendallTau.tauB(x[1], x[2]) else { return nil }
            return a - c
        }
        let low = diffs.filter { $0 <= 0 }.count, high = diffs.filter { $0 >= 0 }.count
        #expect(d.pValue == min(1, 2 * Double(min(low, high) + 1) / Double(diffs.count + 1)))
        let same = try await StudyStatistics.pairedDifference(measureA: m, measureB: m, target: t, bootstrap: b)
        #expect(same.difference.estimate == 0 && same.difference.lower == 0 && same.difference.upper == 0)
        #expect(same.pValue == 1)
    }

    /// p = (0.01, 0.04, 0.03, 0.005): sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06,
    /// 0.04, made monotone 0.02, 0.03, 0.06, 0.06; back in input order (0.03, 0.06, 0.06, 0.02).
    @Test func holmByHand() throws {
        let a = try Holm.adjust([0.01, 0.04, 0.03, 0.005])
        for (x, y) in zip(a, [0.03, 0.06, 0.06, 0.02]) { #expect(abs(x - y) < 1e-15) }
        #expect(try Holm.adjust([0.6, 0.7]) == [1, 1])  // 1.2 capped, then monotone
        let tied = try Holm.adjust([0.02, 0.02, 0.5])  // 0.06, max(0.06, 0.04), 0.5
        for (x, y) in zip(tied, [0.06, 0.06, 0.5]) { #expect(abs(x - y) < 1e-15) }
        #expect(try Holm.adjust([]) == [])
        #expect(throws: TwoScaleError.self) { try Holm.adjust([0.1, 1.2]) }
        #expect(throws: TwoScaleError.self) { try Holm.adjust([.nan]) }
    }

    /// x = 1…5, y = (2, 1, 4, 3, 5), z = (1, 3, 2, 5, 4): τ_xy = τ_xz = (8 − 2)/10 = 0.6, τ_yz = (6 − 4)/10
    /// = 0.2, so τ_xy·z = (0.6 − 0.12)/√(0.64 · 0.96) = √0.375. With z = x (or −x) it is undefined (nil).
    @Test func partialTauByHand() throws {
        let x: [Double] = [1, 2, 3, 4, 5], y: [Double] = [2, 1, 4, 3, 5], z: [Double] = [1, 3, 2, 5, 4]
        #expect(KendallTau.tauB(y, z) == 0.2)
        let p = try #require(PartialKendall.tau(x, y, given: z))
        #expect(abs(p - 0.375.squareRoot()) < 1e-14)
        #expect(PartialKendall.tau(x, y, given: x) == nil)
        #expect(PartialKendall.tau(x, y, given: x.map { -$0 }) == nil)
        #expect(PartialKendall.tau(x, y, given: y) == nil)
        #expect(abs(try #require(PartialKendall.combine(xy: 0.5, xz: 0, yz: 0.9)) - 0.5 / 0.19.squareRoot()) < 1e-14)
    }

    /// The bootstrapped partial τ: its estimate is the formula on the seed means, the interval holds it,
    /// and a control equal to the measure is refused with a typed error.
    @Test func partialTauBootstrap() async throws {
        let (m, t) = Self.simulated(rho: 0.6, architectures: 14, seeds: 3, noise: 0.2, stream: 11)
        let (c, _) = Self.simulated(rho: 0, architectures: 14, seeds: 3, noise: 0.2, stream: 12)
        let b = try HierarchicalBootstrap(replicates: 300, seed: 2)
        let r = try await StudyStatistics.partialKendall(measure: m, target: t, control: c, bootstrap: b)
        let means = try SeedTable(columns: [m, t, c]).means()
        #expect(r.estimate == PartialKendall.tau(means[0], means[1], given: means[2]))
        #expect(r.lower <= r.estimate && r.estimate <= r.upper)
        await #expect(throws: TwoScaleError.self) {
            try await StudyStatistics.partialKendall(measure: m, target: t, control: m, bootstrap: b)
        }
    }

    /// Fewer than 3 architectures, ragged seeds, NaN, and a constant measure are typed errors.
    @Test func badInputIsATypedError() async throws {
        let b = try HierarchicalBootstrap(replicates: 50, seed: 1)
        let ok: [[Double]] = [[1, 2], [3, 4], [5, 6]]
        await #expect(throws: TwoScaleError.self) { try await StudyStatistics.kendall(measure: [[1], [2]], target: [[1], [2]], bootstrap: b) }
        await #expect(throws: TwoScaleError.self) { try await StudyStatistics.kendall(measure: ok, target: [[1, 2], [3], [5, 6]], bootstrap: b) }
        await #expect(throws: TwoScaleError.self) { try await StudyStatistics.kendall(measure: ok, target: [[1, 2], [3, .nan], [5, 6]], bootstrap: b) }
        await #expect(throws: TwoScaleError.self) { try await StudyStatistics.kendall(measure: ok, target: [[1, 2], [], [5, 6]], bootstrap: b) }
        await #expect(throws: TwoScaleError.self) { try await StudyStatistics.kendall(measure: [[1], [1], [1]], target: [[1], [2], [3]], bootstrap: b) }
        #expect(throws: TwoScaleError.self) { try SeedTable([[[1, 2]], [[3]], [[4, 5]]]) }
        #expect(throws: TwoScaleError.self) { try HierarchicalBootstrap(replicates: 5, seed: 1) }
    }

    /// The fast τ_b is `KendallTau`'s τ_b, ties included.
    @Test func fastTauMatchesKendallTau() throws {
        var rng = Xoshiro256(seed: 12)
        for _ in 0..<50 {
            let n = 2 + rng.index(15)
            let x = (0..<n).map { _ in Double(rng.index(4)) }, y = (0..<n).map { _ in Double(rng.index(5)) }
            if let k = try? KendallTau(x, y) { #expect(abs(KendallTau.tauB(x, y)! - k.tau) < 1e-14) } else { #expect(KendallTau.tauB(x, y) == nil) }
        }
    }
}
