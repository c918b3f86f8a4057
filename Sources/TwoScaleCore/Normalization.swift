import Foundation

/// How the Fisher matrix is scaled before measuring (docs/METHOD.md §3).
///
/// * `trace` (default): `F̂ = c·F` with `c = d / E_θ[Tr F(θ)]`, so that `E_θ Tr F̂ = d`;
///   `F̂ ≡ 0` when `E_θ Tr F = 0`.
/// * `none`: `c = 1`, the raw Fisher metric that box-covering counts use.
public enum Normalization: String, Sendable, CaseIterable, Codable {
    case trace
    case none

    /// The constant `c` for a model of dimension `d` whose mean trace is `meanTrace`.
    public func constant(dimension d: Int, meanTrace: Double) throws -> Double {
        switch self {
        case .none:
            return 1
        case .trace:
            guard meanTrace.isFinite, meanTrace >= 0 else {
                throw TwoScaleError.failure(
                    "E_θ Tr F is \(meanTrace): the trace normalisation needs a finite mean trace (use a smaller box)")
            }
            return meanTrace > 0 ? Double(d) / meanTrace : 0
        }
    }
}

/// Validation of the two scale parameters shared by every command.
public enum ScaleParameters {
    /// ε must lie in (0, 1).
    public static func checkEpsilon(_ eps: Double, name: String = "\(Setting.epsilon)") throws {
        guard eps.isFinite, eps > 0, eps < 1 else {
            throw TwoScaleError.invalid(name, "\(eps)", allowed: "the covering radius ε must lie in (0, 1)")
        }
    }

    /// ζ must lie in [0, 1).
    public static func checkZeta(_ zeta: Double, name: String = "\(Setting.zeta)") throws {
        guard zeta.isFinite, zeta >= 0, zeta < 1 else {
            throw TwoScaleError.invalid(name, "\(zeta)", allowed: "the meso-scale exponent ζ must lie in [0, 1)")
        }
    }

    /// `t = ε^(ζ−1)`, the factor in `det(I + t F̂^{1/2})`.
    public static func t(eps: Double, zeta: Double) -> Double { pow(eps, zeta - 1) }
}
