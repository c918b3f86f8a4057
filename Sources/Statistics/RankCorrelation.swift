import Foundation
import TwoScaleCore

/// Kendall's rank correlation τ_b with a two-sided p-value for the null hypothesis of independence.
///
///     τ_b = (n_c − n_d) / √((n₀ − n₁)(n₀ − n₂)),   n₀ = n(n−1)/2,
///
/// `n_c`/`n_d` the concordant/discordant pairs, `n₁ = Σ t(t−1)/2` over groups of tied x (`n₂` for y).
/// The p-value is exact when there are no ties and n ≤ 50 (the null distribution of `n_d` is the
/// Mahonian distribution of inversions of a random permutation); otherwise it uses the normal
/// approximation with the tie-corrected variance (Kendall 1970), as SciPy's `kendalltau` does.
public struct KendallTau: Sendable, Equatable {
    public let tau: Double
    public let pValue: Double
    public let n: Int
    public let exact: Bool

    public init(_ x: [Double], _ y: [Double]) throws {
        guard x.count == y.count else { throw TwoScaleError.failure("Kendall τ needs two samples of the same size") }
        guard x.count >= 2 else { throw TwoScaleError.failure("Kendall τ needs at least 2 pairs (got \(x.count))") }
        guard (x + y).allSatisfy(\.isFinite) else { throw TwoScaleError.failure("Kendall τ: a value is not finite") }
        let n = x.count
        var nc = 0, nd = 0
        for i in 0..<n {
            for j in (i + 1)..<n {
                let s = (x[i] - x[j]).sign == (y[i] - y[j]).sign
                if x[i] == x[j] || y[i] == y[j] { continue }
                if s { nc += 1 } else { nd += 1 }
            }
        }
        func tieGroups(_ v: [Double]) -> [Int] {
            Dictionary(grouping: v, by: { $0 }).values.map(\.count).filter { $0 > 1 }
        }
        let tx = tieGroups(x), ty = tieGroups(y)
        let n0 = Double(n * (n - 1)) / 2
        let n1 = tx.reduce(0.0) { $0 + Double($1 * ($1 - 1)) / 2 }
        let n2 = ty.reduce(0.0) { $0 + Double($1 * ($1 - 1)) / 2 }
        let denom = ((n0 - n1) * (n0 - n2)).squareRoot()
        guard denom > 0 else { throw TwoScaleError.failure("Kendall τ is undefined: one of the samples is constant") }
        self.tau = Double(nc - nd) / denom
        self.n = n
        if tx.isEmpty && ty.isEmpty && n <= 50 {
            exact = true
            pValue = KendallTau.exactPValue(n: n, discordant: nd)
        } else {
            exact = false
            let dn = Double(n)
            let v0 = dn * (dn - 1) * (2 * dn + 5)
            let vt = tx.reduce(0.0) { let t = Double($1); return $0 + t * (t - 1) * (2 * t + 5) }
            let vu = ty.reduce(0.0) { let t = Double($1); return $0 + t * (t - 1) * (2 * t + 5) }
            let t1 = tx.reduce(0.0) { let t = Double($1); return $0 + t * (t - 1) }
            let u1 = ty.reduce(0.0) { let t = Double($1); return $0 + t * (t - 1) }
            let t2 = tx.reduce(0.0) { let t = Double($1); return $0 + t * (t - 1) * (t - 2) }
            let u2 = ty.reduce(0.0) { let t = Double($1); return $0 + t * (t - 1) * (t - 2) }
            var variance = (v0 - vt - vu) / 18 + t1 * u1 / (2 * dn * (dn - 1))
            if n > 2 { variance += t2 * u2 / (9 * dn * (dn - 1) * (dn - 2)) }
            let z = Double(nc - nd) / variance.squareRoot()
            pValue = Swift.min(1, erfc(Swift.abs(z) / 2.0.squareRoot()))
        }
    }

    /// `P(|n_d − n₀/2| ≥ |d − n₀/2|)` under the Mahonian distribution, by the recursion
    /// `I(k, j) = Σ_{i=0}^{min(j, k−1)} I(k−1, j−i)` in probabilities (no overflow for n ≤ 50).
    static func exactPValue(n: Int, discordant d: Int) -> Double {
        let n0 = n * (n - 1) / 2
        var dist = [1.0]
        for k in 2...Swift.max(2, n) {
            let maxInv = k * (k - 1) / 2
            var next = [Double](repeating: 0, count: maxInv + 1)
            // prefix sums of dist for the window sum
            var prefix = [0.0]
            for v in dist { prefix.append(prefix.last! + v) }
            for j in 0...maxInv {
                let hi = Swift.min(j, dist.count - 1)
                let lo = Swift.max(0, j - (k - 1))
                if lo <= hi { next[j] = (prefix[hi + 1] - prefix[lo]) / Double(k) }
            }
            dist = next
            if k == n { break }
        }
        let m = Swift.min(d, n0 - d)
        let tail = dist[0...m].reduce(0, +)
        return Swift.min(1, 2 * tail)
    }
}

extension KendallTau {
    /// τ_b alone (no p-value), for statistics computed many times (bootstrap replicates, groups): the
    /// same value as `KendallTau(x, y).tau`; nil where τ_b is undefined (fewer than 2 pairs, a constant
    /// sample). Pairs tied in x (or y) count towards n₁ (n₂), pair by pair, which is `Σ t(t−1)/2` over
    /// tie groups. The caller checks that x and y have the same size and finite values.
    public static func tauB(_ x: [Double], _ y: [Double]) -> Double? {
        let n = Swift.min(x.count, y.count)
        guard n >= 2 else { return nil }
        var s = 0, tx = 0, ty = 0
        x.withUnsafeBufferPointer { px in
            y.withUnsafeBufferPointer { py in
                for i in 0..<n {
                    let xi = px[i], yi = py[i]
                    for j in (i + 1)..<n {
                        let dx = xi - px[j], dy = yi - py[j]
                        if dx == 0 { tx += 1 }
                        if dy == 0 { ty += 1 }
                        if dx == 0 || dy == 0 { continue }
                        s += (dx > 0) == (dy > 0) ? 1 : -1
                    }
                }
            }
        }
        let n0 = n * (n - 1) / 2
        let denom = (Double(n0 - tx) * Double(n0 - ty)).squareRoot()
        return denom > 0 ? Double(s) / denom : nil
    }
}
