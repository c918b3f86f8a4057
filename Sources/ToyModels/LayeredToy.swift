import Foundation
import Sampling
import Samplers
import TwoScaleCore

/// The layered toy model: two stages whose coupling makes Monte Carlo hard and the 2sED exact
/// (docs/METHOD.md §20).
///
/// θ = (w, v), w ∈ [lo, hi]^{d_1} (stage 1: `n_1` units of `p_1` coordinates), v ∈ [lo, hi]^{d_2} (stage 2:
/// `n_2` units of `p_2`), 0 ≤ lo < hi, θ uniform on the box, and
///
///     F(θ) = diag(w_1², …, w_{d_1}², h(κ) v_1², …, h(κ) v_{d_2}²),   κ = #{i : w_i > b} / d_1,   h(κ) = e^{γκ}.
///
/// Stage 2's eigenvalues depend on stage 1 only through κ, the share of "active" first-stage
/// coordinates (as a ReLU layer's activity pattern feeds the next layer). With `G = det(I + s F^{1/2})`,
/// G factorises over coordinates given κ, and under `π_1 ∝ Π_i (1 + s w_i)` the w_i are independent
/// with density ∝ 1 + s w, so S = d_1 κ is Binomial(d_1, p̃) with
/// `p̃ = [(hi − b) + s(hi² − b²)/2] / [(hi − lo) + s(hi² − lo²)/2]`. With `m = (lo + hi)/2`:
///
///     log E_θ G = d_1 log(1 + s m) + log Σ_S B(S; d_1, p̃) (1 + s m e^{γS/(2d_1)})^{d_2},
///     lower     = d_1 log(1 + s m) + Σ_S B(S; d_1, p̃) d_2 log(1 + s m e^{γS/(2d_1)}),
///
/// one sum over S = 0…d_1, exact to rounding. The trace normalisation is exact too:
/// `E_U Tr F = d_1 ⟨w²⟩ + d_2 ⟨w²⟩ (q e^{γ/d_1} + 1 − q)^{d_1}`, `q = (hi − b)/(hi − lo)`.
///
/// Where the smc estimator samples stage 1 and weights its draws by stage 2, the outer weights
/// `Z_2(κ) = (1 + s m √h(κ))^{d_2}` vary by `≈ d_2 γ/2` nats per unit of κ while κ varies by
/// `√(p̃(1 − p̃)/d_1)`: the coupling γ sets the outer-weight degeneracy, whose limit `ESS/K` is
/// `outerESSFraction` (exact).
public struct LayeredToy: CertifiedStagedModel {
    /// The coordinates set so far: stage 1 (w), stage 2 (v).
    public struct State: Sendable {
        public var first: [Double]
        public var second: [Double]
    }

    public let stageUnits: [StageUnits]
    public let lo: Double
    public let hi: Double
    /// b, the threshold above which a first-stage coordinate counts as active.
    public let threshold: Double
    /// γ, the coupling of stage 2 to the share of active first-stage coordinates.
    public let coupling: Double

    public var d1: Int { stageUnits[0].count * stageUnits[0].dimension }
    public var d2: Int { stageUnits[1].count * stageUnits[1].dimension }
    public var parameterCount: Int { d1 + d2 }
    public var box: ClosedRange<Double> { lo...hi }

    /// `units[m]` and `unitSize[m]` per stage (two stages); the box; b (default the box's midpoint); γ.
    public init(units: [Int], unitSize: [Int], box: (Double, Double) = (0, 1), threshold: Double? = nil,
                coupling: Double) throws {
        guard units.count == 2, unitSize.count == 2 else {
            throw TwoScaleError.invalid("--units", units.map(String.init).joined(separator: ","),
                                        allowed: "the layered toy has two stages: give --units n1,n2 and --unit-size p1,p2")
        }
        for (flag, list) in [("--units", units), ("--unit-size", unitSize)] where list.contains(where: { $0 < 1 || $0 > 10_000_000 }) {
            throw TwoScaleError.invalid(flag, list.map(String.init).joined(separator: ","), allowed: "each count must be from 1 to 10⁷")
        }
        guard units[0] * unitSize[0] <= 10_000_000, units[1] * unitSize[1] <= 10_000_000 else {
            throw TwoScaleError.invalid("--units", units.map(String.init).joined(separator: ","), allowed: "at most 10⁷ coordinates per stage")
        }
        let (lo, hi) = box
        guard lo.isFinite, hi.isFinite, lo >= 0, lo < hi else {
            throw TwoScaleError.invalid("--box", "\(lo):\(hi)", allowed: "the layered toy needs a box lo:hi with 0 ≤ lo < hi")
        }
        let b = threshold ?? (lo + hi) / 2
        guard b.isFinite, b > lo, b < hi else {
            throw TwoScaleError.invalid("--threshold", "\(b)", allowed: "the threshold b must lie strictly inside the box (\(lo), \(hi))")
        }
        guard coupling.isFinite, abs(coupling) <= 1_000 else {
            throw TwoScaleError.invalid("--coupling", "\(coupling)", allowed: "the coupling γ must be a finite number in [−1000, 1000]")
        }
        stageUnits = (0..<2).map { StageUnits(count: units[$0], dimension: unitSize[$0]) }
        self.lo = lo
        self.hi = hi
        self.threshold = b
        self.coupling = coupling
    }

    /// The default coupling γ of `toy --family layered`.
    public static let defaultCoupling = 0.12

    /// `h(κ) = e^{γκ}`.
    public func h(_ kappa: Double) -> Double { Foundation.exp(coupling * kappa) }

    /// κ of a first stage.
    func kappa(_ w: [Double]) -> Double {
        Double(w.reduce(0) { $0 + ($1 > threshold ? 1 : 0) }) / Double(w.count)
    }

    // MARK: StagedModel

    public func emptyState() -> State {
        State(first: [Double](repeating: lo, count: d1), second: [Double](repeating: lo, count: d2))
    }

    public func setUnit(_ state: inout State, stage m: Int, unit u: Int, parameters: [Double]) {
        let p = stageUnits[m].dimension
        for j in 0..<p {
            if m == 0 { state.first[u * p + j] = parameters[j] } else { state.second[u * p + j] = parameters[j] }
        }
    }

    public func stage(_ state: State, _ m: Int, box: ClosedRange<Double>) throws -> StageUnit {
        let p = stageUnits[m].dimension
        if m == 0 {
            return StageUnit(unit: SMCUnit(dimension: p, box: box, roots: { w in w }))
        }
        let root = h(kappa(state.first)).squareRoot()
        let top = root * box.upperBound
        return StageUnit(unit: SMCUnit(dimension: p, box: box, roots: { v in v.map { root * $0 } }),
                         supremumRoots: { [Double](repeating: top, count: p) })
    }

    public func uniformTrace(box: ClosedRange<Double>, rng: inout Xoshiro256) throws -> Double {
        var t1 = 0.0, active = 0
        for _ in 0..<d1 {
            let w = rng.uniform(box.lowerBound, box.upperBound)
            t1 += w * w
            if w > threshold { active += 1 }
        }
        var t2 = 0.0
        for _ in 0..<d2 {
            let v = rng.uniform(box.lowerBound, box.upperBound)
            t2 += v * v
        }
        return t1 + h(Double(active) / Double(d1)) * t2
    }

    // MARK: CertifiedStagedModel

    public func uniformState(box: ClosedRange<Double>, rng: inout Xoshiro256) -> State {
        let w = (0..<d1).map { _ in rng.uniform(box.lowerBound, box.upperBound) }
        let v = (0..<d2).map { _ in rng.uniform(box.lowerBound, box.upperBound) }
        return State(first: w, second: v)
    }

    public func unitParameters(_ state: State, stage m: Int, unit u: Int) -> [Double] {
        let p = stageUnits[m].dimension
        return Array((m == 0 ? state.first : state.second)[(u * p)..<((u + 1) * p)])
    }

    /// `log Z ≤ log Z_1 + max_κ log Z_2(κ)`, both in closed form (`Z_1` exactly); the Jensen samples'
    /// ranges are the determinants at the box's top, `p_1 log(1 + s·hi)` and `d_2 log(1 + s √h̄ hi)`.
    public func ceilings(box: ClosedRange<Double>, scale s: Double) throws -> StageCeilings {
        let topH = Swift.max(h(0), h(1)).squareRoot()
        return StageCeilings(stage: [Double(d1) * Foundation.log1p(s * mean), Double(d2) * Foundation.log1p(s * mean * topH)],
                             unitRange: Double(stageUnits[0].dimension) * Foundation.log1p(s * hi),
                             stageRange: [0, Double(d2) * Foundation.log1p(s * topH * hi)])
    }

    // MARK: exact values

    /// `m = E_U w`.
    var mean: Double { (lo + hi) / 2 }
    /// `⟨w²⟩ = E_U w²`.
    var meanSquare: Double { (lo * lo + lo * hi + hi * hi) / 3 }

    /// `E_U Tr F`, exact.
    public var meanTrace: Double {
        let q = (hi - threshold) / (hi - lo)
        let logMeanH = Double(d1) * Foundation.log(q * Foundation.exp(coupling / Double(d1)) + 1 - q)
        return Double(d1) * meanSquare + Double(d2) * meanSquare * Foundation.exp(logMeanH)
    }

    /// The normalisation constant c.
    public func scale(_ normalization: Normalization) throws -> Double {
        try normalization.constant(dimension: parameterCount, meanTrace: meanTrace)
    }

    /// `p̃`: the probability that a first-stage coordinate is active under π_1 at scale s.
    public func activeProbability(scale s: Double) -> Double {
        let num = (hi - threshold) + s * (hi * hi - threshold * threshold) / 2
        let den = (hi - lo) + s * (hi * hi - lo * lo) / 2
        return num / den
    }

    /// `log B(S; d_1, p)` for S = 0…d_1.
    func logBinomial(_ p: Double) -> [Double] {
        let n = d1
        let lp = Foundation.log(p), lq = Foundation.log1p(-p)
        var out = [Double](repeating: 0, count: n + 1)
        var logChoose = 0.0  // log C(n, k), by C(n, k+1) = C(n, k)·(n − k)/(k + 1)
        for k in 0...n {
            var v = logChoose
            if k > 0 { v += Double(k) * lp }
            if k < n { v += Double(n - k) * lq }
            out[k] = v
            if k < n { logChoose += Foundation.log(Double(n - k)) - Foundation.log(Double(k + 1)) }
        }
        return out
    }

    /// `log Z_2(S)` for S = 0…d_1: `d_2 log(1 + s m e^{γS/(2d_1)})`.
    func logZ2(scale s: Double) -> [Double] {
        (0...d1).map { k in Double(d2) * Foundation.log1p(s * mean * h(Double(k) / Double(d1)).squareRoot()) }
    }

    /// The exact stage terms at scale s (raw F; pass `s = t√c`): `log Z_1`, `log E_{π_1} Z_2` (the 2sED's),
    /// `E_{π_1} log Z_2` (the lower 2sED's) and the limit `ESS/K` of π_1-draws weighted by `Z_2`,
    /// `(E Z_2)² / E Z_2²`.
    public func exactTerms(scale s: Double) -> (logZ1: Double, logMeanZ2: Double, meanLogZ2: Double, outerESSFraction: Double) {
        let lb = logBinomial(activeProbability(scale: s))
        let lz = logZ2(scale: s)
        let logMean = LogSpace.logSumExp(zip(lb, lz).map { $0 + $1 })
        let logSecond = LogSpace.logSumExp(zip(lb, lz).map { $0 + 2 * $1 })
        var meanLog = 0.0
        for (a, z) in zip(lb, lz) where a > -745 { meanLog += Foundation.exp(a) * z }
        return (Double(d1) * Foundation.log1p(s * mean), logMean, meanLog, Foundation.exp(2 * logMean - logSecond))
    }

    /// Exact d_ζ(ε), lower d_ζ(ε), the limit outer ESS fraction and the 2sED's stage terms
    /// (`log Z_1`, `log E_{π_1} Z_2`).
    public func exact(eps: Double, zeta: Double, normalization: Normalization) throws
        -> (dZeta: Double, dZetaLower: Double, outerESSFraction: Double, stageLogZ: [Double]) {
        try ScaleParameters.checkEpsilon(eps)
        try ScaleParameters.checkZeta(zeta)
        let s = ScaleParameters.t(eps: eps, zeta: zeta) * (try scale(normalization)).squareRoot()
        let e = exactTerms(scale: s)
        let d = parameterCount
        return (TwoScale.dimension(logMeanDet: e.logZ1 + e.logMeanZ2, dimension: d, zeta: zeta, eps: eps),
                TwoScale.dimension(logMeanDet: e.logZ1 + e.meanLogZ2, dimension: d, zeta: zeta, eps: eps),
                e.outerESSFraction, [e.logZ1, e.logMeanZ2])
    }
}
