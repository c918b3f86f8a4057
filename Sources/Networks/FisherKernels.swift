import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// Dense building blocks shared by the Fisher estimators: Gram matrices through BLAS `dsyrk`, their
/// eigenvalues through LAPACK `dsyevd`, and the Hadamard-product Gram of layered models.
public enum FisherKernels {
    /// `x` with a column of ones appended when `bias` (the input of an affine layer `W x + b`).
    public static func augmented(_ x: Matrix, bias: Bool) -> Matrix {
        guard bias else { return x }
        let n = x.rows, d = x.cols
        var out = Matrix(rows: n, cols: d + 1)
        x.data.withUnsafeBufferPointer { src in
            out.data.withUnsafeMutableBufferPointer { dst in
                for i in 0..<n {
                    for j in 0..<d { dst[i * (d + 1) + j] = src[i * d + j] }
                    dst[i * (d + 1) + d] = 1
                }
            }
        }
        return out
    }

    /// `α·YᵀY` (cols × cols) when `transpose`, else `α·YYᵀ` (rows × rows), upper triangle only.
    public static func syrk(_ y: UnsafePointer<Double>, rows: Int, cols: Int, transpose: Bool, alpha: Double) -> Matrix {
        BLAS.syrkUpper(y, rows: rows, cols: cols, transpose: transpose, alpha: alpha)
    }

    /// The eigenvalues of `α·YᵀY`, computed from whichever of `YᵀY` (cols²) and `YYᵀ` (rows²) is
    /// smaller — the two share their nonzero spectrum. Returns `min(rows, cols)` values, ascending
    /// (the other `cols − rows` eigenvalues of `YᵀY`, if any, are zeros).
    public static func gramEigenvalues(_ y: UnsafePointer<Double>, rows: Int, cols: Int, alpha: Double) throws -> [Double] {
        if rows == 0 || cols == 0 { return [] }
        let g = syrk(y, rows: rows, cols: cols, transpose: cols <= rows, alpha: alpha)
        return try SymmetricEigen.eigenvalues(g)
    }

    /// `values` followed by zeros up to `count` entries, sorted ascending.
    public static func padded(_ values: [Double], to count: Int) -> [Double] {
        var out = values
        if out.count < count { out.append(contentsOf: repeatElement(0, count: count - out.count)) }
        out.sort()
        return out
    }

    /// Adds the Hadamard product `(B Bᵀ) ∘ (Act ⊗ 1_{q×q})` to the upper triangle of `g`:
    ///
    ///     g[(n,a), (n',b)] += α · (β_{n,a} · β_{n',b}) · Act[n, n']
    ///
    /// where B is `(N·q) × width` (row `n·q + a` = β_{n,a}) and Act is the `N × N` activation Gram.
    public static func addHadamardGram(into g: inout Matrix, backward b: Matrix, activationGram act: Matrix, q: Int, alpha: Double) {
        let rows = b.rows
        precondition(g.rows == rows && act.rows * q == rows)
        let bb = b.data.withUnsafeBufferPointer { syrk($0.baseAddress!, rows: rows, cols: b.cols, transpose: false, alpha: alpha) }
        let nAct = act.rows
        bb.data.withUnsafeBufferPointer { pb in
            act.data.withUnsafeBufferPointer { pa in
                g.data.withUnsafeMutableBufferPointer { pg in
                    for r in 0..<rows {
                        let arow = (r / q) * nAct
                        let base = r * rows
                        for c in r..<rows { pg[base + c] += pb[base + c] * pa[arow + c / q] }
                    }
                }
            }
        }
    }
}
