import Foundation
import TwoScaleCore

/// The grid syntax of the command line (docs/GUIDE.md, "Conventions"): `0.1`, a list `0.01,0.05,0.1`, or
/// `lo:hi:n`, n points spaced evenly in log between lo and hi inclusive (lo, hi > 0, n ≥ 2).
enum Grid {
    static func parse(_ text: String, flag: String) throws -> [Double] {
        let s = text.trimmingCharacters(in: .whitespaces)
        guard !s.isEmpty else {
            throw TwoScaleError.invalid(flag, text, allowed: "give a value, a list a,b,c or a log grid lo:hi:n")
        }
        if s.contains(":") {
            let parts = s.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, let lo = Double(parts[0]), let hi = Double(parts[1]),
                  let n = Int(parts[2]) ?? Double(parts[2]).flatMap({ $0.isFinite && $0 == $0.rounded() && Swift.abs($0) < 1e9 ? Int($0) : nil })
            else {
                throw TwoScaleError.invalid(flag, text, allowed: "a log grid is lo:hi:n with numbers lo < hi and a whole n ≥ 2")
            }
            guard lo.isFinite, hi.isFinite, lo > 0, hi > lo, n >= 2, n <= 1_000_000 else {
                throw TwoScaleError.invalid(flag, text, allowed: "a log grid lo:hi:n needs 0 < lo < hi and 2 ≤ n ≤ 10⁶")
            }
            return LogGrid.points(from: lo, to: hi, count: n)
        }
        return try s.split(separator: ",", omittingEmptySubsequences: false).map { part in
            let p = part.trimmingCharacters(in: .whitespaces)
            guard let v = Double(p), v.isFinite else {
                throw TwoScaleError.invalid(flag, text, allowed: "'\(p)' is not a finite number; give a value, a list a,b,c or a log grid lo:hi:n")
            }
            return v
        }
    }

    /// A comma-separated list of numbers (no ranges), e.g. `4,0.01`.
    static func parseList(_ text: String, flag: String) throws -> [Double] {
        guard !text.contains(":") else {
            throw TwoScaleError.invalid(flag, text, allowed: "give a comma-separated list of numbers")
        }
        return try parse(text, flag: flag)
    }

    /// `lo:hi` intervals such as `0.1:0.9`.
    static func parseInterval(_ text: String, flag: String) throws -> (Double, Double) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let lo = Double(parts[0].trimmingCharacters(in: .whitespaces)),
              let hi = Double(parts[1].trimmingCharacters(in: .whitespaces)), lo.isFinite, hi.isFinite else {
            throw TwoScaleError.invalid(flag, text, allowed: "give an interval lo:hi of two finite numbers")
        }
        guard lo < hi else {
            throw TwoScaleError.invalid(flag, text, allowed: "the interval lo:hi needs lo < hi")
        }
        return (lo, hi)
    }
}

/// Sample-size grids (`--n`): the ε grids' syntax (a value, a list, or `lo:hi:k` log-spaced), every
/// value rounded to an integer, duplicates removed (first occurrence kept), each n ≥ 2.
enum SampleSizeGrid {
    static func parse(_ text: String, flag: String = "--n") throws -> [Int] {
        let values = try Grid.parse(text, flag: flag)
        var out: [Int] = []
        var seen = Set<Int>()
        for v in values {
            guard v.isFinite, Swift.abs(v) < 9e15 else {
                throw TwoScaleError.invalid(flag, text, allowed: "sample sizes must be finite whole numbers below 9·10¹⁵")
            }
            if !text.contains(":"), v != v.rounded() {
                throw TwoScaleError.invalid(flag, "\(v)", allowed: "a sample size must be a whole number ≥ 2")
            }
            let n = Int(v.rounded())
            guard n >= 2 else {
                throw TwoScaleError.invalid(flag, String(n), allowed: "the sample size n must be a whole number ≥ 2")
            }
            if seen.insert(n).inserted { out.append(n) }
        }
        return out
    }
}
