import CGSL
import Foundation

/// BLAS on raw row-major buffers, for the Fisher kernels that build their operands in scratch memory
/// (no `Matrix` wrapper around them). Same conventions as the `Matrix` versions in Matrix.swift.
extension BLAS {
    /// `α·YᵀY` (cols × cols) when `transpose`, else `α·YYᵀ` (rows × rows), for a row-major `rows × cols`
    /// buffer; upper triangle only (the lower one is left 0).
    public static func syrk(_ y: UnsafePointer<Double>, rows: Int, cols: Int, transpose: Bool, alpha: Double) -> Matrix {
        GSL.prepare()
        let n = transpose ? cols : rows, k = transpose ? rows : cols
        var c = Matrix(rows: n, cols: n)
        guard n > 0 && k > 0 else { return c }
        c.data.withUnsafeMutableBufferPointer { pc in
            cblas_dsyrk(CblasRowMajor, CblasUpper, transpose ? CblasTrans : CblasNoTrans, Int32(n), Int32(k),
                        alpha, y, Int32(cols), 0, pc.baseAddress, Int32(n))
        }
        return c
    }

    /// `C ← C + α·YᵀY` (upper triangle) for a row-major `rows × cols` buffer Y and a `cols × cols` C.
    public static func syrkAccumulate(_ y: UnsafePointer<Double>, rows: Int, cols: Int, alpha: Double, into c: inout Matrix) {
        precondition(c.rows == cols && c.cols == cols, "syrk shape mismatch")
        GSL.prepare()
        guard rows > 0 && cols > 0 else { return }
        c.data.withUnsafeMutableBufferPointer { pc in
            cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, Int32(cols), Int32(rows),
                        alpha, y, Int32(cols), 1, pc.baseAddress, Int32(cols))
        }
    }

    /// `C = Aᵀ·B` for row-major buffers A (`k × m`) and B (`k × n`), C `m × n` (overwritten).
    public static func gemmTransA(_ a: UnsafePointer<Double>, _ b: UnsafePointer<Double>, k: Int, m: Int, n: Int,
                                  into c: UnsafeMutablePointer<Double>) {
        GSL.prepare()
        guard m > 0 && n > 0 else { return }
        guard k > 0 else { for i in 0..<(m * n) { c[i] = 0 }; return }
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, Int32(m), Int32(n), Int32(k), 1,
                    a, Int32(m), b, Int32(n), 0, c, Int32(n))
    }
}
