import Foundation
import TwoScaleCore

/// What decides whether the bound's tail falls with n. With `log ε_n = (3/8)(log log n − log γ − log n)`,
/// at a fixed `d = d_ζ(ε_n)` the log tail `log H − d·log ε_n − (K/γ)·log n` has the slope
///
///     ∂ log tail / ∂ log n = (3/8)·d·(1 − 1/log n) − K/γ,
///
/// so it falls only where `K > neededK = (3/8)·γ·d·(1 − 1/log n)`. Since d_ζ(ε_n) changes slowly with n,
/// `neededK` at the largest n tells whether any larger n can bring the tail below δ.
public struct TailLimit: Sendable, Equatable, Encodable {
    /// The sample size and the d_ζ(ε_n) used there.
    public var n: Int
    public var dZetaUsed: Double
    /// The theorem's K above which the tail falls with n at this n, and the K of the run.
    public var neededK: Double
    public var k: Double
    /// Whether the tail grows with n there (`k < neededK`).
    public var growing: Bool

    public init(n: Int, dZetaUsed: Double, gamma: Double, k: Double) {
        self.n = n
        self.dZetaUsed = dZetaUsed
        self.k = k
        neededK = Self.neededK(n: Double(n), dZeta: dZetaUsed, gamma: gamma)
        growing = k < neededK
    }

    /// `(3/8)·γ·d·(1 − 1/log n)`.
    public static func neededK(n: Double, dZeta: Double, gamma: Double) -> Double {
        3.0 / 8.0 * gamma * dZeta * (1 - 1 / Foundation.log(n))
    }

    /// The hint a report prints: why no n brings the tail below δ at these constants.
    public var hint: String {
        "the tail grows with n: n^(−K/γ) must outweigh ε_n^(−d_ζ), which grows like n^(3d_ζ/8); at n = \(n), "
            + "d_ζ(ε_n) = \(NumberText.format(dZetaUsed, digits: 6)) needs K > \(NumberText.format(neededK, digits: 6)) "
            + "(the theorem's unknown constant, \(Setting.constantK); now \(NumberText.format(k, digits: 6))), so no larger n helps"
    }
}
