@testable import Fisher
import Estimation
import Foundation
@testable import NetworkEstimators
import XCTest
@testable import Networks
import RandomStreams
import Samplers
import TestSupport
import TwoScaleCore
import TwoScaleNumerics

/// The certified bracket (docs/METHOD.md §19): its majorants hold at every θ and are attained where the
/// proof says they are; its ends hold against brute-force quadrature on networks of d ≤ 4; the empirical
/// Bernstein bound keeps its promised coverage.
final class CertifiedBracketTests: XCTestCase {
    typealias R = FisherReference

    func model(_ arch: String, _ act: Activation, data: Matrix, bias: Bool = false, r: Int = 2) throws -> MarkovFisher {
        try MarkovFisher(architecture: try Architecture(parsing: arch, bias: bias), activation: act, data: data, sigma2: 0.3,
                         noiseSamples: r, noiseSeed: 7)
    }

    /// Random parameters, box vertices and scaled copies: at every one, each block's input lies inside
    /// its interval bounds and each block's log-determinant lies below its majorant, at five scales; for
    /// MLPs and a CNN with pooling, relu, tanh, sigmoid and linear, with and without biases, on boxes
    /// around 0 and on one side of it.
    func testMajorantsHoldAtEveryParameter() throws {
        let image = R.gaussianData(4, 16, seed: 3)
        let cases: [(MarkovFisher, ClosedRange<Double>)] = [
            (try model("5-4-3", .relu, data: R.gaussianData(6, 5, seed: 1)), -1...1),
            (try model("5-4-3-3", .tanh, data: R.gaussianData(6, 5, seed: 2), bias: true), -1...1),
            (try model("5-4-3-3", .sigmoid, data: R.gaussianData(3, 5, seed: 4)), -0.5...2),
            (try model("5-3-2-3", .linear, data: R.gaussianData(4, 5, seed: 5), bias: true), 0...1),
            (try model("4x4x1-conv2k3p1-maxpool2-3", .relu, data: image), -1...1),
            (try model("4x4x1-conv2k3p1-avgpool2-conv2k1-3", .tanh, data: image, bias: true), -1...1),
        ]
        var rng = Xoshiro256(seed: 9, stream: [1])
        for (m, box) in cases {
            let ceilings = try m.blockCeilings(box: box)
            let bounds = m.blockInputBounds(box: box)
            let traces = m.secondMomentTraceBounds(box: box)
            XCTAssertEqual(ceilings.count, m.blockDimensions.count)
            XCTAssertEqual(traces.count, m.blockDimensions.count)
            for trial in 0..<60 {
                var net = Network.uniform(architecture: m.architecture, activation: m.activation, box: box, rng: &rng)
                if trial % 3 == 1 {  // a vertex of the box
                    for l in net.blocks.indices { for i in net.blocks[l].indices {
                        net.blocks[l][i] = rng.uniform() < 0.5 ? box.lowerBound : box.upperBound } }
                }
                for b in m.blockDimensions.indices {
                    let x = try m.blockInputs(net, block: b)
                    for i in x.data.indices {
                        XCTAssertGreaterThanOrEqual(x.data[i], bounds[b].lower.data[i] - 1e-9, "\(m.architecture) block \(b)")
                        XCTAssertLessThanOrEqual(x.data[i], bounds[b].upper.data[i] + 1e-9, "\(m.architecture) block \(b)")
                    }
                    let xa = m.architecture.parametric(layer: m.architecture.parametricLayers[b]).patches(x)
                    let trace = xa.data.reduce(0) { $0 + $1 * $1 } / Double(x.rows)
                    XCTAssertLessThanOrEqual(trace, traces[b] * (1 + 1e-12), "\(m.architecture) block \(b): Π's trace")
                    let roots = try Spectrum(eigenvalues: try m.blockEigenvalues(net, block: b, inputs: x)).roots
                    for s in [0.01, 0.3, 1, 10, 1e4] {
                        let g = LogSpace.logDetSqrt(roots: roots, scale: s), bound = ceilings[b].logBound(scale: s)
                        XCTAssertLessThanOrEqual(g, bound * (1 + 1e-10) + 1e-10, "\(m.architecture) block \(b) s = \(s)")
                    }
                }
            }
        }
    }

    /// A layer's patch overlap: 1 for dense layers, k² for a stride-1 k × k convolution, 4 for a 3 × 3 one
    /// at stride 2 (and padding does not change it).
    func testPatchOverlap() throws {
        let a = try Architecture(parsing: "7x7x2-conv3k3p1-conv2k3s2-conv2k1-3")
        XCTAssertEqual(a.stack.map { MarkovFisher.patchOverlap($0) }, [9, 4, 1, 1])
    }

    /// Where the proof is tight, the majorant is attained, so a looser (or wrong) one fails here:
    /// (a) one layer's interval bound is reached by the box vertex that follows the input's signs;
    /// (b) a relu unit whose weights keep every (positive) data row active has the Fisher block
    /// `σ⁻² Π`, so its log-determinant equals the first block's per-unit majorant; (c) the softmax-only
    /// network's majorant is the supremum of §11 (`softmaxSupremumRoots`).
    func testMajorantsAreAttainedWhereTheProofIsTight() throws {
        var data = R.gaussianData(5, 4, seed: 6)
        for i in data.data.indices { data.data[i] = Swift.abs(data.data[i]) + 0.1 }
        let m = try model("4-3-2", .relu, data: data)
        let box: ClosedRange<Double> = -0.5...2
        let bounds = m.blockInputBounds(box: box)
        // (a) unit 0 at the vertex (all weights 2, since x > 0) reaches the upper end of every sample.
        var net = m.zeroNetwork()
        m.setUnit(&net, block: 0, unit: 0, parameters: [2, 2, 2, 2])
        let x = try m.blockInputs(net, block: 1)
        for row in 0..<x.rows { XCTAssertEqual(x[row, 0], bounds[1].upper[row, 0], accuracy: 1e-12) }
        m.setUnit(&net, block: 0, unit: 1, parameters: [-0.5, -0.5, -0.5, -0.5])  // relu(−) = 0: the lower end + noise
        let y = try m.blockInputs(net, block: 1)
        for row in 0..<y.rows { XCTAssertEqual(y[row, 1], bounds[1].lower[row, 1], accuracy: 1e-12) }
        // (b) every row active: the unit's roots are those of the majorant.
        let ceiling = try m.blockCeilings(box: box)[0]
        XCTAssertTrue(ceiling.exact)
        let roots = try m.unitRoots([0.3, 1.2, 0.7, 2], inputs: m.unitInputs(data, block: 0))
        for s in [0.1, 3, 100] {
            XCTAssertEqual(LogSpace.logDetSqrt(roots: roots, scale: s), ceiling.unitLogBound(scale: s), accuracy: 1e-9)
        }
        // (c) the softmax-only network.
        let soft = try model("4-3", .relu, data: data, bias: true)
        let top = try soft.blockCeilings(box: -1...1)[0]
        let sup = try soft.softmaxSupremumRoots(inputs: soft.unitInputs(data, block: 0))
        for s in [0.1, 3, 100] {
            XCTAssertEqual(top.logBound(scale: s), LogSpace.logDetSqrt(roots: sup, scale: s), accuracy: 1e-9)
        }
    }

    /// The bracket against the exact 2sED and lower 2sED of networks with d ≤ 4, by midpoint quadrature
    /// (c = 1): 1-1-2 tanh (θ = (w; v₁, v₂)), 1-1-2 relu and the softmax-only 2-2 (4 weights). Both
    /// ends hold, the lower end is above ζd (it carries information), and the upper end is finite.
    func testBracketHoldsAgainstQuadrature() async throws {
        let data = Matrix(rows: 4, cols: 1, data: [0.9, -1.7, 0.4, 2.2])
        let eps = [1e-3, 0.05, 0.4], zeta = 2.0 / 3
        for act in [Activation.tanh, .relu] {
            let m = try MarkovFisher(architecture: try Architecture(parsing: "1-1-2"), activation: act, data: data, sigma2: 0.5,
                                     noiseSamples: 1, noiseSeed: 3)
            let bracket = try await m.certifiedBracket(box: -1...1, eps: eps, zeta: zeta, normalization: .none, seed: 5, draws: 400, threads: 2)
            for (i, e) in eps.enumerated() {
                let l = Swift.abs(Foundation.log(e))
                let q = try quadrature(m, data: data, scale: ScaleParameters.t(eps: e, zeta: zeta))
                let exact = zeta * 3 + q.logZ / l, exactLower = zeta * 3 + q.lower / l
                let p = bracket.points[i]
                XCTAssertTrue(p.dZeta.contains(exact), "\(act) ε = \(e): \(exact) outside \(p.dZeta)")
                XCTAssertTrue(p.dZetaLower.contains(exactLower), "\(act) ε = \(e): \(exactLower) outside \(p.dZetaLower)")
                XCTAssertGreaterThan(p.dZeta.lowerBound, zeta * 3 + 1e-6, "\(act) ε = \(e)")
                XCTAssertLessThan(p.dZeta.upperBound, exact + 5, "\(act) ε = \(e)")
            }
        }
        // Softmax only: the upper end is the supremum, the lower end below the quadrature.
        let soft = try MarkovFisher(architecture: try Architecture(parsing: "2-2"), activation: .tanh,
                                    data: Matrix(rows: 5, cols: 2, data: [0.9, -1.7, 0.4, 2.2, -0.3, 1.1, 0.8, -2.0, 1.5, 0.2]),
                                    sigma2: 0.5, noiseSamples: 1, noiseSeed: 3)
        let b = try await soft.certifiedBracket(box: -1...1, eps: [1e-3, 0.3], zeta: zeta, normalization: .none, seed: 2, draws: 300, threads: 2)
        let xs = soft.unitInputs(soft.data, block: 0)
        for (p, e) in zip(b.points, [1e-3, 0.3]) {
            let s = ScaleParameters.t(eps: e, zeta: zeta), n = 14
            var logs = [Double]()
            for a in 0..<n { for c in 0..<n { for d in 0..<n { for f in 0..<n {
                let w = [a, c, d, f].map { -1 + (Double($0) + 0.5) * 2 / Double(n) }
                logs.append(LogSpace.logDetSqrt(roots: try soft.unitRoots(w, inputs: xs), scale: s))
            } } } }
            let exact = zeta * 4 + LogSpace.logMeanExp(logs) / Swift.abs(Foundation.log(e))
            XCTAssertTrue(p.dZeta.contains(exact), "softmax ε = \(e): \(exact) outside \(p.dZeta)")
            XCTAssertEqual(p.dZeta, p.dZetaLower)
        }
    }

    /// The empirical Bernstein bound: (a) by hand on four numbers; (b) over 2000 trials of 200 draws
    /// from a skewed law on [0, 10] with known mean, its lower bound at δ = 0.05 fails in at most δ of
    /// them (a looser count would still pass, so (c) checks it is not vacuous: within 1.5 of the mean
    /// on average); (d) a draw outside its range is an error.
    func testEmpiricalBernstein() throws {
        let x = [1.0, 2, 4, 5]  // mean 3, unbiased variance 10/3
        let l = Foundation.log(2 / 0.1)
        XCTAssertEqual(try EmpiricalBernstein.lowerMean(x, range: 6, delta: 0.1),
                       3 - (2 * (10.0 / 3) * l / 4).squareRoot() - 7 * 6 * l / 9, accuracy: 1e-12)
        var rng = Xoshiro256(seed: 3, stream: [2])
        var failures = 0, slack = 0.0
        // X = min(10, E) with E exponential(rate 1): E X = 1 − e^{−10}.
        let truth = 1 - Foundation.exp(-10.0)
        for _ in 0..<2000 {
            let draws = (0..<200).map { _ in Swift.min(10, -Foundation.log(1 - rng.uniform())) }
            let lb = try EmpiricalBernstein.lowerMean(draws, range: 10, delta: 0.05)
            if lb > truth { failures += 1 }
            slack += truth - lb
        }
        XCTAssertLessThanOrEqual(failures, 100)
        XCTAssertLessThan(slack / 2000, 1.5)
        XCTAssertThrowsError(try EmpiricalBernstein.lowerMean([1, 11], range: 10, delta: 0.05))
        // (e) The upper bound on a rare value (X = 1 with probability 0.002, 300 draws): it holds in at least
        // 1 − δ of 2 000 trials, and without its range term (the sample mean and the variance term only) it
        // fails whenever no draw was 1, in about half of them.
        var upperFailures = 0, naiveFailures = 0
        for _ in 0..<2000 {
            let draws = (0..<300).map { _ in rng.uniform() < 0.002 ? 1.0 : 0 }
            if try EmpiricalBernstein.upperMean(draws, range: 1, delta: 0.05) < 0.002 { upperFailures += 1 }
            let mean = draws.reduce(0, +) / 300, v = draws.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / 299
            if mean + (2 * v * Foundation.log(2 / 0.05) / 300).squareRoot() < 0.002 { naiveFailures += 1 }
        }
        XCTAssertLessThanOrEqual(upperFailures, 100)
        XCTAssertGreaterThan(naiveFailures, 800)
    }

    /// The two bounds behind c's interval (docs/METHOD.md §19, "c inside"): at every sampled θ, Tr F(θ) is at
    /// most the majorants' trace; and the mean of Tr F over 4 000 uniform draws lies below `meanTraceBound`
    /// (within 4 standard errors), on the ceilings' cases: MLPs and CNNs with pooling, relu, tanh, sigmoid
    /// and linear, with and without biases, on boxes around 0 and on one side of it, and a deeper relu MLP.
    /// With relu on a symmetric box the bound is nearly exact (only the noise's cross terms are bounded), so
    /// it lies within 15% of the mean there (4–9% on these cases): a bound whose constants were too small (η' or η below 1/2, or
    /// no cross term) would fail the first check, and one that dropped the symmetric-relu halving would fail
    /// this one.
    func testTraceBoundsHold() throws {
        let image = R.gaussianData(4, 16, seed: 3)
        let cases: [(MarkovFisher, ClosedRange<Double>, Bool)] = [
            (try model("5-4-3", .relu, data: R.gaussianData(6, 5, seed: 1)), -1...1, true),
            (try model("6-5-4-4-3", .relu, data: R.gaussianData(8, 6, seed: 6), bias: true, r: 3), -1...1, true),
            (try model("5-4-3-3", .tanh, data: R.gaussianData(6, 5, seed: 2), bias: true), -1...1, false),
            (try model("5-4-3-3", .sigmoid, data: R.gaussianData(3, 5, seed: 4)), -0.5...2, false),
            (try model("5-3-2-3", .linear, data: R.gaussianData(4, 5, seed: 5), bias: true), 0...1, false),
            (try model("5-4-3", .relu, data: R.gaussianData(6, 5, seed: 1)), -0.5...1, false),
            (try model("4x4x1-conv2k3p1-maxpool2-3", .relu, data: image), -1...1, true),
            (try model("4x4x1-conv2k3p1-avgpool2-conv2k1-3", .tanh, data: image, bias: true), -1...1, false),
        ]
        var rng = Xoshiro256(seed: 12, stream: [1])
        for (m, box, tight) in cases {
            let ceiling = try m.blockCeilings(box: box).reduce(0) { $0 + $1.traceBound }
            let bound = try XCTUnwrap(m.meanTraceBound(box: box), "\(m.architecture)")
            let n = 4000
            let traces = try (0..<n).map { _ in try m.uniformTrace(box: box, rng: &rng) }
            for t in traces { XCTAssertLessThanOrEqual(t, ceiling * (1 + 1e-12), "\(m.architecture): Tr F above the majorants' trace") }
            let mean = traces.reduce(0, +) / Double(n)
            let se = (traces.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(n - 1) / Double(n)).squareRoot()
            XCTAssertLessThanOrEqual(mean - 4 * se, bound, "\(m.architecture) on \(box): mean \(mean) ± \(se)")
            if tight { XCTAssertLessThan(bound, 1.15 * mean, "\(m.architecture): relu on a symmetric box") }
        }
    }

    /// Where a ceiling is attained (a stage that does not vary), the exact value and the upper end are the
    /// same number reached by different roundings. The ends are widened by their rounding, so a value summed
    /// from the same d logs in another order lies inside: over 200 random sets of d = 20 000 terms, the upper
    /// end is at least the reverse-order sum's value and the lower end at most it (without the widening about
    /// half of them fail), and the widening stays below 10⁻¹⁰ of the value.
    func testEndsAreWidenedByTheirRounding() throws {
        var rng = Xoshiro256(seed: 7, stream: [1])
        let d = 20_000, eps = 0.1, zeta = 2.0 / 3
        let l = Swift.abs(Foundation.log(eps)), base = zeta * Double(d)
        var unwidened = 0
        for _ in 0..<200 {
            let s = rng.uniform(1, 20)
            let terms = (0..<d).map { _ in Foundation.log1p(s * rng.uniform(0, 1)) }
            let forward = terms.reduce(0, +), backward = terms.reversed().reduce(0, +)
            let p = CertifiedBracket.Point(eps: eps, zeta: zeta, dimension: d, stageUpper: [forward], stageLower: [forward])
            let exact = base + backward / l
            XCTAssertGreaterThanOrEqual(p.dZeta.upperBound, exact)
            XCTAssertLessThanOrEqual(p.dZeta.lowerBound, exact)
            XCTAssertLessThan(p.dZeta.upperBound - p.dZeta.lowerBound, 1e-10 * exact)
            if base + forward / l < exact { unwidened += 1 }
        }
        XCTAssertGreaterThan(unwidened, 20, "the test meets the rounding it guards against")
    }

    /// The staged lower end (docs/METHOD.md §19): stage 1's larger term plus, per later stage, the larger of its
    /// floor and (only where the model's stages are associated) its Jensen term; it is the lower 2sED's lower end
    /// and bounds the 2sED's below beside Jensen's sum and Markov's. Values by hand, in units of |log ε|.
    func testStagedLowerEndTakesFloorsAndAssociatedJensenTerms() throws {
        let l = Foundation.log(10.0)
        let upper = [4 * l, 4 * l, 4 * l], lower = [1 * l, 0.5 * l, 0.25 * l]
        func point(floor: [Double]?, associated: Bool, markov: Double? = nil, stageOne: Double? = nil) -> CertifiedBracket.Point {
            CertifiedBracket.Point(eps: 0.1, zeta: 0.5, dimension: 4, stageUpper: upper, stageLower: lower, markov: markov,
                                   stageOneMarkov: stageOne, stageFloor: floor, associated: associated)
        }
        // base ζd = 2; hi = 2 + 12.
        let plain = point(floor: nil, associated: false)
        XCTAssertEqual(plain.dZetaLower.lowerBound, 3, accuracy: 1e-12, "stage 1's term alone")
        XCTAssertEqual(plain.dZeta.lowerBound, 3.75, accuracy: 1e-12, "Jensen's sum")
        XCTAssertEqual(plain.stageFloor, [0, 0, 0])
        let floored = point(floor: [9 * l, 0.75 * l, 0.1 * l], associated: false)
        XCTAssertEqual(floored.dZetaLower.lowerBound, 2 + 1 + 0.75 + 0.1, accuracy: 1e-12, "floors; entry 0 unused")
        XCTAssertEqual(floored.dZeta.lowerBound, 3.85, accuracy: 1e-12, "the staged sum is above Jensen's")
        let associated = point(floor: [0, 0.75 * l, 0.1 * l], associated: true)
        XCTAssertEqual(associated.dZetaLower.lowerBound, 2 + 1 + 0.75 + 0.25, accuracy: 1e-12, "per stage, the larger of the two")
        let markovFirst = point(floor: [0, 0.75 * l, 0.1 * l], associated: true, markov: 1.5 * l, stageOne: 1.25 * l)
        XCTAssertEqual(markovFirst.dZetaLower.lowerBound, 2 + 1.25 + 0.75 + 0.25, accuracy: 1e-12, "stage 1 from Markov's end")
        XCTAssertEqual(markovFirst.dZeta.lowerBound, 4.25, accuracy: 1e-12)
        let markovWins = point(floor: nil, associated: false, markov: 3 * l)
        XCTAssertEqual(markovWins.dZeta.lowerBound, 5, accuracy: 1e-12, "Markov's on Z stays an end of the 2sED only")
        XCTAssertEqual(markovWins.dZetaLower.lowerBound, 3, accuracy: 1e-12)
        let capped = point(floor: [0, 20 * l, 0], associated: false)
        XCTAssertEqual(capped.dZetaLower.lowerBound, capped.dZetaLower.upperBound, "never above hi")
    }

    /// Attaching a bracket: a lower 2sED above the 2sED's upper end is printed at it (its interval too), and
    /// both that and a 2sED outside its bracket are recorded; points inside leave no record.
    func testAttachLowersTheLower2sEDAndRecordsWhatLiesOutside() throws {
        let l = Foundation.log(10.0)
        let b = CertifiedBracket(delta: 0.01, draws: 10, points: [
            CertifiedBracket.Point(eps: 0.1, zeta: 0.5, dimension: 4, stageUpper: [l, l], stageLower: [0.5 * l, 0.25 * l]),
            CertifiedBracket.Point(eps: 0.01, zeta: 0.5, dimension: 4, stageUpper: [2 * l], stageLower: [l]),
        ], scale: .exact(1))
        XCTAssertEqual(b.points[0].dZeta.lowerBound, 2.75, accuracy: 1e-12)
        XCTAssertEqual(b.points[0].dZeta.upperBound, 4, accuracy: 1e-12)
        XCTAssertEqual(b.points[0].dZetaLower.lowerBound, 2.5, accuracy: 1e-12)
        func point(_ eps: Double, _ d: Double, _ lower: Double) -> EpsilonEstimate {
            EpsilonEstimate(eps: eps, zeta: 0.5, dZeta: d, dZetaJoint: d, dZetaLower: lower, ci95Lower: (lower - 0.5)...(lower + 0.5))
        }
        var inside = [point(0.1, 3, 2.9), point(0.01, 2.8, 2.7)]
        XCTAssertNil(EpsilonEstimate.attach(b, to: &inside))
        XCTAssertEqual(inside.map(\.bracket), b.points, "point i takes the bracket's point i")
        var outside = [point(0.1, 3.9, 4.4), point(0.01, 3.5, 2.6)]
        let check = try XCTUnwrap(EpsilonEstimate.attach(b, to: &outside))
        XCTAssertEqual(check.cases.map(\.quantity), ["d_zeta_lower", "d_zeta"])
        XCTAssertEqual(check.cases[1].eps, 0.01)
        XCTAssertEqual(try XCTUnwrap(outside[0].dZetaLower), 4, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(outside[0].ci95Lower).upperBound, 4, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(outside[0].ci95Lower).lowerBound, 3.9, accuracy: 1e-12)
        XCTAssertEqual(outside[1].dZetaLower, 2.6, "a lower 2sED below the upper end stays")
    }

    /// Every estimate, not only `ed`'s report, lowers a lower 2sED above its bracket (what `compare` and
    /// `study` read): the same bracket as above, by hand; without a bracket every point stays.
    func testEstimateLowersTheLower2sEDToItsBracket() throws {
        let l = Foundation.log(10.0)
        let b = CertifiedBracket(delta: 0.01, draws: 10, points: [
            CertifiedBracket.Point(eps: 0.1, zeta: 0.5, dimension: 4, stageUpper: [l, l], stageLower: [0.5 * l, 0.25 * l]),
            CertifiedBracket.Point(eps: 0.01, zeta: 0.5, dimension: 4, stageUpper: [2 * l], stageLower: [l]),
        ], scale: .exact(1))
        let points = [
            EpsilonEstimate(eps: 0.1, zeta: 0.5, dZeta: 3.9, dZetaJoint: 3.9, dZetaLower: 4.4, ci95: 3.8...4.0, ci95Lower: 4.2...4.6),
            EpsilonEstimate(eps: 0.01, zeta: 0.5, dZeta: 2.8, dZetaJoint: 2.8, dZetaLower: 2.6, ci95Lower: 2.1...3.5),
        ]
        let e = NetworkEstimate(kind: .smc, points: points, paths: 8, scale: 1, bracket: b)
        XCTAssertEqual(try XCTUnwrap(e.points[0].dZetaLower), 4, accuracy: 1e-12, "lowered to the 2sED's upper end, 4")
        XCTAssertEqual(try XCTUnwrap(e.points[0].ci95Lower).lowerBound, 4, accuracy: 1e-12)
        XCTAssertEqual(try XCTUnwrap(e.points[0].ci95Lower).upperBound, 4, accuracy: 1e-12)
        XCTAssertEqual(e.points[0].dZeta, 3.9, "the 2sED itself is not touched")
        var attached = points[1]
        attached.bracket = b.points[1]
        XCTAssertEqual(e.points[1], attached, "below the upper end (3 at ε = 0.01): unchanged, interval included")
        XCTAssertEqual(e.diagnostics.bracketCheck?.cases.map(\.quantity), ["d_zeta_lower"], "what lay outside, for compare's warning")
        XCTAssertEqual(e.diagnostics.bracketCheck?.cases.first?.estimate, 4.4)
        XCTAssertEqual(NetworkEstimate(kind: .smc, points: points, paths: 8, scale: 1, bracket: nil).points, points)
        let below = EpsilonEstimate(eps: 0.1, zeta: 0.5, dZeta: 3.9, dZetaJoint: 3.9, dZetaLower: 3.5, ci95Lower: 3.2...3.8)
        let inside = NetworkEstimate(kind: .smc, points: [below, points[1]], paths: 8, scale: 1, bracket: b)
        XCTAssertNil(inside.diagnostics.bracketCheck, "nothing outside: no check")
    }

    /// A frozen schedule's replay is unbiased for Z at every scale it passes (the premise of the Markov
    /// lower end): on a unit with a closed-form `Z(s) = E_U Π_i (1 + s r_i(w))`, roots `5 w_i` on [0, 1]⁶, so
    /// `Z(s) = (1 + 2.5 s)⁶`, the mean of 3000 replays of 16 particles matches Z within 4 standard errors
    /// at s = 2 and s = 50, where the pilot had to anneal (several resampling steps).
    func testFrozenReplayIsUnbiased() throws {
        let unit = SMCUnit(dimension: 6, box: 0...1, roots: { w in w.map { 5 * $0 } })
        let stops = [2.0, 50]
        let settings = try SMCSettings(particles: 16, replicates: 2, essFraction: 0.8, moves: 2)
        let schedule = try FrozenSchedule.pilot(unit, stops: stops, settings: settings, seed: 4, stream: [1])
        XCTAssertGreaterThan(schedule.steps.filter { $0.move != nil }.count, 2, "the pilot anneals")
        let runs = 3000
        var sums = [[Double]](repeating: [], count: stops.count)
        for r in 0..<runs {
            let l = try schedule.replay(unit, stops: stops, particles: 16, seed: 4, stream: [2, UInt64(r)])
            for t in stops.indices { sums[t].append(Foundation.exp(l[t])) }
        }
        for (t, s) in stops.enumerated() {
            let z = Foundation.pow(1 + 2.5 * s, 6)
            let mean = sums[t].reduce(0, +) / Double(runs)
            let sd = (sums[t].reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(runs - 1)).squareRoot()
            XCTAssertEqual(mean, z, accuracy: 4 * sd / Double(runs).squareRoot(), "s = \(s): mean \(mean), Z \(z)")
        }
    }

    func quadrature(_ m: MarkovFisher, data: Matrix, scale s: Double) throws -> (logZ: Double, lower: Double) {
        try tinyNetworkQuadrature(m, scale: s)
    }

    func tinyRelu() throws -> (MarkovFisher, Matrix) { try tinyReluNetwork() }

    /// The lower ends are taken at c's lower end (docs/METHOD.md §19): the first
    /// block's Jensen term, recomputed from the bracket's own draws (streams "BRKT", 0, k) at `t√c_lo`, is the
    /// bracket's, and at `t√c_hi` it is larger; the upper end lies below the majorants at `t√c_hi` and above `log Z`
    /// there by quadrature (c's interval from 30 trace draws, wide: c_hi ≈ 20 c_lo). The coverage tests' margins
    /// hide either end taken at the other end of c's interval.
    func testEachEndIsAtItsEndOfCsInterval() async throws {
        let (m, _) = try tinyRelu()
        let eps = [1e-3, 0.1], zeta = 2.0 / 3, seed: UInt64 = 5, draws = 400
        let b = try await m.certifiedBracket(box: -1...1, eps: eps, zeta: zeta, normalization: .trace, seed: seed, draws: draws,
                                             traceDraws: 30, upperDraws: 2000, tangentDraws: 20_000, threads: 1)
        let (cLo, cHi) = (b.scale.range.lowerBound, b.scale.range.upperBound)
        XCTAssertLessThan(cLo, 0.9 * cHi, "c's interval should be wide here")
        let ceilings = try m.blockCeilings(box: -1...1)
        let first = m.unitInputs(m.firstBlockInputs, block: 0)
        let roots = try (0..<draws).map { k -> [Double] in
            var rng = Xoshiro256(seed: seed, stream: [MarkovFisher.bracketStream, 0, UInt64(k)])
            let net = Network.uniform(architecture: m.architecture, activation: m.activation, box: -1...1, rng: &rng)
            return try m.unitRoots(m.unitParameters(net, block: 0, unit: 0), inputs: first)
        }
        let share = CertifiedBracket.shares(delta: CertifiedBracket.defaultDelta, estimatedScale: true, sampledUpper: true,
                                            stages: m.blockDimensions.count, points: eps.count)
        for (i, e) in eps.enumerated() {
            func scale(_ c: Double) -> Double { ScaleParameters.t(eps: e, zeta: zeta) * c.squareRoot() }
            func jensen(_ c: Double) throws -> Double {
                let s = scale(c)
                return Swift.max(0, try EmpiricalBernstein.lowerMean(roots.map { LogSpace.logDetSqrt(roots: $0, scale: s) },
                                                                     range: ceilings[0].unitLogBound(scale: s), delta: share.jensen))
            }
            XCTAssertEqual(b.points[i].stageLower[0], try jensen(cLo), accuracy: 1e-9, "ε = \(e)")
            XCTAssertGreaterThan(try jensen(cHi), b.points[i].stageLower[0] + 1e-3, "ε = \(e)")
            XCTAssertLessThanOrEqual(b.points[i].stageUpper.reduce(0, +), ceilings.reduce(0) { $0 + $1.logBound(scale: scale(cHi)) } + 1e-9)
            // The upper end holds wherever in its interval c lies, so at c_hi: above log Z there by quadrature.
            let exactHi = try tinyNetworkQuadrature(m, scale: scale(cHi)).logZ
            XCTAssertGreaterThanOrEqual(b.points[i].stageUpper.reduce(0, +), exactHi - 1e-9, "ε = \(e)")
        }
    }

    /// The bracket with c inside, on a network whose answer is known: the 1-1-2 relu network under the trace
    /// normalisation, with `E_θ Tr F` and the 2sED at the true c = d / E_θ Tr F by midpoint quadrature. Over
    /// 200 seeds (each bracket with c's interval from 1 000 trace draws of its own) both ends hold at both ε
    /// in at least 198 (δ = 1%); c's interval holds the true c in every seed where the bracket is checked.
    func testBracketWithCInsideHoldsOnATinyNetwork() async throws {
        let (m, _) = try tinyRelu()
        let x0 = m.unitInputs(m.firstBlockInputs, block: 0)
        let nw = 100, nv = 30
        var mu = 0.0
        for a in 0..<nw {
            let w = -1 + (Double(a) + 0.5) * 2 / Double(nw)
            let t1 = try m.unitRoots([w], inputs: x0).reduce(0) { $0 + $1 * $1 }
            var net = m.zeroNetwork()
            m.setUnit(&net, block: 0, unit: 0, parameters: [w])
            let xa = m.unitInputs(try m.blockInputs(net, block: 1), block: 1)
            var t2 = 0.0
            for b in 0..<nv { for c in 0..<nv {
                let v = [-1 + (Double(b) + 0.5) * 2 / Double(nv), -1 + (Double(c) + 0.5) * 2 / Double(nv)]
                t2 += try m.unitRoots(v, inputs: xa).reduce(0) { $0 + $1 * $1 } / Double(nv * nv)
            } }
            mu += (t1 + t2) / Double(nw)
        }
        let c = 3 / mu
        let eps = [1e-3, 0.1], zeta = 2.0 / 3
        let exact = try eps.map { e in zeta * 3 + (try quadrature(m, data: m.data, scale: ScaleParameters.t(eps: e, zeta: zeta) * c.squareRoot())).logZ / Swift.abs(Foundation.log(e)) }
        var held = [0, 0], cHeld = 0
        for seed in 1...200 {
            let b = try await m.certifiedBracket(box: -1...1, eps: eps, zeta: zeta, normalization: .trace, seed: UInt64(seed), draws: 50,
                                                 traceDraws: 1000, upperDraws: 2000, tangentDraws: 20_000, threads: 1)
            for i in eps.indices where b.points[i].dZeta.contains(exact[i]) { held[i] += 1 }
            if b.scale.range.contains(c) { cHeld += 1 }
        }
        XCTAssertGreaterThanOrEqual(held[0], 198, "ε = 10⁻³")
        XCTAssertGreaterThanOrEqual(held[1], 198, "ε = 0.1")
        XCTAssertEqual(cHeld, 200)
    }

    /// The sampled upper end of the first block (docs/METHOD.md §19, "The first block, sampled") against the
    /// exact mean of the 1-1-2 relu network's first-layer factor (midpoint quadrature over its one weight):
    /// over 200 seeds of 2 000 draws each at δ = 0.01 it holds in at least 198 at two scales, and it lies below
    /// the unit's majorant every time (half the samples are active at any weight, all of them at the
    /// majorant). The bracket takes the smaller of the two, so its upper end still holds against quadrature.
    func testSampledFirstBlockUpperHolds() async throws {
        let (m, data) = try tinyRelu()
        let x0 = m.unitInputs(data, block: 0)
        let scales = [3.0, 40]
        let ceilings = try m.blockCeilings(box: -1...1)
        let exact = try scales.map { s in
            LogSpace.logMeanExp(try (0..<2000).map { a in
                LogSpace.logDetSqrt(roots: try m.unitRoots([-1 + (Double(a) + 0.5) * 2 / 2000], inputs: x0), scale: s)
            })
        }
        var held = [0, 0], below = [0, 0]
        for seed in 1...200 {
            let bounds = try await m.firstUnitMeanBounds(inputs: x0, box: -1...1, scales: scales, unitBound: { ceilings[0].unitLogBound(scale: $0) },
                                                         seed: UInt64(seed), delta: 0.01, draws: 2000, threads: 1)
            let b = try XCTUnwrap(bounds)
            for i in scales.indices {
                if b[i] >= exact[i] - 1e-12 { held[i] += 1 }
                if b[i] < ceilings[0].unitLogBound(scale: scales[i]) - 0.05 { below[i] += 1 }
            }
        }
        XCTAssertGreaterThanOrEqual(held[0], 198, "s = 3")
        XCTAssertGreaterThanOrEqual(held[1], 198, "s = 40")
        XCTAssertEqual(below, [200, 200], "below the majorant")
        // Hölder's moments: `(1/p) log E g^p` at p = 2 and 3, against the same quadrature.
        let powers = [2.0, 3]
        let exactMoments = try zip(scales, powers).map { s, p in
            LogSpace.logMeanExp(try (0..<2000).map { a in
                p * LogSpace.logDetSqrt(roots: try m.unitRoots([-1 + (Double(a) + 0.5) * 2 / 2000], inputs: x0), scale: s)
            }) / p
        }
        var heldMoments = [0, 0]
        for seed in 1...200 {
            let bounds = try await m.firstUnitMeanBounds(inputs: x0, box: -1...1, scales: scales, powers: powers,
                                                         unitBound: { ceilings[0].unitLogBound(scale: $0) },
                                                         seed: UInt64(seed), delta: 0.01, draws: 2000, threads: 1)
            let b = try XCTUnwrap(bounds)
            for i in scales.indices where b[i] >= exactMoments[i] - 1e-12 { heldMoments[i] += 1 }
        }
        XCTAssertGreaterThanOrEqual(heldMoments[0], 198, "p = 2")
        XCTAssertGreaterThanOrEqual(heldMoments[1], 198, "p = 3")
        // The tangent route (20 000 draws of the pre-activations), at p = 1 and 2, against the same quadrature;
        // its chunks are merged in order, so one thread or two give the same bits.
        let squares = try scales.map { s in
            LogSpace.logMeanExp(try (0..<2000).map { a in
                2 * LogSpace.logDetSqrt(roots: try m.unitRoots([-1 + (Double(a) + 0.5) * 2 / 2000], inputs: x0), scale: s)
            }) / 2
        }
        var heldTangent = [0, 0, 0, 0]
        for seed in 1...200 {
            for (k, p) in [1.0, 2].enumerated() {
                let bounds = try await m.firstUnitTangentBounds(inputs: x0, box: -1...1, scales: scales, powers: [p, p],
                                                                unitBound: { ceilings[0].unitLogBound(scale: $0) },
                                                                seed: UInt64(seed), delta: 0.01, draws: 20_000, threads: 1)
                let b = try XCTUnwrap(bounds)
                let target = p == 1 ? exact : squares
                for i in scales.indices where b[i] >= target[i] - 1e-12 { heldTangent[2 * k + i] += 1 }
            }
        }
        XCTAssertTrue(heldTangent.allSatisfy { $0 >= 198 }, "\(heldTangent)")
        let one = try await m.firstUnitTangentBounds(inputs: x0, box: -1...1, scales: scales, unitBound: { ceilings[0].unitLogBound(scale: $0) },
                                                     seed: 3, delta: 0.01, draws: 50_000, threads: 1)
        let two = try await m.firstUnitTangentBounds(inputs: x0, box: -1...1, scales: scales, unitBound: { ceilings[0].unitLogBound(scale: $0) },
                                                     seed: 3, delta: 0.01, draws: 50_000, threads: 2)
        XCTAssertEqual(one, two)
        let few = try await m.firstUnitMeanBounds(inputs: x0, box: -1...1, scales: scales, unitBound: { ceilings[0].unitLogBound(scale: $0) },
                                                  seed: 1, delta: 0.01, draws: 10, threads: 1)
        XCTAssertNil(few, "too few draws: no sampled end")
    }

    /// The first block's sampled mean and the second block's mean over the first layer's weights are never
    /// taken together (both average over θ_1, and their product bounds `E[G_1 M_2]` only if they are
    /// uncorrelated): with the sampled mean the second block is at its majorant, the later blocks at their
    /// own smaller bound; without it, or where that sum is larger, every block is as `upperLogBound` has it.
    func testSampledFirstBlockIsPairedWithTheSecondBlocksMajorant() throws {
        let m = try model("6-4-4-3", .relu, data: R.gaussianData(20, 6, seed: 5))
        let ceilings = try m.blockCeilings(box: -1...1)
        for s in [0.5, 5, 50] {
            let supremum = ceilings.map { $0.upperLogBound(scale: s) }
            XCTAssertNotNil(ceilings[1].mean, "the second block has a bound in the mean")
            XCTAssertLessThan(supremum[1], ceilings[1].logBound(scale: s), "and it is the smaller at s = \(s)")
            XCTAssertEqual(MarkovFisher.upperTerms(ceilings, scale: s, firstBlockMean: nil), supremum)
            let paired = MarkovFisher.upperTerms(ceilings, scale: s, firstBlockMean: 0)
            XCTAssertEqual(paired, [0, ceilings[1].logBound(scale: s)] + supremum[2...], "s = \(s)")
            // A first-block mean that saves less than the second block's mean does: the majorant's terms.
            let saving = ceilings[1].logBound(scale: s) - supremum[1]
            let close = supremum[0] - saving / 2
            XCTAssertEqual(MarkovFisher.upperTerms(ceilings, scale: s, firstBlockMean: close), supremum, "s = \(s)")
            XCTAssertEqual(MarkovFisher.upperTerms(ceilings, scale: s, firstBlockMean: supremum[0] + 1), supremum)
        }
    }

    /// Hölder's pair on the 1-1-2 relu network, every part by midpoint quadrature over its one first-layer weight
    /// w (the second block's majorant `M_2(w)` from w's hidden outputs): `(1/p) log E g^p + (1/q) log E M_2^q`
    /// bounds `log E[g M_2]` at p = 1.25, 2 and 4; the second block's term at each p lies above its exact q-th
    /// moment; the upper end's terms built from the exact first-block moment lie above the exact log Z; and
    /// built from the sampled moment (`firstUnitMeanBounds` at that p, 2 000 draws, δ = 0.01) they lie above
    /// `log E[g M_2]` in at least 198 of 200 seeds at each p and scale.
    func testHolderPairAgainstQuadrature() async throws {
        let (m, _) = try tinyRelu()
        let ceilings = try m.blockCeilings(box: -1...1)
        XCTAssertNotNil(ceilings[1].mean)
        let x0 = m.unitInputs(m.firstBlockInputs, block: 0)
        let layer = m.architecture.parametricLayers[1]
        let nw = 2000
        for s in [3.0, 40] {
            var logG = [Double](), logM = [Double]()
            for a in 0..<nw {
                let w = -1 + (Double(a) + 0.5) * 2 / Double(nw)
                logG.append(LogSpace.logDetSqrt(roots: try m.unitRoots([w], inputs: x0), scale: s))
                var net = m.zeroNetwork()
                m.setUnit(&net, block: 0, unit: 0, parameters: [w])
                let xa = m.architecture.parametric(layer: layer).patches(try m.blockInputs(net, block: 1))
                let pi = try SymmetricEigen.eigenvalues(BLAS.gram(xa, transpose: true, alpha: 1 / Double(xa.rows)))
                let f = 1 / Double(m.architecture.classes)
                logM.append(Double(ceilings[1].copies) * pi.reduce(0) { $0 + Foundation.log1p(s * (f * Swift.max(0, $1)).squareRoot()) })
            }
            XCTAssertEqual(logM.max()!, ceilings[1].logBound(scale: s), accuracy: 0.5, "s = \(s): the majorant's supremum")
            let joint = LogSpace.logMeanExp(zip(logG, logM).map { $0 + $1 })
            let exact = try tinyNetworkQuadrature(m, scale: s).logZ
            XCTAssertLessThanOrEqual(exact, joint + 1e-9)
            for p in [1.25, 2, 4] {
                let q = p / (p - 1)
                let first = LogSpace.logMeanExp(logG.map { p * $0 }) / p, second = LogSpace.logMeanExp(logM.map { q * $0 }) / q
                XCTAssertGreaterThanOrEqual(first + second, joint - 1e-9, "s = \(s), p = \(p)")
                XCTAssertGreaterThanOrEqual(MarkovFisher.secondBlock(ceilings, scale: s, power: p), second - 1e-9, "s = \(s), p = \(p)")
                let terms = MarkovFisher.upperTerms(ceilings, scale: s, firstBlockMean: first, power: p)
                XCTAssertGreaterThanOrEqual(terms.reduce(0, +), exact, "s = \(s), p = \(p)")
                var held = 0
                for seed in 1...200 {
                    let bounds = try await m.firstUnitMeanBounds(inputs: x0, box: -1...1, scales: [s], powers: [p],
                                                                 unitBound: { ceilings[0].unitLogBound(scale: $0) },
                                                                 seed: UInt64(seed), delta: 0.01, draws: 2000, threads: 1)
                    let sampled = MarkovFisher.upperTerms(ceilings, scale: s, firstBlockMean: try XCTUnwrap(bounds)[0], power: p)
                    if sampled.reduce(0, +) >= joint { held += 1 }
                }
                XCTAssertGreaterThanOrEqual(held, 198, "s = \(s), p = \(p)")
            }
        }
    }

    /// Hölder's exponent is chosen from the majorants alone: 1 where the second block has no bound in the mean
    /// (a softmax-only network has no second block); on a relu MLP with a sampled first block, above 1 at large
    /// scales, where the pair it predicts is below both the p = 1 pair and every block at its supremum.
    func testHolderPowerIsChosenFromTheMajorants() throws {
        let m = try model("12-6-4", .relu, data: R.gaussianData(30, 12, seed: 9))
        let ceilings = try m.blockCeilings(box: -1...1)
        let soft = try model("3-2", .tanh, data: R.gaussianData(5, 3, seed: 2))
        let floor = Foundation.log(MarkovFisher.unitMeanBound(mean: 0, variance: 0, count: 20_000, delta: 1e-3))
        XCTAssertEqual(MarkovFisher.holderPower(try soft.blockCeilings(box: -1...1), scale: 30, units: 2, unitMoment: { floor / $0 }).power, 1)
        XCTAssertEqual(floor, Foundation.log(-Foundation.expm1(Foundation.log(5e-4) / 20_000)), accuracy: 1e-9, "Chernoff–Hoeffding's, at δ/2")
        for s in [30.0, 300] {
            let unit = ceilings[0].unitLogBound(scale: s)
            let p = MarkovFisher.holderPower(ceilings, scale: s, units: 6, unitMoment: { unit + floor / $0 }).power
            XCTAssertGreaterThan(p, 1, "s = \(s)")
            XCTAssertLessThanOrEqual(p, 4)
            let chosen = MarkovFisher.upperTerms(ceilings, scale: s, firstBlockMean: 6 * (unit + floor / p), power: p).reduce(0, +)
            let plain = MarkovFisher.upperTerms(ceilings, scale: s, firstBlockMean: 6 * (unit + floor), power: 1)
            XCTAssertLessThan(chosen, plain.reduce(0, +) - 1e-6, "s = \(s)")
            XCTAssertLessThan(chosen, ceilings.map { $0.upperLogBound(scale: s) }.reduce(0, +), "s = \(s)")
        }
    }

    /// On an MLP of three blocks the plan weighs the tilted chain: its chosen pair's predicted sum, with the later
    /// blocks at the smaller of the untilted and tilted sums, is never above the untilted plan's, and is below it here;
    /// the sum `upperTerms` then returns at that p with the chain matches the prediction's later part; with the tilted
    /// sums out of reach the choice is the untilted one.
    func testPlanWeighsTheTiltedChain() throws {
        let m = try model("12-6-5-4", .relu, data: R.gaussianData(30, 12, seed: 9), bias: true)
        let ceilings = try m.blockCeilings(box: -1...1)
        let chain = try XCTUnwrap(TiltedChain(ceilings: ceilings))
        let floor = Foundation.log(MarkovFisher.unitMeanBound(mean: 0, variance: 0, count: 20_000, delta: 1e-3))
        var lower = 0
        for s in [30.0, 300] {
            let unit = ceilings[0].unitLogBound(scale: s)
            let moment = { (p: Double) in unit + floor / p }
            let rest = ceilings.dropFirst(2).reduce(0) { $0 + $1.upperLogBound(scale: s) }
            let untilted = MarkovFisher.holderPower(ceilings, scale: s, units: 6, unitMoment: moment)
            let sums = MarkovFisher.tiltedSums(chain, scale: s)
            XCTAssertEqual(Set(sums.keys), Set(MarkovFisher.tiltedPowers))
            let tilted = MarkovFisher.holderPower(ceilings, scale: s, units: 6, tilted: sums, unitMoment: moment)
            XCTAssertLessThanOrEqual(tilted.value, untilted.value + rest + 1e-9, "s = \(s)")
            if tilted.value < untilted.value + rest - 0.5 { lower += 1 }
            let terms = MarkovFisher.upperTerms(ceilings, scale: s, firstBlockMean: 6 * moment(tilted.power), power: tilted.power, chain: chain)
            XCTAssertEqual(terms.reduce(0, +), tilted.value, accuracy: 1e-6 * tilted.value, "s = \(s)")
            let unreachable = sums.mapValues { _ in Double.infinity }
            XCTAssertEqual(MarkovFisher.holderPower(ceilings, scale: s, units: 6, tilted: unreachable, unitMoment: moment).power, untilted.power)
        }
        XCTAssertGreaterThan(lower, 0, "the tilt should lower the plan's sum somewhere")
    }

    /// The first block's plan reads its pilots: draws all far below the majorant favour Chernoff–Hoeffding (its
    /// floor is the lower) and the route with more draws, and at 2·10⁴ draws' floor Hölder's pair; draws of a
    /// steady, large ratio favour the empirical Bernstein bound (its variance term); no pilot leaves the exact
    /// route at p = 1.
    func testFirstBlockPlanReadsItsPilots() throws {
        let m = try model("12-6-4", .relu, data: R.gaussianData(30, 12, seed: 9))
        let ceilings = try m.blockCeilings(box: -1...1)
        let s = 30.0, logG = ceilings[0].unitLogBound(scale: s)
        let tiny = [Double](repeating: 0, count: 500)
        let floorPlan = MarkovFisher.firstBlockPlan(ceilings, scale: s, units: 6, logG: logG, delta: 1e-3,
                                                    pilots: [(tiny, 20_000), (tiny, 10_000_000)])
        XCTAssertEqual(floorPlan.route, 1)
        XCTAssertEqual(floorPlan.inequality, .chernoffHoeffding)
        XCTAssertGreaterThan(MarkovFisher.firstBlockPlan(ceilings, scale: s, units: 6, logG: logG, delta: 1e-3,
                                                         pilots: [(tiny, 20_000), nil]).power, 1, "Hölder's pair at the exact route's floor")
        let steady = (0..<500).map { 0.5 + 0.001 * Double($0 % 7) }
        XCTAssertEqual(MarkovFisher.firstBlockPlan(ceilings, scale: s, units: 6, logG: logG, delta: 1e-3,
                                                   pilots: [(steady, 20_000), nil]).inequality, .bernstein)
        let none = MarkovFisher.firstBlockPlan(ceilings, scale: s, units: 6, logG: logG, delta: 1e-3, pilots: [nil, nil])
        XCTAssertEqual(none.route, 0)
        XCTAssertEqual(none.power, 1)
    }

    /// The Markov end's estimate is unbiased for Z (frozen schedules, outer particles from the stage-1
    /// populations, islands with a shared frozen schedule): over 400 seeds the mean of `Ẑ` (natural scale)
    /// matches the quadrature of the 1-1-2 relu network within 4 standard errors, at two scales, and so does
    /// stage 1's `Ẑ_1`.
    func testMarkovEstimateIsUnbiased() async throws {
        let (m, data) = try tinyRelu()
        let scales = [3.0, 40]
        var z = [[Double]](repeating: [], count: 2), z1 = z
        for seed in 1...400 {
            let r = try await m.unbiasedLogZ(box: -1...1, scales: scales, seed: UInt64(seed), threads: 1)
            for (t, s) in scales.enumerated() { z[t].append(Foundation.exp(r.logZ[s]!)); z1[t].append(Foundation.exp(r.logZ1[s]!)) }
        }
        for (t, s) in scales.enumerated() {
            let exact = try quadrature(m, data: data, scale: s).logZ
            var g1 = [Double]()
            for a in 0..<2000 {
                let w = -1 + (Double(a) + 0.5) * 2 / 2000
                g1.append(LogSpace.logDetSqrt(roots: try m.unitRoots([w], inputs: m.unitInputs(data, block: 0)), scale: s))
            }
            for (values, truth, what) in [(z[t], Foundation.exp(exact), "Z"), (z1[t], Foundation.exp(LogSpace.logMeanExp(g1)), "Z_1")] {
                let mean = values.reduce(0, +) / Double(values.count)
                let sd = (values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count - 1)).squareRoot()
                XCTAssertEqual(mean, truth, accuracy: 4 * sd / Double(values.count).squareRoot(), "\(what) at s = \(s): mean \(mean), truth \(truth)")
            }
        }
    }

    /// The bracket's lower end is random (its draws and frozen samplers); over 200 seeds at δ = 0.01 it must
    /// hold the exact 2sED of the 1-1-2 relu network (quadrature, c = 1) in at least 99% of them, and so
    /// must the lower 2sED's; the upper end, now the first block's sampled bound where that is smaller, varies
    /// with the seed and never exceeds the majorants' end (which no draws leave in place).
    func testBracketCoverageOver200Seeds() async throws {
        let (m, data) = try tinyRelu()
        let e = 1e-3, zeta = 2.0 / 3, l = Foundation.log(1 / e)
        let q = try quadrature(m, data: data, scale: ScaleParameters.t(eps: e, zeta: zeta))
        let exact = zeta * 3 + q.logZ / l, exactLower = zeta * 3 + q.lower / l
        var held = 0, heldLower = 0
        var uppers = Set<Double>()
        for seed in 1...200 {
            let p = try await m.certifiedBracket(box: -1...1, eps: [e], zeta: zeta, normalization: .none, seed: UInt64(seed), draws: 60, upperDraws: 2000, tangentDraws: 20_000, threads: 1).points[0]
            if p.dZeta.contains(exact) { held += 1 }
            if p.dZetaLower.contains(exactLower) { heldLower += 1 }
            uppers.insert(p.dZeta.upperBound)
        }
        XCTAssertGreaterThanOrEqual(held, 198)
        XCTAssertGreaterThanOrEqual(heldLower, 198)
        let majorant = try await m.certifiedBracket(box: -1...1, eps: [e], zeta: zeta, normalization: .none, seed: 1, draws: 60,
                                                    upperDraws: 0, tangentDraws: 0, threads: 1).points[0].dZeta.upperBound
        XCTAssertGreaterThan(uppers.count, 20, "one per count of draws with the weight's sign")
        XCTAssertLessThanOrEqual(uppers.max() ?? .infinity, majorant)
        XCTAssertLessThan(uppers.max() ?? .infinity, majorant - 1e-3, "the sampled end is the smaller")
    }
}
