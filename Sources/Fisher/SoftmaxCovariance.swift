import Foundation

/// Factorisations of the softmax covariance `A = diag(p) − p pᵀ` (the Fisher information of one
/// categorical draw with respect to its logits). `A` is PSD with `A·1 = 0`, so its rank is ≤ K − 1.
enum SoftmaxCovariance {
    /// Writes a `K × (K−1)` factor Λ (row-major) with `Λ Λᵀ = diag(p) − p pᵀ` into `out`.
    ///
    /// `B = diag(√p) − p √pᵀ` satisfies `B Bᵀ = A` (as `Σ p = 1`) and `B √p = 0`. A Householder
    /// reflection `H = I − 2uuᵀ/uᵀu`, `u = √p + e_k` (k = argmax p, so `uᵀu = 2(1 + √p_k) ≥ 2`), maps
    /// `√p ↦ −e_k`; its columns other than k span `√p^⊥`, hence `B H` has a zero column k and the other
    /// K − 1 columns form Λ:
    ///
    ///     Λ[c, j] = √p_j · (δ_cj − p_c − √p_k (δ_ck − p_c) / (1 + √p_k)),   j ≠ k.
    ///
    /// The columns of Λ sum to zero (`1ᵀΛ = 0`).
    @inline(__always)
    static func factor(_ p: UnsafePointer<Double>, _ k: Int, into out: UnsafeMutablePointer<Double>) {
        var kmax = 0
        for c in 1..<k where p[c] > p[kmax] { kmax = c }
        let sk = p[kmax].squareRoot()
        let g = sk / (1 + sk)
        // Column by column, so that each √p_j is taken once (K square roots, not K(K − 1)).
        var col = 0
        for j in 0..<k where j != kmax {
            let sj = p[j].squareRoot()
            for c in 0..<k {
                let pc = p[c]
                let h = g * ((c == kmax ? 1 : 0) - pc)
                out[c * (k - 1) + col] = sj * ((c == j ? 1 : 0) - pc - h)
            }
            col += 1
        }
    }

    /// `M = QᵀΛ` ((K−1) × (K−1), row-major) for a `K × (K−1)` factor Λ and the Helmert basis Q of `1^⊥`
    /// (orthonormal columns: column a is `(1, …, 1, −(a+1), 0, …)/√((a+1)(a+2))` with a + 1 ones), by
    /// running sums instead of the product: row a of M is `(Σ_{c≤a} Λ_c − (a+1) Λ_{a+1}) / √((a+1)(a+2))`
    /// (Λ_c row c of Λ), K(K−1) additions where the product takes K(K−1)²/2.
    @inline(__always)
    static func helmertProject(_ lam: UnsafePointer<Double>, _ k: Int, into out: UnsafeMutablePointer<Double>,
                               running: UnsafeMutablePointer<Double>) {
        let q = k - 1
        for j in 0..<q { running[j] = 0 }
        for a in 0..<q {
            let la = lam + a * q, next = lam + (a + 1) * q, row = out + a * q
            let m = Double(a + 1), scale = 1 / (m * (m + 1)).squareRoot()
            for j in 0..<q {
                running[j] += la[j]
                row[j] = scale * (running[j] - m * next[j])
            }
        }
    }
}
