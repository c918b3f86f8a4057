import Foundation
import TwoScaleNumerics

/// Row-wise softmax and cross-entropy helpers, stable for any logits (probabilities that underflow
/// become 0, log-probabilities stay finite).
public enum Softmax {
    /// The largest entry of row `i` (of width `k`): the shift that keeps `exp` from overflowing.
    @inline(__always)
    static func rowMax(_ d: UnsafeMutableBufferPointer<Double>, _ i: Int, _ k: Int) -> Double {
        var m = -Double.infinity
        for j in 0..<k { m = Swift.max(m, d[i * k + j]) }
        return m
    }

    /// Row-wise `softmax`.
    public static func probabilities(_ logits: Matrix) -> Matrix {
        var p = logits
        let k = p.cols
        p.data.withUnsafeMutableBufferPointer { d in
            for i in 0..<p.rows {
                let m = rowMax(d, i, k)
                var s = 0.0
                for j in 0..<k { let e = Foundation.exp(d[i * k + j] - m); d[i * k + j] = e; s += e }
                for j in 0..<k { d[i * k + j] /= s }
            }
        }
        return p
    }

    /// The class drawn by inversion from row `i` of a probability matrix with a uniform `u ∈ [0, 1)`:
    /// the first class whose cumulative probability exceeds u (the last class absorbs round-off).
    public static func sampleClass(_ p: Matrix, row i: Int, u: Double) -> Int {
        let k = p.cols
        var acc = 0.0
        for c in 0..<k {
            acc += p.data[i * k + c]
            if u < acc { return c }
        }
        return k - 1
    }

    /// Row-wise `log softmax`.
    public static func logProbabilities(_ logits: Matrix) -> Matrix {
        var p = logits
        let k = p.cols
        p.data.withUnsafeMutableBufferPointer { d in
            for i in 0..<p.rows {
                let m = rowMax(d, i, k)
                var s = 0.0
                for j in 0..<k { s += Foundation.exp(d[i * k + j] - m) }
                let lse = m + Foundation.log(s)
                for j in 0..<k { d[i * k + j] -= lse }
            }
        }
        return p
    }
}
