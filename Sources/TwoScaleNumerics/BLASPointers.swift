import CGSL
import Foundation

/// BLAS levels 2 and 3 on raw row-major buffers, for kernels that assemble their operands in scratch memory
/// (the Fisher routes of Fisher) and must not copy them into a `Matrix`. Like every call into C
/// numerics, they go through this module: OpenBLAS is pinned to one thread first (`GSL.prepare`), and
/// shapes are checked before the call. All buffers are row-major with the given leading dimensions
/// (the distance between the starts of two consecutive rows, ≥ the row length used).
extension BLAS {
    /// `C ← α·op(A)·op(B) + β·C` with `op(A)` m × k, `op(B)` k × n and C m × n (`dgemm`).
    ///
    /// A is stored m × k (`transA == false`) or k × m (`transA`), with leading dimension `lda`; likewise
    /// B is k × n or n × k with `ldb`; C is m × n with `ldc`. With `k == 0` C becomes `β·C` (0 when β = 0,
    /// whatever C held); with `m == 0` or `n == 0` nothing is touched.
    public static func gemm(m: Int, n: Int, k: Int, alpha: Double = 1,
                            a: UnsafePointer<Double>, lda: Int, transA: Bool = false,
                            b: UnsafePointer<Double>, ldb: Int, transB: Bool = false,
                            beta: Double = 0, c: UnsafeMutablePointer<Double>, ldc: Int) {
        precondition(m >= 0 && n >= 0 && k >= 0, "gemm: negative dimension")
        precondition(lda >= Swift.max(1, transA ? m : k) && ldb >= Swift.max(1, transB ? k : n) && ldc >= Swift.max(1, n),
                     "gemm: leading dimension shorter than a row")
        precondition([m, n, k, lda, ldb, ldc].allSatisfy { $0 <= Int(Int32.max) }, "gemm: dimension beyond 32-bit BLAS")
        if m == 0 || n == 0 { return }
        if k == 0 {
            for i in 0..<m { for j in 0..<n { c[i * ldc + j] = beta == 0 ? 0 : beta * c[i * ldc + j] } }
            return
        }
        GSL.prepare()
        cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                    Int32(m), Int32(n), Int32(k), alpha, a, Int32(lda), b, Int32(ldb), beta, c, Int32(ldc))
    }

    /// `y ← A·x` with A stored m × n row-major (leading dimension `lda`), x of n and y of m entries
    /// (`dgemv`). With `n == 0`, y becomes 0.
    public static func gemv(m: Int, n: Int, a: UnsafePointer<Double>, lda: Int, x: UnsafePointer<Double>,
                            y: UnsafeMutablePointer<Double>) {
        precondition(m >= 0 && n >= 0, "gemv: negative dimension")
        precondition(lda >= Swift.max(1, n), "gemv: leading dimension shorter than a row")
        precondition([m, n, lda].allSatisfy { $0 <= Int(Int32.max) }, "gemv: dimension beyond 32-bit BLAS")
        if m == 0 { return }
        if n == 0 {
            for i in 0..<m { y[i] = 0 }
            return
        }
        GSL.prepare()
        cblas_dgemv(CblasRowMajor, CblasNoTrans, Int32(m), Int32(n), 1, a, Int32(lda), x, 1, 0, y, 1)
    }

    /// The upper triangle of `C ← α·A·Aᵀ + β·C` (`transpose == false`, A stored n × k) or of
    /// `C ← α·AᵀA + β·C` (`transpose`, A stored k × n), C n × n (`dsyrk`, upper). The strictly lower
    /// triangle of C is neither read nor written. With `k == 0` the upper triangle becomes `β·C` (0 when
    /// β = 0); with `n == 0` nothing is touched.
    public static func syrk(n: Int, k: Int, alpha: Double = 1, a: UnsafePointer<Double>, lda: Int, transpose: Bool = false,
                            beta: Double = 0, c: UnsafeMutablePointer<Double>, ldc: Int) {
        precondition(n >= 0 && k >= 0, "syrk: negative dimension")
        precondition(lda >= Swift.max(1, transpose ? n : k) && ldc >= Swift.max(1, n), "syrk: leading dimension shorter than a row")
        precondition([n, k, lda, ldc].allSatisfy { $0 <= Int(Int32.max) }, "syrk: dimension beyond 32-bit BLAS")
        if n == 0 { return }
        if k == 0 {
            for i in 0..<n { for j in i..<n { c[i * ldc + j] = beta == 0 ? 0 : beta * c[i * ldc + j] } }
            return
        }
        GSL.prepare()
        cblas_dsyrk(CblasRowMajor, CblasUpper, transpose ? CblasTrans : CblasNoTrans, Int32(n), Int32(k),
                    alpha, a, Int32(lda), beta, c, Int32(ldc))
    }

    /// `α·YᵀY` (cols × cols) when `transpose`, else `α·YYᵀ` (rows × rows), of a dense row-major
    /// `rows × cols` buffer, as a new `Matrix` with only its upper triangle filled (the lower is 0) —
    /// what `SymmetricEigen.eigenvalues`, which reads the upper triangle, needs.
    public static func syrkUpper(_ y: UnsafePointer<Double>, rows: Int, cols: Int, transpose: Bool, alpha: Double = 1) -> Matrix {
        let n = transpose ? cols : rows, k = transpose ? rows : cols
        var c = Matrix(rows: n, cols: n)
        guard n > 0 && k > 0 else { return c }
        c.data.withUnsafeMutableBufferPointer { pc in
            syrk(n: n, k: k, alpha: alpha, a: y, lda: cols, transpose: transpose, beta: 0, c: pc.baseAddress!, ldc: n)
        }
        return c
    }
}
