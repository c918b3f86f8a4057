import Foundation

/// A lower confidence bound on a mean from i.i.d. draws of a bounded variable, by the empirical
/// Bernstein inequality (Maurer & Pontil 2009, Theorem 4): for `X ∈ [0, R]`, n ≥ 2 draws and δ ∈ (0, 1),
///
///     P( E X ≥ X̄ − √(2 V_n ln(2/δ) / n) − 7 R ln(2/δ) / (3(n − 1)) ) ≥ 1 − δ,
///
/// with `X̄` the sample mean and `V_n` the unbiased sample variance. It needs nothing of the law but the
/// range, so it holds by construction: the certified bracket's lower end uses it (docs/METHOD.md §19).
public enum EmpiricalBernstein {
    /// The bound above for `samples` in `[0, range]`. A sample outside the range (beyond round-off) is
    /// an error: the range is a proved bound, so a value above it is a defect, not noise.
    public static func lowerMean(_ samples: [Double], range: Double, delta: Double) throws -> Double {
        guard samples.count >= 2, range.isFinite, range >= 0, delta > 0, delta < 1 else {
            throw TwoScaleError.failure("internal error: the empirical Bernstein bound needs ≥ 2 samples, a finite range ≥ 0 and δ in (0, 1) (\(samples.count) samples, range \(range), δ \(delta))")
        }
        let slack = 1e-9 * Swift.max(1, range)
        for x in samples where !(x >= -slack && x <= range + slack) {
            throw TwoScaleError.failure("internal error: a draw \(x) lies outside its proved range [0, \(range)]")
        }
        let n = Double(samples.count)
        let clipped = samples.map { Swift.min(range, Swift.max(0, $0)) }
        let mean = clipped.reduce(0, +) / n
        let variance = clipped.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (n - 1)
        return lowerMean(mean: mean, variance: variance, count: samples.count, range: range, delta: delta)
    }

    /// The upper bound for `samples` in `[0, range]` (`upperMean(mean:variance:count:range:delta:)`), with the
    /// same checks.
    public static func upperMean(_ samples: [Double], range: Double, delta: Double) throws -> Double {
        let low = try lowerMean(samples.map { range - $0 }, range: range, delta: delta)
        return range - low
    }

    /// The same bound from the draws' mean and unbiased variance (their count n ≥ 2, every draw in
    /// `[0, range]`, which the caller has checked).
    public static func lowerMean(mean: Double, variance: Double, count: Int, range: Double, delta: Double) -> Double {
        let n = Double(count)
        let l = Foundation.log(2 / delta)
        return mean - (2 * variance * l / n).squareRoot() - 7 * range * l / (3 * (n - 1))
    }

    /// The bound below, by the same inequality for `R − X`: `E X ≤ X̄ + √(2 V_n ln(2/δ) / n) + 7 R ln(2/δ) / (3(n − 1))`
    /// with probability ≥ 1 − δ.
    public static func upperMean(mean: Double, variance: Double, count: Int, range: Double, delta: Double) -> Double {
        range - lowerMean(mean: range - mean, variance: variance, count: count, range: range, delta: delta)
    }
}
