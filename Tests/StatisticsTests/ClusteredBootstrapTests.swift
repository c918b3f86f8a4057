import Foundation
@testable import RandomStreams
@testable import Statistics
import TwoScaleCore
import XCTest

/// The study's bootstrap where models share values: the four training templates of an architecture share
/// its 2sED (and whatever else the architecture alone decides), so models are not independent draws.
final class ClusteredBootstrapTests: XCTestCase {
    /// A simulated study: `architectures` × `templates` models, `seeds` per model. The measure is the
    /// architecture's x_a alone (shared by its templates); the target per seed is
    /// 0.5·x_a + u_a + 0.5·t + 0.5·e with u_a an architecture effect the measure does not see.
    static func study(architectures: Int, templates: Int = 4, seeds: Int = 2, seed: UInt64) -> (measure: [[Double]], target: [[Double]], cluster: [Int]) {
        var rng = Xoshiro256(seed: seed, stream: [0x5349_4D55])  // "SIMU"
        var measure: [[Double]] = [], target: [[Double]] = [], cluster: [Int] = []
        for a in 0..<architectures {
            let x = rng.normal(), u = rng.normal()
            for t in 0..<templates {
                measure.append([Double](repeating: x, count: seeds))
                target.append((0..<seeds).map { _ in 0.5 * x + u + 0.5 * Double(t) + 0.5 * rng.normal() })
                cluster.append(a)
            }
        }
        return (measure, target, cluster)
    }

    static func tau(_ measure: [[Double]], _ target: [[Double]]) -> Double {
        let m = measure.map { $0.reduce(0, +) / Double($0.count) }, y = target.map { $0.reduce(0, +) / Double($0.count) }
        return KendallTau.tauB(m, y)!
    }

    /// Coverage of the 95% interval of τ_b over 100 simulated studies of 12 architectures, against the
    /// population τ_b (a study of 2 000 architectures from the same law). Resampling architectures holds
    /// at a rate consistent with 95% (at least 89 of 100, the 1% binomial quantile); resampling the 48
    /// models as if independent, the former bootstrap, does not.
    func testCoverageWhereModelsShareTheirArchitecturesValues() async throws {
        let big = Self.study(architectures: 2000, seed: 999)
        let truth = Self.tau(big.measure, big.target)
        var clustered = 0, independent = 0
        let studies = 100
        for s in 0..<studies {
            let st = Self.study(architectures: 12, seed: UInt64(s + 1))
            let boot = try HierarchicalBootstrap(replicates: 400, seed: UInt64(s + 7), threads: 2)
            let design = try ResamplingDesign(cluster: st.cluster, redraws: [nil, nil])
            let a = try await StudyStatistics.kendall(measure: st.measure, target: st.target, bootstrap: boot, design: design)
            let b = try await StudyStatistics.kendall(measure: st.measure, target: st.target, bootstrap: boot)
            if a.contains(truth) { clustered += 1 }
            if b.contains(truth) { independent += 1 }
        }
        XCTAssertGreaterThanOrEqual(clustered, 89, "clustered: \(clustered) of \(studies) (τ = \(truth))")
        XCTAssertLessThan(independent, 89, "independent models: \(independent) of \(studies) — the former bootstrap should fail here")
    }

    /// A redrawn variable takes one value per drawn cluster, shared by the cluster's models, from its law;
    /// the other variables keep the data's seed means.
    func testRedrawsAreSharedByAClustersModels() throws {
        let clusters = 5, models = 3
        var values: [[[Double]]] = [], cluster: [Int] = []
        for c in 0..<clusters {
            for m in 0..<models {
                values.append([[Double(c), Double(100 * c + m)], [Double(c), Double(100 * c + m) + 2]])
                cluster.append(c)
            }
        }
        let redraws: [[Redraw]?] = [(0..<clusters).map { .uniform(lo: 10 * Double($0), hi: 10 * Double($0) + 1) }, nil]
        let table = try SeedTable(values).designed(try ResamplingDesign(cluster: cluster, redraws: redraws))
        let boot = try HierarchicalBootstrap(replicates: 50, seed: 3)
        for r in 0..<50 {
            let rep = boot.resample(table, replicate: r)
            XCTAssertEqual(rep[0].count, clusters * models)
            for k in stride(from: 0, to: rep[0].count, by: models) {
                let group = Array(rep[0][k..<k + models])
                XCTAssertEqual(Set(group).count, 1, "one redraw per drawn cluster: \(group)")
                let c = (group[0] / 10).rounded(.down)
                XCTAssertTrue((10 * c...10 * c + 1).contains(group[0]))
                // The target's seed means come from the same cluster's models: 100c + m + {0, 1, 2}.
                for y in rep[1][k..<k + models] { XCTAssertEqual((y / 100).rounded(.down), c, "\(y) from cluster \(c)") }
            }
        }
        XCTAssertThrowsError(try ResamplingDesign(cluster: [0, 0, 1], redraws: []))
        XCTAssertThrowsError(try SeedTable(values).designed(try ResamplingDesign(cluster: Array(cluster.dropLast()) + [4], redraws: [nil])))
    }

    func testRedrawLaws() {
        var rng = Xoshiro256(seed: 1, stream: [1])
        let n = 20000
        let xs = (0..<n).map { _ in Redraw.normal(mean: 2, sd: 3).draw(&rng) }
        let mean = xs.reduce(0, +) / Double(n)
        let sd = (xs.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(n - 1)).squareRoot()
        XCTAssertEqual(mean, 2, accuracy: 4 * 3 / Double(n).squareRoot())
        XCTAssertEqual(sd, 3, accuracy: 0.06)
        XCTAssertEqual(Redraw.uniform(lo: 1, hi: 4).scaled(-1), .uniform(lo: -4, hi: -1))
        XCTAssertEqual(Redraw.normal(mean: 1, sd: 2).scaled(-1), .normal(mean: -1, sd: 2))
        let us = (0..<n).map { _ in Redraw.uniform(lo: -4, hi: -1).draw(&rng) }
        XCTAssertTrue(us.allSatisfy { (-4.0...(-1.0)).contains($0) })
        XCTAssertEqual(us.reduce(0, +) / Double(n), -2.5, accuracy: 0.03)
    }
}

/// The partial τ with several controls against the recursion written out by hand from pairwise τ_b.
final class PartialKendallControlsTests: XCTestCase {
    func testTwoControlsByHand() throws {
        var rng = Xoshiro256(seed: 5, stream: [2])
        let n = 40
        let z = (0..<n).map { _ in rng.normal() }, w = (0..<n).map { _ in rng.normal() }
        let x = (0..<n).map { i in z[i] + 0.5 * w[i] + rng.normal() }
        let y = (0..<n).map { i in x[i] - z[i] + 0.3 * w[i] + rng.normal() }
        func t(_ a: [Double], _ b: [Double]) -> Double { KendallTau.tauB(a, b)! }
        func p(_ ab: Double, _ ac: Double, _ bc: Double) -> Double { (ab - ac * bc) / ((1 - ac * ac) * (1 - bc * bc)).squareRoot() }
        // First order on z, then on w given z.
        let xyz = p(t(x, y), t(x, z), t(y, z)), xwz = p(t(x, w), t(x, z), t(w, z)), ywz = p(t(y, w), t(y, z), t(w, z))
        let byHand = p(xyz, xwz, ywz)
        XCTAssertEqual(try XCTUnwrap(PartialKendall.tau(x, y, given: [z, w])), byHand, accuracy: 1e-14)
        XCTAssertEqual(try XCTUnwrap(PartialKendall.tau(x, y, given: [z])), try XCTUnwrap(PartialKendall.tau(x, y, given: z)), accuracy: 1e-15)
        XCTAssertEqual(try XCTUnwrap(PartialKendall.tau(x, y, given: [[Double]]())), t(x, y))
        XCTAssertNil(PartialKendall.tau(x, y, given: [z, x]), "a control that ranks like the measure leaves nothing to partial")
    }
}

/// τ_b's bounds over values inside brackets, against every ordering of the clusters that the brackets
/// allow, enumerated.
final class BracketKendallTests: XCTestCase {
    /// Every permutation of the clusters' values that fits their brackets (placed greedily left to right),
    /// and τ_b of each.
    static func feasibleTaus(_ brackets: [ClosedRange<Double>], cluster: [Int], y: [Double]) -> [Double] {
        func permutations(_ a: [Int]) -> [[Int]] {
            a.count <= 1 ? [a] : a.indices.flatMap { i in permutations(Array(a[..<i] + a[(i + 1)...])).map { [a[i]] + $0 } }
        }
        var taus: [Double] = []
        for p in permutations(Array(brackets.indices)) {
            var x = [Double](repeating: 0, count: brackets.count), last = -Double.infinity, ok = true
            for c in p {
                let v = Swift.max(brackets[c].lowerBound, last + 1e-9)
                if v > brackets[c].upperBound { ok = false; break }
                x[c] = v
                last = v
            }
            if ok { taus.append(KendallTau.tauB(cluster.map { x[$0] }, y)!) }
        }
        return taus
    }

    func testBoundsHoldAndAreAttainedWhereOrdersAreFree() throws {
        var rng = Xoshiro256(seed: 11, stream: [3])
        var attained = 0
        for trial in 0..<60 {
            let k = 3 + trial % 3  // 3 to 5 clusters of 2 models
            let centres = (0..<k).map { _ in rng.uniform(0, 10) }
            let width = trial % 2 == 0 ? 1.0 : 4.0
            let brackets = centres.map { ($0 - width * rng.uniform())...($0 + width * rng.uniform()) }
            let cluster = (0..<k).flatMap { [$0, $0] }
            let y = cluster.map { c in centres[c] + 3 * rng.normal() }
            let b = try XCTUnwrap(BracketKendall.bounds(brackets: brackets, cluster: cluster, target: y))
            let taus = Self.feasibleTaus(brackets, cluster: cluster, y: y)
            let (lo, hi) = (taus.min()!, taus.max()!)
            XCTAssertLessThanOrEqual(b.lowerBound, lo + 1e-12, "trial \(trial)")
            XCTAssertGreaterThanOrEqual(b.upperBound, hi - 1e-12, "trial \(trial)")
            if abs(b.lowerBound - lo) < 1e-12 && abs(b.upperBound - hi) < 1e-12 { attained += 1 }
        }
        XCTAssertGreaterThan(attained, 30, "the bounds are the extremes in most small cases")
        // Disjoint brackets: one order, τ_b itself.
        let brackets = [0.0...1.0, 2.0...3.0, 4.0...5.0], cluster = [0, 0, 1, 1, 2, 2], y = [1.0, 2, 3, 5, 4, 6]
        let b = try XCTUnwrap(BracketKendall.bounds(brackets: brackets, cluster: cluster, target: y))
        let exact = KendallTau.tauB(cluster.map { Double($0) }, y)!
        XCTAssertEqual(b.lowerBound, exact, accuracy: 1e-15)
        XCTAssertEqual(b.upperBound, exact, accuracy: 1e-15)
    }
}
