import Foundation
import TwoScaleCore

/// The rank statistics of a measure study (issue 41; Jiang et al., "Fantastic generalization measures",
/// ICLR 2020): Kendall τ_b of a measure against a target over architectures (seed means), paired τ
/// differences of two measures against one target, and the rank-partialled τ, each with a hierarchical
/// bootstrap interval (`HierarchicalBootstrap`). Inputs are per model the per-seed values; with a
/// `ResamplingDesign` (`design`, its redraws in the order of each function's columns) the models are
/// resampled by cluster and the estimated variables redrawn (`HierarchicalBootstrap.resampleClusters`).
public enum StudyStatistics {
    static func table(_ columns: [[[Double]]], _ design: ResamplingDesign?) throws -> SeedTable {
        let t = try SeedTable(columns: columns)
        return try design.map { try t.designed($0) } ?? t
    }

    /// τ_b(measure, target) over the architectures' seed means, with its bootstrap interval.
    public static func kendall(measure: [[Double]], target: [[Double]], bootstrap: HierarchicalBootstrap,
                               design: ResamplingDesign? = nil) async throws -> BootstrapInterval {
        let table = try table([measure, target], design)
        let m = table.means()
        guard let point = KendallTau.tauB(m[0], m[1]) else {
            throw TwoScaleError.failure("Kendall τ is undefined: the measure or the target is constant over the architectures")
        }
        let draws = try await bootstrap.map(table) { KendallTau.tauB($0[0], $0[1]) }
        return try bootstrap.interval(estimate: point, draws: draws)
    }

    /// τ(A, target) − τ(B, target), both from the same replicates (paired), with its interval and the
    /// two-sided bootstrap p-value of "difference = 0" (`PairedKendallDifference.pValue`).
    public static func pairedDifference(measureA: [[Double]], measureB: [[Double]], target: [[Double]],
                                        bootstrap: HierarchicalBootstrap, design: ResamplingDesign? = nil) async throws -> PairedKendallDifference {
        let table = try table([measureA, measureB, target], design)
        let m = table.means()
        guard let a = KendallTau.tauB(m[0], m[2]), let b = KendallTau.tauB(m[1], m[2]) else {
            throw TwoScaleError.failure("Kendall τ is undefined: a measure or the target is constant over the architectures")
        }
        let draws = try await bootstrap.map(table) { r -> (Double?, Double?) in (KendallTau.tauB(r[0], r[2]), KendallTau.tauB(r[1], r[2])) }
        let diffs = draws.map { d -> Double? in
            guard let x = d.0, let y = d.1 else { return nil }
            return x - y
        }
        let difference = try bootstrap.interval(estimate: a - b, draws: diffs)
        let defined = diffs.compactMap { $0 }
        let below = defined.filter { $0 <= 0 }.count, above = defined.filter { $0 >= 0 }.count
        let p = Swift.min(1, 2 * Double(Swift.min(below, above) + 1) / Double(defined.count + 1))
        return PairedKendallDifference(first: try bootstrap.interval(estimate: a, draws: draws.map(\.0)),
                                       second: try bootstrap.interval(estimate: b, draws: draws.map(\.1)),
                                       difference: difference, pValue: p)
    }

    /// The rank-partialled τ of measure and target given a control (`PartialKendall.tau`), with its
    /// interval through the same hierarchical resampling. Throws where it is undefined on the full data
    /// (the control ranks like the measure or the target, |τ| = 1, or a variable is constant).
    public static func partialKendall(measure: [[Double]], target: [[Double]], control: [[Double]],
                                      bootstrap: HierarchicalBootstrap, design: ResamplingDesign? = nil) async throws -> BootstrapInterval {
        try await partialKendall(measure: measure, target: target, controls: [control], bootstrap: bootstrap, design: design)
    }

    /// The same with several controls partialled out together (`PartialKendall.tau(_:_:given:)`); the
    /// design's redraws are in the order measure, target, controls.
    public static func partialKendall(measure: [[Double]], target: [[Double]], controls: [[[Double]]],
                                      bootstrap: HierarchicalBootstrap, design: ResamplingDesign? = nil) async throws -> BootstrapInterval {
        let table = try table([measure, target] + controls, design)
        let m = table.means()
        guard let point = PartialKendall.tau(m[0], m[1], given: Array(m[2...])) else {
            throw TwoScaleError.failure("partial Kendall τ is undefined: a control ranks the architectures like the measure or the target (|τ| = 1), or a variable is constant")
        }
        let draws = try await bootstrap.map(table) { PartialKendall.tau($0[0], $0[1], given: Array($0[2...])) }
        return try bootstrap.interval(estimate: point, draws: draws)
    }
}

/// τ(A, target) and τ(B, target) on the same replicates, their difference, and the bootstrap p-value.
public struct PairedKendallDifference: Sendable, Equatable {
    public let first: BootstrapInterval
    public let second: BootstrapInterval
    /// τ(A) − τ(B): the estimate on the full data, the interval of the paired replicate differences.
    public let difference: BootstrapInterval
    /// Two-sided bootstrap p-value of "difference = 0": with B defined replicate differences Δ*,
    /// `min(1, 2 (1 + min(#{Δ* ≤ 0}, #{Δ* ≥ 0})) / (B + 1))` — the smallest level at which the
    /// percentile interval excludes 0, with the +1 that keeps a finite bootstrap from claiming p = 0.
    /// Replicates with Δ* = 0 (common: τ is discrete) count on both sides, which is conservative.
    public let pValue: Double
}

/// The rank-partialled Kendall τ (Kendall 1942): the association of x and y with z's ranks partialled
/// out,
///
///     τ_xy·z = (τ_xy − τ_xz τ_yz) / √((1 − τ_xz²)(1 − τ_yz²)),
///
/// each τ a τ_b. Used in the study to ask whether a measure ranks the target beyond what a free
/// baseline (the parameter count) already does.
public enum PartialKendall {
    /// τ_xy·z from the three pairwise τ; nil where the denominator vanishes (|τ_xz| or |τ_yz| = 1, up to
    /// rounding), where z says everything about x's or y's ranks and nothing is left to partial.
    public static func combine(xy: Double, xz: Double, yz: Double) -> Double? {
        let d = (1 - xz * xz) * (1 - yz * yz)
        guard d > 1e-12 else { return nil }
        return (xy - xz * yz) / d.squareRoot()
    }

    /// τ_xy·z of three samples of one size (nil where a τ_b or the combination is undefined).
    public static func tau(_ x: [Double], _ y: [Double], given z: [Double]) -> Double? {
        guard let xy = KendallTau.tauB(x, y), let xz = KendallTau.tauB(x, z), let yz = KendallTau.tauB(y, z) else { return nil }
        return combine(xy: xy, xz: xz, yz: yz)
    }

    /// τ_xy·z₁…z_k with several controls, by the recursion on the last control w = z_k:
    ///
    ///     τ_xy·Zw = (τ_xy·Z − τ_xw·Z τ_yw·Z) / √((1 − τ_xw·Z²)(1 − τ_yw·Z²)),
    ///
    /// each term partialled on the other controls Z (with none, the plain τ_b).
    public static func tau(_ x: [Double], _ y: [Double], given controls: [[Double]]) -> Double? {
        guard let w = controls.last else { return KendallTau.tauB(x, y) }
        let rest = Array(controls.dropLast())
        guard let xy = tau(x, y, given: rest), let xw = tau(x, w, given: rest), let yw = tau(y, w, given: rest) else { return nil }
        return combine(xy: xy, xz: xw, yz: yw)
    }
}

/// Holm's step-down correction (Holm 1979) of m p-values for the family-wise error rate: sorted
/// ascending, p_(1) ≤ … ≤ p_(m), the adjusted p-values are
///
///     p̃_(i) = min(1, max_{j ≤ i} (m − j + 1) p_(j)),
///
/// returned in the input order (monotone in the p-values, capped at 1). Reject at level α where p̃ ≤ α.
public enum Holm {
    public static func adjust(_ p: [Double]) throws -> [Double] {
        guard p.allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= 1 }) else {
            throw TwoScaleError.usage("Holm's correction needs p-values in [0, 1]")
        }
        let m = p.count
        let order = p.indices.sorted { p[$0] < p[$1] || (p[$0] == p[$1] && $0 < $1) }
        var out = [Double](repeating: 0, count: m)
        var running = 0.0
        for (rank, i) in order.enumerated() {
            running = Swift.max(running, Swift.min(1, Double(m - rank) * p[i]))
            out[i] = running
        }
        return out
    }
}
