import Foundation
import TwoScaleCore

/// ε ↦ (the estimate of d_ζ(ε), the value that enters the bound's tail). For an exact source both are
/// the same; for a Monte Carlo store the second is a one-sided upper value.
public typealias DimensionValues = (_ eps: Double) throws -> (estimate: Double, used: Double)

/// The generalisation bound over a grid of sample sizes, and optionally the smallest n whose tail
/// probability is below δ: `bound`'s result (docs/METHOD.md §15). The d_ζ source is only a closure,
/// described in words by `source` and `dZetaUsedMethod`.
public struct BoundEvaluation: Sendable, Encodable {
    public struct Point: Sendable, Equatable, Encodable {
        public var n: Int
        public var epsN: Double
        public var dZetaEstimate: Double
        public var dZetaUsed: Double
        public var logTail: Double
        public var deviation: Double
        public var log10Tail: Double
    }

    public var dimension: Int
    public var gamma: Double
    public var zeta: Double
    public var source: String
    public var dZetaUsedMethod: String
    /// Whether the value used is an upper value of d_ζ (false for the lower 2sED).
    public var conservative: Bool
    public var points: [Point]
    /// With δ: the smallest n in the range whose tail is below δ (nil: not reached), and how it was found.
    public var delta: Double?
    public var nForDelta: Int??
    public var nForDeltaNote: String?
    public var constants: BoundConstants
    /// Whether the tail falls with n at the largest n evaluated, and the K it needs to (`TailLimit`).
    public var tailLimit: TailLimit?
    /// The theorem's assumptions and whether this run meets them (`TheoremAssumptions`; empty when not given).
    public var assumptions: [TheoremAssumption] = []

    /// Evaluates `bound` at each n (every ε_n is checked before any work, so an ε_n ≥ 1 names its n);
    /// with `delta` (and the range of n to search), also finds the smallest n with log tail < log δ.
    public static func evaluate(bound: GeneralizationBound, ns: [Int], delta: (value: Double, range: ClosedRange<Int>)?,
                                dimension: Int, values: DimensionValues, source: String, method: String,
                                conservative: Bool) throws -> BoundEvaluation {
        for n in ns { _ = try bound.epsilon(n: n) }
        var points: [Point] = []
        for n in ns {
            let v = try values(try bound.epsilon(n: n))
            let p = try bound.point(n: n, source: { _ in v.used })
            points.append(Point(n: p.n, epsN: p.epsN, dZetaEstimate: v.estimate, dZetaUsed: p.dZeta, logTail: p.logTail,
                                deviation: p.deviation, log10Tail: p.logTail / Foundation.log(10)))
        }
        var result = BoundEvaluation(dimension: dimension, gamma: bound.gamma, zeta: bound.zeta, source: source,
                                     dZetaUsedMethod: method, conservative: conservative, points: points,
                                     constants: bound.constants)
        if let last = points.max(by: { $0.n < $1.n }) {
            result.tailLimit = TailLimit(n: last.n, dZetaUsed: last.dZetaUsed, gamma: bound.gamma, k: bound.constants.K)
        }
        if let (delta, deltaRange) = delta {
            let r = try SampleSizeSearch.smallestN(bound: bound, delta: delta, range: deltaRange, source: { try values($0).used })
            result.delta = delta
            result.nForDelta = .some(r.n)
            result.nForDeltaNote = try r.n == nil
                ? Self.notReached(bound: bound, range: deltaRange, values: values)
                : "smallest integer n in \(deltaRange.lowerBound)...\(deltaRange.upperBound) with log_tail < log δ (\(r.method), \(r.evaluations) evaluations)"
        }
        return result
    }

    /// Why no n in `range` brings the tail below δ: it still grows at the range's end (`TailLimit`: K is too
    /// small for any n), or it falls there but not yet far enough (a wider range may reach δ).
    public static func notReached(bound: GeneralizationBound, range: ClosedRange<Int>, values: DimensionValues) throws -> String {
        let head = "the tail stays at or above δ for every n in \(range.lowerBound)...\(range.upperBound)"
        let end = range.upperBound
        let limit = TailLimit(n: end, dZetaUsed: try values(try bound.epsilon(n: end)).used, gamma: bound.gamma, k: bound.constants.K)
        return head + (limit.growing ? "; " + limit.hint : " (it falls with n there: widen \(Setting.deltaRange))")
    }
}
