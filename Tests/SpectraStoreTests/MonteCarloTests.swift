import Fisher
import Foundation
import Networks
import RandomStreams
import SpectraStore
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics
import XCTest

final class MonteCarloTests: XCTestCase {
    let eps = [0.003, 0.05, 0.2, 0.6]
    let zeta = 2.0 / 3.0

    /// The estimators of docs/METHOD.md §13 recomputed directly (plain exponentials, plain loops) from networks
    /// drawn with the design's streams, against the driver + LayeredEstimator.
    func testDriverMatchesDirectComputation() async throws {
        let model = WeightFisher([2, 3, 2, 2], coupling: 0.7)
        let design = try MonteCarloDesign(paths: 6, inner: 5, box: -1...1, seed: 42)
        let rows = try await MonteCarlo.run(model: model, design: design, paths: Array(0..<6), threads: 2)
        let spectra = try MonteCarlo.layeredSpectra(rows, blockDimensions: model.blockDimensions)
        let points = try LayeredEstimator(spectra: spectra, normalization: .trace).points(eps: eps, zeta: zeta)

        // Direct: networks from the same streams, exact eigenvalues.
        let K = 6, J = 5, L = 3, d = 16
        let nets = (0..<K).map { design.network(model.architecture, path: $0) }
        let own = nets.map { n in (0..<L).map { model.exactEigenvalues(n, block: $0) } }
        let inner = (0..<K).map { k in (0..<L).map { m in
            m == 0 ? [] : (0..<J).map { j in model.exactEigenvalues(design.innerNetwork(nets[k], block: m, path: k, draw: j), block: m) }
        } }
        // The inner network keeps θ_<m and changes exactly layer m.
        let probe = design.innerNetwork(nets[2], block: 1, path: 2, draw: 3)
        XCTAssertEqual(probe.weights[0], nets[2].weights[0])
        XCTAssertEqual(probe.weights[2], nets[2].weights[2])
        XCTAssertNotEqual(probe.weights[1], nets[2].weights[1])

        let dims = model.blockDimensions
        var negatives = 0
        for k in 0..<K {
            for m in 0..<L {
                let l: [Double] = own[k][m]
                if !l.isEmpty && l.count < dims[m] { negatives += 1 }
                for draw in inner[k][m] where !draw.isEmpty && draw.count < dims[m] { negatives += 1 }
            }
        }
        XCTAssertGreaterThan(negatives, 0)
        XCTAssertEqual(spectra.clampedCount, negatives, "each round-off negative is clamped")
        let meanTrace = own.map { $0.joined().reduce(0, +) }.reduce(0, +) / Double(K)
        let c = Double(d) / meanTrace
        XCTAssertEqual(spectra.meanTrace, meanTrace, accuracy: 1e-12 * meanTrace)
        for (e, p) in zip(eps, points) {
            let s = pow(e, zeta - 1) * c.squareRoot()
            func logdet(_ l: [Double]) -> Double { l.reduce(0) { $0 + log(1 + s * $1.squareRoot()) } }
            let A = own.map { $0.map(logdet) }
            let B = inner.map { $0.map { $0.map(logdet) } }
            let I1 = A.map { exp($0[0]) }.reduce(0, +) / Double(K)
            var nested = log(I1), lower = log(I1)
            for m in 1..<L {
                let u = (0..<K).map { k in exp((0..<m).map { A[k][$0] }.reduce(0, +)) }
                let w = u.map { $0 / u.reduce(0, +) }
                let Ihat = (0..<K).map { k in B[k][m].map(exp).reduce(0, +) / Double(J) }
                nested += log(zip(w, Ihat).map { $0 * $1 }.reduce(0, +))
                lower += zip(w, Ihat).map { $0 * log($1) }.reduce(0, +)
                let ess = 1 / w.map { $0 * $0 }.reduce(0, +)
                XCTAssertEqual(p.ess[m - 1], ess, accuracy: 1e-9 * ess)
            }
            let joint = log(A.map { exp($0.reduce(0, +)) }.reduce(0, +) / Double(K))
            let f = { (x: Double) in self.zeta * Double(d) + x / abs(log(e)) }
            XCTAssertEqual(p.dZeta, f(nested), accuracy: 1e-10 * abs(f(nested)), "nested at ε = \(e)")
            XCTAssertEqual((p.dZetaLower ?? .nan), f(lower), accuracy: 1e-10 * abs(f(lower)), "lower at ε = \(e)")
            XCTAssertEqual(p.dZetaJoint, f(joint), accuracy: 1e-10 * abs(f(joint)), "joint at ε = \(e)")
            XCTAssertLessThanOrEqual((p.dZetaLower ?? .nan), p.dZeta + 1e-12, "lower ≤ nested (Jensen)")
        }
    }

    /// lower ≤ nested on the same samples, on a strongly coupled model and many ε.
    func testLowerNeverAboveNested() async throws {
        let model = WeightFisher([3, 3, 3, 2], coupling: 3, cutoff: 0)
        let design = try MonteCarloDesign(paths: 8, inner: 4, seed: 7)
        let rows = try await MonteCarlo.run(model: model, design: design, paths: Array(0..<8), threads: 2)
        let spectra = try MonteCarlo.layeredSpectra(rows, blockDimensions: model.blockDimensions)
        let grid = LogGrid.points(from: 1e-4, to: 0.9, count: 25)
        for norm in Normalization.allCases {
            for p in try LayeredEstimator(spectra: spectra, normalization: norm).points(eps: grid, zeta: 0.7) {
                XCTAssertLessThanOrEqual((p.dZetaLower ?? .nan), p.dZeta + 1e-12 * abs(p.dZeta))
                XCTAssertGreaterThan(p.dZeta - (p.dZetaLower ?? .nan), 0, "a coupled model has a strict Jensen gap")
            }
        }
    }

    /// When F_m (m ≥ 2) does not depend on θ at all, the three estimators coincide exactly.
    func testConstantLaterBlocksMakeEstimatorsCoincide() async throws {
        let model = WeightFisher([2, 3, 2, 2], constantLater: true)
        let design = try MonteCarloDesign(paths: 7, inner: 3, seed: 3)
        let rows = try await MonteCarlo.run(model: model, design: design, paths: Array(0..<7), threads: 2)
        let spectra = try MonteCarlo.layeredSpectra(rows, blockDimensions: model.blockDimensions)
        for p in try LayeredEstimator(spectra: spectra, normalization: .trace).points(eps: eps, zeta: zeta, bootstrap: 20, seed: 1) {
            XCTAssertEqual((p.dZetaLower ?? .nan), p.dZeta, accuracy: 1e-12 * p.dZeta)
            XCTAssertEqual(p.dZetaJoint, p.dZeta, accuracy: 1e-12 * p.dZeta)
            XCTAssertEqual(p.ess.count, 2)
        }
    }

    func testResultsIndependentOfThreadsAndOrder() async throws {
        let model = WeightFisher([2, 4, 3])
        let design = try MonteCarloDesign(paths: 9, inner: 4, seed: 11)
        let one = try await MonteCarlo.run(model: model, design: design, paths: Array(0..<9), threads: 1)
        let three = try await MonteCarlo.run(model: model, design: design, paths: Array(0..<9), threads: 3)
        XCTAssertEqual(one, three)
        let reversed = try await MonteCarlo.run(model: model, design: design, paths: Array((0..<9).reversed()), threads: 2)
        XCTAssertEqual(Array(reversed.reversed()), one)
        let single = try MonteCarlo.path(4, model: model, design: design)
        XCTAssertEqual(single, one[4])
        // A different seed gives different paths.
        let other = try MonteCarlo.path(4, model: model, design: try MonteCarloDesign(paths: 9, inner: 4, seed: 12))
        XCTAssertNotEqual(other, single)
        // The parallel ε pass equals the serial one.
        let spectra = try MonteCarlo.layeredSpectra(one, blockDimensions: model.blockDimensions)
        let est = try LayeredEstimator(spectra: spectra, normalization: .trace)
        let serial = try est.points(eps: eps, zeta: zeta, bootstrap: 30, seed: 5)
        let parallel = try await est.points(eps: eps, zeta: zeta, bootstrap: 30, seed: 5, threads: 3)
        XCTAssertEqual(serial, parallel)
    }

    func testOneBlockModelHasNoInnerDraws() async throws {
        let model = WholeFisher([3, 2, 2])
        let design = try MonteCarloDesign(paths: 5, inner: 9, seed: 2)
        let rows = try await MonteCarlo.run(model: model, design: design, paths: Array(0..<5), threads: 2)
        XCTAssertTrue(rows.allSatisfy { $0.own.count == 1 && $0.inner == [[]] })
        let spectra = try MonteCarlo.layeredSpectra(rows, blockDimensions: model.blockDimensions)
        let p = try LayeredEstimator(spectra: spectra, normalization: .none).points(eps: [0.1], zeta: 0.5)[0]
        XCTAssertEqual(p.dZeta, p.dZetaJoint)
        XCTAssertEqual(p.dZeta, p.dZetaLower)
        // Direct: c = 1, mean over paths of Π(1 + t√λ).
        let t = pow(0.1, -0.5)
        let dets = (0..<5).map { k in design.network(model.architecture, path: k).parameters.filter { abs($0) >= 0.2 }
            .reduce(1.0) { $0 * (1 + t * abs($1)) } }
        let direct = 0.5 * 10 + log(dets.reduce(0, +) / 5) / abs(log(0.1))
        XCTAssertEqual(p.dZeta, direct, accuracy: 1e-11 * direct)
    }

    /// A real Markov FIM on a small network (3-4-3-3): the driver reuses the block inputs of path k
    /// for the inner draws; recomputing them on each inner network (θ_<m unchanged) gives the same
    /// eigenvalues, and the own spectra are the model's at θ^k.
    func testDriverOnARealMarkovNetwork() async throws {
        let a = try Architecture(sizes: [3, 4, 3, 3])
        var x = Matrix(rows: 6, cols: 3)
        var rng = Xoshiro256(seed: 5)
        for i in x.data.indices { x.data[i] = rng.normal() }
        let model = try MarkovFisher(architecture: a, activation: .tanh, data: x, sigma2: 0.3, noiseSamples: 2, noiseSeed: 4)
        let design = try MonteCarloDesign(paths: 3, inner: 3, seed: 8, activation: .tanh)
        let rows = try await MonteCarlo.run(model: model, design: design, paths: [0, 1, 2], threads: 2)
        for k in 0..<3 {
            let net = design.network(a, path: k)
            for m in 0..<3 {
                XCTAssertEqual(rows[k].own[m], try model.blockEigenvalues(net, block: m, inputs: try model.blockInputs(net, block: m)))
                guard m >= 1 else { continue }
                for j in 0..<3 {
                    let n2 = design.innerNetwork(net, block: m, path: k, draw: j)
                    XCTAssertEqual(rows[k].inner[m][j], try model.blockEigenvalues(n2, block: m, inputs: try model.blockInputs(n2, block: m)))
                }
            }
        }
        let spectra = try MonteCarlo.layeredSpectra(rows, blockDimensions: model.blockDimensions)
        for p in try LayeredEstimator(spectra: spectra, normalization: .trace).points(eps: eps, zeta: zeta) {
            XCTAssertLessThanOrEqual((p.dZetaLower ?? .nan), p.dZeta + 1e-12 * p.dZeta)
            XCTAssertGreaterThanOrEqual((p.dZetaLower ?? .nan), zeta * 33)
        }
    }

    func testDesignValidation() {
        XCTAssertThrowsError(try MonteCarloDesign(paths: 0, inner: 1)) { e in
            XCTAssertTrue((e as? TwoScaleError)?.message.contains("\(Setting.paths)") ?? false)
            XCTAssertEqual((e as? TwoScaleError)?.kind, .usage)
        }
        XCTAssertThrowsError(try MonteCarloDesign(paths: 1, inner: 0)) { e in
            XCTAssertTrue((e as? TwoScaleError)?.message.contains("\(Setting.inner)") ?? false)
        }
        XCTAssertThrowsError(try MonteCarloDesign(paths: 1, inner: 1, box: 1...1))
        XCTAssertThrowsError(try Shard(parsing: "3/2"))
        XCTAssertThrowsError(try Shard(parsing: "0/2"))
        XCTAssertThrowsError(try Shard(parsing: "a/b"))
        XCTAssertEqual(try Shard(parsing: "2/3").paths(of: 8), [1, 4, 7])
    }
}
