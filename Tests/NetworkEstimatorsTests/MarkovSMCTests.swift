@testable import Fisher
import Foundation
@testable import NetworkEstimators
@testable import Networks
import RandomStreams
@testable import Samplers
import TestSupport
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// The network smc estimator: its unit decomposition against the Markov blocks, and its estimates
/// against brute-force quadrature on a 3-parameter network.
final class MarkovSMCTests: XCTestCase {
    typealias R = FisherReference

    /// The units of every block, stacked, have the block's spectrum; the cheap traces (the block's and
    /// each unit's, the smc screen) equal Σ λ.
    func testUnitsCarryTheBlockSpectrumAndTraceIsExact() throws {
        for (sizes, bias, act) in [([3, 4, 3], true, Activation.relu), ([4, 3, 2, 3], false, .tanh)] {
            let net = try R.net(sizes, bias: bias, act, seed: 4)
            let model = try MarkovFisher(architecture: net.architecture, activation: act,
                                         data: R.gaussianData(6, sizes[0], seed: 2), sigma2: 0.3, noiseSamples: 2, noiseSeed: 5)
            for m in 0..<net.architecture.layers {
                let x = try model.blockInputs(net, block: m)
                let block = try model.blockEigenvalues(net, block: m, inputs: x)
                let xa = model.unitInputs(x, block: m)
                let (count, p) = model.units(block: m)
                var roots: [Double] = []
                for u in 0..<count {
                    // Read the unit's parameters back from the network through setUnit's inverse layout.
                    var w = [Double](repeating: 0, count: p)
                    let nIn = sizes[m]
                    let rows = m == net.architecture.layers - 1 ? Array(0..<sizes[m + 1]) : [u]
                    for (q, r) in rows.enumerated() {
                        for j in 0..<nIn { w[q * (nIn + (bias ? 1 : 0)) + j] = net.weights[m].data[r * nIn + j] }
                        if bias { w[q * (nIn + 1) + nIn] = net.biases[m][r] }
                    }
                    let unitRoots = try model.unitRoots(w, inputs: xa)
                    roots += unitRoots
                    // The screen's trace is Σ λ of the unit's own block.
                    let unitSum = unitRoots.reduce(0) { $0 + $1 * $1 }
                    XCTAssertEqual(model.unitTrace(w, inputs: xa), unitSum, accuracy: 1e-10 * Swift.max(1, unitSum), "unit \(u)")
                    var copy = model.zeroNetwork()
                    model.setUnit(&copy, block: m, unit: u, parameters: w)
                    for (q, r) in rows.enumerated() {
                        XCTAssertEqual(copy.weights[m].row(r).map { $0 }, Array(net.weights[m].row(r)), "row \(q)")
                    }
                }
                let positive = block.filter { $0 > 1e-9 * (block.last ?? 1) }.sorted()
                let fromUnits = roots.map { $0 * $0 }.filter { $0 > 1e-9 * (block.last ?? 1) }.sorted()
                XCTAssertEqual(positive.count, fromUnits.count, "\(sizes) block \(m)")
                for (a, b) in zip(positive, fromUnits) { XCTAssertEqual(a, b, accuracy: 1e-9 * (block.last ?? 1)) }
                let trace = try model.blockTrace(net, block: m, inputs: x)
                XCTAssertEqual(trace, block.reduce(0, +), accuracy: 1e-9 * Swift.max(1, trace))
            }
        }
    }

    /// A neuron's eigenvalues through the precomputed input Gram (`D X̃X̃ᵀ D`, r × r) and through its
    /// scaled rows (`X̃ᵀD²X̃`), both against the dense `σ⁻²/S Σ_i act'(w·x_i)² x_i x_iᵀ`, with fewer
    /// samples than inputs (the Gram route) and more (the rows route), ReLU (rows dropped) and tanh.
    func testNeuronGramRouteMatchesTheDenseBlock() throws {
        for (samples, act) in [(5, Activation.relu), (5, .tanh), (14, .relu), (14, .tanh)] {
            let arch = try Architecture(parsing: "7-3-2", bias: true)
            let x = R.gaussianData(samples, 7, seed: UInt64(samples))
            let model = try MarkovFisher(architecture: arch, activation: act, data: x, sigma2: 0.3, noiseSamples: 1, noiseSeed: 2)
            var rng = Xoshiro256(seed: 17)
            for _ in 0..<4 {
                let w = (0..<8).map { _ in rng.uniform() * 2 - 1 }
                var dense = Matrix(rows: 8, cols: 8)
                for i in 0..<samples {
                    let xi = (0..<7).map { x.data[i * 7 + $0] } + [1]
                    let z = zip(w, xi).reduce(0) { $0 + $1.0 * $1.1 }
                    let d = act.derivative(z)
                    for a in 0..<8 { for b in 0..<8 { dense.data[a * 8 + b] += d * d * xi[a] * xi[b] / (0.3 * Double(samples)) } }
                }
                let exact = try SymmetricEigen.eigenvalues(dense)
                let top = exact.last ?? 1
                let expected = exact.filter { $0 > 1e-10 * top }.sorted()
                for gram in [true, false] {
                    let inputs = model.unitInputs(x, block: 0, gram: gram)
                    XCTAssertEqual(inputs.gram != nil, gram)
                    let got = try model.unitRoots(w, inputs: inputs).map { $0 * $0 }.filter { $0 > 1e-10 * top }.sorted()
                    XCTAssertEqual(got.count, expected.count, "S = \(samples) \(act) gram \(gram)")
                    for (a, b) in zip(got, expected) { XCTAssertEqual(a, b, accuracy: 1e-10 * top) }
                }
                // The size rule: a Gram is kept when the samples are few against the inputs.
                XCTAssertEqual(model.unitInputs(x, block: 0).gram != nil, samples <= 4 * 8)
                XCTAssertNil(model.unitInputs(R.gaussianData(samples, 3, seed: 1), block: 1).gram, "the softmax unit has its own route")
            }
        }
    }

    /// The softmax unit's eigenvalues from the inputs' precomputed outer products (`A'·O`, the samplers'
    /// route), from the scaled-rows product and from the dense `Σ_s (diag p_s − p_s p_sᵀ) ⊗ x_s x_sᵀ / S`,
    /// with 5 classes (10 pairs of projected blocks) and weights up to saturation (p nearly one-hot).
    func testSoftmaxUnitOuterProductRouteMatchesTheDenseBlock() throws {
        let arch = try Architecture(parsing: "4-3-5", bias: true)
        let samples = 9, k = 5, p = 4
        let model = try MarkovFisher(architecture: arch, activation: .relu, data: R.gaussianData(samples, 4, seed: 8),
                                     sigma2: 0.3, noiseSamples: 1, noiseSeed: 2)
        let x = R.gaussianData(samples, 3, seed: 21)
        let inputs = model.unitInputs(x, block: 1)
        XCTAssertNotNil(inputs.outer, "rows ≥ columns: the outer-product route")
        var rng = Xoshiro256(seed: 5)
        for size in [0.5, 3.0, 40.0] {
            let w = (0..<(k * p)).map { _ in size * (rng.uniform() * 2 - 1) }
            var dense = Matrix(rows: k * p, cols: k * p)
            for s in 0..<samples {
                let xs = (0..<3).map { x.data[s * 3 + $0] } + [1]
                let logits = (0..<k).map { c in (0..<p).reduce(0) { $0 + w[c * p + $1] * xs[$1] } }
                let top = logits.max()!
                let e = logits.map { Foundation.exp($0 - top) }
                let pr = e.map { $0 / e.reduce(0, +) }
                for c in 0..<k { for d in 0..<k { for i in 0..<p { for j in 0..<p {
                    dense.data[(c * p + i) * k * p + d * p + j] += ((c == d ? pr[c] : 0) - pr[c] * pr[d]) * xs[i] * xs[j] / Double(samples)
                } } } }
            }
            let exact = try SymmetricEigen.eigenvalues(dense)
            let scale = exact.last ?? 1
            let viaOuter = try model.softmaxUnitEigenvalues(w, inputs: inputs.patches, outer: inputs.outer)
            let viaRows = try model.softmaxUnitEigenvalues(w, inputs: inputs.patches)
            XCTAssertEqual(viaOuter.count, (k - 1) * p)
            for (a, b) in zip(viaOuter, viaRows) { XCTAssertEqual(a, b, accuracy: 1e-13 * scale, "weights ±\(size)") }
            // The dense block has p extra zero eigenvalues (the direction 1 ⊗ x the projection removes).
            for (a, b) in zip(viaOuter, exact.suffix((k - 1) * p)) { XCTAssertEqual(a, b, accuracy: 1e-12 * scale, "weights ±\(size)") }
            XCTAssertEqual(try model.unitRoots(w, inputs: inputs).map { $0 * $0 }.reduce(0, +), viaOuter.filter { $0 > 0 }.reduce(0, +),
                           accuracy: 1e-12 * scale)
        }
        // Fewer samples than columns: the Gram route, no outer products.
        XCTAssertNil(model.unitInputs(R.gaussianData(2, 3, seed: 1), block: 1).outer)
    }

    /// 4-3-3-2 (ReLU on inputs ×4, so that at a small ε the softmax islands must move) and its data.
    func deepModel() throws -> (model: MarkovFisher, data: Matrix) {
        let raw = R.gaussianData(10, 4, seed: 5)
        let data = Matrix(rows: 10, cols: 4, data: raw.data.map { 4 * $0 })
        return (try MarkovFisher(architecture: try Architecture(parsing: "4-3-3-2"), activation: .relu, data: data,
                                 sigma2: 0.5, noiseSamples: 1, noiseSeed: 3), data)
    }

    /// 1-1-2 (tanh, N = 4): θ = (w; v₁, v₂), d = 3.
    func testTinyNetworkAgainstQuadrature() async throws {
        let data = Matrix(rows: 4, cols: 1, data: [0.9, -1.7, 0.4, 2.2])
        let model = try MarkovFisher(architecture: try Architecture(parsing: "1-1-2"), activation: .tanh, data: data, sigma2: 0.5,
                                     noiseSamples: 1, noiseSeed: 3)
        try await assertAgainstQuadrature(model, data: data, seed: 11)
    }

    /// For a network θ = (w; v₁, v₂) of one first-layer weight and a 2-weight softmax layer (d = 3): the
    /// smc estimates at K = 128, J = 64 against brute force by midpoint quadrature,
    /// joint = log ∫ g₁(w) Z₂(w), lower = log Z₁ + ∫ π₁(w) log Z₂(w), Z₂(w) = E_v g₂(w, v).
    func assertAgainstQuadrature(_ model: MarkovFisher, data: Matrix, seed: UInt64,
                                 file: StaticString = #filePath, line: UInt = #line) async throws {
        let eps = [0.01, 0.2], zeta = 2.0 / 3
        let smc = try MarkovSMC(model: model, box: -1...1, seed: seed, paths: 128, inner: 64, traceDraws: 100)
        let r = try await smc.run(eps: eps, zeta: zeta, normalization: .none, lower: true, threads: 2)
        let nw = 120
        for (i, e) in eps.enumerated() {
            let s = ScaleParameters.t(eps: e, zeta: zeta)
            let (g1, logZ2) = try tinyNetworkQuadratureParts(model, scale: s, nw: nw, nv: 48)
            let logZ1 = LogSpace.logMeanExp(g1)
            let joint = LogSpace.logMeanExp(zip(g1, logZ2).map { $0 + $1 })
            let pi = LogSpace.normalizedWeights(logWeights: g1)
            let lower = logZ1 + zip(pi, logZ2).reduce(0) { $0 + $1.0 * $1.1 }
            let p = r.points[i]
            let L = Swift.abs(Foundation.log(e))
            let jointEst = (p.dZeta - zeta * 3) * L
            let lowerEst = (try XCTUnwrap(p.dZetaLower) - zeta * 3) * L
            let se = try XCTUnwrap(p.standardError)
            XCTAssertEqual(jointEst, joint, accuracy: 4 * se + 0.01, "joint at ε = \(e)", file: file, line: line)
            XCTAssertEqual(lowerEst, lower, accuracy: 4 * se + 0.01, "lower at ε = \(e)", file: file, line: line)
            XCTAssertLessThanOrEqual(lower, joint + 1e-12, "Jensen on the exact values", file: file, line: line)
            // The upper bound: Z₂(w) ≤ B(w) = g₂(w, v = 0), so joint ≤ log ∫ g₁ B and lower ≤ log Z₁ + ∫ π₁ log B.
            var logB = [Double]()
            for a in 0..<nw {
                let w = -1 + (Double(a) + 0.5) * 2 / Double(nw)
                var net = model.zeroNetwork()
                model.setUnit(&net, block: 0, unit: 0, parameters: [w])
                let xa = model.unitInputs(try model.blockInputs(net, block: 1), block: 1)
                logB.append(LogSpace.logDetSqrt(roots: try model.softmaxSupremumRoots(inputs: xa), scale: s))
                XCTAssertLessThanOrEqual(logZ2[a], logB[a] + 1e-12, "Z₂ ≤ B at w = \(w)", file: file, line: line)
            }
            let boundJoint = LogSpace.logMeanExp(zip(g1, logB).map { $0 + $1 })
            let boundLower = logZ1 + zip(pi, logB).reduce(0) { $0 + $1.0 * $1.1 }
            XCTAssertLessThanOrEqual(joint, boundJoint + 1e-12, file: file, line: line)
            XCTAssertLessThanOrEqual(lower, boundLower + 1e-12, file: file, line: line)
            let u = try XCTUnwrap(p.bound)
            // The bound shares stage 1 with the estimate and its last term has no island noise.
            let boundSE = u.ci95.upperBound - u.dZeta
            XCTAssertEqual((u.dZeta - zeta * 3) * L, boundJoint, accuracy: 4 * se + 0.01, "bound at ε = \(e)", file: file, line: line)
            XCTAssertEqual((try XCTUnwrap(u.dZetaLower) - zeta * 3) * L, boundLower, accuracy: 4 * se + 0.01, file: file, line: line)
            XCTAssertGreaterThan(boundSE, 0, file: file, line: line)
            XCTAssertLessThan(boundJoint - joint, 50, "a finite gap: \(boundJoint - joint)", file: file, line: line)
        }
    }

    /// The softmax unit's supremum (`softmaxSupremumRoots`, docs/METHOD.md §11): (a) its eigenvalues are
    /// those of `X̃ᵀX̃/(S·K)`, each K − 1 times, on both of unitRoots' routes (more samples than inputs, and
    /// fewer: the Gram route), for K = 3, 5, 6 and 7 classes; (b) at 400 random weight matrices of every size, from nearly uniform to
    /// saturated probabilities, `Σ φ(λ_i(F(w))) ≤ Σ φ(λ_i(F(0)))` for four concave increasing φ — the
    /// sampler's `log(1 + s√λ)` at three scales, `√λ` and `log(1 + λ)`; (c) any w whose class rows are
    /// equal attains it; (d) gradient ascent on the sampler's log-target from random starts climbs towards
    /// it and never passes it.
    func testSoftmaxSupremum() throws {
        for (samples, bias, k) in [(12, true, 3), (12, false, 3), (3, true, 3), (12, true, 5), (20, false, 7), (4, false, 6)] {
            let arch = try Architecture(parsing: "3-4-\(k)", bias: bias)
            let model = try MarkovFisher(architecture: arch, activation: .tanh, data: R.gaussianData(samples, 3, seed: 1),
                                         sigma2: 0.5, noiseSamples: 1, noiseSeed: 2)
            let hidden = Matrix(rows: samples, cols: 4, data: R.gaussianData(samples, 4, seed: 7).data.map { 2 * $0 })
            let inputs = model.unitInputs(hidden, block: 1)
            let p = inputs.patches.cols
            XCTAssertEqual(p, bias ? 5 : 4)
            // (a) Closed form: the p × p second-moment matrix over K.
            var m = Matrix(rows: p, cols: p)
            for i in 0..<samples { for a in 0..<p { for b in 0..<p {
                m.data[a * p + b] += inputs.patches.data[i * p + a] * inputs.patches.data[i * p + b] / Double(samples * k)
            } } }
            let mu = try SymmetricEigen.eigenvalues(m)
            let want = mu.flatMap { [Double](repeating: $0, count: k - 1) }.filter { $0 > 1e-12 }.sorted()
            let sup = try model.softmaxSupremumRoots(inputs: inputs)
            let got = sup.map { $0 * $0 }.filter { $0 > 1e-12 }.sorted()
            XCTAssertEqual(got.count, want.count, "\(samples) samples, bias \(bias)")
            for (g, w) in zip(got, want) { XCTAssertEqual(g, w, accuracy: 1e-10 * (want.last ?? 1)) }
            // (b) Majorisation for concave increasing φ, at random w of every magnitude.
            let phis: [(String, (Double) -> Double)] = [
                ("log(1 + 0.1√λ)", { Foundation.log1p(0.1 * $0.squareRoot()) }), ("log(1 + 10√λ)", { Foundation.log1p(10 * $0.squareRoot()) }),
                ("log(1 + 10⁴√λ)", { Foundation.log1p(1e4 * $0.squareRoot()) }), ("√λ", { $0.squareRoot() }), ("log(1 + λ)", { Foundation.log1p($0) }),
            ]
            func total(_ roots: [Double], _ phi: (Double) -> Double) -> Double { roots.reduce(0) { $0 + phi($1 * $1) } }
            let top = phis.map { total(sup, $0.1) }
            var rng = Xoshiro256(seed: 5, stream: [UInt64(samples), bias ? 1 : 0, UInt64(k)])
            var closest = [Double](repeating: -.infinity, count: phis.count)
            for trial in 0..<400 {
                let scale = [0.01, 0.3, 1, 5, 40][trial % 5]
                let w = (0..<(k * p)).map { _ in scale * rng.uniform(-1, 1) }
                let roots = try model.unitRoots(w, inputs: inputs)
                for (j, phi) in phis.enumerated() {
                    let v = total(roots, phi.1)
                    XCTAssertLessThanOrEqual(v, top[j] + 1e-10 * Swift.max(1, top[j]), "\(phi.0) at w = \(w)")
                    closest[j] = Swift.max(closest[j], v)
                }
            }
            // Near w = 0 the values come close to the supremum, so the comparison above is not vacuous.
            for j in phis.indices { XCTAssertGreaterThan(closest[j], top[j] - 0.05 * Swift.max(1, top[j]), phis[j].0) }
            // (c) Equal class rows: uniform probabilities, the same spectrum.
            let u = (0..<p).map { _ in rng.uniform(-1, 1) }
            let equalRows = try model.unitRoots(Array([[Double]](repeating: u, count: k).joined()), inputs: inputs)
            for (j, phi) in phis.enumerated() { XCTAssertEqual(total(equalRows, phi.1), top[j], accuracy: 1e-9 * Swift.max(1, top[j])) }
            // (d) Gradient ascent on ℓ_s(w) = Σ log(1 + s√λ) climbs towards ℓ_s(0) and never passes it.
            let s = 10.0
            let l0 = LogSpace.logDetSqrt(roots: sup, scale: s)
            // Central differences of ℓ_s in w.
            func gradient(_ w: [Double]) throws -> [Double] {
                try w.indices.map { i in
                    var a = w, b = w
                    a[i] += 1e-5; b[i] -= 1e-5
                    return (LogSpace.logDetSqrt(roots: try model.unitRoots(a, inputs: inputs), scale: s)
                            - LogSpace.logDetSqrt(roots: try model.unitRoots(b, inputs: inputs), scale: s)) / 2e-5
                }
            }
            for start in 0..<3 {
                var w = (0..<(k * p)).map { _ in 2 * rng.uniform(-1, 1) }
                var l = LogSpace.logDetSqrt(roots: try model.unitRoots(w, inputs: inputs), scale: s)
                let first = l
                var step = 0.05
                for _ in 0..<300 {
                    let g = try gradient(w)
                    let next = zip(w, g).map { $0 + step * $1 }
                    let ln = LogSpace.logDetSqrt(roots: try model.unitRoots(next, inputs: inputs), scale: s)
                    XCTAssertLessThanOrEqual(ln, l0 + 1e-9, "start \(start)")
                    if ln > l { (w, l) = (next, ln); step *= 1.2 } else { step /= 2 }
                }
                XCTAssertGreaterThan(l, first, "start \(start): the ascent climbs")
                XCTAssertEqual(l, l0, accuracy: 0.02 * (l0 - first) + 1e-6, "start \(start): from \(first) towards \(l0)")
            }
        }
    }

    /// A network whose only layer is the softmax layer: its bound is a number, `log B` of the data (the
    /// closed form of `testSoftmaxSupremum`), with no variance but ĉ's (none here, c = 1), and above the
    /// estimate, which the quadrature of its 4 weights gives.
    func testOneLayerBoundIsTheSupremum() async throws {
        let data = Matrix(rows: 5, cols: 2, data: [0.9, -1.7, 0.4, 2.2, -0.3, 1.1, 0.8, -2.0, 1.5, 0.2])
        let model = try MarkovFisher(architecture: try Architecture(parsing: "2-2"), activation: .tanh, data: data, sigma2: 0.5,
                                     noiseSamples: 1, noiseSeed: 3)
        let smc = try MarkovSMC(model: model, box: -1...1, seed: 4, paths: 64, inner: 8, traceDraws: 20)
        let zeta = 0.6
        let r = try await smc.run(eps: [1e-3, 0.3], zeta: zeta, normalization: .none, lower: true, threads: 2)
        // Closed form: the eigenvalues of XᵀX/(5·2), once each (K − 1 = 1).
        var m = Matrix(rows: 2, cols: 2)
        for i in 0..<5 { for a in 0..<2 { for b in 0..<2 { m.data[a * 2 + b] += data.data[i * 2 + a] * data.data[i * 2 + b] / 10 } } }
        let mu = try SymmetricEigen.eigenvalues(m)
        let n = 16
        for (p, e) in zip(r.points, [1e-3, 0.3]) {
            let s = ScaleParameters.t(eps: e, zeta: zeta)
            let logB = mu.reduce(0) { $0 + Foundation.log1p(s * $1.squareRoot()) }
            let u = try XCTUnwrap(p.bound)
            let L = Foundation.log(1 / e)
            XCTAssertEqual(u.dZeta, zeta * 4 + logB / L, accuracy: 1e-10)
            XCTAssertEqual(u.ci95.upperBound - u.ci95.lowerBound, 0, accuracy: 1e-12)
            XCTAssertEqual(try XCTUnwrap(u.dZetaLower), u.dZeta, accuracy: 1e-12)
            // The exact 2sED by midpoint quadrature over the 4 weights, below the bound.
            var logs = [Double]()
            for a in 0..<n { for b in 0..<n { for c in 0..<n { for d in 0..<n {
                let w = [a, b, c, d].map { -1 + (Double($0) + 0.5) * 2 / Double(n) }
                logs.append(LogSpace.logDetSqrt(roots: try model.unitRoots(w, inputs: model.unitInputs(data, block: 0)), scale: s))
            } } } }
            let exact = LogSpace.logMeanExp(logs)
            XCTAssertLessThan(exact, logB)
            XCTAssertLessThan(p.dZeta, u.dZeta)
            XCTAssertEqual((p.dZeta - zeta * 4) * L, exact, accuracy: 4 * (try XCTUnwrap(p.standardError)) + 0.01)
        }
    }

    /// The bound's ĉ variance and its own spread, under the trace normalisation, on the 1-1-2 tanh network
    /// against midpoint quadrature over the first-layer weight w (s = t√ĉ from the run's own ĉ):
    /// (a) the ĉ part of the bound's variance is `(slope/2)² Var log ĉ` with the slope the estimator
    /// documents, `E_{π₁} ∂ log g₁ + E_ρ ∂ log B` (ρ ∝ g₁ B; derivatives in log s), within 3% (box [−3, 3],
    /// where the softmax saturates and the islands' slope differs from B's);
    /// (b) the spread of log B over the outer particles matches `Var_{π₁} log B`, and the shortfall is the
    /// lognormal model's at that spread; (c) the bound's interval is wider than its last term alone,
    /// by ĉ's part. The slope formula drops the covariance `E_ρ ∂ log g₁ − E_{π₁} ∂ log g₁` of the exact
    /// derivative of `log ∫ g₁ B` (here 1.6030 against 1.5740 at ε = 0.01, 1.2068 against 1.1753 at 0.2: 2–3%
    /// on the slope; docs/ESTIMATORS.md, "An upper bound"); the test prints both.
    func testBoundNormalizationVarianceAgainstQuadrature() async throws {
        let data = Matrix(rows: 4, cols: 1, data: [0.9, -1.7, 0.4, 2.2])
        let model = try MarkovFisher(architecture: try Architecture(parsing: "1-1-2"), activation: .tanh, data: data, sigma2: 0.5,
                                     noiseSamples: 1, noiseSeed: 3)
        let eps = [0.01, 0.2], zeta = 2.0 / 3
        let smc = try MarkovSMC(model: model, box: -3...3, seed: 11, paths: 256, inner: 32, traceDraws: 20)
        let r = try await smc.run(eps: eps, zeta: zeta, normalization: .trace, lower: true, threads: 2)
        let varLogC = r.trace.logVariance
        XCTAssertGreaterThan(varLogC, 1e-4, "20 trace draws leave ĉ uncertain")
        let nw = 600
        let xa0 = model.unitInputs(model.firstBlockInputs, block: 0)
        for (i, e) in eps.enumerated() {
            let s = ScaleParameters.t(eps: e, zeta: zeta) * r.scale.squareRoot()
            var g1 = [Double](), dg1 = [Double](), logB = [Double](), dB = [Double]()
            for a in 0..<nw {
                let w = -3 + (Double(a) + 0.5) * 6 / Double(nw)
                let roots1 = try model.unitRoots([w], inputs: xa0)
                g1.append(LogSpace.logDetSqrt(roots: roots1, scale: s))
                dg1.append(LogSpace.logDetSqrtSlope(roots: roots1, scale: s))
                var net = model.zeroNetwork()
                model.setUnit(&net, block: 0, unit: 0, parameters: [w])
                let rootsB = try model.softmaxSupremumRoots(inputs: model.unitInputs(try model.blockInputs(net, block: 1), block: 1))
                logB.append(LogSpace.logDetSqrt(roots: rootsB, scale: s))
                dB.append(LogSpace.logDetSqrtSlope(roots: rootsB, scale: s))
            }
            let pi = LogSpace.normalizedWeights(logWeights: g1)
            let rho = LogSpace.normalizedWeights(logWeights: zip(g1, logB).map { $0 + $1 })
            func mean(_ w: [Double], _ x: [Double]) -> Double { zip(w, x).reduce(0) { $0 + $1.0 * $1.1 } }
            let slope = mean(pi, dg1) + mean(rho, dB)
            let exactSlope = mean(rho, dg1) + mean(rho, dB)
            let varLogB = mean(pi, logB.map { $0 * $0 }) - Foundation.pow(mean(pi, logB), 2)
            let u = try XCTUnwrap(r.points[i].bound)
            let expected = TraceEstimate.addedVariance(slope: slope, logVarianceOfC: varLogC)
            print("ε = \(e): bound's ĉ variance \(u.normalizationVariance) against \(expected) (slope \(slope), exact derivative \(exactSlope)); "
                  + "Var log B \(u.stageLogVariance) against \(varLogB)")
            XCTAssertEqual(u.normalizationVariance, expected, accuracy: 0.03 * expected, "ε = \(e)")
            // Not the estimate's ĉ variance in disguise: on this box (softmax saturates) the islands' slope is
            // not B's, and the two differ by more than twice the tolerance above.
            let estimateCV = r.points[i].normalizationShare * Foundation.pow(try XCTUnwrap(r.points[i].standardError), 2)
            XCTAssertGreaterThan(Swift.abs(u.normalizationVariance - estimateCV), 0.06 * expected, "ε = \(e)")
            XCTAssertEqual(u.stageLogVariance, varLogB, accuracy: 0.35 * varLogB, "ε = \(e)")
            XCTAssertEqual(u.stageShortfall, LogNormalSpread.shortfall(logVariance: u.stageLogVariance, count: 256), accuracy: 1e-12)
            XCTAssertEqual(u.shortfall(eps: e), u.stageShortfall / Foundation.log(1 / e), accuracy: 1e-12)
            let L = Foundation.log(1 / e)
            let total = u.stage.variance + u.normalizationVariance
            XCTAssertGreaterThan(Foundation.pow((u.ci95.upperBound - u.ci95.lowerBound) / 2 * L / 1.959963984540054, 2),
                                 total, "the bound's interval holds its last term and ĉ (and stage 1)")
        }
    }

    /// The check that an estimate lies wholly above its bound: fires on the largest positive gap only.
    func testEstimateAboveBoundCheck() {
        let fine = EstimateAboveBound(quantity: "d_zeta", eps: 0.1, estimate: 10, interval: 9...11, bound: 12, boundInterval: 11.5...12.5)
        let touching = EstimateAboveBound(quantity: "d_zeta", eps: 0.2, estimate: 12, interval: 11...13, bound: 10, boundInterval: 9...11)
        let above = EstimateAboveBound(quantity: "d_zeta_lower", eps: 0.3, estimate: 14, interval: 13.5...14.5, bound: 10, boundInterval: 9...11)
        let further = EstimateAboveBound(quantity: "d_zeta", eps: 0.4, estimate: 20, interval: 19...21, bound: 10, boundInterval: 9...11)
        XCTAssertNil(EstimateAboveBound.check([fine, touching]))
        XCTAssertEqual(above.gap, 2.5)
        XCTAssertEqual(EstimateAboveBound.check([fine, above, touching]), above)
        XCTAssertEqual(EstimateAboveBound.check([above, further]), further)
    }

    /// Exchangeable first-layer neurons (3-2-2, tanh, biases: two neurons of four weights each): stage 1's
    /// pooled estimate of `log Z_1 = 2 log Z_u` against the quadrature of `Z_u` over a neuron's weights
    /// (a 12-point midpoint rule in each of the 4 coordinates), at both ε, within four standard errors.
    func testExchangeableFirstLayerAgainstQuadrature() async throws {
        let data = Matrix(rows: 4, cols: 3, data: [0.9, -1.7, 0.4, 2.2, -0.3, 1.1, 0.8, -2.0, 1.5, 0.2, -0.6, -1.2])
        let model = try MarkovFisher(architecture: try Architecture(parsing: "3-2-2", bias: true), activation: .tanh, data: data,
                                     sigma2: 0.5, noiseSamples: 1, noiseSeed: 3)
        XCTAssertEqual(model.units(block: 0).count, 2)
        XCTAssertEqual(model.units(block: 0).dimension, 4)
        let eps = [0.01, 0.2], zeta = 2.0 / 3
        let smc = try MarkovSMC(model: model, box: -1...1, seed: 7, paths: 64, inner: 8, traceDraws: 10)
        let r = try await smc.run(eps: eps, zeta: zeta, normalization: .none, lower: false, threads: 2)
        let n = 12
        let grid = (0..<n).map { -1 + (Double($0) + 0.5) * 2 / Double(n) }
        let x0 = model.unitInputs(data, block: 0)
        var roots: [[Double]] = []
        for a in grid { for b in grid { for c in grid { for e in grid {
            roots.append(try model.unitRoots([a, b, c, e], inputs: x0))
        } } } }
        for (i, e) in eps.enumerated() {
            let s = ScaleParameters.t(eps: e, zeta: zeta)
            let exact = 2 * LogSpace.logMeanExp(roots.map { LogSpace.logDetSqrt(roots: $0, scale: s) })
            let stage = r.points[i].stages[0]
            XCTAssertEqual(stage.value, exact, accuracy: 4 * stage.variance.squareRoot() + 0.01, "log Z_1 at ε = \(e)")
        }
    }

    /// Stage 1's budget: 2K particles per first-layer neuron over 2·min(4, n) replicates, 20 sweeps per
    /// step (lab/ESTIMATORS-LOG.md, "Particles against sweeps" and "Screening proposals").
    func testStageOneBudget() throws {
        let data = Matrix(rows: 4, cols: 3, data: [0.9, -1.7, 0.4, 2.2, -0.3, 1.1, 0.8, -2.0, 1.5, 0.2, -0.6, -1.2])
        let model = try MarkovFisher(architecture: try Architecture(parsing: "3-16-2", bias: false), activation: .relu, data: data,
                                     sigma2: 0.5, noiseSamples: 1, noiseSeed: 3)
        let smc = try MarkovSMC(model: model, box: -1...1, seed: 7, paths: 64, inner: 8, traceDraws: 10)
        let wide = try smc.stageOneSettings(units: 16)
        XCTAssertEqual(MarkovSMC.stageOneTasks(units: 16) * wide.replicates, 8)
        XCTAssertEqual(wide.particles, 2 * 64 * 16 / 8)
        XCTAssertEqual(wide.moves, 20)
        XCTAssertEqual(wide.essFraction, 0.8)
        let narrow = try smc.stageOneSettings(units: 2)
        XCTAssertEqual(MarkovSMC.stageOneTasks(units: 2) * narrow.replicates, 4)
        XCTAssertEqual(narrow.particles, 2 * 64 * 2 / 4)
    }

    /// A block of n pooled exchangeable units, by hand: replicates Ẑ = 1, 3 (mean 2, V = 1/4), slope 0.5,
    /// n = 3 — raw log 3·log 2; corrected 3·(log 2 + V/2) (each of the n logs is low by V/2, so the
    /// correction is n·V/2, not n²·V/2) with variance 9V; slope 1.5; noise 9·var_r(log Ẑ_r)/2; the lower
    /// 2sED's lognormal-model log 3·(mean + var/2) of the replicate logs.
    func testPooledBlockScalesByTheUnitCount() {
        let l = [0.0, Foundation.log(3.0)]
        let est = SMCUnitEstimate(logZ: [l], slope: [0.5], populations: [], diagnostics: SMCDiagnostics())
        let b = MarkovSMC.block(est, units: 3, stop: 0)
        XCTAssertEqual(b.logZ, 3 * Foundation.log(2.0), accuracy: 1e-13)
        XCTAssertEqual(b.corrected.value, 3 * (Foundation.log(2.0) + 0.125), accuracy: 1e-13)
        XCTAssertEqual(b.corrected.variance, 9 * 0.25, accuracy: 1e-13)
        XCTAssertEqual(b.slope, 1.5, accuracy: 1e-15)
        let q = Foundation.log(3.0)
        XCTAssertEqual(b.noise, 9 * (q * q / 2) / 2, accuracy: 1e-13)
        // the lower 2sED's log: 3 (mean_r l_r + var_r(l_r)/2) = 3 (q/2 + q²/4), variance 9 (v/2 + v²/2), v = q²/2
        XCTAssertEqual(b.log.value, 3 * (q / 2 + q * q / 4), accuracy: 1e-13)
        XCTAssertEqual(b.log.variance, 9 * (q * q / 4 + q * q * q * q / 8), accuracy: 1e-12)
    }

    /// An island of a hidden layer with n exchangeable neurons (the second layer of 1-1-3-2, three
    /// one-weight neurons given the first layer's output): `runBlock` returns one pooled estimate of
    /// `Z_u`, and `n · log Ẑ_u` matches n times the quadrature of the one-dimensional `Z_u`.
    func testPooledIslandBlockAgainstQuadrature() throws {
        let data = Matrix(rows: 5, cols: 1, data: [0.9, -1.7, 0.4, 2.2, -0.5])
        let model = try MarkovFisher(architecture: try Architecture(parsing: "1-1-3-2"), activation: .tanh, data: data, sigma2: 0.3,
                                     noiseSamples: 1, noiseSeed: 3)
        XCTAssertEqual(model.units(block: 1).count, 3)
        XCTAssertEqual(model.units(block: 1).dimension, 1)
        let smc = try MarkovSMC(model: model, box: -1...1, seed: 4, paths: 8, inner: 64, traceDraws: 10)
        var net = model.zeroNetwork()
        model.setUnit(&net, block: 0, unit: 0, parameters: [0.8])
        let x = try model.blockInputs(net, block: 1)
        let xa = model.unitInputs(x, block: 1)
        let s = 40.0
        let settings = try SMCSettings(particles: 32, replicates: 2, essFraction: 0.5, moves: 3)
        let (units, est) = try smc.runBlock(1, inputs: x, stops: [s], settings: settings, stream: [1], keep: true)
        XCTAssertEqual(units, 3)
        XCTAssertEqual(est.logZ[0].count, 2, "R replicates")
        XCTAssertEqual(est.populations[0][0].weights.count, 96, "n·P particles per replicate")
        let m = 4000
        let exact = LogSpace.logMeanExp(try (0..<m).map { a in
            LogSpace.logDetSqrt(roots: try model.unitRoots([-1 + (Double(a) + 0.5) * 2 / Double(m)], inputs: xa), scale: s)
        })
        let c = est.combined(0)
        XCTAssertEqual(3 * c.logZ, 3 * exact, accuracy: 4 * 3 * c.relVar.squareRoot() + 1e-3)
    }

    /// Convolutional stacks: each filter is a unit shared over positions, the dense softmax layer after
    /// pooling one unit; stacked, the units carry the Markov block's spectrum (computed by the plain
    /// route), and the cheap trace equals Σ λ.
    func testConvolutionalUnitsCarryTheBlockSpectrum() throws {
        for (notation, bias, act) in [("6x6x1-conv2k3-maxpool2-3", false, Activation.relu), ("5x5x2-conv3k2-maxpool2-conv2k2-2", true, .tanh)] {
            let arch = try Architecture(parsing: notation, bias: bias)
            var rng = Xoshiro256(seed: 9)
            let net = Network.uniform(architecture: arch, activation: act, box: -1...1, rng: &rng)
            let model = try MarkovFisher(architecture: arch, activation: act, data: R.gaussianData(5, arch.inputSize, seed: 3),
                                         sigma2: 0.4, noiseSamples: 2, noiseSeed: 6)
            for m in 0..<model.blockDimensions.count {
                let x = try model.blockInputs(net, block: m)
                let block = try model.blockEigenvalues(net, block: m, inputs: x)
                let xa = model.unitInputs(x, block: m)
                let layer = arch.parametricLayers[m]
                let st = arch.structure(layer: layer)
                let (count, p) = model.units(block: m)
                var roots: [Double] = []
                for u in 0..<count {
                    let rows = m == model.blockDimensions.count - 1 ? Array(0..<st.units) : [u]
                    let w = rows.flatMap { r in st.unitIndices(r).map { net.blocks[layer][$0] } }
                    XCTAssertEqual(w.count, p)
                    let unitRoots = try model.unitRoots(w, inputs: xa)
                    roots += unitRoots
                    let unitSum = unitRoots.reduce(0) { $0 + $1 * $1 }
                    XCTAssertEqual(model.unitTrace(w, inputs: xa), unitSum, accuracy: 1e-10 * Swift.max(1, unitSum), "filter \(u)")
                    var copy = model.zeroNetwork()
                    model.setUnit(&copy, block: m, unit: u, parameters: w)
                    for r in rows { for i in st.unitIndices(r) { XCTAssertEqual(copy.blocks[layer][i], net.blocks[layer][i]) } }
                }
                let top = block.last ?? 1
                let positive = block.filter { $0 > 1e-9 * top }.sorted()
                let fromUnits = roots.map { $0 * $0 }.filter { $0 > 1e-9 * top }.sorted()
                XCTAssertGreaterThan(positive.count, 0)
                XCTAssertEqual(positive.count, fromUnits.count, "\(notation) block \(m)")
                for (a, b) in zip(positive, fromUnits) { XCTAssertEqual(a, b, accuracy: 1e-9 * top) }
                XCTAssertEqual(try model.blockTrace(net, block: m, inputs: x), block.reduce(0, +), accuracy: 1e-9 * Swift.max(1, top))
            }
        }
    }

    /// 2x2x1-conv1k1-maxpool2-2 (tanh, N = 4): one filter weight w shared over 4 positions, max-pooled to
    /// one feature, then a softmax layer v = (v₁, v₂); d = 3. Brute force by midpoint quadrature, as
    /// for the MLP above: the smc estimator runs on convolutional and pooling layers.
    func testTinyConvolutionalNetworkAgainstQuadrature() async throws {
        let arch = try Architecture(parsing: "2x2x1-conv1k1-maxpool2-2")
        XCTAssertEqual(arch.parameterCount, 3)
        let data = Matrix(rows: 4, cols: 4, data: [0.9, -1.7, 0.4, 2.2, -0.3, 1.1, 0.8, -2.0, 1.5, 0.2, -0.6, -1.2, 0.1, 0.7, -1.4, 0.5])
        let model = try MarkovFisher(architecture: arch, activation: .tanh, data: data, sigma2: 0.5, noiseSamples: 2, noiseSeed: 3)
        try await assertAgainstQuadrature(model, data: data, seed: 5)
    }

    /// A pooling before the first parametric layer (2×2 average, then 1-1-2, tanh; d = 3): the smc
    /// estimate and its bracket read the pooled inputs (they once read the raw image and stopped).
    func testPoolingFirstNetworkAgainstQuadrature() async throws {
        let arch = try Architecture(parsing: "2x2x1-avgpool2-1-2")
        XCTAssertEqual(arch.parameterCount, 3)
        let data = Matrix(rows: 4, cols: 4, data: [0.9, -1.7, 0.4, 2.2, -0.3, 1.1, 0.8, -2.0, 1.5, 0.2, -0.6, -1.2, 0.1, 0.7, -1.4, 0.5])
        let model = try MarkovFisher(architecture: arch, activation: .tanh, data: data, sigma2: 0.5, noiseSamples: 2, noiseSeed: 3)
        for (a, b) in zip(model.firstBlockInputs.data, [0.45, -0.1, -0.025, -0.025]) { XCTAssertEqual(a, b, accuracy: 1e-15, "the rows' means") }
        try await assertAgainstQuadrature(model, data: data, seed: 5)
        let smc = try MarkovSMC(model: model, box: -1...1, seed: 5, paths: 16, inner: 8, traceDraws: 10)
        let r = try await smc.run(eps: [0.01], zeta: 2.0 / 3, normalization: .none, lower: true, threads: 2)
        let b = try await model.certifiedBracket(box: -1...1, eps: [0.01], zeta: 2.0 / 3, normalization: .none, seed: 5, draws: 50, threads: 2)
        XCTAssertLessThanOrEqual(b.points[0].dZeta.lowerBound, b.points[0].dZeta.upperBound)
        XCTAssert(b.points[0].dZeta.contains(r.points[0].dZeta), "\(b.points[0].dZeta) ∌ \(r.points[0].dZeta)")
    }

    /// `--outer-moves` on a network of four Gaussian layers whose later stages' weights degenerate (docs/METHOD.md
    /// §22): each stage whose plain ESS is below K/2 is moved and no other, stages 2 and 3 among them (the later
    /// from the populations of the moved islands before it), the estimates lie inside the certified bracket,
    /// and the numbers do not depend on the thread count.
    func testOuterMovesOnADeepNetwork() async throws {
        let arch = try Architecture(parsing: "8-4-4-4-3")
        let model = try MarkovFisher(architecture: arch, activation: .relu, data: R.gaussianData(10, 8, seed: 1),
                                     sigma2: 0.1, noiseSamples: 1, noiseSeed: 2)
        let smc = try MarkovSMC(model: model, box: -1...1, seed: 4, paths: 16, inner: 8, traceDraws: 20, moveProposals: 2)
        let r1 = try await smc.run(eps: [1e-3], zeta: 2.0 / 3, normalization: .trace, lower: true, threads: 1)
        let r2 = try await smc.run(eps: [1e-3], zeta: 2.0 / 3, normalization: .trace, lower: true, threads: 2)
        let p = r1.points[0]
        XCTAssertEqual(p.moves.count, 3)
        for (m, d) in p.moves.enumerated() {
            // Moved exactly where the plain weights keep an ESS below K/2 = 8.
            if p.ess[m] < 8 {
                XCTAssertGreaterThan(d.steps, 0, "stage \(m + 2) moved (plain ESS \(p.ess[m]) of 16)")
                XCTAssertGreaterThan(d.accepted, 0)
            } else {
                XCTAssertEqual(d.steps, 0, "stage \(m + 2) not moved (plain ESS \(p.ess[m]) of 16)")
            }
            XCTAssertLessThanOrEqual(d.accepted, d.proposals)
        }
        XCTAssert(p.moves[0].steps > 0 && p.moves[1].steps > 0, "stages 2 and 3 moved, the later from the moved islands before it: \(p.ess)")
        XCTAssertEqual(r1.points, r2.points, "the same numbers on 1 and 2 threads")
        let b = try XCTUnwrap(r1.bracket.points.first)
        XCTAssert(b.dZeta.contains(p.dZeta), "\(b.dZeta) ∌ \(p.dZeta)")
        if let low = p.dZetaLower { XCTAssert(b.dZetaLower.contains(low), "\(b.dZetaLower) ∌ \(low)") }
    }

    /// The majorant tilt (`--tilt-moves`, docs/METHOD.md §22) on the network of `testOuterMovesOnADeepNetwork`:
    /// a fit per later stage, at least one stage tilted (and moved: proposals accepted), the estimates inside
    /// the certified bracket, and the same numbers on 1 and 2 threads.
    func testTiltOnADeepNetwork() async throws {
        let arch = try Architecture(parsing: "8-4-4-4-3")
        let model = try MarkovFisher(architecture: arch, activation: .relu, data: R.gaussianData(10, 8, seed: 1),
                                     sigma2: 0.1, noiseSamples: 1, noiseSeed: 2)
        var smc = try MarkovSMC(model: model, box: -1...1, seed: 4, paths: 16, inner: 8, traceDraws: 20)
        smc.tiltProposals = 20
        let r1 = try await smc.run(eps: [1e-3], zeta: 2.0 / 3, normalization: .trace, lower: true, threads: 1)
        let r2 = try await smc.run(eps: [1e-3], zeta: 2.0 / 3, normalization: .trace, lower: true, threads: 2)
        let p = r1.points[0]
        XCTAssertEqual(p.tilts.count, 3)
        XCTAssert(p.tilts.contains { $0.engaged }, "\(p.tilts)")
        for d in p.tilts where d.engaged {
            XCTAssertGreaterThan(d.steps, 0)
            XCTAssertGreaterThan(d.accepted, 0)
            XCTAssertLessThanOrEqual(d.accepted, d.proposals)
            XCTAssertGreaterThanOrEqual(d.explained, MarkovSMC.Staged.tiltExplainedFraction)
            XCTAssertNotNil(d.decorrelation)
        }
        for (m, d) in p.tilts.enumerated() {
            XCTAssertEqual(d.engaged, d.declined == nil, "a stage is tilted or says why not: \(d)")
            switch d.declined {
            case .essAtLeastHalf?: XCTAssertGreaterThanOrEqual(p.ess[m], 8, "the plain weights' ESS, of K = 16")
            case .slopeNotPositive?: XCTAssertLessThanOrEqual(d.slope, 0)
            case .explainedBelowHalf?: XCTAssertLessThan(d.explained, MarkovSMC.Staged.tiltExplainedFraction)
            case .noFit?, nil: break
            }
        }
        XCTAssertEqual(r1.points, r2.points, "the same numbers on 1 and 2 threads")
        let b = try XCTUnwrap(r1.bracket.points.first)
        XCTAssert(b.dZeta.contains(p.dZeta), "\(b.dZeta) ∌ \(p.dZeta)")
        if let low = p.dZetaLower { XCTAssert(b.dZetaLower.contains(low), "\(b.dZetaLower) ∌ \(low)") }
    }

    /// `--chains 3` on a network of three later stages: each chain is the one-chain run on its own seed (chain 0
    /// on the run's), so the joined points are those runs' joined (`assertJoinedChains`); the same numbers on 1 and
    /// 2 threads; the bracket is the run's and c the first chain's.
    func testChainsOnADeepNetwork() async throws {
        let arch = try Architecture(parsing: "8-4-4-4-3")
        let model = try MarkovFisher(architecture: arch, activation: .relu, data: R.gaussianData(10, 8, seed: 1),
                                     sigma2: 0.1, noiseSamples: 1, noiseSeed: 2)
        let eps = [1e-3, 0.1]
        var smc = try MarkovSMC(model: model, box: -1...1, seed: 4, paths: 16, inner: 8, traceDraws: 20)
        smc.chains = 3
        let r1 = try await smc.run(eps: eps, zeta: 2.0 / 3, normalization: .trace, lower: true, threads: 1)
        let r2 = try await smc.run(eps: eps, zeta: 2.0 / 3, normalization: .trace, lower: true, threads: 2)
        XCTAssertEqual(r1.points, r2.points, "the same numbers on 1 and 2 threads")
        var singles: [[EpsilonEstimate]] = []
        for c in 0..<3 {
            var s = smc
            s.staged = smc.staged.chain(c)
            s.chains = 1
            let r = try await s.run(eps: eps, zeta: 2.0 / 3, normalization: .trace, lower: true, threads: 2)
            if c == 0 {
                XCTAssertEqual(r.bracket.points, r1.bracket.points, "the bracket is the run's, not a chain's")
                XCTAssertEqual(r.scale, r1.scale, "c is the first chain's")
            }
            singles.append(r.points)
        }
        try assertJoinedChains(r1.points, singles: singles)
    }

    /// The island-noise share: its two formulas on hand-computed cases, and on a network it falls as
    /// the islands grow (their noise shrinks like 1/J, the variation of Z₂ over θ₁ does not).
    func testIslandNoiseShare() async throws {
        // An island's noise in log Ẑ is var_r(l_r)/R, the variance of the replicates' mean.
        XCTAssertEqual(LogEstimate.mean([1, 3]).variance, 1, accuracy: 1e-15)  // (1 − 3)²/4
        XCTAssertEqual(LogEstimate.mean([0, 3, 6]).variance, 3, accuracy: 1e-15)  // var 9, R = 3
        XCTAssertEqual(LogEstimate.mean([2]).variance, 0)
        XCTAssertEqual(MarkovSMC.noiseShare(noise: [1, 1, 1, 1], logZ: [0, 2, 4, 6]), 0.15, accuracy: 1e-15)  // 1/(20/3)
        XCTAssertEqual(MarkovSMC.noiseShare(noise: [10, 10], logZ: [0, 1]), 1)
        XCTAssertEqual(MarkovSMC.noiseShare(noise: [1, 1], logZ: [3, 3]), 0)

        let arch = try Architecture(parsing: "3-4-3")
        let model = try MarkovFisher(architecture: arch, activation: .relu, data: R.gaussianData(8, 3, seed: 1),
                                     sigma2: 0.1, noiseSamples: 1, noiseSeed: 2)
        var shares: [Double] = []
        for inner in [8, 256] {
            let smc = try MarkovSMC(model: model, box: -1...1, seed: 3, paths: 64, inner: inner, traceDraws: 20)
            let r = try await smc.run(eps: [1e-3], zeta: 2.0 / 3, normalization: .none, lower: false, threads: 2)
            let p = try XCTUnwrap(r.points.first)
            XCTAssertEqual(p.islandNoise.count, 1)
            shares.append(p.islandNoise[0])
            // The tail shortfall is the lognormal model's at the stage's own spread and K.
            XCTAssertEqual(p.tailShortfall, [LogNormalSpread.shortfall(logVariance: p.logVariance[0], count: 64)])
        }
        XCTAssert(shares.allSatisfy { (0...1).contains($0) }, "\(shares)")
        XCTAssertLessThan(shares[1], shares[0] / 4, "J = 8 → 256: \(shares)")
    }

    /// Same numbers for any thread count.
    func testThreadIndependence() async throws {
        let arch = try Architecture(parsing: "3-4-3")
        let model = try MarkovFisher(architecture: arch, activation: .relu, data: R.gaussianData(5, 3, seed: 1),
                                     sigma2: 0.5, noiseSamples: 1, noiseSeed: 2)
        let smc = try MarkovSMC(model: model, box: -1...1, seed: 2, paths: 8, inner: 8, traceDraws: 20)
        let a = try await smc.run(eps: [1e-3, 0.3], zeta: 0.7, normalization: .trace, lower: true, threads: 1)
        let b = try await smc.run(eps: [1e-3, 0.3], zeta: 0.7, normalization: .trace, lower: true, threads: 3)
        XCTAssertEqual(a.points, b.points)
        XCTAssertEqual(a.scale, b.scale)
    }
}
