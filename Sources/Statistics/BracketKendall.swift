import Foundation
import TwoScaleCore

/// How far τ_b can move when each cluster's value (an architecture's 2sED, shared by its models) may lie
/// anywhere in its certified bracket: bounds on τ_b(x, y) over every assignment of distinct cluster values
/// x_c ∈ bracket_c, with y fixed per model.
///
/// Models of one cluster are tied in x whatever the values, so τ_b's denominator does not move (no two
/// clusters share a value, almost surely under any continuous law). The numerator is a sum over pairs of
/// clusters: a pair whose brackets are disjoint has a fixed order and a fixed contribution; a pair whose
/// brackets overlap may take either order, and contributes between −|s| and +|s|, with s the pair's sum
/// of sign(y_m − y_n) over its models. Taking each overlapping pair's worst (best) order on its own gives a
/// bound that holds for every assignment; it is attained where those orders are consistent (transitivity
/// can make the true extreme less extreme, never more).
public enum BracketKendall {
    public static func bounds(brackets: [ClosedRange<Double>], cluster: [Int], target y: [Double]) -> ClosedRange<Double>? {
        let n = Swift.min(cluster.count, y.count)
        guard n >= 2 else { return nil }
        var fixed = 0, free = 0, tx = 0, ty = 0
        // Per pair of clusters (a < b): the sum over their models' pairs of sign(y_a − y_b).
        var pairSign: [Int: Int] = [:]
        let count = brackets.count
        for i in 0..<n {
            for j in (i + 1)..<n {
                let dy = y[i] - y[j]
                if dy == 0 { ty += 1 }
                let (a, b) = (cluster[i], cluster[j])
                if a == b { tx += 1; continue }
                if dy == 0 { continue }
                let s = dy > 0 ? 1 : -1
                pairSign[a < b ? a * count + b : b * count + a, default: 0] += a < b ? s : -s
            }
        }
        for (key, s) in pairSign {
            let (a, b) = (key / count, key % count)
            if brackets[a].upperBound < brackets[b].lowerBound { fixed -= s }        // x_a < x_b: concordant where y_a < y_b
            else if brackets[b].upperBound < brackets[a].lowerBound { fixed += s }
            else { free += abs(s) }
        }
        let n0 = n * (n - 1) / 2
        let denom = (Double(n0 - tx) * Double(n0 - ty)).squareRoot()
        guard denom > 0 else { return nil }
        return Double(fixed - free) / denom...Double(fixed + free) / denom
    }
}
