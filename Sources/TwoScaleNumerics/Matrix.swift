import CGSL
import Foundation
import TwoScaleCore

/// A dense row-major matrix of doubles: the one matrix type of twoscale.
public struct Matrix: Sendable, Equatable {
    public let rows: Int
    public let cols: Int
    public var data: [Double]

    public init(rows: Int, cols: Int, repeating v: Double = 0) {
        precondition(rows >= 0 && cols >= 0)
        self.rows = rows
        self.cols = cols
        self.data = [Double](repeating: v, count: rows * cols)
    }

    public init(rows: Int, cols: Int, data: [Double]) {
        precondition(data.count == rows * cols, "matrix data size mismatch")
        self.rows = rows
        self.cols = cols
        self.data = data
    }

    /// From nested rows (all of the same length).
    public init(_ rowsArray: [[Double]]) {
        rows = rowsArray.count
        cols = rowsArray.first?.count ?? 0
        data = rowsArray.flatMap { $0 }
        precondition(data.count == rows * cols, "ragged rows")
    }

    public static func identity(_ n: Int) -> Matrix {
        var m = Matrix(rows: n, cols: n)
        for i in 0..<n { m.data[i * n + i] = 1 }
        return m
    }

    @inlinable
    public subscript(i: Int, j: Int) -> Double {
        get { data[i * cols + j] }
        set { data[i * cols + j] = newValue }
    }

    public func row(_ i: Int) -> ArraySlice<Double> { data[(i * cols)..<((i + 1) * cols)] }

    /// Rows `range` as a matrix of their own (a copy).
    public func rows(_ range: Range<Int>) -> Matrix {
        precondition(range.lowerBound >= 0 && range.upperBound <= rows, "row range \(range) outside 0..<\(rows)")
        return Matrix(rows: range.count, cols: cols, data: Array(data[(range.lowerBound * cols)..<(range.upperBound * cols)]))
    }

    public var transposed: Matrix {
        var t = Matrix(rows: cols, cols: rows)
        for i in 0..<rows { for j in 0..<cols { t.data[j * rows + i] = data[i * cols + j] } }
        return t
    }

    public var rowArrays: [[Double]] { (0..<rows).map { Array(row($0)) } }
}

/// BLAS level 3 through OpenBLAS's CBLAS (row-major).
public enum BLAS {
    /// `C ← α·op(A)·op(B) + β·C`.
    public static func gemm(_ a: Matrix, transA: Bool = false, _ b: Matrix, transB: Bool = false,
                            alpha: Double = 1, beta: Double = 0, into c: inout Matrix) {
        GSL.prepare()
        let m = transA ? a.cols : a.rows
        let k = transA ? a.rows : a.cols
        let kb = transB ? b.cols : b.rows
        let n = transB ? b.rows : b.cols
        precondition(k == kb && c.rows == m && c.cols == n, "gemm shape mismatch")
        if m == 0 || n == 0 { return }
        if k == 0 {
            if beta == 0 { for i in c.data.indices { c.data[i] = 0 } } else { for i in c.data.indices { c.data[i] *= beta } }
            return
        }
        a.data.withUnsafeBufferPointer { pa in
            b.data.withUnsafeBufferPointer { pb in
                c.data.withUnsafeMutableBufferPointer { pc in
                    cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                                Int32(m), Int32(n), Int32(k), alpha, pa.baseAddress, Int32(a.cols),
                                pb.baseAddress, Int32(b.cols), beta, pc.baseAddress, Int32(c.cols))
                }
            }
        }
    }

    /// `op(A)·op(B)` as a new matrix.
    public static func product(_ a: Matrix, transA: Bool = false, _ b: Matrix, transB: Bool = false) -> Matrix {
        var c = Matrix(rows: transA ? a.cols : a.rows, cols: transB ? b.rows : b.cols)
        gemm(a, transA: transA, b, transB: transB, into: &c)
        return c
    }

    /// Gram matrix `α·A·Aᵀ` (or `α·AᵀA` with `transpose`), both triangles filled.
    public static func gram(_ a: Matrix, transpose: Bool = false, alpha: Double = 1) -> Matrix {
        GSL.prepare()
        let n = transpose ? a.cols : a.rows
        let k = transpose ? a.rows : a.cols
        var c = Matrix(rows: n, cols: n)
        if n == 0 || k == 0 { return c }
        a.data.withUnsafeBufferPointer { pa in
            c.data.withUnsafeMutableBufferPointer { pc in
                cblas_dsyrk(CblasRowMajor, CblasUpper, transpose ? CblasTrans : CblasNoTrans, Int32(n), Int32(k),
                            alpha, pa.baseAddress, Int32(a.cols), 0, pc.baseAddress, Int32(n))
            }
        }
        for i in 0..<n { for j in 0..<i { c.data[i * n + j] = c.data[j * n + i] } }
        return c
    }
}

/// Eigenvalues of symmetric matrices (LAPACK: values as `dsyevd` computes them, `dsytrd` then `dsterf`;
/// vectors by `dsyevd`, divide and conquer).
public enum SymmetricEigen {
    /// All eigenvalues of the symmetric matrix `a` (only its upper triangle is read), ascending.
    public static func eigenvalues(_ a: Matrix) throws -> [Double] {
        precondition(a.rows == a.cols, "eigenvalues of a non-square matrix")
        if a.rows == 1 { try checkFinite(a) }
        if a.rows <= 1 { return a.data }
        return try values(a)
    }

    /// What `dsyevd` computes without vectors, bit for bit: it reduces `a` to tridiagonal form (`dsytrd`)
    /// and takes the tridiagonal's eigenvalues (`dsterf`), after rescaling `a` only when its largest
    /// entry `‖a‖_max` lies outside `[r, 1/r]`, `r = √(s/ε)` (s the safe minimum, ε the precision). Here
    /// the two steps are called directly, which saves dsyevd's workspace query and norm pass on every
    /// small eigenproblem the samplers solve. The test is the sum σ of `|a_ij|` over the triangle LAPACK
    /// reads (row-major upper; the other is never examined here): `σ/T ≤ ‖a‖_max ≤ σ` (T entries), so
    /// `σ = 0` or `T·r ≤ σ ≤ 1/r` means every entry is finite and dsyevd would not rescale; any other matrix
    /// (a non-finite entry included) goes to dsyevd itself, after the finiteness check of every entry.
    static func values(_ a: Matrix) throws -> [Double] {
        GSL.prepare()
        let n = a.rows
        var sum = 0.0
        a.data.withUnsafeBufferPointer { p in
            var acc = SIMD4<Double>(repeating: 0), tail = 0.0
            let raw = UnsafeRawPointer(p.baseAddress!)
            for i in 0..<n {
                var j = i
                while j + 4 <= n {
                    let v = raw.loadUnaligned(fromByteOffset: (i * n + j) * 8, as: SIMD4<Double>.self)
                    acc += v.replacing(with: -v, where: v .< 0)
                    j += 4
                }
                while j < n { tail += Swift.abs(p[i * n + j]); j += 1 }
            }
            sum = acc.sum() + tail
        }
        let r = (Double.leastNormalMagnitude / Double.ulpOfOne).squareRoot()
        // (σ = ∞ or NaN: a non-finite entry, or finite ones whose sum overflows; dsyevd's path tells which.)
        guard sum == 0 || (sum >= Double(n * (n + 1) / 2) * r && sum <= 1 / r) else {
            return try solve(a, vectors: false).values
        }
        var m = a.data
        var d = [Double](repeating: 0, count: n)
        var nn = Int32(n), lda = Int32(n), info: Int32 = 0
        var uplo = Int8(UInt8(ascii: "L"))
        var lwork: Int32 = -1, wq = 0.0
        var e = [Double](repeating: 0, count: n), tau = [Double](repeating: 0, count: n)
        dsytrd_(&uplo, &nn, &m, &lda, &d, &e, &tau, &wq, &lwork, &info)
        guard info == 0 else { throw TwoScaleError.failure("LAPACK dsytrd workspace query failed (info \(info))") }
        lwork = Swift.max(1, Int32(wq))
        var work = [Double](repeating: 0, count: Int(lwork))
        dsytrd_(&uplo, &nn, &m, &lda, &d, &e, &tau, &work, &lwork, &info)
        guard info == 0 else { throw TwoScaleError.failure("LAPACK dsytrd failed (info \(info)) on a \(n)×\(n) matrix") }
        dsterf_(&nn, &d, &e, &info)
        guard info == 0 else {
            throw TwoScaleError.failure("LAPACK dsterf failed to converge (info \(info)) on a \(n)×\(n) matrix")
        }
        return d
    }

    /// Eigenvalues (ascending) and orthonormal eigenvectors of the symmetric matrix `a` (only its upper
    /// triangle is read): `vectors` row j is the eigenvector of `values[j]`, so `a = Vᵀ diag(values) V`.
    public static func decomposition(_ a: Matrix) throws -> (values: [Double], vectors: Matrix) {
        precondition(a.rows == a.cols, "eigenvectors of a non-square matrix")
        if a.rows == 0 { return ([], Matrix(rows: 0, cols: 0)) }
        let (w, m) = try solve(a, vectors: true)
        return (w, Matrix(rows: a.rows, cols: a.rows, data: m))
    }

    /// A NaN or ∞ (an overflow upstream, e.g. huge weights) makes LAPACK fail or return garbage: say so
    /// plainly instead.
    static func checkFinite(_ a: Matrix) throws {
        guard a.data.allSatisfy(\.isFinite) else {
            throw TwoScaleError.failure("a \(a.rows)×\(a.rows) Fisher (Gram) matrix has non-finite entries: the model overflowed (weights or inputs too large; use a smaller \(Setting.box) or smaller weights)")
        }
    }

    /// `dsyevd` on a non-empty symmetric `a`: the eigenvalues and, with `vectors`, the overwritten array,
    /// which holds the eigenvectors as columns in column-major order (rows read row-major). The input
    /// is row-major upper = column-major lower; symmetric, so either triangle works.
    static func solve(_ a: Matrix, vectors: Bool) throws -> (values: [Double], vectors: [Double]) {
        GSL.prepare()
        try checkFinite(a)
        var n = Int32(a.rows)
        var m = a.data
        var w = [Double](repeating: 0, count: Int(n))
        var lda = n
        var info: Int32 = 0
        var jobz = Int8(UInt8(ascii: vectors ? "V" : "N")), uplo = Int8(UInt8(ascii: "L"))
        var lwork: Int32 = -1, liwork: Int32 = -1
        var wq = 0.0
        var iq: Int32 = 0
        dsyevd_(&jobz, &uplo, &n, &m, &lda, &w, &wq, &lwork, &iq, &liwork, &info)
        guard info == 0 else { throw TwoScaleError.failure("LAPACK dsyevd workspace query failed (info \(info))") }
        lwork = Int32(wq)
        liwork = Swift.max(iq, 1)
        var work = [Double](repeating: 0, count: Int(lwork))
        var iwork = [Int32](repeating: 0, count: Int(liwork))
        dsyevd_(&jobz, &uplo, &n, &m, &lda, &w, &work, &lwork, &iwork, &liwork, &info)
        guard info == 0 else {
            throw TwoScaleError.failure("LAPACK dsyevd failed to converge (info \(info)) on a \(n)×\(n) matrix")
        }
        return (w, m)
    }
}
