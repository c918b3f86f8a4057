import Foundation
import NetworkEstimators
import Networks
@testable import RandomStreams
@testable import Experiments
@testable import Training
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// The baselines and trained measures of `compare` against closed forms.
final class ComparisonMeasureTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        ShippedEstimators.install()
    }

    /// 2-2-1 … as a 2-2-2 network: W_1 = [[1, 2], [3, 4]], W_2 = [[1, 1], [0, 2]].
    /// ‖W‖² = 1 + 4 + 9 + 16 + 1 + 1 + 0 + 4 = 36. Path norm² = Σ_{paths j→i→k} (W_1[i][j]·W_2[k][i])²
    /// = Σ_i (Σ_j W_1[i][j]²)(Σ_k W_2[k][i]²) = 5·(1 + 0) + 25·(1 + 4) = 130.
    func testWeightAndPathNormClosedForms() throws {
        let net = try Network(architecture: Architecture(sizes: [2, 2, 2]), activation: .relu,
                          weights: [Matrix(rows: 2, cols: 2, data: [1, 2, 3, 4]), Matrix(rows: 2, cols: 2, data: [1, 1, 0, 2])])
        XCTAssertEqual(ArchitectureComparison.weightNorm(net), 6, accuracy: 1e-15)
        XCTAssertEqual(ArchitectureComparison.pathNorm(net), 130.0.squareRoot(), accuracy: 1e-13)
    }

    /// A CNN 3x3x1-conv2k2-maxpool2-2: filter f's 2×2 kernel meets each of the 4 output positions once, and
    /// max pooling passes all 4 positions of a channel, so path norm² = Σ_j Σ_f W_2[j][f]² · 4 · ‖w_f‖²;
    /// with average pooling each pooled path carries (1/4)², so 4 becomes 4/16. Weight norm: all weights;
    /// depth and hidden widths count parametric layers and their units (filters).
    func testPathNormOfACNNClosedForm() throws {
        let w1: [Double] = [1, -2, 0.5, 3, 2, 0, -1, 1]  // filter 0: (1, −2, 0.5, 3), filter 1: (2, 0, −1, 1)
        let w2: [Double] = [1, 2, -3, 0.5]
        let k0 = 1 + 4 + 0.25 + 9.0, k1 = 4 + 0 + 1 + 1.0
        for (pool, positions) in [("maxpool2", 4.0), ("avgpool2", 4.0 / 16)] {
            let a = try Architecture(parsing: "3x3x1-conv2k2-\(pool)-2")
            let net = try Network(architecture: a, activation: .relu,
                              weights: [Matrix(rows: 2, cols: 4, data: w1), Matrix(rows: 2, cols: 2, data: w2)])
            let expected = (1 * k0 + 4 * k1 + 9 * k0 + 0.25 * k1) * positions
            XCTAssertEqual(ArchitectureComparison.pathNorm(net), expected.squareRoot(), accuracy: 1e-13, pool)
            XCTAssertEqual(ArchitectureComparison.weightNorm(net), (k0 + k1 + 1 + 4 + 9 + 0.25).squareRoot(), accuracy: 1e-13)
            XCTAssertEqual(a.hiddenWidths, [2])
            XCTAssertEqual(a.parametricLayers.count, 2)
        }
    }

    /// Sharpness is the mean loss increase under the seeded perturbations: recomputed by hand with the
    /// same stream; and zero perturbation scale would give 0 (checked through the definition).
    func testSharpnessMatchesItsDefinition() throws {
        var rng = Xoshiro256(seed: 4)
        let a = try Architecture(sizes: [3, 4, 2])
        let net = Network.uniform(architecture: a, activation: .relu, box: -1...1, rng: &rng)
        let x = Matrix(rows: 5, cols: 3, data: (0..<15).map { _ in rng.uniform(-1, 1) })
        let y = [0, 1, 1, 0, 1]
        let base = net.crossEntropy(inputs: x, labels: y).loss
        let got = ArchitectureComparison.sharpness(net, inputs: x, labels: y, base: base, seed: 9)
        let w = net.parameters
        let rms = (w.reduce(0) { $0 + $1 * $1 } / Double(w.count)).squareRoot()
        var r = Xoshiro256(seed: 9, stream: [0x5348_5250])
        var total = 0.0
        for _ in 0..<ArchitectureComparison.sharpnessDraws {
            var p = net
            p.setParameters(w.map { $0 + ArchitectureComparison.sharpnessScale * rms * r.normal() })
            total += p.crossEntropy(inputs: x, labels: y).loss - base
        }
        XCTAssertEqual(got, total / Double(ArchitectureComparison.sharpnessDraws), accuracy: 1e-15)
    }

    /// Means, spreads and the flatness criterion of a summary, from hand-made entries.
    func testSummaryStatisticsAndFlatness() throws {
        let a = try Architecture(sizes: [2, 2, 2])
        func entry(_ loss: Double, _ history: [Double]) -> ArchitectureComparison.Entry {
            .init(architecture: a, replicate: 0, dZeta: loss * 10, dZetaLower: loss * 9, dZetaJoint: 0, ess: [], trainLoss: loss,
                  trainAccuracy: nil, holdoutLoss: nil, holdoutAccuracy: nil, lossHistory: history, initialWeightNorm: 0,
                  initialPathNorm: 0, distanceFromInit: 0, sharpness: 0, spectraSeconds: 0, trainingSeconds: 0)
        }
        let s = ArchitectureSummary(architecture: a, entries: [entry(1, [2, 1.1, 1.0]), entry(3, [4, 3.02, 3.0])])
        XCTAssertNil(s.meanHalfWidth(\.ci95HalfWidth))  // plain: no intervals
        var e1 = entry(1, [2, 1.1, 1.0]), e2 = entry(3, [4, 3.02, 3.0])
        e1.ci95HalfWidth = 0.5
        XCTAssertNil(ArchitectureSummary(architecture: a, entries: [e1, e2]).meanHalfWidth(\.ci95HalfWidth))  // one seed lacks it
        e2.ci95HalfWidth = 1.5
        XCTAssertEqual(ArchitectureSummary(architecture: a, entries: [e1, e2]).meanHalfWidth(\.ci95HalfWidth), 1)
        // smc: the degenerate stage carries its islands' noise share; K = 64 makes ESS < 3.2 degenerate.
        e1.paths = 64
        e1.ess = [30, 2.5]
        e1.islandNoise = [0.1, 0.7]
        let d = try XCTUnwrap(e1.degeneracy)
        XCTAssertEqual([Double(d.stage), d.ess, Double(d.paths)], [3, 2.5, 64])
        XCTAssertEqual(d.islandNoiseShare, 0.7)
        e1.ess = [30, 4]
        XCTAssertNil(e1.degeneracy)
        XCTAssertNil(e2.degeneracy)  // K unknown
        // smc's order check from the half-widths: e1 has 2sED 10 ± 0.5 and lower 9; a lower interval
        // wholly above [9.5, 10.5] is flagged, an overlapping one is not, and plain (no intervals) never is.
        XCTAssertNil(e1.lowerAboveNested(eps: 0.01))  // lower half-width unknown
        e1.ci95HalfWidthLower = 0.4
        XCTAssertNil(e1.lowerAboveNested(eps: 0.01))  // lower below the 2sED
        e1.dZetaLower = 10.8                          // [10.4, 11.2] overlaps [9.5, 10.5]
        XCTAssertNil(e1.lowerAboveNested(eps: 0.01))
        e1.dZetaLower = 11.0                          // [10.6, 11.4] lies wholly above
        let v = try XCTUnwrap(e1.lowerAboveNested(eps: 0.01))
        XCTAssertEqual([v.eps, v.excess, v.lowerInterval.lowerBound, v.nestedInterval.upperBound], [0.01, 1.0, 10.6, 10.5])
        e1.ci95HalfWidthLower = .nan                  // a broken half-width is not an interval
        XCTAssertNil(e1.lowerAboveNested(eps: 0.01))
        XCTAssertNil(entry(1, [2, 1]).lowerAboveNested(eps: 0.01))
        XCTAssertEqual(s.mean(\.trainLoss), 2)
        XCTAssertEqual(s.sd(\.trainLoss), 2.0.squareRoot(), accuracy: 1e-15)
        // Last-epoch shares: 0.1/1.0 = 0.1 and 0.02/1.0 = 0.02.
        XCTAssertEqual(s.entries[0].lastEpochShare, 0.1, accuracy: 1e-12)
        XCTAssertFalse(s.flat(tolerance: 0.05))
        XCTAssertTrue(s.flat(tolerance: 0.2))
        // No decrease at all never counts as flat.
        XCTAssertEqual(entry(1, [1, 1, 1]).lastEpochShare, .infinity)
    }
}

/// `GapTrend` against hand-computed values.
final class GapTrendTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        ShippedEstimators.install()
    }

    func testCFitAndLogLogSlope() {
        func trial(_ n: Int, _ sup01: Double) -> TrialGaps {
            TrialGaps(n: n, trial: 0, finalGap: 0, finalGap01: 0, supGap: 0.5, supGap01: sup01, riskError: 0, riskError01: 0.001,
                      checkpoints: 1, checkpointsOutsideBox: 0, finalTrainLoss: 0, finalPopulationRisk: 0)
        }
        let s = GapSummary.summarize([trial(100, 0.4), trial(400, 0.1)], sampleSizes: [100, 400], C: 1) { $0 == 100 ? 0.5 : 0.25 }
        let t = GapTrend(s)
        XCTAssertEqual(t.cFit, 0.8)
        XCTAssertEqual(t.first?.cFit, 0.8)
        XCTAssertEqual(t.last?.cFit ?? 0, 0.4, accuracy: 1e-15)
        XCTAssertEqual(t.rises, false)
        XCTAssertEqual(t.logLogSlope ?? 0, -1, accuracy: 1e-12)  // (log 0.1 − log 0.4)/(log 400 − log 100)
        XCTAssertNil(GapTrend(Array(s.prefix(1))).logLogSlope)
    }
}
