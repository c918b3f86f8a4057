import Foundation
import TwoScaleCore

/// Where `d_ζ(ε)` comes from: an exact toy model, a spectra store, … — any function of ε.
/// The Bounds module only needs the number; it never looks inside the model.
public typealias TwoScaleSource = (_ eps: Double) throws -> Double

/// The constants `C, H, K` of the generalisation theorem (docs/METHOD.md §15). They are unknown: the user sets
/// them (default 1) and every output labels them as such.
public struct BoundConstants: Sendable, Equatable, Encodable {
    public var C: Double
    public var H: Double
    public var K: Double

    /// The label every report carries next to the constants.
    public static let note = "user-set constants of the theorem"

    public init(C: Double = 1, H: Double = 1, K: Double = 1) throws {
        for (name, v) in [("\(Setting.constantC)", C), ("\(Setting.constantH)", H)] where !(v.isFinite && v > 0) {
            throw TwoScaleError.invalid(name, "\(v)", allowed: "the theorem's constant must be a finite number > 0")
        }
        // Up to 10⁶: beyond it n^(−K/γ) leaves the range of a double's logarithm and the tail reads −∞.
        guard K.isFinite, K >= 0, K <= 1e6 else {
            throw TwoScaleError.invalid("\(Setting.constantK)", "\(K)", allowed: "the theorem's constant K must be a finite number from 0 to 10⁶")
        }
        self.C = C
        self.H = H
        self.K = K
    }

    enum CodingKeys: String, CodingKey { case C, H, K, note }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(C, forKey: .C)
        try c.encode(H, forKey: .H)
        try c.encode(K, forKey: .K)
        try c.encode(Self.note, forKey: .note)
    }
}

/// One evaluated sample size.
public struct BoundPoint: Sendable, Equatable {
    public let n: Int
    /// `ε_n = (log n / (γ n))^(3/8)`.
    public let epsN: Double
    /// `d_ζ(ε_n)`.
    public let dZeta: Double
    /// `log H − d_ζ(ε_n)·log ε_n − (K/γ)·log n`, the log of the tail bound.
    public let logTail: Double
    /// `C·ε_n`.
    public let deviation: Double
}

/// The generalisation bound of docs/METHOD.md §15:
///
///     ε_n = (log n / (γ n))^(3/8)                       (natural log; γ ∈ (0,1]; needs ε_n < 1)
///     P( sup_θ |R(θ) − R_n(θ)| ≥ C ε_n ) ≤ H · ε_n^(−d_ζ(ε_n)) · n^(−K/γ)
///
/// The tail is evaluated in log space, `log H − d_ζ(ε_n)·log ε_n − (K/γ)·log n`: the raw power
/// `ε_n^(−d_ζ)` overflows a double for d ~ 10³.
///
/// Validity: γ ∈ (0, 1]; n ≥ 2; ε_n < 1 (i.e. `log n < γ n`); ζ ∈ [0, 1), and the theorem needs
/// ζ ≥ 2/3 — a smaller ζ is accepted with a warning (`zetaWarning`), ζ < 0 or ζ ≥ 1 is an error.
public struct GeneralizationBound: Sendable {
    public let gamma: Double
    public let zeta: Double
    public let constants: BoundConstants

    /// The theorem's lower end for ζ.
    public static let minimumZeta = 2.0 / 3.0

    public init(gamma: Double, zeta: Double, constants: BoundConstants) throws {
        try Self.checkGamma(gamma)
        guard zeta.isFinite, zeta >= 0, zeta < 1 else {
            throw TwoScaleError.invalid("\(Setting.zeta)", "\(zeta)", allowed: "the meso-scale exponent ζ must lie in [0, 1) (the bound needs ζ ≥ 2/3)")
        }
        self.gamma = gamma
        self.zeta = zeta
        self.constants = constants
    }

    /// A warning to print when ζ is below the theorem's 2/3 (nil otherwise). 0.6667 counts as 2/3.
    public var zetaWarning: String? {
        zeta < Self.minimumZeta - 1e-4
            ? "\(Setting.zeta) \(zeta) is below 2/3: the generalisation theorem needs ζ ≥ 2/3, so these tails are not covered by it"
            : nil
    }

    public static func checkGamma(_ gamma: Double) throws {
        guard gamma.isFinite, gamma > 0, gamma <= 1 else {
            throw TwoScaleError.invalid("\(Setting.gamma)", "\(gamma)", allowed: "γ must lie in (0, 1]")
        }
    }

    /// `ε_n = (log n / (γ n))^(3/8)` without validation (nil when n < 2 or ε_n ≥ 1).
    public static func epsilonIfValid(n: Double, gamma: Double) -> Double? {
        guard n.isFinite, n >= 2 else { return nil }
        let e = Foundation.pow(Foundation.log(n) / (gamma * n), 3.0 / 8.0)
        return e < 1 ? e : nil
    }

    /// `ε_n = (log n / (γ n))^(3/8)`; throws naming n when n < 2 or ε_n ≥ 1.
    public static func epsilon(n: Double, gamma: Double) throws -> Double {
        try checkGamma(gamma)
        guard n.isFinite, n >= 2 else {
            throw TwoScaleError.invalid("\(Setting.sampleSize)", Self.format(n), allowed: "the sample size n must be a whole number ≥ 2")
        }
        guard let e = epsilonIfValid(n: n, gamma: gamma) else {
            let raw = Foundation.pow(Foundation.log(n) / (gamma * n), 3.0 / 8.0)
            throw TwoScaleError.invalid("\(Setting.sampleSize)", Self.format(n),
                allowed: "ε_n = (log n/(γn))^(3/8) = \(raw) ≥ 1 at n = \(Self.format(n)), γ = \(gamma); the bound needs ε_n < 1, i.e. log n < γn: use a larger n or γ")
        }
        return e
    }

    public func epsilon(n: Int) throws -> Double { try Self.epsilon(n: Double(n), gamma: gamma) }

    /// `C·ε_n`.
    public func deviation(n: Int) throws -> Double { constants.C * (try epsilon(n: n)) }

    /// `log H − d_ζ·log ε_n − (K/γ)·log n` for a known `d_ζ(ε_n)`.
    public func logTail(n: Int, epsN: Double, dZeta: Double) -> Double {
        Foundation.log(constants.H) - dZeta * Foundation.log(epsN) - constants.K / gamma * Foundation.log(Double(n))
    }

    /// Every quantity of the bound at sample size n, with `d_ζ(ε_n)` from `source`.
    public func point(n: Int, source: TwoScaleSource) throws -> BoundPoint {
        let e = try epsilon(n: n)
        let d = try source(e)
        guard d.isFinite else {
            throw TwoScaleError.failure("d_ζ(ε_n) is not finite (\(d)) at n = \(n), ε_n = \(e)")
        }
        return BoundPoint(n: n, epsN: e, dZeta: d, logTail: logTail(n: n, epsN: e, dZeta: d), deviation: constants.C * e)
    }

    /// The log tail at n, or `+∞` where the bound does not apply (n < 2 or ε_n ≥ 1: nothing is bounded).
    public func logTailOrInfinity(n: Int, source: TwoScaleSource) throws -> Double {
        guard let e = Self.epsilonIfValid(n: Double(n), gamma: gamma) else { return .infinity }
        let d = try source(e)
        guard d.isFinite else { return .infinity }
        return logTail(n: n, epsN: e, dZeta: d)
    }

    static func format(_ n: Double) -> String {
        n == n.rounded() && Swift.abs(n) < 1e18 ? String(Int64(n)) : "\(n)"
    }
}
