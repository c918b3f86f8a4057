import Foundation
import TwoScaleNumerics

/// A majorant of a Gaussian unit's log-factor that is linear in its activation pattern (docs/METHOD.md §19,
/// "The first block, sampled"). The unit's block is `A(a) = σ⁻²/S Σ_i a_i x̃_i x̃_iᵀ` with `a_i = act'(z_i)²`, and
/// `log g(w) = Σ_k φ(λ_k(A))`, `φ(λ) = log(1 + s√λ)`. A spectral sum of a concave φ is concave in A, and A is
/// linear in a, so the tangent at any `a⁰` lies above it everywhere:
///
///     log g(w) ≤ c₀ + Σ_i β_i a_i(w),   β_i = σ⁻²/S · x̃_iᵀ φ'(A(a⁰)) x̃_i,   c₀ = Σ_k [φ(μ_k) − μ_k φ'(μ_k)],
///
/// μ the eigenvalues of `A(a⁰)`. Taken at `a⁰_i = a²/2` (a = max |act'|); only the eigenvalues that the
/// inputs reach enter (`x̃_i` lies in `A(a⁰)`'s range), from the smaller of `X̃ᵀX̃` and `X̃X̃ᵀ`; a direction whose
/// eigenvalue is below 1e-12 of the largest adds its largest possible term to c₀ instead. Evaluating it costs
/// the pre-activations alone, no eigenproblem.
public struct UnitTangent: Sendable, Equatable {
    /// The constant c₀.
    public var constant: Double
    /// β_i, one per patch row.
    public var slopes: [Double]

    /// `c₀ + Σ_i β_i a_i` for the rows' `a_i = act'(z_i)²`.
    public func logBound(weights a: [Double]) -> Double {
        precondition(a.count == slopes.count)
        var t = constant
        for i in a.indices { t += slopes[i] * a[i] }
        return t
    }
}

extension MarkovFisher {
    /// The tangent majorant of a Gaussian unit of the block that `inputs` feeds, at scale s (`UnitTangent`).
    public func unitTangent(inputs: UnitInputs, scale s: Double) throws -> UnitTangent {
        precondition(inputs.block < blockDimensions.count - 1, "the tangent is a Gaussian unit's")
        let xa = inputs.patches
        let rows = xa.rows, p = xa.cols
        let f = 1 / (sigma2 * Double(inputs.samples))
        let a0 = derivativeBound * derivativeBound / 2
        // Eigenpairs of the smaller Gram, λ_k, and c_ik = (x̃_i · v_k)², v_k the unit eigenvectors of X̃ᵀX̃.
        let (values, vectors) = try SymmetricEigen.decomposition(rows >= p ? BLAS.gram(xa, transpose: true) : BLAS.gram(xa))
        let n = values.count
        let top = values.max() ?? 0
        var proj = rows >= p ? BLAS.product(xa, vectors, transB: true) : vectors
        if rows < p {
            // Column j of the transposed eigenvector matrix holds u_j; x̃_i · v_k = √λ_k U_ik.
            proj = Matrix(rows: rows, cols: n)
            for i in 0..<rows { for k in 0..<n { proj[i, k] = vectors[k, i] * Swift.max(0, values[k]).squareRoot() } }
        }
        var constant = 0.0
        var dphi = [Double](repeating: 0, count: n)
        let floor = 1e-12 * top
        for k in 0..<n {
            guard values[k] > floor else {
                // A direction left out (its eigenvalue at most 1e-12 of the largest, or round-off): by pinching,
                // `Σφ(λ(A)) ≤ Σφ(λ(PAP)) + Σφ(λ(QAQ))`, and `QAQ ≼ σ⁻²/S a² Q X̃ᵀX̃ Q`, so it adds at most
                // `φ(σ⁻²/S a² · floor)`; this also covers a round-off root that the computed factor keeps.
                constant += Foundation.log1p(s * (f * 2 * a0 * floor).squareRoot())
                continue
            }
            let mu = f * a0 * values[k], r = mu.squareRoot()
            dphi[k] = s / (2 * r * (1 + s * r))
            constant += Foundation.log1p(s * r) - mu * dphi[k]
        }
        let slopes = (0..<rows).map { i in f * (0..<n).reduce(0) { $0 + dphi[$1] * proj[i, $1] * proj[i, $1] } }
        return UnitTangent(constant: constant, slopes: slopes)
    }

    /// The tangent majorant `t` at the unit's weights `w` (its rows' `a_i = act'(z_i)²` from `z = X̃w`).
    public func tangentLogBound(_ t: UnitTangent, weights w: [Double], inputs: UnitInputs) -> Double {
        t.logBound(weights: Self.preActivations(w, patches: inputs.patches).map { let d = activation.derivative($0); return d * d })
    }
}
