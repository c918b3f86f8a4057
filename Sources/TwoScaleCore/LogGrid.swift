import Foundation

/// n points spaced evenly in log between lo and hi, both ends exact: the ε and sample-size grids a
/// library uses itself (the command line's grid syntax, `lo:hi:n`, reads into the same points).
public enum LogGrid {
    /// `lo, …, hi`: n ≥ 2 points with `log x_i = log lo + (log hi − log lo)·i/(n − 1)`; needs 0 < lo < hi.
    public static func points(from lo: Double, to hi: Double, count n: Int) -> [Double] {
        precondition(lo > 0 && hi > lo && n >= 2)
        let a = Foundation.log(lo), b = Foundation.log(hi)
        return (0..<n).map { i in
            if i == 0 { return lo }
            if i == n - 1 { return hi }
            return Foundation.exp(a + (b - a) * Double(i) / Double(n - 1))
        }
    }
}
