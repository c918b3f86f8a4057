@testable import Fisher
import Foundation
@testable import NetworkEstimators
@testable import Networks
@testable import RandomStreams
import TestSupport
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics
import XCTest

/// The generic Fisher rank (`GenericRank`): the closed-form bound holds at every θ, a witness attains it,
/// and where none does the ε → 0 limit is reported as a lower bound.
final class GenericRankTests: XCTestCase {
    typealias R = FisherReference

    func model(_ sizes: [Int], bias: Bool, _ act: Activation, data: Matrix, noise: Int = 1) throws -> MarkovFisher {
        try MarkovFisher(architecture: try Architecture(sizes: sizes, bias: bias), activation: act, data: data, sigma2: 0.1,
                         noiseSamples: noise, noiseSeed: 4)
    }

    /// The block ranks at `draws` uniform θ: each ≤ its bound; returns the largest total seen.
    func checkBoundAtDraws(_ m: MarkovFisher, box: ClosedRange<Double> = -1...1, draws: Int = 40, seed: UInt64,
                           _ label: String) throws -> Int {
        let bounds = try GenericRank.bounds(model: m)
        var best = 0
        for k in 0..<draws {
            var rng = Xoshiro256(seed: seed, stream: [UInt64(k)])
            let net = Network.uniform(architecture: m.architecture, activation: m.activation, box: box, rng: &rng)
            let r = try GenericRank.ranks(model: m, at: net)
            for (b, (rank, bound)) in zip(r, bounds).enumerated() {
                XCTAssertLessThanOrEqual(rank, bound, "\(label): block \(b + 1) at draw \(k)")
            }
            best = Swift.max(best, r.reduce(0, +))
        }
        return best
    }

    /// (a) The bound holds at many random θ, and on a ReLU net where a unit must see ≥ 8 of its 10
    /// samples active to reach rank 8 (random draws activate about half) the draws fall short of the bound
    /// while the witness attains it.
    func testBoundHoldsAtRandomDrawsAndTheWitnessBeatsThem() throws {
        let cases: [([Int], Bool, Activation, Int, Int)] = [
            ([8, 6, 3], false, .relu, 10, 1), ([6, 4, 3], true, .relu, 5, 2), ([6, 4, 3], false, .tanh, 10, 1),
            ([6, 5, 4, 3], true, .sigmoid, 7, 1), ([5, 3, 4, 3], false, .relu, 12, 2), ([4, 3, 2], false, .linear, 6, 1),
            ([6, 3], false, .relu, 4, 1), ([6, 3], true, .tanh, 9, 1),
        ]
        for (i, (sizes, bias, act, n, noise)) in cases.enumerated() {
            let label = "\(sizes) bias \(bias) \(act) N = \(n) R = \(noise)"
            let m = try model(sizes, bias: bias, act, data: R.gaussianData(n, sizes[0], seed: UInt64(20 + i)), noise: noise)
            let drawn = try checkBoundAtDraws(m, seed: UInt64(i), label)
            let g = try GenericRank(model: m, box: -1...1, seed: 9)
            XCTAssertTrue(g.proved, "\(label): witness \(g.blocks.map(\.witness)) of bounds \(g.blocks.map(\.bound))")
            XCTAssertGreaterThanOrEqual(g.bound, drawn, label)
            if sizes == [8, 6, 3] {
                // 6·min(10, 8) + 2·min(10, 6) = 60: a unit needs 8 independent active samples of 10.
                XCTAssertEqual(g.bound, 60)
                XCTAssertLessThan(drawn, g.bound, "the uniform draws should fall short of the generic rank here")
            }
        }
    }

    /// Singular values by one-sided Jacobi rotations (columns orthogonalised pairwise until every pair's
    /// cosine is below 1e-14): independent of the LAPACK eigensolvers behind `GenericRank.ranks`.
    static func singularValues(_ rows: [[Double]]) -> [Double] {
        guard let n = rows.first?.count else { return [] }
        var cols = (0..<n).map { j in rows.map { $0[j] } }
        for _ in 0..<60 {
            var rotated = false
            for p in 0..<n {
                for q in (p + 1)..<n {
                    var a = 0.0, b = 0.0, c = 0.0
                    for i in cols[p].indices { a += cols[p][i] * cols[p][i]; b += cols[q][i] * cols[q][i]; c += cols[p][i] * cols[q][i] }
                    guard Swift.abs(c) > 1e-14 * (a * b).squareRoot(), c != 0 else { continue }
                    rotated = true
                    let zeta = (b - a) / (2 * c)
                    let t = (zeta >= 0 ? 1.0 : -1.0) / (Swift.abs(zeta) + (1 + zeta * zeta).squareRoot())
                    let cs = 1 / (1 + t * t).squareRoot(), sn = cs * t
                    for i in cols[p].indices {
                        let x = cols[p][i], y = cols[q][i]
                        cols[p][i] = cs * x - sn * y
                        cols[q][i] = sn * x + cs * y
                    }
                }
            }
            if !rotated { break }
        }
        return cols.map { $0.reduce(0) { $0 + $1 * $1 }.squareRoot() }.sorted(by: >)
    }

    /// The rank of a stack of finite-difference Jacobians: singular values above 1e-7 of the largest (the
    /// differences are accurate to about 1e-10 of it).
    static func svdRank(_ rows: [[Double]]) -> Int {
        let sv = singularValues(rows)
        guard let top = sv.first, top > 0 else { return 0 }
        return sv.filter { $0 > 1e-7 * top }.count
    }

    /// (a) Against SVDs, at random θ and at the witness: the first Gaussian layer's Fisher block has the
    /// rank of the Jacobian of its means `act(W x_s + b)` stacked over the samples, and a softmax-only
    /// net's has that of `√p_y ∂ log p_y/∂θ` stacked over samples and classes (central differences);
    /// a softmax block after a hidden layer that of the rows `√p_y (e_y − p) ⊗ x̃_s` on its noisy inputs
    /// x̃_s (the gradient of log-softmax in closed form); singular values by Jacobi rotations.
    /// `GenericRank.ranks` agrees with every block at every θ, no draw exceeds the bound, and the witness's
    /// SVD ranks are the bounds (on 8-6-3 with N = 10 the draws fall short of the first).
    func testRanksAgainstTheSVDOfFiniteDifferenceJacobians() throws {
        let cases: [([Int], Bool, Activation, Int)] = [
            ([8, 6, 3], false, .relu, 10), ([6, 4, 3], true, .relu, 5), ([6, 4, 3], false, .tanh, 10), ([5, 3], true, .relu, 4),
            ([6, 3], false, .tanh, 9),
        ]
        for (i, (sizes, bias, act, n)) in cases.enumerated() {
            let label = "\(sizes) bias \(bias) \(act) N = \(n)"
            let x = R.gaussianData(n, sizes[0], seed: UInt64(40 + i))
            let m = try model(sizes, bias: bias, act, data: x)
            let g = try GenericRank(model: m, box: -1...1, seed: 5)
            func svdRankOfFirstBlock(_ net: Network) -> Int {
                let r = R.range(net.architecture, layer: 0)
                if sizes.count == 2 {
                    var rows: [[Double]] = []
                    for s in 0..<n {
                        let xs = Matrix(rows: 1, cols: x.cols, data: Array(x.row(s)))
                        let p = Softmax.probabilities(net.preActivation(layer: 0, input: xs)).data
                        let j = R.jacobian(net, r) { nn in Softmax.logProbabilities(nn.preActivation(layer: 0, input: xs)).data }
                        rows += j.enumerated().map { y, row in row.map { $0 * p[y].squareRoot() } }
                    }
                    return Self.svdRank(rows)
                }
                return Self.svdRank(R.jacobian(net, r) { nn in nn.activate(nn.preActivation(layer: 0, input: x)).data })
            }
            func svdRankOfSoftmaxBlock(_ net: Network) throws -> Int {
                let x1 = try m.blockInputs(net, block: 1)
                let p = Softmax.probabilities(net.preActivation(layer: 1, input: x1))
                var rows: [[Double]] = []
                for s in 0..<x1.rows {
                    let xt = Array(x1.row(s)) + (bias ? [1] : [])
                    for y in 0..<p.cols {
                        let py = p[s, y]
                        rows.append((0..<p.cols).flatMap { k in xt.map { py.squareRoot() * ((k == y ? 1 : 0) - p[s, k]) * $0 } })
                    }
                }
                return Self.svdRank(rows)
            }
            var drawn = 0
            for k in 0..<6 {
                var rng = Xoshiro256(seed: UInt64(70 + i), stream: [UInt64(k)])
                let net = Network.uniform(architecture: m.architecture, activation: act, box: -1...1, rng: &rng)
                let svd = svdRankOfFirstBlock(net)
                let ranks = try GenericRank.ranks(model: m, at: net)
                XCTAssertEqual(ranks[0], svd, "\(label): draw \(k)")
                XCTAssertLessThanOrEqual(svd, g.blocks[0].bound, "\(label): draw \(k)")
                if sizes.count == 3 {
                    let soft = try svdRankOfSoftmaxBlock(net)
                    XCTAssertEqual(ranks[1], soft, "\(label): softmax block, draw \(k)")
                    XCTAssertLessThanOrEqual(soft, g.blocks[1].bound, "\(label): softmax block, draw \(k)")
                }
                drawn = Swift.max(drawn, svd)
            }
            XCTAssertTrue(g.proved, label)
            XCTAssertEqual(svdRankOfFirstBlock(g.witnessNetwork), g.blocks[0].bound, "\(label): the witness attains the bound")
            if sizes.count == 3 {
                XCTAssertEqual(try svdRankOfSoftmaxBlock(g.witnessNetwork), g.blocks[1].bound, "\(label): softmax block at the witness")
            }
            if sizes == [8, 6, 3] { XCTAssertLessThan(drawn, g.blocks[0].bound, "\(label): the draws fall short") }
        }
    }

    /// (b) The witness attains the bound on 6-4-3 (N = 5 and 10, ReLU and tanh, with and without bias), with
    /// the bound's closed form: 4·rank(data) + 2·min(N, 4 + bias), rank(data) = min(N, 6 + bias) for
    /// Gaussian data. The witness lies in the box.
    func testWitnessAttainsTheClosedFormBoundOnSmallNets() throws {
        for n in [5, 10] {
            for act in [Activation.relu, .tanh] {
                for bias in [false, true] {
                    let label = "6-4-3 N = \(n) \(act) bias \(bias)"
                    let m = try model([6, 4, 3], bias: bias, act, data: R.gaussianData(n, 6, seed: UInt64(n)))
                    let g = try GenericRank(model: m, box: -1...1, seed: 1)
                    let q = bias ? 1 : 0
                    XCTAssertEqual(g.blocks.map(\.bound), [4 * Swift.min(n, 6 + q), 2 * Swift.min(n, 4 + q)], label)
                    XCTAssertTrue(g.proved, "\(label): witness \(g.blocks.map(\.witness))")
                    XCTAssertEqual(g.witness, g.bound, label)
                    XCTAssertTrue(g.witnessNetwork.parameters.allSatisfy { (-1...1).contains($0) }, label)
                    let report = RankReport(try FisherRank(perDraw: [[Spectrum(roots: [1])] + [Spectrum(roots: [])]],
                                                           parameters: m.blockDimensions, layers: [1, 2]),
                                            generic: g, zeta: 0.5, dimension: m.architecture.parameterCount)
                    XCTAssertEqual(report.limitKind, .exact)
                    XCTAssertEqual(report.dZetaLimit, 0.5 * Double(m.architecture.parameterCount) + 0.5 * Double(g.bound), accuracy: 1e-12)
                }
            }
        }
    }

    /// (b) A small CNN (conv with padding, pooling, conv, dense softmax): the witness attains the bound,
    /// first layer 2·rank(im2col patches of the data) = 2·9 (2·10 with bias).
    func testWitnessAttainsTheBoundOnACNN() throws {
        for (bias, pool, act, padding) in [(false, PoolingLayer.Kind.average, Activation.relu, 0), (true, .max, .relu, 1),
                                            (false, .max, .tanh, 1)] {
            let label = "bias \(bias) \(pool) \(act) padding \(padding)"
            let c1 = try ConvolutionLayer(input: ImageShape(height: 6, width: 6, channels: 1), filters: 2, kernel: 3, padding: 1, bias: bias)
            let p = try PoolingLayer(pool, input: c1.output, size: 2)
            let c2 = try ConvolutionLayer(input: p.output, filters: 2, kernel: 3, padding: padding, bias: bias)
            let a = try Architecture(stack: [c1, p, c2, DenseLayer(inputs: c2.output.size, outputs: 3, bias: bias)])
            let m = try MarkovFisher(architecture: a, activation: act, data: R.gaussianData(5, 36, seed: 13), sigma2: 0.1,
                                     noiseSamples: 1, noiseSeed: 2)
            _ = try checkBoundAtDraws(m, draws: 10, seed: 3, label)
            let g = try GenericRank(model: m, box: -1...1, seed: 2)
            let q = bias ? 1 : 0
            let positions = c2.output.height * c2.output.width
            XCTAssertEqual(g.blocks.map(\.bound), [2 * (9 + q), 2 * Swift.min(5 * positions, 18 + q), 2 * Swift.min(5, c2.output.size + q)], label)
            XCTAssertTrue(g.proved, "\(label): witness \(g.blocks.map(\.witness)) of \(g.blocks.map(\.bound))")
        }
    }

    /// A later convolution whose kernel reaches past its 1×1 input: only the centre of each 3×3 patch is
    /// ever nonzero, so the bound counts q' = 2 (+ bias) patch entries, not 18, and the witness attains it.
    func testPaddingOnlyPatchEntriesAreLeftOutOfTheBound() throws {
        for bias in [false, true] {
            let c1 = try ConvolutionLayer(input: ImageShape(height: 4, width: 4, channels: 1), filters: 2, kernel: 3, bias: bias)
            let p = try PoolingLayer(.max, input: c1.output, size: 2)
            let c2 = try ConvolutionLayer(input: p.output, filters: 3, kernel: 3, padding: 1, bias: bias)
            let a = try Architecture(stack: [c1, p, c2, DenseLayer(inputs: c2.output.size, outputs: 2, bias: bias)])
            let m = try MarkovFisher(architecture: a, activation: .relu, data: R.gaussianData(10, 16, seed: 3), sigma2: 0.1,
                                     noiseSamples: 1, noiseSeed: 2)
            let q = bias ? 1 : 0
            XCTAssertEqual(GenericRank.structuralPatchLength(c2), 2 + q)
            _ = try checkBoundAtDraws(m, draws: 10, seed: 5, "1×1 input, bias \(bias)")
            let g = try GenericRank(model: m, box: -1...1, seed: 2)
            XCTAssertEqual(g.blocks.map(\.bound), [2 * (9 + q), 3 * (2 + q), 1 * (3 + q)], "bias \(bias)")
            XCTAssertTrue(g.proved, "bias \(bias): witness \(g.blocks.map(\.witness))")
        }
    }

    /// (c) No θ in the box attains the bound: positive data, a bias-free ReLU first layer and a box of
    /// negative weights leave every first-layer unit inactive at every θ, so the layer's rank is 0 < its
    /// bound; the witness stays in the box, the result is unproved, and the limit is the largest rank seen,
    /// labelled a lower bound.
    func testNoWitnessGivesALowerBound() throws {
        var rng = Xoshiro256(seed: 5)
        let data = Matrix(rows: 6, cols: 4, data: (0..<24).map { _ in rng.uniform(0.5, 1.5) })
        let m = try model([4, 3, 2], bias: false, .relu, data: data)
        let box = -1.0 ... -0.1
        let drawn = try checkBoundAtDraws(m, box: box, draws: 10, seed: 1, "negative box")
        let g = try GenericRank(model: m, box: box, seed: 1)
        XCTAssertFalse(g.proved)
        XCTAssertEqual(g.blocks[0].bound, 3 * 4)
        XCTAssertEqual(g.blocks[0].witness, 0)
        XCTAssertEqual(g.candidates, GenericRank.defaultCandidates)
        XCTAssertTrue(g.witnessNetwork.parameters.allSatisfy { box.contains($0) })
        let draws = try FisherRank(perDraw: [[Spectrum(roots: []), Spectrum(roots: [1])]], parameters: m.blockDimensions, layers: [1, 2])
        let report = RankReport(draws, generic: g, zeta: 0.6, dimension: m.architecture.parameterCount)
        XCTAssertEqual(report.limitKind, .lowerBound)
        XCTAssertEqual(report.limitRank, Swift.max(1, g.witness))
        XCTAssertGreaterThanOrEqual(g.witness, drawn)
        XCTAssertEqual(report.dZetaLimit, 0.6 * Double(m.architecture.parameterCount) + 0.4 * Double(report.limitRank), accuracy: 1e-12)
    }

    /// Data in no open half-space (rows x and −x) do not defeat a bias-free ReLU first layer: a unit positive
    /// on a basis of the rows already sees their whole span, so the witness attains the bound.
    func testSymmetricDataStillReachTheBound() throws {
        let x = R.gaussianData(4, 5, seed: 8)
        let data = Matrix(rows: 8, cols: 5, data: x.data + x.data.map { -$0 })
        let m = try model([5, 3, 2], bias: false, .relu, data: data)
        let g = try GenericRank(model: m, box: -1...1, seed: 3)
        XCTAssertEqual(g.blocks.map(\.bound), [3 * 4, 1 * 3])
        XCTAssertTrue(g.proved, "witness \(g.blocks.map(\.witness))")
    }

    /// A box on one side of 0 (lo ≥ 0, hi ≤ 0): the witness lies in it and, where the box allows, attains
    /// the bound.
    func testWitnessStaysInOneSidedBoxes() throws {
        var rng = Xoshiro256(seed: 6)
        let positive = Matrix(rows: 7, cols: 4, data: (0..<28).map { _ in rng.uniform(0.1, 1) })
        for (box, act, data) in [(0.2...1.0, Activation.relu, positive), (-1.0 ... -0.2, .tanh, R.gaussianData(7, 4, seed: 3)),
                                 (0.0...0.5, .sigmoid, R.gaussianData(7, 4, seed: 4))] {
            let m = try model([4, 3, 2], bias: true, act, data: data)
            let g = try GenericRank(model: m, box: box, seed: 4)
            XCTAssertTrue(g.witnessNetwork.parameters.allSatisfy { box.contains($0) }, "\(box) \(act)")
            XCTAssertTrue(g.proved, "\(box) \(act): witness \(g.blocks.map(\.witness)) of \(g.blocks.map(\.bound))")
        }
    }

    /// (d) The P1 net's limits (54-16-7, no bias, ReLU, ζ = 2/3, σ² = 0.1, R = 1) at N = 25, 50, 100: with
    /// data of rank min(N, 54) the generic rank is 16·min(N, 54) + 6·16, so the limit is 816, 949.33,
    /// 970.67. The Covertype data are not in the repository; standard Gaussian inputs of the same width
    /// (rank min(N, 54) as well) stand in, as in the networks notebook.
    func testP1LimitsFromTheGenericRank() throws {
        for (n, limit) in [(25, 816.0), (50, 2848.0 / 3), (100, 2912.0 / 3)] {
            let m = try model([54, 16, 7], bias: false, .relu, data: R.gaussianData(n, 54, seed: 1))
            let g = try GenericRank(model: m, box: -1...1, seed: 1)
            XCTAssertTrue(g.proved, "N = \(n)")
            XCTAssertEqual(g.bound, 16 * Swift.min(n, 54) + 6 * 16)
            let draws = try FisherRank(perDraw: [[Spectrum(roots: [1]), Spectrum(roots: [1])]], parameters: m.blockDimensions, layers: [1, 2])
            let report = RankReport(draws, generic: g, zeta: 2.0 / 3, dimension: 976)
            XCTAssertEqual(report.dZetaLimit, limit, accuracy: 1e-9, "N = \(n)")
            XCTAssertEqual(report.limitKind, .exact)
        }
    }

    /// The report's JSON: the existing keys first, unchanged, then the generic rank's.
    func testReportKeys() throws {
        let m = try model([3, 2, 2], bias: false, .tanh, data: R.gaussianData(4, 3, seed: 2))
        let draws = try FisherRank(perDraw: [[Spectrum(roots: [1, 1]), Spectrum(roots: [1])]], parameters: m.blockDimensions, layers: [1, 2])
        let g = try GenericRank(model: m, box: -1...1, seed: 1)
        struct Wrap: Encodable { let r: RankReport; func encode(to e: any Encoder) throws { try r.encode(to: e) } }
        let keys = { (r: RankReport) throws -> [String] in
            guard case let .object(kv) = try JSONValue(encoding: Wrap(r: r)) else { return [] }
            return kv.map(\.0)
        }
        let all = ["rank", "rank_min", "rank_draws", "rank_blocks", "rank_threshold", "d_zeta_limit", "d_zeta_limit_kind",
                   "rank_generic", "rank_witness", "rank_proved", "rank_generic_blocks"]
        XCTAssertEqual(try keys(RankReport(draws, generic: g, zeta: 0.5, dimension: 10)), all)
        XCTAssertEqual(try keys(RankReport(draws, zeta: 0.5, dimension: 10)), all)
        let plain = RankReport(draws, zeta: 0.5, dimension: 10)
        XCTAssertEqual(plain.limitKind, .lowerBound)
        XCTAssertEqual(plain.dZetaLimit, draws.limit(zeta: 0.5, dimension: 10))
    }
}
