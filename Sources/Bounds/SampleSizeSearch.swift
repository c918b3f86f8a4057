import Foundation
import TwoScaleCore

/// The result of a smallest-n search.
public struct SampleSizeSearchResult: Sendable, Equatable {
    /// The smallest n found with `log tail(n) < log δ`, or nil when none in the range.
    public let n: Int?
    /// The searched range.
    public let range: ClosedRange<Int>
    /// How the answer was found: `"exhaustive"` or `"grid+bisection"`.
    public let method: String
    /// How many tail evaluations were spent.
    public let evaluations: Int
}

/// The smallest sample size n at which the bound's tail falls below δ:
///
///     n_δ = min { n ∈ [lo, hi] ∩ ℤ : log H − d_ζ(ε_n)·log ε_n − (K/γ)·log n < log δ }
///
/// The tail need not be monotone in n (d_ζ(ε) is not monotone in ε), so n_δ is defined by this
/// integer search:
///
/// 1. Ranges of at most `exhaustiveLimit` integers are scanned one by one: the answer is exact.
/// 2. Otherwise the tail is evaluated on a log grid (`pointsPerDecade` points per decade, rounded to
///    integers, plus both ends). At the first grid point b whose tail is below log δ, with a the grid
///    point before it (tail ≥ log δ), integer bisection keeps `tail(a) ≥ log δ > tail(b)` until
///    `b = a + 1`; then, as a check for a dip the bisection stepped over, every integer in
///    `[b − w, b)` (`w = verifyWindow`) is evaluated and the smallest one below log δ, if any, replaces b. This is exact whenever the
///    tail crosses log δ at most once between consecutive grid points before the first crossing found
///    (grid ratio 10^(1/pointsPerDecade) ≈ 1.023 by default; the tail is smooth in n).
///
/// Points where the bound does not apply (ε_n ≥ 1) count as "not below δ".
public enum SampleSizeSearch {
    public static func smallestN(bound: GeneralizationBound, delta: Double, range: ClosedRange<Int>,
                                 source: TwoScaleSource, exhaustiveLimit: Int = 4096,
                                 pointsPerDecade: Int = 100, verifyWindow: Int = 64) throws -> SampleSizeSearchResult {
        guard delta.isFinite, delta > 0, delta < 1 else {
            throw TwoScaleError.invalid("\(Setting.delta)", "\(delta)", allowed: "the confidence level δ must lie in (0, 1)")
        }
        guard range.lowerBound >= 2 else {
            throw TwoScaleError.invalid("\(Setting.deltaRange)", "\(range.lowerBound):\(range.upperBound)",
                                        allowed: "the search range needs n ≥ 2")
        }
        let logDelta = Foundation.log(delta)
        var evaluations = 0
        var cache: [Int: Bool] = [:]
        func below(_ n: Int) throws -> Bool {
            if let b = cache[n] { return b }
            evaluations += 1
            let b = try bound.logTailOrInfinity(n: n, source: source) < logDelta
            cache[n] = b
            return b
        }

        let lo = range.lowerBound, hi = range.upperBound
        if hi - lo < exhaustiveLimit {
            for n in range where try below(n) {
                return SampleSizeSearchResult(n: n, range: range, method: "exhaustive", evaluations: evaluations)
            }
            return SampleSizeSearchResult(n: nil, range: range, method: "exhaustive", evaluations: evaluations)
        }

        // Log grid, rounded to integers, strictly increasing, both ends included.
        var grid: [Int] = [lo]
        let a = Foundation.log(Double(lo)), b = Foundation.log(Double(hi))
        let steps = Swift.max(1, Int(((b - a) / Foundation.log(10) * Double(pointsPerDecade)).rounded(.up)))
        for i in 1..<steps {
            let n = Int(Foundation.exp(a + (b - a) * Double(i) / Double(steps)).rounded())
            if n > grid.last!, n < hi { grid.append(n) }
        }
        if hi > grid.last! { grid.append(hi) }

        if try below(grid[0]) {
            return SampleSizeSearchResult(n: grid[0], range: range, method: "grid+bisection", evaluations: evaluations)
        }
        for i in 1..<grid.count where try below(grid[i]) {
            var l = grid[i - 1], r = grid[i]  // below(l) false, below(r) true
            while r - l > 1 {
                let mid = l + (r - l) / 2
                if try below(mid) { r = mid } else { l = mid }
            }
            // Verification: re-check a window of integers before r and take the smallest crossing there.
            var best = r
            let start = Swift.max(lo, r - verifyWindow)
            for n in stride(from: r - 1, through: start, by: -1) where try below(n) {
                best = n
            }
            return SampleSizeSearchResult(n: best, range: range, method: "grid+bisection", evaluations: evaluations)
        }
        return SampleSizeSearchResult(n: nil, range: range, method: "grid+bisection", evaluations: evaluations)
    }
}
