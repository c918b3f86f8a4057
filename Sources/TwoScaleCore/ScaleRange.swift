import Foundation

/// The normalisation constant c as an interval that holds with probability ≥ 1 − δ_c (docs/METHOD.md §19,
/// "c inside"). For the trace normalisation `c = d / μ`, `μ = E_θ Tr F`, from n uniform draws `X_k = Tr F(θ^k)`,
/// each in `[0, R]` (R the trace of the blocks' majorants over the box):
///
/// * `L ≤ μ`: for any level b, `μ ≥ E min(X, b)`, and `min(X, b) ∈ [0, b]`, so the empirical Bernstein
///   inequality bounds it below at range b rather than R. The levels `b_j = R·2^{−j}`, j < `levels`, are
///   fixed before the draws; each is taken at δ_c/(2·levels), so the largest of the J lower values holds
///   at δ_c/2 (a union bound).
/// * `μ ≤ U`: the smaller of the empirical Bernstein upper value at range R (δ_c/2) and a deterministic
///   bound on μ where the model has one.
///
/// So `d/U ≤ c ≤ d/L` (c = ∞ when L ≤ 0). Every stage term `log det(I + t√c F^{1/2})` increases with c, so
/// a bracket's upper end is taken at `d/L` and its lower end at `d/U`. An exact c is its own interval.
public struct ScaleRange: Sendable, Equatable {
    /// The estimate from the draws, `d / mean_k X_k` (or the exact c).
    public var estimate: Double
    /// `[c_lo, c_hi]`.
    public var range: ClosedRange<Double>
    /// The interval for μ and what it rests on (nil when c is exact).
    public var trace: Trace?

    public struct Trace: Sendable, Equatable {
        /// `[L, U]`.
        public var mean: ClosedRange<Double>
        /// R, and the deterministic bound on μ (nil: none).
        public var ceiling: Double
        public var meanBound: Double?
        public var draws: Int
        public var delta: Double
    }

    /// The probability with which the range may fail (0 for an exact c).
    public var delta: Double { trace?.delta ?? 0 }

    /// The number of truncation levels `b_j = R·2^{−j}` behind L.
    public static let levels = 48

    public static func exact(_ c: Double) -> ScaleRange { ScaleRange(estimate: c, range: c...c, trace: nil) }

    /// c's interval for a model of dimension d from `traces`, each in `[0, ceiling]`, with the deterministic
    /// bound `meanBound` on their mean where there is one, at δ_c = `delta`. A draw above the ceiling (beyond
    /// round-off) is an error: the ceiling is a proved bound.
    public static func estimated(traces: [Double], dimension d: Int, ceiling: Double, meanBound: Double?, delta: Double) throws -> ScaleRange {
        guard traces.count >= 2, ceiling.isFinite, ceiling >= 0, delta > 0, delta < 1 else {
            throw TwoScaleError.failure("internal error: c's interval needs ≥ 2 trace draws, a finite trace ceiling and δ in (0, 1) (\(traces.count) draws, ceiling \(ceiling), δ \(delta))")
        }
        let slack = 1e-9 * Swift.max(1, ceiling)
        for x in traces where !(x >= -slack && x <= ceiling + slack) {
            throw TwoScaleError.failure("internal error: a trace draw \(x) lies outside its proved range [0, \(ceiling)]")
        }
        let n = traces.count
        let clipped = traces.map { Swift.min(ceiling, Swift.max(0, $0)) }
        let mean = clipped.reduce(0, +) / Double(n)
        let lower = truncatedLower(clipped, top: ceiling, delta: delta / 2)
        let variance = clipped.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(n - 1)
        var upper = Swift.min(ceiling, EmpiricalBernstein.upperMean(mean: mean, variance: variance, count: n, range: ceiling, delta: delta / 2))
        if let mb = meanBound { upper = Swift.min(upper, mb) }
        upper = Swift.max(upper, lower)
        let c = try Normalization.trace.constant(dimension: d, meanTrace: mean)
        // Where μ = 0 is certain (U = 0), F ≡ 0 and c plays no part: c = 0 by the normalisation's convention.
        let cLow = upper > 0 ? Double(d) / upper : 0
        let cHigh = upper <= 0 ? 0 : lower > 0 ? Double(d) / lower : .infinity
        return ScaleRange(estimate: c, range: cLow...cHigh,
                          trace: Trace(mean: lower...upper, ceiling: ceiling, meanBound: meanBound, draws: n, delta: delta))
    }
}

extension ScaleRange {
    /// A lower bound on the mean μ of nonnegative i.i.d. draws that needs no range, at δ: `μ ≥ E min(X, b)`
    /// and `min(X, b) ∈ [0, b]`, so the empirical Bernstein lower value at each level `b_j = top·2^{−j}`,
    /// j < `levels` (fixed before the draws), each at δ/levels; the largest of them (a union bound).
    public static func truncatedLower(_ draws: [Double], top: Double, delta: Double) -> Double {
        let n = draws.count
        var lower = 0.0
        var b = top
        for _ in 0..<levels where b > 0 {
            let y = draws.map { Swift.min(Swift.max(0, $0), b) }
            let m = y.reduce(0, +) / Double(n)
            let v = y.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(n - 1)
            lower = Swift.max(lower, EmpiricalBernstein.lowerMean(mean: m, variance: v, count: n, range: b, delta: delta / Double(levels)))
            b /= 2
        }
        return lower
    }

    /// c's interval from nonnegative draws with no proved range but a deterministic bound `meanBound` on
    /// their mean: U = `meanBound`, L by `truncatedLower` from `top` (fixed before the draws) at δ_c/2.
    public static func estimated(traces: [Double], dimension d: Int, levelsFrom top: Double, meanBound: Double, delta: Double) throws -> ScaleRange {
        guard traces.count >= 2, top.isFinite, top > 0, meanBound.isFinite, meanBound >= 0, delta > 0, delta < 1 else {
            throw TwoScaleError.failure("internal error: c's interval needs ≥ 2 trace draws, a finite first level, a finite mean bound and δ in (0, 1) (\(traces.count) draws, level \(top), bound \(meanBound), δ \(delta))")
        }
        for x in traces where !(x >= 0 && x.isFinite) {
            throw TwoScaleError.failure("internal error: a trace draw \(x) is negative or not finite")
        }
        let mean = traces.reduce(0, +) / Double(traces.count)
        let lower = Swift.min(truncatedLower(traces, top: top, delta: delta / 2), meanBound)
        let c = try Normalization.trace.constant(dimension: d, meanTrace: mean)
        let cLow = meanBound > 0 ? Double(d) / meanBound : 0
        let cHigh = meanBound <= 0 ? 0 : lower > 0 ? Double(d) / lower : .infinity
        return ScaleRange(estimate: c, range: cLow...cHigh,
                          trace: Trace(mean: lower...meanBound, ceiling: top, meanBound: meanBound, draws: traces.count, delta: delta))
    }
}

/// JSON (`ed`'s `bracket.normalization`): `c` (the bracket's own estimate), `c_range`, and for an estimated c
/// `mean_trace_interval`, `trace_ceiling`, `mean_trace_bound` (null: none), `trace_draws`, `delta`.
extension ScaleRange: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ResultKey.self)
        try c.encode(estimate, forKey: ResultKey("c"))
        try c.encode([range.lowerBound, range.upperBound], forKey: ResultKey("c_range"))
        if let t = trace {
            try c.encode([t.mean.lowerBound, t.mean.upperBound], forKey: ResultKey("mean_trace_interval"))
            try c.encode(t.ceiling, forKey: ResultKey("trace_ceiling"))
            try c.encode(t.meanBound, forKey: ResultKey("mean_trace_bound"))
            try c.encode(t.draws, forKey: ResultKey("trace_draws"))
            try c.encode(t.delta, forKey: ResultKey("delta"))
        }
    }
}
