import Foundation

/// An upper confidence bound on a mean from i.i.d. draws of a variable in `[0, R]`, by the Chernoff–Hoeffding
/// inequality (Hoeffding 1963, Theorem 1, for `R − X`): with `x̄ = X̄/R` and
/// `kl(a, b) = a log(a/b) + (1 − a) log((1 − a)/(1 − b))`, `P(X̄/R ≤ a) ≤ exp(−n kl(a, E X/R))` for `a < E X/R`, so
///
///     P( E X ≤ R · sup{b ≥ x̄ : kl(x̄, b) ≤ ln(1/δ)/n} ) ≥ 1 − δ.
///
/// Like `EmpiricalBernstein` it needs only the range, and it is the tighter of the two where the mean is small
/// against the range: with every draw 0 it is `R(1 − δ^{1/n}) ≈ R ln(1/δ)/n`, the empirical Bernstein bound
/// `7R ln(2/δ)/(3(n − 1))`.
public enum ChernoffHoeffding {
    /// The bound for `samples` in `[0, range]`; a sample outside the range (beyond round-off) is an error.
    public static func upperMean(_ samples: [Double], range: Double, delta: Double) throws -> Double {
        guard samples.count >= 1, range.isFinite, range > 0, delta > 0, delta < 1 else {
            throw TwoScaleError.failure("internal error: the Chernoff–Hoeffding bound needs ≥ 1 sample, a finite range > 0 and δ in (0, 1) (\(samples.count) samples, range \(range), δ \(delta))")
        }
        let slack = 1e-9 * Swift.max(1, range)
        for x in samples where !(x >= -slack && x <= range + slack) {
            throw TwoScaleError.failure("internal error: a draw \(x) lies outside its proved range [0, \(range)]")
        }
        let mean = samples.reduce(0) { $0 + Swift.min(range, Swift.max(0, $1)) } / Double(samples.count)
        return upperMean(mean: mean, count: samples.count, range: range, delta: delta)
    }

    /// The same bound from the draws' mean (n of them, every draw in `[0, range]`): the root of
    /// `kl(x̄, b) = ln(1/δ)/n` above x̄ by bisection, rounded up.
    public static func upperMean(mean: Double, count n: Int, range: Double, delta: Double) -> Double {
        let a = Swift.min(1, Swift.max(0, mean / range))
        let level = Foundation.log(1 / delta) / Double(n)
        guard a < 1 else { return range }
        if a == 0 { return Swift.min(range, range * -Foundation.expm1(-level) * (1 + 4 * Double.ulpOfOne)) }
        var lo = a, hi = 1.0
        while true {
            let mid = lo + (hi - lo) / 2
            if mid <= lo || mid >= hi { break }
            if kl(a, mid) > level { hi = mid } else { lo = mid }
        }
        return Swift.min(range, range * hi)
    }

    /// `kl(a, b)` for a in [0, 1) and b in [a, 1]: the relative entropy of Bernoulli(a) from Bernoulli(b).
    static func kl(_ a: Double, _ b: Double) -> Double {
        guard b < 1 else { return .infinity }
        let first = a == 0 ? 0 : a * Foundation.log(a / b)
        return first + (1 - a) * (Foundation.log1p(-a) - Foundation.log1p(-b))
    }
}
