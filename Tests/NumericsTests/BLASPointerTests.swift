import Foundation
import RandomStreams
import Testing
@testable import TwoScaleNumerics

/// `BLAS.gemm`/`BLAS.syrk` on raw row-major buffers against naive loops: every transpose, α and β,
/// leading dimensions longer than the rows, and the empty cases.
@Suite struct BLASPointerTests {
    static func random(_ count: Int, _ rng: inout Xoshiro256) -> [Double] { (0..<count).map { _ in rng.uniform(-1, 1) } }

    @Test func gemmMatchesNaiveLoops() {
        var rng = Xoshiro256(seed: 7)
        let (m, n, k) = (5, 4, 3)
        for transA in [false, true] {
            for transB in [false, true] {
                for (alpha, beta) in [(1.0, 0.0), (0.5, 1.0), (-2.0, 0.25)] {
                    // Stored shapes, each row padded by 2 unused entries (leading dimension > row length).
                    let (ar, ac) = transA ? (k, m) : (m, k)
                    let (br, bc) = transB ? (n, k) : (k, n)
                    let lda = ac + 2, ldb = bc + 2, ldc = n + 2
                    let a = Self.random(ar * lda, &rng), b = Self.random(br * ldb, &rng)
                    var c = Self.random(m * ldc, &rng)
                    var want = c
                    for i in 0..<m {
                        for j in 0..<n {
                            var s = 0.0
                            for l in 0..<k {
                                let x = transA ? a[l * lda + i] : a[i * lda + l]
                                let y = transB ? b[j * ldb + l] : b[l * ldb + j]
                                s += x * y
                            }
                            want[i * ldc + j] = alpha * s + beta * c[i * ldc + j]
                        }
                    }
                    a.withUnsafeBufferPointer { pa in
                        b.withUnsafeBufferPointer { pb in
                            c.withUnsafeMutableBufferPointer { pc in
                                BLAS.gemm(m: m, n: n, k: k, alpha: alpha, a: pa.baseAddress!, lda: lda, transA: transA,
                                          b: pb.baseAddress!, ldb: ldb, transB: transB, beta: beta, c: pc.baseAddress!, ldc: ldc)
                            }
                        }
                    }
                    for i in c.indices { #expect(abs(c[i] - want[i]) <= 1e-13, "transA \(transA) transB \(transB) α \(alpha) β \(beta) at \(i)") }
                }
            }
        }
    }

    @Test func syrkMatchesNaiveLoopsOnTheUpperTriangle() {
        var rng = Xoshiro256(seed: 8)
        let (n, k) = (4, 6)
        for transpose in [false, true] {
            for (alpha, beta) in [(1.0, 0.0), (0.3, 1.0), (2.0, -0.5)] {
                let (ar, ac) = transpose ? (k, n) : (n, k)
                let lda = ac + 1, ldc = n + 3
                let a = Self.random(ar * lda, &rng)
                var c = Self.random(n * ldc, &rng)
                var want = c
                for i in 0..<n {
                    for j in i..<n {
                        var s = 0.0
                        for l in 0..<k {
                            s += transpose ? a[l * lda + i] * a[l * lda + j] : a[i * lda + l] * a[j * lda + l]
                        }
                        want[i * ldc + j] = alpha * s + beta * c[i * ldc + j]
                    }
                }
                a.withUnsafeBufferPointer { pa in
                    c.withUnsafeMutableBufferPointer { pc in
                        BLAS.syrk(n: n, k: k, alpha: alpha, a: pa.baseAddress!, lda: lda, transpose: transpose,
                                  beta: beta, c: pc.baseAddress!, ldc: ldc)
                    }
                }
                // The upper triangle is the product; everything else (lower triangle, padding) is untouched.
                for i in c.indices { #expect(abs(c[i] - want[i]) <= 1e-13, "transpose \(transpose) α \(alpha) β \(beta) at \(i)") }
            }
        }
    }

    @Test func syrkUpperAgreesWithGram() {
        var rng = Xoshiro256(seed: 9)
        let y = Matrix(rows: 5, cols: 3, data: Self.random(15, &rng))
        for transpose in [false, true] {
            let full = BLAS.gram(y, transpose: transpose, alpha: 0.7)
            let upper = y.data.withUnsafeBufferPointer {
                BLAS.syrkUpper($0.baseAddress!, rows: 5, cols: 3, transpose: transpose, alpha: 0.7)
            }
            #expect(upper.rows == full.rows)
            for i in 0..<upper.rows {
                for j in 0..<upper.cols { #expect(upper[i, j] == (j >= i ? full[i, j] : 0)) }
            }
        }
    }

    @Test func emptyDimensions() {
        var c: [Double] = [3, 4, 5, 6]
        let a: [Double] = [1]
        a.withUnsafeBufferPointer { pa in
            c.withUnsafeMutableBufferPointer { pc in
                // k = 0: C ← β·C.
                BLAS.gemm(m: 2, n: 2, k: 0, a: pa.baseAddress!, lda: 1, b: pa.baseAddress!, ldb: 2,
                          beta: 0.5, c: pc.baseAddress!, ldc: 2)
            }
        }
        #expect(c == [1.5, 2, 2.5, 3])
        a.withUnsafeBufferPointer { pa in
            c.withUnsafeMutableBufferPointer { pc in
                // k = 0, β = 0: the upper triangle becomes 0, the lower is untouched.
                BLAS.syrk(n: 2, k: 0, a: pa.baseAddress!, lda: 1, c: pc.baseAddress!, ldc: 2)
            }
        }
        #expect(c == [0, 0, 2.5, 0])
    }

    /// `SymmetricEigen.decomposition`: orthonormal rows V with `A = Vᵀ diag(λ) V` (read from the upper
    /// triangle only: the lower is garbage here), the eigenvalues those of `eigenvalues`.
    @Test func eigenDecompositionReconstructs() throws {
        var rng = Xoshiro256(seed: 3)
        let n = 6
        var a = Matrix(rows: n, cols: n)
        for i in 0..<n { for j in i..<n { a.data[i * n + j] = rng.uniform(-1, 1) } }
        for i in 0..<n { for j in 0..<i { a.data[i * n + j] = 99 } }
        let (values, v) = try SymmetricEigen.decomposition(a)
        #expect(values == values.sorted())
        let only = try SymmetricEigen.eigenvalues(a)
        for (x, y) in zip(values, only) { #expect(Swift.abs(x - y) < 1e-12) }
        for i in 0..<n {
            for j in 0..<n {
                let upper = a.data[Swift.min(i, j) * n + Swift.max(i, j)]
                var rec = 0.0, dot = 0.0
                for t in 0..<n { rec += v.data[t * n + i] * values[t] * v.data[t * n + j]; dot += v.data[i * n + t] * v.data[j * n + t] }
                #expect(Swift.abs(rec - upper) < 1e-12)
                #expect(Swift.abs(dot - (i == j ? 1 : 0)) < 1e-12)
            }
        }
        #expect(try SymmetricEigen.decomposition(Matrix(rows: 0, cols: 0)).values.isEmpty)
        #expect(throws: (any Error).self) { try SymmetricEigen.decomposition(Matrix(rows: 2, cols: 2, data: [1, .nan, 0, 1])) }
    }

    /// The values-only path (`dsytrd` + `dsterf` called directly) returns dsyevd's eigenvalues bit for
    /// bit, reading only the upper triangle, on sizes across dsytrd's blocking threshold; matrices that
    /// dsyevd would rescale (‖a‖_max near the under- and overflow limits) take dsyevd itself; a NaN or ∞
    /// in either triangle is an error.
    @Test func valuesOnlyPathIsDsyevdBitForBit() throws {
        var rng = Xoshiro256(seed: 11)
        for n in [2, 3, 7, 31, 32, 33, 64, 96, 120] {
            for scale in [1.0, 1e-3, 1e5, 1e-150, 1e150, 0] {
                var a = Matrix(rows: n, cols: n)
                for i in 0..<n { for j in i..<n { a.data[i * n + j] = scale * rng.uniform(-1, 1) } }
                for i in 0..<n { for j in 0..<i { a.data[i * n + j] = -77 } }
                let fast = try SymmetricEigen.eigenvalues(a)
                let reference = try SymmetricEigen.solve(a, vectors: false).values
                #expect(fast == reference, "n = \(n), scale \(scale)")
                #expect(fast.count == n && fast == fast.sorted())
            }
        }
        // A NaN or ∞ anywhere in the upper triangle, past the 4-wide part of a row or inside it.
        for n in [3, 9] {
            for index in [1, n - 1, n + 1, 2 * n - 1, n * n - 1] {
                for bad in [Double.nan, .infinity, -.infinity] {
                    var a = Matrix.identity(n)
                    a.data[index] = bad
                    #expect(throws: (any Error).self) { try SymmetricEigen.eigenvalues(a) }
                }
            }
        }
        // Near the limits where the sum decides nothing, dsyevd itself (its own rescaling).
        let r = (Double.leastNormalMagnitude / Double.ulpOfOne).squareRoot()
        for v in [r, 2 * r, 1 / r, 0.6 / r, 1e308] {  // 1e308: finite entries whose sum overflows
            var a = Matrix.identity(3)
            for i in 0..<3 { a.data[i * 3 + i] = v }
            a.data[1] = v / 4
            let values = try SymmetricEigen.eigenvalues(a)
            let reference = try SymmetricEigen.solve(a, vectors: false).values
            #expect(values == reference)
            #expect(values.allSatisfy { $0.isFinite })
        }
    }
}
