import Foundation

/// Student's t distribution with ν > 0 degrees of freedom.
///
/// For x ≥ 0, `P(T ≤ x) = 1 − I_{ν/(ν+x²)}(ν/2, 1/2) / 2`, with `I_z(a, b)` the regularised incomplete beta
/// function, evaluated by its continued fraction (modified Lentz) on the side where it converges fast, and
/// the quantile found by bisection on that CDF. A 95% interval from R replicate estimates and their sample
/// variance uses `quantile(0.975, degrees: R − 1)` in place of the normal 1.96.
public enum StudentT {
    /// `(t_{R−1} / z)²`, the 97.5% quantiles of Student's t with R − 1 degrees of freedom and of the normal:
    /// a variance estimated from R replicates, times it, makes the 95% interval that a normal quantile puts
    /// on it Student's (R = 4: wider by 1.62).
    public static func varianceInflation(replicates r: Int) -> Double {
        let q = quantile(0.975, degrees: Double(r - 1)) / 1.959963984540054
        return q * q
    }

    /// `P(T ≤ x)`.
    public static func cdf(_ x: Double, degrees nu: Double) -> Double {
        precondition(nu > 0 && !x.isNaN)
        if x.isInfinite { return x > 0 ? 1 : 0 }
        let tail = 0.5 * regularizedBeta(nu / (nu + x * x), nu / 2, 0.5)
        return x >= 0 ? 1 - tail : tail
    }

    /// The `p`-quantile, `p ∈ (0, 1)`, to about 1e-12 relative.
    public static func quantile(_ p: Double, degrees nu: Double) -> Double {
        precondition(p > 0 && p < 1 && nu > 0)
        if p < 0.5 { return -quantile(1 - p, degrees: nu) }
        if p == 0.5 { return 0 }
        var lo = 0.0, hi = 1.0
        while cdf(hi, degrees: nu) < p { lo = hi; hi *= 2 }
        for _ in 0..<200 {
            let mid = 0.5 * (lo + hi)
            if cdf(mid, degrees: nu) < p { lo = mid } else { hi = mid }
            if hi - lo <= 1e-13 * hi { break }
        }
        return 0.5 * (lo + hi)
    }

    /// `I_z(a, b)`, z ∈ [0, 1].
    static func regularizedBeta(_ z: Double, _ a: Double, _ b: Double) -> Double {
        if z <= 0 { return 0 }
        if z >= 1 { return 1 }
        let logFront = lgamma(a + b) - lgamma(a) - lgamma(b) + a * Foundation.log(z) + b * Foundation.log1p(-z)
        // The fraction converges fast for z < (a + 1)/(a + b + 2); otherwise use I_z(a, b) = 1 − I_{1−z}(b, a).
        if z < (a + 1) / (a + b + 2) {
            return Foundation.exp(logFront) * betaFraction(z, a, b) / a
        }
        return 1 - Foundation.exp(logFront) * betaFraction(1 - z, b, a) / b
    }

    /// The continued fraction of `I_z(a, b)`, `1/(1 + d_1/(1 + d_2/(1 + …)))` with
    /// `d_{2m+1} = −(a+m)(a+b+m) z / ((a+2m)(a+2m+1))`, `d_{2m} = m(b−m) z / ((a+2m−1)(a+2m))`.
    static func betaFraction(_ z: Double, _ a: Double, _ b: Double) -> Double {
        let tiny = 1e-300
        var c = 1.0, d = 1 - (a + b) * z / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var f = d
        for m in 1...10_000 {
            let k = Double(m)
            let even = k * (b - k) * z / ((a + 2 * k - 1) * (a + 2 * k))
            d = 1 + even * d; if abs(d) < tiny { d = tiny }
            c = 1 + even / c; if abs(c) < tiny { c = tiny }
            d = 1 / d
            f *= d * c
            let odd = -(a + k) * (a + b + k) * z / ((a + 2 * k) * (a + 2 * k + 1))
            d = 1 + odd * d; if abs(d) < tiny { d = tiny }
            c = 1 + odd / c; if abs(c) < tiny { c = tiny }
            d = 1 / d
            let step = d * c
            f *= step
            if abs(step - 1) < 1e-15 { break }
        }
        return f
    }
}
