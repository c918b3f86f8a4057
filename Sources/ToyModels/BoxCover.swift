import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// A count of boxes carried as its logarithm; `exact` holds the integer when it fits in 2⁵³.
public struct BoxCount: Sendable, Equatable {
    /// `log N`; `+∞` when no finite cover exists (a singular λ inside the box).
    public let log: Double
    /// `N` when it is finite and below 2⁵³ (so that every integer is representable).
    public let exact: Double?

    /// The product of per-axis counts `n_i ≥ 1`.
    public init(axisCounts: [Double]) {
        var lg = 0.0
        var prod: Double? = 1
        for n in axisCounts {
            lg += Foundation.log(n)
            if let p = prod { prod = p * n <= 0x1p53 ? p * n : nil }
        }
        self.log = lg
        self.exact = lg.isFinite ? prod : nil
    }

    /// `n^d` for d identical axes.
    public init(axisCount n: Double, repeated d: Int) {
        let lg = Double(d) * Foundation.log(n)
        self.log = lg
        let p = Foundation.pow(n, Double(d))
        self.exact = lg.isFinite && p <= 0x1p53 ? p : nil
    }

    public static let infinite = BoxCount(log: .infinity, exact: nil)
    init(log: Double, exact: Double?) { self.log = log; self.exact = exact }
}

/// Box-covering counts in the raw Fisher metric (c = 1), docs/METHOD.md §9. A Fisher box of size ε at θ is the
/// axis box with side `ε/√λ_i(θ)` on axis i.
public enum BoxCover {
    /// `⌈x⌉`, forgiving round-off: a value within 1e-12 (relative) of an integer counts as that integer,
    /// so that `√4/0.1` gives 20, not 21.
    static func ceilSnapped(_ x: Double) -> Double {
        let r = x.rounded()
        if Swift.abs(x - r) <= 1e-12 * Swift.max(1, Swift.abs(x)) { return r }
        return x.rounded(.up)
    }

    /// Exact minimal cover for constant λ on a box of side L: `N = Π_i ⌈max(1, L√λ_i/ε)⌉`
    /// (each axis needs ⌈L√λ_i/ε⌉ intervals of side ε/√λ_i, and a product of such is minimal).
    public static func constantMinimal(_ model: ToyModel, eps: Double) -> BoxCount {
        precondition(model.family == .constant)
        let L = model.length
        let counts = model.lambdas.map { Swift.max(1, ceilSnapped(L * $0.squareRoot() / eps)) }
        guard counts.contains(where: { !$0.isFinite }) else { return BoxCount(axisCounts: counts) }
        // L√λ_i/ε beyond a double (ε → 0): the count in log form only; log⌈x⌉ = log x to double precision.
        let lg = zip(model.lambdas, counts).reduce(0.0) { acc, p in
            acc + (p.1.isFinite ? Foundation.log(p.1) : logAxisRatio(L, p.0, eps))
        }
        return BoxCount(log: lg, exact: nil)
    }

    /// `log max(1, L√λ/ε)` computed in log space, so that it stays finite when `L√λ/ε` overflows.
    static func logAxisRatio(_ L: Double, _ lambda: Double, _ eps: Double) -> Double {
        let x = L * lambda.squareRoot() / eps
        if x.isFinite { return Foundation.log(Swift.max(1, x)) }
        return Swift.max(0, Foundation.log(L) + 0.5 * Foundation.log(lambda) - Foundation.log(eps))
    }

    /// The sandwich's lower side `Π_i max(1, L√λ_i/ε)` as a logarithm (constant family).
    public static func constantLowerBound(_ model: ToyModel, eps: Double) -> Double {
        let L = model.length
        return model.lambdas.reduce(0) { $0 + logAxisRatio(L, $1, eps) }
    }

    /// `log Π_i (1 + ε⁻¹ ∫_lo^hi √λ_i)`, which is `log E_θ det(I + ε⁻¹ F^{1/2})` on the unit box and
    /// bounds each axis's minimal count `⌈ε⁻¹∫√λ_i⌉` from above.
    public static func logDetBound(_ model: ToyModel, eps: Double) -> Double {
        let L = model.length
        if model.family == .constant {
            return model.lambdas.reduce(0) { $0 + LogSpace.log1pProduct(L * $1.squareRoot(), 1 / eps) }
        }
        return Double(model.dimension) * LogSpace.log1pProduct(L * model.meanSqrtLambda[0], 1 / eps)
    }

    /// The two-scale cover (docs/METHOD.md §9): tile each axis by meso-intervals of side `ε^ζ` (the last one
    /// shorter), cover each by boxes sized by the largest λ on it: `⌈ℓ_j √max λ / ε⌉` boxes. The
    /// meso-cubes are products of meso-intervals and λ_i depends on θ_i alone, so
    /// `N₂ = Π_i Σ_j ⌈ℓ_j √max_{I_j} λ_i / ε⌉`.
    public static func twoScale(_ model: ToyModel, eps: Double, zeta: Double) throws -> BoxCount {
        let h = Foundation.pow(eps, zeta)
        let L = model.length
        let pieces = ceilSnapped(L / h)
        guard pieces <= 1e8 else {
            throw TwoScaleError.invalid("\(Setting.epsilon)", "\(eps)", allowed: "the two-scale cover would need \(pieces) meso-intervals per axis (at most 10⁸); use a larger ε or smaller ζ")
        }
        let n = Int(pieces)
        if model.family == .constant {
            let counts = model.lambdas.map { lam -> Double in
                var total = 0.0
                for j in 0..<n {
                    let a = model.lo + Double(j) * h
                    let ell = Swift.min(h, model.hi - a)
                    total += Swift.max(1, ceilSnapped(ell * lam.squareRoot() / eps))
                }
                return total
            }
            return BoxCount(axisCounts: counts)
        }
        guard let f = model.family.axisFamily else { preconditionFailure("the constant family takes the branch above") }
        var total = 0.0
        for j in 0..<n {
            let a = model.lo + Double(j) * h
            let b = j == n - 1 ? model.hi : Swift.min(a + h, model.hi)
            let m = f.maxSqrtLambda(lo: a, hi: b)
            guard m.isFinite else { return .infinite }
            total += Swift.max(1, ceilSnapped((b - a) * m / eps))
        }
        return BoxCount(axisCount: total, repeated: model.dimension)
    }

    /// The exact minimal 1-D cover of `[lo, hi]` by Fisher intervals centred in the box, by greedy
    /// placement: from the left end x of what is still uncovered, the next centre c is the largest with
    /// `c − s(c)/2 ≤ x`, `s(c) = ε/√λ(c)` (found by GSL Brent on `g(c) = c − s(c)/2 − x`). When the right
    /// end `c + s(c)/2` grows with c (true for these families wherever `|s'| < 2`), greedy is optimal by
    /// the usual exchange argument.
    ///
    /// At a singular left end (λ(x) = ∞, so s(x) = 0) a box centred at x has no width, but one
    /// centred further right may still reach back to x: for Poisson `c − ε√c/2 ≤ 0` holds up to
    /// `c = ε²/4`, for Bernoulli similarly. There `g(x) = 0` and g dips below 0 before rising, so the
    /// bracket for Brent starts at a point where g < 0 (searched by halving towards x). When no such
    /// point exists (exponential: `c − εc/2 > 0` for every c > 0) no finite cover exists and the
    /// result is nil. Also nil when the count would exceed `maxBoxes`.
    public static func greedyAxisCount(family: Family, lo: Double, hi: Double, eps: Double,
                                       maxBoxes: Int = 1_000_000) throws -> Double? {
        guard let axis = family.axisFamily else { preconditionFailure("the constant family has no λ(t)") }
        let side = { (c: Double) -> Double in eps / axis.sqrtLambda(c) }
        var x = lo
        var count = 0
        while x < hi {
            let sx = side(x)
            guard sx.isFinite, sx >= 0 else { return nil }
            count += 1
            if count > maxBoxes { return nil }
            let sh = side(hi)
            if hi - sh / 2 <= x { break }  // a box centred at hi reaches back to x
            let target = x
            let g = { (c: Double) -> Double in c - side(c) / 2 - target }
            var a = x
            if sx == 0 {
                // Singular end: halve towards x until a box centred there reaches back past x.
                var step = (hi - x) / 2
                while x + step > x, g(x + step) >= 0 { step /= 2 }
                guard x + step > x else { return nil }
                a = x + step
            }
            let c = try RootFinder.brent(g, lo: a, hi: hi, absTol: 1e-15, relTol: 1e-14)
            let next = c + side(c) / 2
            guard next > x else { return nil }
            x = next
        }
        return Double(count)
    }

    /// Greedy counts multiplied over the d identical axes (non-constant families), or the exact
    /// constant count.
    public static func greedy(_ model: ToyModel, eps: Double, maxBoxes: Int = 1_000_000) throws -> BoxCount? {
        if model.family == .constant { return constantMinimal(model, eps: eps) }
        guard let n = try greedyAxisCount(family: model.family, lo: model.lo, hi: model.hi, eps: eps, maxBoxes: maxBoxes) else {
            return nil
        }
        return BoxCount(axisCount: n, repeated: model.dimension)
    }
}
