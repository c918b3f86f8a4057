import Foundation

/// Log-space helpers. Every average of exponentials in twoscale goes through these, so that
/// `log E[e^A]` is finite whenever the `A` are, however large (d ~ 10⁵ gives A ~ 10⁵).
public enum LogSpace {
    /// `log Σ_i e^{x_i}`, computed as `m + log Σ e^{x_i − m}` with `m = max x_i`; `−∞` for no terms.
    @inlinable
    public static func logSumExp(_ x: some Collection<Double>) -> Double {
        guard let m = x.max(), m > -.infinity else { return -.infinity }
        if m == .infinity { return .infinity }
        var s = 0.0
        for v in x { s += Foundation.exp(v - m) }
        return m + Foundation.log(s)
    }

    /// `log( (1/n) Σ_i e^{x_i} )`.
    @inlinable
    public static func logMeanExp(_ x: some Collection<Double>) -> Double {
        logSumExp(x) - Foundation.log(Double(x.count))
    }

    /// `log Σ_i w_i e^{x_i}` for nonnegative weights given as `log w_i`.
    @inlinable
    public static func logSumExp(_ x: [Double], logWeights lw: [Double]) -> Double {
        precondition(x.count == lw.count)
        return logSumExp(zip(x, lw).map { $0 + $1 })
    }

    /// Normalised weights `w_i = e^{l_i} / Σ_j e^{l_j}` from log weights.
    public static func normalizedWeights(logWeights l: [Double]) -> [Double] {
        let z = logSumExp(l)
        return l.map { Foundation.exp($0 - z) }
    }

    /// Kish effective sample size `(Σ w)² / Σ w²` of weights given in log space.
    public static func effectiveSampleSize(logWeights l: [Double]) -> Double {
        let w = normalizedWeights(logWeights: l)
        let s2 = w.reduce(0) { $0 + $1 * $1 }
        return s2 > 0 ? 1 / s2 : 0
    }

    /// `Σ_i log1p(s · r_i)`: the log-determinant `log det(I + s·F^{1/2})` from the square roots `r_i`
    /// of the nonzero eigenvalues.
    @inlinable
    public static func logDetSqrt(roots: [Double], scale s: Double) -> Double {
        var acc = 0.0
        for r in roots { acc += log1pProduct(s, r) }
        return acc
    }

    /// `d/d log s` of `logDetSqrt`: `Σ_i s r_i / (1 + s r_i)`, each term 1 where `s r_i` overflows.
    public static func logDetSqrtSlope(roots: [Double], scale s: Double) -> Double {
        var acc = 0.0
        for r in roots { let v = s * r; acc += v.isFinite ? v / (1 + v) : 1 }
        return acc
    }

    /// `log(1 + a·b)` for `a, b ≥ 0`, also when the product overflows a double (ε → 0 makes
    /// `ε^(ζ−1)` as large as 10³⁰⁰): then `log(1 + ab) = log a + log b + log1p(1/(ab))`, and
    /// `1/(ab) < 10⁻³⁰⁸` is below a double's resolution of the sum, so `log a + log b` is exact.
    @inlinable
    public static func log1pProduct(_ a: Double, _ b: Double) -> Double {
        let x = a * b
        if x.isFinite { return Foundation.log1p(x) }
        return Foundation.log(a) + Foundation.log(b)
    }
}
