import Foundation
import RandomStreams

/// The estimators of docs/METHOD.md §13 (the staged forms of §6) on stored spectra. With `t = ε^(ζ−1)` and `s = t·√c`:
///
///     A_m(k)   = log det(I + t F̂_m(θ^k)^{1/2}) = Σ_i log1p(s √λ_i)
///     log Î_1  = log mean_k e^{A_1(k)}
///     log w^(m)_k = Σ_{j<m} A_j(k) − log Σ_k' e^{Σ_{j<m} A_j(k')}
///     log Î_m^k = log mean_j e^{B_m(k, j)}        (B: the inner draws of layer m)
///     lower  = ζd + [log Î_1 + Σ_{m≥2} Σ_k w^(m)_k log Î_m^k] / |log ε|
///     nested = ζd + [log Î_1 + Σ_{m≥2} log Σ_k w^(m)_k Î_m^k] / |log ε|
///     joint  = ζd + log mean_k e^{Σ_m A_m(k)} / |log ε|
///
/// `lower ≤ nested` on the same samples (Jensen, per stage). All in log space.
public struct LayeredEstimator: Sendable {
    public let spectra: LayeredSpectra
    /// The normalisation constant `c`.
    public let scale: Double

    public init(spectra: LayeredSpectra, normalization: Normalization) throws {
        self.spectra = spectra
        self.scale = try normalization.constant(dimension: spectra.dimension, meanTrace: spectra.meanTrace)
    }

    /// Log-determinants at one `s = t√c`: `a[m][k]` (own) and `b[m][k][j]` (inner, m ≥ 1).
    struct LogDets {
        var a: [[Double]]
        var b: [[[Double]]]
    }

    func logDets(s: Double) -> LogDets {
        let sp = spectra
        let a = sp.own.map { layer in layer.map { $0.logDetSqrt(scale: s) } }
        let b = sp.inner.map { layer in layer.map { draws in draws.map { $0.logDetSqrt(scale: s) } } }
        return LogDets(a: a, b: b)
    }

    /// (nested, joint, lower, ess) − ζd, times |log ε|, for the paths in `idx` (a bootstrap resample).
    static func estimate(_ ld: LogDets, logInnerMeans: [[Double]], paths idx: [Int])
        -> (nested: Double, joint: Double, lower: Double, ess: [Double])
    {
        let L = ld.a.count
        let first = idx.map { ld.a[0][$0] }
        let logI1 = LogSpace.logMeanExp(first)
        var nested = logI1
        var lower = logI1
        var ess: [Double] = []
        var cum = first  // Σ_{j<m} A_j(k)
        for m in 1..<max(L, 1) {
            let lw = cum
            let z = LogSpace.logSumExp(lw)
            let li = idx.map { logInnerMeans[m][$0] }
            var lowerTerm = 0.0
            var terms = [Double](repeating: 0, count: idx.count)
            for q in idx.indices {
                let logw = lw[q] - z
                lowerTerm += Foundation.exp(logw) * li[q]
                terms[q] = logw + li[q]
            }
            nested += LogSpace.logSumExp(terms)
            lower += lowerTerm
            ess.append(LogSpace.effectiveSampleSize(logWeights: lw))
            for q in idx.indices { cum[q] += ld.a[m][idx[q]] }
        }
        let joint = LogSpace.logMeanExp(cum)
        return (nested, joint, lower, ess)
    }

    /// The bootstrap resamples of the paths (seeded; shared by every ε so the intervals are coherent).
    func resamples(_ bootstrap: Int, seed: UInt64) -> [[Int]] {
        let K = spectra.paths
        var rng = SplitMix64(seed: seed ^ 0x25ED_B007)
        return (0..<bootstrap).map { _ in (0..<K).map { _ in Int(rng.next() % UInt64(K)) } }
    }

    /// All estimators at each ε for one ζ (the lower 2sED always filled); `bootstrap` resamples of the paths
    /// (seeded) give the 95% intervals.
    public func points(eps: [Double], zeta: Double, bootstrap: Int = 0, seed: UInt64 = 1) throws -> [EpsilonEstimate] {
        try ScaleParameters.checkZeta(zeta)
        let rs = resamples(bootstrap, seed: seed)
        return try eps.map { try point(eps: $0, zeta: zeta, resamples: rs) }
    }

    /// As `points(eps:zeta:bootstrap:seed:)`, with the ε values spread over `threads` tasks. Each ε is an
    /// independent pass over the spectra, so the result is identical for any thread count.
    public func points(eps: [Double], zeta: Double, bootstrap: Int = 0, seed: UInt64 = 1, threads: Int) async throws -> [EpsilonEstimate] {
        try ScaleParameters.checkZeta(zeta)
        let rs = resamples(bootstrap, seed: seed)
        return try await Parallel.map(eps.count, threads: threads) { i in
            try self.point(eps: eps[i], zeta: zeta, resamples: rs)
        }
    }

    /// Which of the layered estimators.
    public enum Estimate: String, Sendable, CaseIterable {
        case nested, joint, lower
    }

    /// The point estimate at one ε and a one-sided upper value: the `level` quantile of the percentile
    /// bootstrap over paths (`bootstrap` resamples, seeded), never below the estimate. Used where d_ζ
    /// enters an upper bound (the generalisation bound's tail). It is only as good as the bootstrap:
    /// it does not see the low bias of plain Monte Carlo in high dimension (docs/ESTIMATORS.md).
    public func oneSided(eps e: Double, zeta: Double, estimate which: Estimate, bootstrap: Int, seed: UInt64,
                         level: Double = 0.95) throws -> (estimate: Double, upper: Double) {
        guard bootstrap >= 2 else {
            throw TwoScaleError.failure("a one-sided bootstrap bound needs ≥ 2 resamples (got \(bootstrap))")
        }
        guard level > 0.5, level < 1 else { throw TwoScaleError.failure("one-sided level must lie in (0.5, 1) (got \(level))") }
        let (p, bn, bj, bl) = try bootstrapped(eps: e, zeta: zeta, resamples: resamples(bootstrap, seed: seed))
        let samples = switch which { case .nested: bn; case .joint: bj; case .lower: bl }
        let est = try value(which, of: p)
        let q = Quantiles.quantile(samples.sorted(), level)
        guard q.isFinite else { throw TwoScaleError.failure("bootstrap of d_ζ at ε = \(e) is not finite") }
        return (est, Swift.max(est, q))
    }

    /// One estimator's value in a point of `points` (which fills all three).
    public func value(_ which: Estimate, of p: EpsilonEstimate) throws -> Double {
        switch which {
        case .nested: return p.dZeta
        case .joint: return p.dZetaJoint
        case .lower:
            guard let l = p.dZetaLower else { throw TwoScaleError.failure("the point at ε = \(p.eps) holds no lower 2sED") }
            return l
        }
    }

    /// All estimators at one ε (the bootstrap intervals need ≥ 2 resamples).
    func point(eps e: Double, zeta: Double, resamples: [[Int]]) throws -> EpsilonEstimate {
        var p = try bootstrapped(eps: e, zeta: zeta, resamples: resamples)
        if resamples.count > 1 {
            p.0.ci95 = Quantiles.interval95(p.1)
            p.0.ci95Joint = Quantiles.interval95(p.2)
            p.0.ci95Lower = Quantiles.interval95(p.3)
        }
        return p.0
    }

    /// The point at one ε (no intervals) and the bootstrap replicates of nested, joint and lower.
    func bootstrapped(eps e: Double, zeta: Double, resamples: [[Int]]) throws
        -> (EpsilonEstimate, [Double], [Double], [Double])
    {
        try ScaleParameters.checkEpsilon(e)
        let d = spectra.dimension
        let all = Array(0..<spectra.paths)
        let s = ScaleParameters.t(eps: e, zeta: zeta) * scale.squareRoot()
        let ld = logDets(s: s)
        let lim = ld.b.map { layer in layer.map { LogSpace.logMeanExp($0) } }
        let r = Self.estimate(ld, logInnerMeans: lim, paths: all)
        let f = { (x: Double) in TwoScale.dimension(logMeanDet: x, dimension: d, zeta: zeta, eps: e) }
        let lower = f(r.lower)
        let p = EpsilonEstimate(eps: e, zeta: zeta, dZeta: f(r.nested), dZetaJoint: f(r.joint), dZetaLower: lower, ess: r.ess)
        var bn: [Double] = [], bj: [Double] = [], bl: [Double] = []
        if resamples.count > 1 {
            for idx in resamples {
                let q = Self.estimate(ld, logInnerMeans: lim, paths: idx)
                bn.append(f(q.nested)); bj.append(f(q.joint)); bl.append(f(q.lower))
            }
        }
        for v in [p.dZeta, p.dZetaJoint, lower] where !v.isFinite {
            throw TwoScaleError.failure("2sED at ε = \(e) is not finite (\(v)); the spectra hold infinite or invalid values")
        }
        return (p, bn, bj, bl)
    }
}

/// Empirical quantiles (type 7, linear interpolation, as NumPy's default).
public enum Quantiles {
    public static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        precondition(!sorted.isEmpty)
        let h = Double(sorted.count - 1) * q
        let lo = Int(h.rounded(.down))
        let hi = Swift.min(lo + 1, sorted.count - 1)
        return sorted[lo] + (h - Double(lo)) * (sorted[hi] - sorted[lo])
    }

    public static func interval95(_ x: [Double]) -> ClosedRange<Double> {
        let s = x.sorted()
        return quantile(s, 0.025)...quantile(s, 0.975)
    }
}
