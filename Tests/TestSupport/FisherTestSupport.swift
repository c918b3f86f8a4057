import Foundation
import Networks
import RandomStreams
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// Independent dense references for the Fisher estimators: scores by central finite differences of
/// log-densities, Fisher matrices as explicit averages of score outer products.
public enum FisherReference {
    public static let h = 1e-5

    /// A network with weights (and biases) U(−1, 1) from `seed`.
    public static func net(_ sizes: [Int], bias: Bool, _ act: Activation, seed: UInt64) throws -> Network {
        var rng = Xoshiro256(seed: seed, stream: [7])
        return Network.uniform(architecture: try Architecture(sizes: sizes, bias: bias), activation: act, box: -1...1, rng: &rng)
    }

    public static func gaussianData(_ n: Int, _ d: Int, seed: UInt64) -> Matrix {
        var rng = Xoshiro256(seed: seed, stream: [11])
        return Matrix(rows: n, cols: d, data: (0..<(n * d)).map { _ in rng.normal() })
    }

    /// Offset and length of layer m's parameters in `MLP.parameters`.
    public static func range(_ a: Architecture, layer m: Int) -> Range<Int> {
        let start = (0..<m).map(a.parameters(layer:)).reduce(0, +)
        return start..<(start + a.parameters(layer: m))
    }

    /// Central differences of `f(θ)` (a vector) w.r.t. the parameters in `r`: rows = outputs of f.
    public static func jacobian(_ net: Network, _ r: Range<Int>, _ f: (Network) -> [Double]) -> [[Double]] {
        let theta = net.parameters
        var cols: [[Double]] = []
        for i in r {
            var plus = net, minus = net
            var tp = theta, tm = theta
            tp[i] += h
            tm[i] -= h
            plus.setParameters(tp)
            minus.setParameters(tm)
            let a = f(plus), b = f(minus)
            cols.append(zip(a, b).map { ($0 - $1) / (2 * h) })
        }
        let rows = cols.first?.count ?? 0
        return (0..<rows).map { o in cols.map { $0[o] } }
    }

    /// Gaussian hidden layer m (0-based): F = avg over inputs x_s and sigma points y of s(y) s(y)ᵀ, with
    /// s = ∂/∂θ_m log N(y; act(W_m x_s + b_m), σ²I) by finite differences. Since s is affine in y, the
    /// sigma points y = μ ± σ√n e_i (same mean and covariance as N(μ, σ²I)) give the exact expectation.
    public static func gaussianLayerFisher(_ net: Network, layer m: Int, inputs x: Matrix, sigma2: Double) -> Matrix {
        let r = range(net.architecture, layer: m)
        let dm = r.count
        var f = Matrix(rows: dm, cols: dm)
        let nOut = net.architecture.sizes[m + 1]
        let sigma = sigma2.squareRoot()
        for s in 0..<x.rows {
            let xs = Matrix(rows: 1, cols: x.cols, data: Array(x.row(s)))
            let mu = net.activate(net.preActivation(layer: m, input: xs)).data
            var points: [[Double]] = []
            for i in 0..<nOut {
                for sign in [-1.0, 1.0] {
                    var y = mu
                    y[i] += sign * sigma * Double(nOut).squareRoot()
                    points.append(y)
                }
            }
            // Scores of log N(y; μ(θ), σ²I) at every sigma point: one finite-difference pass.
            let scores = jacobian(net, r) { nn in
                let mu2 = nn.activate(nn.preActivation(layer: m, input: xs)).data
                return points.map { y in -zip(y, mu2).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) / (2 * sigma2) }
            }
            let w = 1 / (Double(points.count) * Double(x.rows))
            for sc in scores { addOuter(&f, sc, w) }
        }
        return f
    }

    /// Softmax layer: F = avg_x Σ_y p_y s_y s_yᵀ, s_y = ∂/∂θ_L log softmax(W_L x + b_L)_y by finite differences.
    public static func softmaxLayerFisher(_ net: Network, inputs x: Matrix) -> Matrix {
        let last = net.architecture.layers - 1
        let r = range(net.architecture, layer: last)
        var f = Matrix(rows: r.count, cols: r.count)
        for s in 0..<x.rows {
            let xs = Matrix(rows: 1, cols: x.cols, data: Array(x.row(s)))
            let p = Softmax.probabilities(net.preActivation(layer: last, input: xs)).data
            let scores = jacobian(net, r) { nn in Softmax.logProbabilities(nn.preActivation(layer: last, input: xs)).data }
            for (y, sc) in scores.enumerated() { addOuter(&f, sc, p[y] / Double(x.rows)) }
        }
        return f
    }

    /// Output FIM: F = avg_n J_nᵀ (diag p − p pᵀ) J_n with J_n = ∂logits/∂θ by finite differences.
    public static func outputFisher(_ net: Network, inputs x: Matrix) -> Matrix {
        let d = net.architecture.parameterCount
        let k = net.architecture.classes
        var f = Matrix(rows: d, cols: d)
        for s in 0..<x.rows {
            let xs = Matrix(rows: 1, cols: x.cols, data: Array(x.row(s)))
            let p = Softmax.probabilities(net.forward(xs).logits).data
            let j = jacobian(net, 0..<d) { nn in nn.forward(xs).logits.data }
            for a in 0..<d {
                for b in 0..<d {
                    var v = 0.0
                    for c in 0..<k {
                        v += p[c] * j[c][a] * j[c][b]
                        for e in 0..<k { v -= p[c] * p[e] * j[c][a] * j[e][b] }
                    }
                    f[a, b] += v / Double(x.rows)
                }
            }
        }
        return f
    }

    public static func addOuter(_ f: inout Matrix, _ v: [Double], _ w: Double) {
        for a in v.indices { for b in v.indices { f[a, b] += w * v[a] * v[b] } }
    }

    public static func eigenvalues(_ f: Matrix) throws -> [Double] { try SymmetricEigen.eigenvalues(f) }

    /// Spectra agree to `rel` times the largest eigenvalue.
    public static func assertSpectra(_ got: [Double], _ want: [Double], rel: Double = 1e-6, _ what: String,
                              file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(got.count, want.count, "\(what): count", file: file, line: line)
        let scale = Swift.max(want.map(Swift.abs).max() ?? 0, 1e-12)
        for (g, w) in zip(got, want) where Swift.abs(g - w) > rel * scale {
            XCTFail("\(what): eigenvalue \(g) vs reference \(w) (scale \(scale))\n got \(got)\n want \(want)", file: file, line: line)
            return
        }
    }
}
