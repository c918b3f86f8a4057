import Foundation

/// The bias-corrected log-mean of two i.i.d. `N(0, s²)` logs in closed form, the independent reference for
/// `LogNormalSpread` at K = 2. With `d = l_1 − l_2`: `log mean e^l = (l_1 + l_2)/2 + log cosh(d/2)` and the
/// delta-method `V = tanh²(d/2)`, so the statistic is `(l_1 + l_2)/2 + g(d)`, `g(d) = log cosh(d/2) +
/// tanh²(d/2)/2`; the sum and the difference of i.i.d. normals are independent, and `d ~ N(0, 2s²)`.
/// Returns `E g(d)` and `Var g(d)` by the trapezoid rule over ±12 standard deviations of d; the statistic
/// then has mean `E g` and variance `s²/2 + Var g`.
func logNormalPairMoments(logVariance s2: Double) -> (mean: Double, variance: Double) {
    let sd = (2 * s2).squareRoot()
    func g(_ d: Double) -> Double {
        let h = Swift.abs(d) / 2
        let logCosh = h + Foundation.log1p(Foundation.exp(-2 * h)) - Foundation.log(2.0)
        let t = Foundation.tanh(h)
        return logCosh + t * t / 2
    }
    var m0 = 0.0, m1 = 0.0, m2 = 0.0
    let n = 40_000, lim = 12 * sd, step = 2 * lim / Double(n)
    for i in 0...n {
        let d = -lim + Double(i) * step
        let w = (i == 0 || i == n ? 0.5 : 1) * Foundation.exp(-d * d / (2 * sd * sd))
        let v = g(d)
        m0 += w; m1 += w * v; m2 += w * v * v
    }
    let mean = m1 / m0
    return (mean, m2 / m0 - mean * mean)
}
