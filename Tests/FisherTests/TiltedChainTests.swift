@testable import Fisher
import Foundation
@testable import Networks
import RandomStreams
import TestSupport
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// The tilted chain (docs/METHOD.md §19, "Upper end, tilted"): its Gaussian integral against quadrature, its
/// tilted moments against exact laws (where a smaller spread fails), one level and the whole chain against Monte
/// Carlo means of the later blocks' majorants on small MLPs. (MeanCeilingTests' models.)
extension MeanCeilingTests {
    /// `logSquareTilt` is `log E_g exp(u⁺ m + u² L²/2)`, u = b + σg: against a midpoint rule over g on [−300, 300]
    /// (10⁶ cells; near σL = 1 the integrand is a Gaussian of standard deviation up to 7 centred up to 63 away), at
    /// slopes of both signs, with and without mean; and exactly `b⁺m + b²L²/2` at σ = 0.
    func testSquareTiltAgainstQuadrature() {
        for (b, sigma, m, l) in [(0.0, 1.0, 1.0, 0.5), (2.0, 0.3, 1.5, 1.2), (-3.0, 0.8, 0.7, 0.9), (5.0, 1.9, 2.0, 0.5),
                                 (0.4, 0.05, 3.0, 2.0), (-0.5, 1.0, 0.0, 0.99)] {
            let cells = 1_000_000, lo = -300.0, h = 600.0 / Double(cells)
            var terms: [Double] = []
            terms.reserveCapacity(cells)
            for k in 0..<cells {
                let g = lo + (Double(k) + 0.5) * h, u = b + sigma * g
                terms.append(-g * g / 2 + Swift.max(0, u) * m + u * u * l * l / 2)
            }
            let exact = LogSpace.logMeanExp(terms) + Foundation.log(600 / (2 * Double.pi).squareRoot())
            XCTAssertEqual(MeanCeiling.logSquareTilt(slope: b, sigma: sigma, mean: m, spread: l), exact, accuracy: 1e-7,
                           "b = \(b), σ = \(sigma), m = \(m), L = \(l)")
        }
        XCTAssertEqual(MeanCeiling.logSquareTilt(slope: 2, sigma: 0, mean: 1.5, spread: 0.5), 3 + 0.5, accuracy: 1e-15)
        XCTAssertEqual(MeanCeiling.logSquareTilt(slope: 1, sigma: 2, mean: 1, spread: 0.5), .infinity)
        XCTAssertEqual(MeanCeiling.tiltedLogMoment(copies: 3, alpha: 1, tilt: 2, mean: 1, spread: 0.5), .infinity)
    }

    /// Against the two-point law F = μ ± σ (sub-Gaussian with scale σ: `log cosh(uσ) ≤ u²σ²/2`), whose
    /// `log E (1 + αF)^C e^{λF²}` is exact: the tilted moment bounds it; at λ = 0 it is the untilted `logMoment`'s
    /// value; and with a third of the spread it fails where the tilt is large.
    func testTiltedMomentAgainstATwoPointLaw() {
        var failed = 0
        for (c, alpha, mu, sigma) in [(1.0, 0.5, 1.0, 0.3), (6, 3, 2, 0.5), (25, 10, 4, 1.5), (8, 1, 0.5, 0.5)] {
            XCTAssertEqual(MeanCeiling.tiltedLogMoment(copies: c, alpha: alpha, tilt: 1e-300, mean: mu, spread: sigma),
                           MeanCeiling.logMoment(copies: c, alpha: alpha, mean: mu, spread: sigma), accuracy: 1e-9)
            for lambda in [0.01, 0.1, 0.3, 0.45].map({ $0 / (sigma * sigma) }) {
                func term(_ f: Double) -> Double { c * Foundation.log1p(alpha * f) + lambda * f * f }
                let a = term(mu + sigma), b = term(mu - sigma), top = Swift.max(a, b)
                let exact = top + Foundation.log((Foundation.exp(a - top) + Foundation.exp(b - top)) / 2)
                let bound = MeanCeiling.tiltedLogMoment(copies: c, alpha: alpha, tilt: lambda, mean: mu, spread: sigma)
                XCTAssertLessThanOrEqual(exact, bound + 1e-9, "C = \(c), α = \(alpha), λ = \(lambda)")
                let wrong = MeanCeiling.tiltedLogMoment(copies: c, alpha: alpha, tilt: lambda, mean: mu, spread: sigma / 3)
                if exact > wrong { failed += 1 }
            }
        }
        XCTAssertGreaterThanOrEqual(failed, 4, "a third of the spread should fail")
    }

    /// One relu unit of six weights feeding eight Gaussian units (block 1's Π is 1 × 1, its trace F²):
    /// `(1/q) log E ((1 + αF)^8 e^{μF²})^q` over 200 000 uniform draws (antithetic) lies below the tilted bound at
    /// every scale, tilt and q = 1, 2, and the bound grows with the tilt.
    func testTiltedMeanCeilingAgainstOneUnit() throws {
        let m = try model("6-1-8-3", .relu, data: R.gaussianData(12, 6, seed: 3), r: 1, sigma2: 0.5)
        let mean = try XCTUnwrap(try m.blockCeilings(box: -1...1)[1].mean)
        let values = oneUnitValues(m)
        let spread = mean.spreads[0]
        for s in [1.0, 10, 100] {
            let alpha = s * mean.factor.squareRoot()
            var previous = mean.logBound(scale: s)
            for k in [0.05, 0.2, 0.4] {
                let mu = k / (spread * spread)
                for q in [1.0, 2] {
                    let exact = LogSpace.logMeanExp(values.map { q * (8 * Foundation.log1p(alpha * $0) + mu * $0 * $0) }) / q
                    XCTAssertLessThanOrEqual(exact, mean.logBound(scale: s, power: q, tilt: mu) + 1e-9, "s = \(s), μ = \(mu), q = \(q)")
                }
                let bound = mean.logBound(scale: s, tilt: mu)
                XCTAssertGreaterThan(bound, previous, "s = \(s), μ = \(mu)")
                previous = bound
            }
        }
    }

    /// `log E_θ Π_{m≥1} M_m(θ)` over 3 000 uniform draws of every weight (M_m each later block's majorant at θ) lies
    /// below the tilted chain's sum (within three standard errors) on MLPs of three and four blocks with relu, tanh,
    /// sigmoid and linear units, at four scales; the sum is never above the untilted chain's, and is below it somewhere.
    func testTiltedChainBoundsTheLaterMajorants() throws {
        let cases: [(MarkovFisher, ClosedRange<Double>)] = [
            (try model("5-4-3-3", .relu, data: R.gaussianData(6, 5, seed: 8), bias: true), -1...1),
            (try model("6-5-4-4-3", .relu, data: R.gaussianData(8, 6, seed: 6), bias: true, r: 3), -1...1),
            (try model("5-4-3-3", .tanh, data: R.gaussianData(6, 5, seed: 2), bias: true), -1...1),
            (try model("5-4-3-3", .sigmoid, data: R.gaussianData(3, 5, seed: 4)), -0.5...2),
            (try model("5-3-2-3", .linear, data: R.gaussianData(4, 5, seed: 5), bias: true), 0...1),
            (try model("4-3-5-3", .relu, data: R.gaussianData(5, 4, seed: 6), bias: true), -0.5...2),
        ]
        let scales = [0.3, 3, 30, 300]
        var rng = Xoshiro256(seed: 23, stream: [2])
        var checked = 0, tighter = 0
        for (m, box) in cases {
            let ceilings = try m.blockCeilings(box: box)
            let chain = try XCTUnwrap(TiltedChain(ceilings: ceilings), "\(m.architecture)")
            tighter += try LaterMajorants.checkChain(chain, m, ceilings: ceilings, box: box, scales: scales, draws: 3000, slack: 1e-9,
                                                     rng: &rng, "\(m.architecture) \(m.activation)")
            checked += scales.count
        }
        XCTAssertEqual(checked, 24)
        XCTAssertGreaterThan(tighter, 0, "the tilt should tighten some case")
    }

    /// One level of the chain, where its margin is small: at random layers before block m − 1 (their trace
    /// `T_{m−1}` computed), `log E_{θ_{m−1}} M_m e^{ν T_m}` over 4 000 draws of block m − 1's weights lies below
    /// `log H_m(T_{m−1})` with the tilt ν, on blocks 2 and 3 of a four-block relu MLP, at three scales and tilts.
    func testOneLevelWithATiltAgainstMonteCarlo() throws {
        let m = try model("6-5-4-4-3", .relu, data: R.gaussianData(8, 6, seed: 6), bias: true, r: 3)
        let box: ClosedRange<Double> = -1...1
        let ceilings = try m.blockCeilings(box: box)
        let chain = try XCTUnwrap(TiltedChain(ceilings: ceilings))
        var rng = Xoshiro256(seed: 29, stream: [5])
        var checked = 0
        for block in [2, 3] {
            let base = Network.uniform(architecture: m.architecture, activation: m.activation, box: box, rng: &rng)
            let below = try m.blockInputs(base, block: block - 1)
            let trace = below.data.reduce(0) { $0 + $1 * $1 } / Double(below.rows) + 1  // its bias entry
            let layer = m.architecture.parametricLayers[block - 1]
            let factor = block == m.blockDimensions.count - 1 ? 1 / Double(m.architecture.classes) : 1 / m.sigma2
            var draws: [(eig: [Double], trace: Double)] = []
            var net = base
            for _ in 0..<4000 {
                for i in net.blocks[layer].indices { net.blocks[layer][i] = rng.uniform(box.lowerBound, box.upperBound) }
                let x = try m.blockInputs(net, block: block)
                let xa = m.architecture.parametric(layer: m.architecture.parametricLayers[block]).patches(x)
                let pi = BLAS.gram(xa, transpose: true, alpha: 1 / Double(x.rows))
                draws.append((try SymmetricEigen.eigenvalues(pi), (0..<pi.rows).reduce(0) { $0 + pi[$1, $1] }))
            }
            for s in [1.0, 30, 1000] {
                let slopes = [0, 1e-3, 1e-2]
                for nu in slopes {
                    let logs = draws.map { d in
                        Double(ceilings[block].copies) * d.eig.reduce(0) { $0 + Foundation.log1p(s * (factor * Swift.max(0, $1)).squareRoot()) }
                            + nu * d.trace
                    }
                    let exact = LogSpace.logMeanExp(logs)
                    let bound = chain.logH(block: block, trace: trace, next: nu, scale: s)
                    XCTAssertLessThanOrEqual(exact, bound + 1e-9, "block \(block), s = \(s), ν = \(nu)")
                    checked += 1
                }
            }
        }
        XCTAssertEqual(checked, 18)
    }

    /// The intercept `a_m` bounds `log H_m(T) − μT` at every T in `[0, T̄]` (here on a grid of 20 000), within its
    /// tolerance of the largest value found there, at slopes from the secants' range.
    func testInterceptHoldsBetweenItsCells() throws {
        let m = try model("6-5-4-4-3", .relu, data: R.gaussianData(8, 6, seed: 6), bias: true, r: 3)
        let chain = try XCTUnwrap(TiltedChain(ceilings: try m.blockCeilings(box: -1...1)))
        for block in [2, 3] {
            let top = chain.traces[block - 2]
            for (s, mu) in [(3.0, 10 / top), (30, 100 / top), (300, 30 / top)] {
                let a = chain.intercept(block: block, slope: mu, next: 0, scale: s)
                var largest = -Double.infinity
                for k in 0...20_000 {
                    let t = top * Double(k) / 20_000
                    largest = Swift.max(largest, chain.logH(block: block, trace: t, next: 0, scale: s) - mu * t)
                }
                XCTAssertLessThanOrEqual(largest, a + 1e-9, "block \(block), s = \(s)")
                XCTAssertLessThanOrEqual(a, largest + 0.05, "block \(block), s = \(s): the cells are refined")
            }
        }
    }

    /// A later block's family claims that each unit's `F(w) = ‖act(Yw) + v‖/√S` is sub-Gaussian with scale
    /// `at(trace: T).spreads` for every input Y of trace T. At the worst case, every row of Y the same vector y
    /// (`‖Y‖_op² = S·T`; relu hidden states sharing one mean direction come close), `F = relu(y·w)`: its log-moment
    /// generating function over 200 000 uniform draws lies below `λ²L²/2` at every λ, and a fifth of L fails.
    func testFamilySpreadAgainstTheWorstInput() throws {
        let m = try model("5-4-3-3", .relu, data: R.gaussianData(6, 5, seed: 8), bias: true)
        let box: ClosedRange<Double> = -1...1
        let family = try XCTUnwrap(m.meanCeilingFamily(block: 2, box: box, inputBounds: m.blockInputBounds(box: box)))
        let q = m.architecture.structure(layer: m.architecture.parametricLayers[1]).unitDimension
        var y = (0..<q).map { 0.3 + 0.2 * Double($0) }
        y[q - 1] = 1  // the bias
        let trace = y.reduce(0) { $0 + $1 * $1 }
        let spread = try XCTUnwrap(family.at(trace: trace).spreads.first)
        var rng = Xoshiro256(seed: 4, stream: [9])
        let values = (0..<200_000).map { _ in
            Swift.max(0, zip(y.dropLast(), (0..<(q - 1)).map { _ in rng.uniform(box.lowerBound, box.upperBound) }).reduce(1) { $0 + $1.0 * $1.1 })
        }
        let average = values.reduce(0, +) / Double(values.count)
        var failed = 0
        for lambda in [-2.0, -0.5, 0.3, 1, 2, 3] {
            let mgf = LogSpace.logMeanExp(values.map { lambda * ($0 - average) })
            XCTAssertLessThanOrEqual(mgf, lambda * lambda * spread * spread / 2 + 1e-3, "λ = \(lambda)")
            if mgf > lambda * lambda * spread * spread / 50 + 1e-3 { failed += 1 }
        }
        XCTAssertGreaterThanOrEqual(failed, 3, "a fifth of the family's scale should fail")
    }

    /// A level whose every unit's moment is infinite (`2μL² ≥ 1`) falls back to its suprema, `sup log M + μT̄`:
    /// `C·ones·log(1 + α) + μ·ones + Σ_j (C log(1 + αF̄_j) + μF̄_j²)`, the bias's `e^{μ}` included, at q = 1 and 2.
    func testTiltedLevelAtItsSuprema() {
        let level = MeanCeiling(copies: 3, factor: 2, ones: 1, means: [0.5, 1.2], spreads: [4, 4], maxima: [1.5, 2])
        let s = 0.7, mu = 0.2, alpha = s * 2.0.squareRoot()
        let expected = 3 * Foundation.log1p(alpha) + mu + [1.5, 2].reduce(0) { $0 + 3 * Foundation.log1p(alpha * $1) + mu * $1 * $1 }
        XCTAssertEqual(level.logBound(scale: s, tilt: mu), expected, accuracy: 1e-12)
        XCTAssertEqual(level.logBound(scale: s, power: 2, tilt: mu), expected, accuracy: 1e-12)
    }

    /// `log H_m` with a steep tilt from above (its mean side infinite) against brute force: at 300 uniform networks,
    /// `log M_m(θ) + ν tr Π_m(θ)` (the majorant at the draw's hidden states) never exceeds `logH` at the largest trace.
    func testLogHWithASteepTiltAgainstDraws() throws {
        let m = try model("5-4-3-3", .relu, data: R.gaussianData(6, 5, seed: 8), bias: true)
        let box: ClosedRange<Double> = -1...1
        let ceilings = try m.blockCeilings(box: box)
        let chain = try XCTUnwrap(TiltedChain(ceilings: ceilings))
        let block = 2, s = 3.0, nu = 5.0
        let bound = chain.logH(block: block, trace: chain.traces[block - 2], next: nu, scale: s)
        var rng = Xoshiro256(seed: 12, stream: [3])
        let largest = try LaterMajorants.largestTilted(m, ceilings: ceilings, box: box, block: block, scale: s, tilt: nu, draws: 300, rng: &rng)
        XCTAssertLessThanOrEqual(largest, bound + 1e-9)
        XCTAssertGreaterThan(largest, ceilings[block].logBound(scale: s), "the tilt's share should matter here")
    }

    /// Block 1's term at q = ∞ with a steep tilt from block 2 against brute force: over 300 uniform networks,
    /// `log M_1(θ) + ν tr Π_1(θ)` never exceeds `secondTerm`, whose units' suprema carry `νF̄_j²`.
    func testSecondTermWithASteepTiltAgainstDraws() throws {
        let m = try model("5-4-3-3", .relu, data: R.gaussianData(6, 5, seed: 8), bias: true)
        let box: ClosedRange<Double> = -1...1
        let ceilings = try m.blockCeilings(box: box)
        let chain = try XCTUnwrap(TiltedChain(ceilings: ceilings))
        let s = 3.0, nu = 5.0
        let bound = chain.secondTerm(next: nu, power: .infinity, scale: s)
        var rng = Xoshiro256(seed: 13, stream: [3])
        let largest = try LaterMajorants.largestTilted(m, ceilings: ceilings, box: box, block: 1, scale: s, tilt: nu, draws: 300, rng: &rng)
        XCTAssertLessThanOrEqual(largest, bound + 1e-9)
        let untiltedUnits = chain.second.maxima.reduce(Double(chain.second.copies) * Double(chain.second.ones) * Foundation.log1p(s * chain.second.factor.squareRoot())) {
            $0 + Double(chain.second.copies) * Foundation.log1p(s * chain.second.factor.squareRoot() * $1)
        }
        XCTAssertGreaterThan(largest, untiltedUnits, "the tilt's share should matter here")
    }

    /// The chain against an exact law its assumptions allow: every unit's F equal to its mean bound (spread 0), so
    /// each level's trace is `ones + Σ_j F_j²` and the next level's means follow from it. The later majorants' exact
    /// product along that path lies below the chain's sum at every scale, on three and four blocks whose trace bounds
    /// T̄ lie far above the path's, where the chain is tilted (below the untilted sum). A level that did not pay the
    /// tilt handed down to it would fall below the path.
    func testChainAgainstADeterministicPath() {
        let second = MeanCeiling(copies: 4, factor: 1, ones: 1, means: [0.8, 1.1, 0.6], spreads: [0, 0, 0], maxima: [3, 3, 3])
        func family(_ copies: Int, units: Int) -> MeanCeilingFamily {
            MeanCeilingFamily(copies: copies, factor: 0.5, ones: 1, activation: .relu, symmetricRelu: true, lipschitz: 0, width: 2,
                              kappa: 1.0 / 3, rows: 1, positive: [Double](repeating: 0, count: units),
                              positive2: [Double](repeating: 0, count: units), noise2: [Double](repeating: 0.1, count: units),
                              maxima: [Double](repeating: 50, count: units), crossTerm: false)
        }
        let huge = BlockCeiling(block: 1, units: 1, copies: 1000, values: [Double](repeating: 1e12, count: 10), exact: false)  // never binds
        var tilted = 0
        for later in [[family(3, units: 4)], [family(3, units: 4), family(2, units: 3)]] {
            let chain = TiltedChain(second: second, later: later, ceilings: [BlockCeiling](repeating: huge, count: later.count + 1),
                                    traces: [Double](repeating: 400, count: later.count + 1))
            for s in [0.3, 3, 30, 300] {
                var exact = second.logBound(scale: s)
                var trace = Double(second.ones) + second.means.reduce(0) { $0 + $1 * $1 }
                for f in later {
                    let level = f.at(trace: trace)
                    exact += level.logBound(scale: s)
                    trace = Double(level.ones) + level.means.reduce(0) { $0 + $1 * $1 }
                }
                let sum = chain.terms(scale: s, power: 1).reduce(0, +)
                let untilted = second.logBound(scale: s) + later.reduce(0) { $0 + $1.at(trace: 400).logBound(scale: s) }
                XCTAssertGreaterThanOrEqual(sum, exact - 1e-9 * Swift.abs(exact), "\(later.count + 2) blocks, s = \(s)")
                if sum < untilted - 1 { tilted += 1 }
            }
        }
        XCTAssertGreaterThanOrEqual(tilted, 6, "the chain should be tilted in most of these cases")
    }

    /// The chain applies where every block after the first has a bound in the mean and there are three or more
    /// blocks: not on two blocks, not after a convolution.
    func testChainAppliesToMLPsOfThreeBlocksOrMore() throws {
        let two = try model("5-4-3", .relu, data: R.gaussianData(6, 5, seed: 1))
        XCTAssertNil(TiltedChain(ceilings: try two.blockCeilings(box: -1...1)))
        let three = try model("5-4-3-3", .relu, data: R.gaussianData(6, 5, seed: 1))
        XCTAssertNotNil(TiltedChain(ceilings: try three.blockCeilings(box: -1...1)))
        let conv = try MarkovFisher(architecture: try Architecture(parsing: "4x4x1-conv2k3-3-2"), activation: .relu,
                                    data: R.gaussianData(3, 16, seed: 2), sigma2: 0.3, noiseSamples: 1, noiseSeed: 7)
        XCTAssertNil(TiltedChain(ceilings: try conv.blockCeilings(box: -1...1)))
    }
}

/// The later blocks' majorants at uniform θ, for the chain's tests: `log E_θ Π_{m≥1} M_m(θ)` over `draws` draws
/// (M_m each later block's majorant at the Π of the model's own inputs: `copies · Σ log(1 + s√(f λ(Π_m)))`), with
/// the mean's relative standard error, at each scale.
enum LaterMajorants {
    /// Per scale, the chain's sum (blocks 1 onwards, q = 1) against `logMeans` (within three standard errors and
    /// `slack`) and never above the untilted sum; returns at how many scales it is below the untilted sum by 0.5.
    static func checkChain(_ chain: TiltedChain, _ m: MarkovFisher, ceilings: [BlockCeiling], box: ClosedRange<Double>, scales: [Double],
                           draws: Int, slack: Double, rng: inout Xoshiro256, _ label: String) throws -> Int {
        let means = try logMeans(m, ceilings: ceilings, box: box, scales: scales, draws: draws, rng: &rng)
        var tighter = 0
        for (k, s) in scales.enumerated() {
            let tilted = chain.terms(scale: s, power: 1).reduce(0, +)
            let untilted = ceilings.dropFirst().reduce(0) { $0 + $1.upperLogBound(scale: s) }
            XCTAssertLessThanOrEqual(means[k].logMean - 3 * means[k].relativeSE, tilted + slack, "\(label) s = \(s)")
            XCTAssertLessThanOrEqual(tilted, untilted + 1e-9 * Swift.max(1, untilted), "\(label) s = \(s)")
            if tilted < untilted - 0.5 { tighter += 1 }
        }
        return tighter
    }

    /// The largest `log M_b(θ) + ν tr Π_b(θ)` over `draws` uniform networks: block b's majorant at the draw's
    /// hidden states, tilted by its input's trace.
    static func largestTilted(_ m: MarkovFisher, ceilings: [BlockCeiling], box: ClosedRange<Double>, block b: Int, scale s: Double,
                              tilt nu: Double, draws: Int, rng: inout Xoshiro256) throws -> Double {
        let factor = b == m.blockDimensions.count - 1 ? 1 / Double(m.architecture.classes) : m.derivativeBound * m.derivativeBound / m.sigma2
        var largest = -Double.infinity
        for _ in 0..<draws {
            let net = Network.uniform(architecture: m.architecture, activation: m.activation, box: box, rng: &rng)
            let x = try m.blockInputs(net, block: b)
            let xa = m.architecture.parametric(layer: m.architecture.parametricLayers[b]).patches(x)
            let gram = BLAS.gram(xa, transpose: true, alpha: 1 / Double(x.rows))
            let trace = (0..<gram.rows).reduce(0) { $0 + gram.data[$1 * gram.cols + $1] }
            let logM = Double(ceilings[b].copies) * (try SymmetricEigen.eigenvalues(gram)).reduce(0) {
                $0 + Foundation.log1p(s * (factor * Swift.max(0, $1)).squareRoot())
            }
            largest = Swift.max(largest, logM + nu * trace)
        }
        return largest
    }

    static func logMeans(_ m: MarkovFisher, ceilings: [BlockCeiling], box: ClosedRange<Double>, scales: [Double], draws: Int,
                         rng: inout Xoshiro256) throws -> [(logMean: Double, relativeSE: Double)] {
        let L = m.blockDimensions.count
        var logs = [[Double]](repeating: [], count: scales.count)
        for _ in 0..<draws {
            let net = Network.uniform(architecture: m.architecture, activation: m.activation, box: box, rng: &rng)
            let inputs = try m.blockInputs(net, blocks: L)
            var eig: [[Double]] = []
            for b in 1..<L {
                let xa = m.architecture.parametric(layer: m.architecture.parametricLayers[b]).patches(inputs[b])
                eig.append(try SymmetricEigen.eigenvalues(BLAS.gram(xa, transpose: true, alpha: 1 / Double(inputs[b].rows))))
            }
            for (k, s) in scales.enumerated() {
                var total = 0.0
                for b in 1..<L {
                    let factor = b == L - 1 ? 1 / Double(m.architecture.classes) : m.derivativeBound * m.derivativeBound / m.sigma2
                    total += Double(ceilings[b].copies) * eig[b - 1].reduce(0) { $0 + Foundation.log1p(s * (factor * Swift.max(0, $1)).squareRoot()) }
                }
                logs[k].append(total)
            }
        }
        return logs.map { l in
            let top = l.max() ?? 0
            let w = l.map { Foundation.exp($0 - top) }
            let mean = w.reduce(0, +) / Double(w.count)
            let se = (w.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(w.count - 1) / Double(w.count)).squareRoot() / mean
            return (top + Foundation.log(mean), se)
        }
    }
}
