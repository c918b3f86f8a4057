import Foundation
import RandomStreams


/// A Monte Carlo estimate of `log E_θ det(…)` with its variance, in nats. Independent parts add.
public struct LogEstimate: Sendable, Equatable {
    public var value: Double
    public var variance: Double

    public init(value: Double = 0, variance: Double = 0) {
        self.value = value
        self.variance = variance
    }

    public static func + (a: LogEstimate, b: LogEstimate) -> LogEstimate {
        LogEstimate(value: a.value + b.value, variance: a.variance + b.variance)
    }

    /// `n` times the estimate (value `n·v`, variance `n²·V`): the log of `Z^n` from one estimate of `log Z`.
    public func times(_ n: Int) -> LogEstimate {
        let k = Double(n)
        return LogEstimate(value: k * value, variance: k * k * variance)
    }

    /// One unbiased (natural-scale) estimate with relative variance `V = Var Ẑ / Z²`: its log is low by
    /// `V/2` to second order, so `log Ẑ + V/2` is the bias-corrected log, with variance `V`.
    public static func corrected(logZ: Double, relVar: Double) -> LogEstimate {
        LogEstimate(value: logZ + relVar / 2, variance: relVar)
    }

    /// The mean of `n` i.i.d. positive unbiased estimates given in log space, `log mean_k e^{l_k}`,
    /// bias-corrected by half its relative variance `V = var_k(e^{l_k}) / (n · mean²)` (delta method).
    ///
    /// The variance is `max(V, σ²_LN)`, where `σ_LN` is how widely the same statistic scatters when the
    /// `l_k` are normal with their observed variance (`LogNormalSpread`). `V` is itself estimated from
    /// the sample: when the weights `e^{l_k}` are heavy-tailed (a log-variance of a few nats², an ESS of
    /// a few), the sample has rarely seen the tail that makes the mean uncertain, and `V` comes out
    /// small exactly when the estimate is low. The variance of the logs is well estimated even then,
    /// and through the lognormal model it says how large the mean's scatter is (docs/ESTIMATORS.md §5).
    public static func logMean(_ l: [Double]) -> LogEstimate { logMeanAndShortfall(l).estimate }

    /// `log mean_r e^{l_r}` and the relative variance of the mean, `var_r(e^{l_r}) / (R · mean²)`.
    public static func combine(_ l: [Double]) -> (logZ: Double, relVar: Double) {
        let r = Double(l.count)
        let m = LogSpace.logMeanExp(l)
        guard l.count >= 2, m.isFinite else { return (m, 0) }
        var ss = 0.0
        for v in l { let d = Foundation.exp(v - m) - 1; ss += d * d }
        return (m, ss / (r - 1) / r)
    }

    /// `logMean`, and the shortfall the same lognormal model gives it (`LogNormalSpread.shortfall`, nats;
    /// 0 for fewer than two values): both from one simulation.
    public static func logMeanAndShortfall(_ l: [Double]) -> (estimate: LogEstimate, shortfall: Double) {
        let c = LogEstimate.combine(l)
        var e = corrected(logZ: c.logZ, relVar: c.relVar)
        guard l.count >= 2, e.value.isFinite else { return (e, 0) }
        let model = LogNormalSpread.moments(logVariance: sampleVariance(l), count: l.count)
        e.variance = Swift.max(e.variance, model.standardDeviation * model.standardDeviation)
        return (e, model.shortfall)
    }

    /// `log Z` from R replicate log-estimates `l_r` of one `Z` under the lognormal replicate model: each
    /// unbiased `Ẑ_r` has `l_r ~ N(log Z − v/2, v)`, so `mean_r l_r + var_r(l_r)/2` is unbiased for `log Z`
    /// whatever v. The delta method's `log mean_r Ẑ_r + V/2` (`corrected`) is not once v is more than a
    /// nat² or so: for R = 2 its correction `V/2 = tanh²(d/2)/2` (d = l_1 − l_2) never exceeds half a nat,
    /// while an island sampler's replicates can have v of several nats² (docs/ESTIMATORS.md §3). The
    /// variance is the model's, `v/R + v²/(2(R − 1))` (the mean's, and the sample variance's over 4). With
    /// one replicate: `l_1` and no variance.
    public static func lognormalReplicates(_ l: [Double]) -> LogEstimate {
        let m = mean(l)
        guard l.count >= 2 else { return m }
        let r = Double(l.count)
        let v = m.variance * r  // the sample variance of the l_r, from the mean already computed
        return LogEstimate(value: m.value + v / 2, variance: v / r + v * v / (2 * (r - 1)))
    }

    /// The sample variance of `x` (divisor n − 1; 0 for fewer than two values).
    public static func sampleVariance(_ x: [Double]) -> Double {
        mean(x).variance * Double(x.count)
    }

    /// The mean of `n` i.i.d. values (e.g. log-estimates), with the variance of that mean.
    public static func mean(_ x: [Double]) -> LogEstimate {
        let n = Double(x.count)
        let m = x.reduce(0, +) / n
        guard x.count >= 2 else { return LogEstimate(value: m, variance: 0) }
        let v = x.reduce(0) { $0 + ($1 - m) * ($1 - m) } / (n - 1)
        return LogEstimate(value: m, variance: v / n)
    }

    /// The 2sED and its 95% interval from `log E det` at (ε, ζ) for dimension d (normal approximation).
    public func dimension(d: Int, zeta: Double, eps: Double) -> (value: Double, ci95: ClosedRange<Double>) {
        let v = TwoScale.dimension(logMeanDet: value, dimension: d, zeta: zeta, eps: eps)
        let half = 1.959963984540054 * variance.squareRoot() / Swift.abs(Foundation.log(eps))
        return (v, (v - half)...(v + half))
    }
}

/// The sampling scatter of the bias-corrected log-mean `log mean_k e^{l_k} + V/2` (`LogEstimate.logMean`)
/// when the `l_k` are K i.i.d. normal with variance `s²`; it does not depend on their mean.
///
/// There is no closed form once `s²` is more than about one nat² (the mean of K lognormal weights is then
/// far from normal), so it is simulated: `draws` samples of K standard normals `z`, the statistic of
/// `s·z` for each, and their standard deviation. The normals come from a fixed stream per K, so the
/// result is a deterministic function of `(s², K)`, smooth in `s²`, and independent of any run's seed
/// or thread count. Cost: `draws · K` exponentials per call.
public enum LogNormalSpread {
    /// Simulated samples per call; the standard deviation is good to about 2% (more at large `s²`).
    public static let draws = 2000

    public static func standardDeviation(logVariance s2: Double, count k: Int) -> Double {
        moments(logVariance: s2, count: k).standardDeviation
    }

    /// How far the same statistic falls short of its limit on average: `s²/2 − E[log mean_k e^{l_k} + V/2]`
    /// for K i.i.d. `l_k ~ N(0, s²)`, whose weights have `log E e^l = s²/2`. The bias correction `V/2` makes
    /// it negligible for small `s²` (O(s⁴/K)); for a spread of many nats² the mean of K weights has rarely
    /// seen the tail that carries `E e^l`, and the shortfall grows like `s²/2 − s√(2 log K)`: at K = 64,
    /// 0.1 nats at s² = 3, 6 at 30, 58 at 168 (simulated, same stream as `standardDeviation`).
    public static func shortfall(logVariance s2: Double, count k: Int) -> Double {
        moments(logVariance: s2, count: k).shortfall
    }

    /// Both from one simulation: `draws` values of the statistic for K normals of variance s², from the
    /// fixed stream of K (zeros for K < 2 or no spread).
    public static func moments(logVariance s2: Double, count k: Int) -> (standardDeviation: Double, shortfall: Double) {
        guard k >= 2, s2 > 0, s2.isFinite else { return (0, 0) }
        let s = s2.squareRoot()
        var rng = Xoshiro256(seed: 0x5EED_106E, stream: [UInt64(k)])
        var z = [Double](repeating: 0, count: k)
        var x = [Double](repeating: 0, count: draws)
        for j in 0..<draws {
            for i in 0..<k { z[i] = s * rng.normal() }
            let c = LogEstimate.combine(z)
            x[j] = c.logZ + c.relVar / 2
        }
        let m = LogEstimate.mean(x)
        return ((m.variance * Double(draws)).squareRoot(), s2 / 2 - m.value)
    }
}

/// A Monte Carlo estimate of the trace normalisation `c = d / E_θ Tr F` from independent uniform draws:
/// `ĉ = d / mean_k Tr F(θ^k)` and `Var(log ĉ) ≈ var_k(Tr) / (K · mean²)`.
public struct TraceEstimate: Sendable, Equatable {
    public var meanTrace: Double
    public var draws: Int
    /// `Var(log mean Tr)` (= Var(log ĉ)).
    public var logVariance: Double

    public init(traces: [Double]) {
        let n = Double(traces.count)
        meanTrace = traces.reduce(0, +) / n
        draws = traces.count
        let m = meanTrace
        if traces.count >= 2, m > 0 {
            let v = traces.reduce(0) { $0 + ($1 - m) * ($1 - m) } / (n - 1)
            logVariance = v / n / (m * m)
        } else {
            logVariance = 0
        }
    }

    /// The default number of uniform draws for ĉ (`Setting.traceDraws`) of a model of d parameters: one per two
    /// parameters, at least 1 000 (networks and toys alike). An error δ in `log ĉ` shifts every scale
    /// s ∝ √ĉ, and so `log Z` by `(slope/2)·δ`, where the slope `d log Z / d log s` grows with d while the
    /// trace's relative spread per draw does not shrink, so a fixed count would let ĉ take over the
    /// interval (the interval accounts for it either way; docs/ESTIMATORS.md §4, and the shares measured
    /// in docs/ESTIMATORS.md). `ed`, `compare` (the largest architecture's d)
    /// and the toys' Monte Carlo (`Setting.monteCarlo`) use it when `Setting.traceDraws` is not given.
    public static func defaultDraws(parameters d: Int) -> Int { Swift.max(1_000, d / 2 + d % 2) }

    /// The allowed trace draws: from 2 (a sample variance) to 10⁷.
    public static let allowedDraws = 2...10_000_000

    /// `c` and `Var(log c)` for the normalisation (zero variance for `none`).
    public func scale(_ normalization: Normalization, dimension d: Int) throws -> (c: Double, logVariance: Double) {
        let c = try normalization.constant(dimension: d, meanTrace: meanTrace)
        return (c, normalization == .trace ? logVariance : 0)
    }

    /// The variance that the uncertainty of ĉ adds to `log E det(I + t√ĉ F^{1/2})`, whose derivative in
    /// `log s` is `slope`: `s ∝ √c`, so `∂ log Z / ∂ log c = slope / 2`.
    public static func addedVariance(slope: Double, logVarianceOfC: Double) -> Double {
        (slope / 2) * (slope / 2) * logVarianceOfC
    }
}

