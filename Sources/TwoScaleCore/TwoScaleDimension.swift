import Foundation

/// The two-scale effective dimension (docs/METHOD.md §4) from spectra.
///
///     d_ζ(ε) = ζ·d + log E_θ[ det(I + ε^(ζ−1) F̂(θ)^{1/2}) ] / |log ε|
///            = ζ·d + |log ε|⁻¹ · log E_θ Π_i (1 + ε^(ζ−1) √λ̂_i(θ))
///
/// `E_θ` is the mean over the given draws θ_k ~ U(Θ), taken by log-sum-exp; `λ̂ = c·λ`, so
/// `√λ̂ = √c·√λ` and the per-draw log-determinant is `Σ_i log1p(ε^(ζ−1) √c √λ_i)`.
public enum TwoScale {
    /// `ζ·d + logMeanDet / |log ε|`, the step shared by every estimator once `log E det` is known.
    @inlinable
    public static func dimension(logMeanDet: Double, dimension d: Int, zeta: Double, eps: Double) -> Double {
        zeta * Double(d) + logMeanDet / Swift.abs(Foundation.log(eps))
    }

    /// `d_ζ(ε)` for every ε in `eps` from one spectrum per draw (a single-block model).
    ///
    /// - Parameters:
    ///   - spectra: the spectrum of `F(θ_k)` for each draw `k` (zeros may be omitted).
    ///   - dimension: `d`, the number of parameters (≥ the number of eigenvalues of each draw).
    ///   - normalization: `trace` (`c = d / mean_k Tr F(θ_k)`) or `none` (`c = 1`).
    public static func dimension(spectra: [Spectrum], dimension d: Int, eps: [Double], zeta: Double,
                                 normalization: Normalization = .trace) throws -> [Double] {
        guard !spectra.isEmpty else { throw TwoScaleError.usage("no spectra to average over") }
        try ScaleParameters.checkZeta(zeta)
        let meanTrace = spectra.reduce(0) { $0 + $1.trace } / Double(spectra.count)
        let c = try normalization.constant(dimension: d, meanTrace: meanTrace)
        let rc = c.squareRoot()
        var out: [Double] = []
        out.reserveCapacity(eps.count)
        var logDets = [Double](repeating: 0, count: spectra.count)
        for e in eps {
            try ScaleParameters.checkEpsilon(e)
            let s = ScaleParameters.t(eps: e, zeta: zeta) * rc
            for k in spectra.indices { logDets[k] = spectra[k].logDetSqrt(scale: s) }
            out.append(dimension(logMeanDet: LogSpace.logMeanExp(logDets), dimension: d, zeta: zeta, eps: e))
        }
        return out
    }
}

/// The effective dimension of Abbas et al. (2021) from the same spectra (docs/METHOD.md §7):
///
///     ED(n) = 2·log E_θ √det(I + κ F̂(θ)) / log κ,   κ = γ n / (2π log n),
///
/// defined only when κ > 1. `log √det(I + κF̂) = ½ Σ_i log1p(κ c λ_i)`.
public enum AbbasED {
    /// `κ = γn / (2π log n)`, validated: n ≥ 2, γ ∈ (0, 1], κ > 1.
    public static func kappa(n: Double, gamma: Double) throws -> Double {
        guard gamma.isFinite, gamma > 0, gamma <= 1 else {
            throw TwoScaleError.invalid("\(Setting.gamma)", "\(gamma)", allowed: "γ must lie in (0, 1]")
        }
        guard n.isFinite, n >= 2 else {
            throw TwoScaleError.invalid("\(Setting.abbasSampleSize)", "\(n)", allowed: "the sample size n must be ≥ 2")
        }
        let k = gamma * n / (2 * Double.pi * Foundation.log(n))
        guard k > 1 else {
            throw TwoScaleError.invalid("\(Setting.abbasSampleSize)", "\(n)",
                allowed: "the Abbas ED needs κ = γn/(2π log n) > 1 (here κ = \(k)); use a larger n")
        }
        return k
    }

    /// `ED(n)` from one spectrum per draw, with normalisation constant `c` already chosen.
    public static func dimension(spectra: [[Spectrum]], scale c: Double, n: Double, gamma: Double) throws -> Double {
        let kappa = try kappa(n: n, gamma: gamma)
        let halfLogDets = spectra.map { blocks in 0.5 * blocks.reduce(0) { $0 + $1.logDet(scale: kappa * c) } }
        return 2 * LogSpace.logMeanExp(halfLogDets) / Foundation.log(kappa)
    }
}
