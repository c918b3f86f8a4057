import Foundation
import RandomStreams
import Samplers
import TwoScaleCore

/// The layered toy model: two or more stages whose coupling makes Monte Carlo hard and the 2sED exact
/// (docs/METHOD.md §20).
///
/// θ = (w_1, …, w_L), stage m of `n_m` units of `p_m` coordinates (d_m = n_m p_m), each in [lo, hi], 0 ≤ lo < hi,
/// θ uniform on the box, and
///
///     F(θ) = diag(w_1², h(κ̄_1) w_2², …, h(κ̄_{L−1}) w_L²),   κ̄_m = #{active coordinates of stages 1…m} / D_m,
///
/// `h(κ) = e^{γκ}`, a coordinate active when above b, `D_m = d_1 + … + d_m`. Stage m's eigenvalues depend on
/// all the earlier stages through one statistic, the pooled share of their active coordinates (as a layer
/// sees what every layer before it let through). With `G = det(I + s F^{1/2})`, G factorises over
/// coordinates given the κ̄'s; given the earlier stages, stage m's coordinates under `π_m ∝ G_m` are
/// independent with density ∝ 1 + s r w (r = √h(κ̄_{m−1}), r = 1 for stage 1), so its active count S_m is
/// Binomial(d_m, p̃(s r)) with `p̃(a) = [(hi − b) + a(hi² − b²)/2] / [(hi − lo) + a(hi² − lo²)/2]`, and
/// `Z_m = (1 + s m̄ r)^{d_m}`, m̄ = (lo + hi)/2. The stage terms of the 2sED, `log E_{π_{<m}} Z_m`
/// (π_{<m} ∝ Π_{j<m} G_j), and of the lower 2sED, `E_{π_{<m}} log Z_m`, follow from the law of the pooled
/// count T_{m−1} = S_1 + … + S_{m−1} under π_{<m}, carried forward stage by stage (exact to rounding; two
/// stages: one sum over S_1). The trace normalisation is exact too:
/// `E_U Tr F = ⟨w²⟩ (d_1 + Σ_{m≥2} d_m (q e^{γ/D_{m−1}} + 1 − q)^{D_{m−1}})`, `q = (hi − b)/(hi − lo)`.
///
/// Where the smc estimator samples the earlier stages and weights its draws by stage m, the outer weights
/// `Z_m` vary by `≈ d_m γ/2` nats per unit of κ̄ while κ̄ varies by `√(p̃(1 − p̃)/D_{m−1})`: the coupling γ
/// sets the outer-weight degeneracy, whose limit `ESS/K` per stage is exact (`exactStages`).
public struct LayeredToy: ExactStagedToy {
    /// The coordinates set so far, stage by stage.
    public struct State: Sendable {
        public var stages: [[Double]]
    }

    public let stageUnits: [StageUnits]
    public let lo: Double
    public let hi: Double
    /// b, the threshold above which a coordinate counts as active.
    public let threshold: Double
    /// γ, the coupling of each stage to the pooled share of active coordinates of the stages before it.
    public let coupling: Double

    /// The most stages a layered toy may have.
    public static let maximumStages = 8

    /// d_m, the coordinates of stage m (0-based).
    public func dimension(ofStage m: Int) -> Int { stageUnits[m].count * stageUnits[m].dimension }
    public var d1: Int { dimension(ofStage: 0) }
    public var parameterCount: Int { stageUnits.indices.reduce(0) { $0 + dimension(ofStage: $1) } }
    public var box: ClosedRange<Double> { lo...hi }

    /// `units[m]` and `unitSize[m]` per stage (two to `maximumStages`); the box; b (default the box's midpoint); γ.
    public init(units: [Int], unitSize: [Int], box: (Double, Double) = (0, 1), threshold: Double? = nil,
                coupling: Double) throws {
        guard units.count == unitSize.count, (2...Self.maximumStages).contains(units.count) else {
            throw TwoScaleError.invalid("\(Setting.units)", units.map(String.init).joined(separator: ","),
                                        allowed: "one count per stage in both \(Setting.units) and \(Setting.unitSize), 2 to \(Self.maximumStages) stages (got \(units.count) and \(unitSize.count))")
        }
        for (flag, list) in [("\(Setting.units)", units), ("\(Setting.unitSize)", unitSize)] where list.contains(where: { $0 < 1 || $0 > 10_000_000 }) {
            throw TwoScaleError.invalid(flag, list.map(String.init).joined(separator: ","), allowed: "each count must be from 1 to 10⁷")
        }
        guard zip(units, unitSize).allSatisfy({ $0 * $1 <= 10_000_000 }) else {
            throw TwoScaleError.invalid("\(Setting.units)", units.map(String.init).joined(separator: ","), allowed: "at most 10⁷ coordinates per stage")
        }
        let (lo, hi) = box
        guard lo.isFinite, hi.isFinite, lo >= 0, lo < hi else {
            throw TwoScaleError.invalid("\(Setting.box)", "\(lo):\(hi)", allowed: "the layered toy needs a box lo:hi with 0 ≤ lo < hi")
        }
        let b = threshold ?? (lo + hi) / 2
        guard b.isFinite, b > lo, b < hi else {
            throw TwoScaleError.invalid("\(Setting.threshold)", "\(b)", allowed: "the threshold b must lie strictly inside the box (\(lo), \(hi))")
        }
        guard coupling.isFinite, abs(coupling) <= 1_000 else {
            throw TwoScaleError.invalid("\(Setting.coupling)", "\(coupling)", allowed: "the coupling γ must be a finite number in [−1000, 1000]")
        }
        stageUnits = units.indices.map { StageUnits(count: units[$0], dimension: unitSize[$0]) }
        self.lo = lo
        self.hi = hi
        self.threshold = b
        self.coupling = coupling
    }

    /// The default coupling γ of the layered toy family.
    public static let defaultCoupling = 0.12

    /// `h(κ) = e^{γκ}`.
    public func h(_ kappa: Double) -> Double { Foundation.exp(coupling * kappa) }

    /// κ̄_{m}: the share of active coordinates over stages 0..<m (0-based) of a state.
    func pooledShare(_ state: State, before m: Int) -> Double {
        var active = 0, count = 0
        for j in 0..<m {
            active += state.stages[j].reduce(0) { $0 + ($1 > threshold ? 1 : 0) }
            count += state.stages[j].count
        }
        return Double(active) / Double(count)
    }

    // MARK: StagedModel

    public func emptyState() -> State {
        State(stages: stageUnits.indices.map { [Double](repeating: lo, count: dimension(ofStage: $0)) })
    }

    public func setUnit(_ state: inout State, stage m: Int, unit u: Int, parameters: [Double]) {
        let p = stageUnits[m].dimension
        for j in 0..<p { state.stages[m][u * p + j] = parameters[j] }
    }

    /// Stage m's supremum given θ_{<m}: `d_m log(1 + s·hi·√h(κ̄))`, the log of `G_m` with every coordinate at
    /// the box's top.
    public func stageMajorant(_ state: State, stage m: Int, scale s: Double, box: ClosedRange<Double>) throws -> Double? {
        guard m > 0 else { return nil }
        let root = h(pooledShare(state, before: m)).squareRoot()
        return Double(dimension(ofStage: m)) * Foundation.log1p(s * root * box.upperBound)
    }

    public func stage(_ state: State, _ m: Int, box: ClosedRange<Double>) throws -> StageUnit {
        let p = stageUnits[m].dimension
        if m == 0 {
            return StageUnit(unit: SMCUnit(dimension: p, box: box, coordinateRoot: { t in t }))
        }
        let root = h(pooledShare(state, before: m)).squareRoot()
        let top = root * box.upperBound
        return StageUnit(unit: SMCUnit(dimension: p, box: box, coordinateRoot: { t in root * t }),
                         supremumRoots: { [Double](repeating: top, count: p) })
    }

    /// Tr F at uniform θ, drawn stage by stage (stage 1's coordinates first).
    public func uniformTrace(box: ClosedRange<Double>, rng: inout Xoshiro256) throws -> Double {
        var total = 0.0, factor = 1.0, active = 0, pooled = 0
        for m in stageUnits.indices {
            let d = dimension(ofStage: m)
            var t = 0.0
            for _ in 0..<d {
                let w = rng.uniform(box.lowerBound, box.upperBound)
                t += w * w
                if w > threshold { active += 1 }
            }
            total += factor * t
            pooled += d
            factor = h(Double(active) / Double(pooled))
        }
        return total
    }

    // MARK: CertifiedStagedModel

    public func uniformState(box: ClosedRange<Double>, rng: inout Xoshiro256) -> State {
        State(stages: stageUnits.indices.map { m in (0..<dimension(ofStage: m)).map { _ in rng.uniform(box.lowerBound, box.upperBound) } })
    }

    public func unitParameters(_ state: State, stage m: Int, unit u: Int) -> [Double] {
        let p = stageUnits[m].dimension
        return Array(state.stages[m][(u * p)..<((u + 1) * p)])
    }

    /// `log Z ≤ log Z_1 + Σ_{m≥2} max_κ log Z_m(κ)`, each in closed form (`Z_1` exactly); the Jensen samples'
    /// ranges are the determinants at the box's top, `p_1 log(1 + s·hi)` and `d_m log(1 + s √h̄ hi)`; the later
    /// stages' floors `min_κ log Z_m(κ) = d_m log(1 + s m̄ √min(h(0), h(1)))` (h is monotone in κ).
    public func ceilings(box: ClosedRange<Double>, scale s: Double) throws -> StageCeilings {
        let topH = Swift.max(h(0), h(1)).squareRoot(), bottomH = Swift.min(h(0), h(1)).squareRoot()
        let later = stageUnits.indices.dropFirst()
        return StageCeilings(stage: [Double(d1) * Foundation.log1p(s * mean)] + later.map { Double(dimension(ofStage: $0)) * Foundation.log1p(s * mean * topH) },
                             unitRange: Double(stageUnits[0].dimension) * Foundation.log1p(s * hi),
                             stageRange: [0] + later.map { Double(dimension(ofStage: $0)) * Foundation.log1p(s * topH * hi) },
                             floor: [0] + later.map { Double(dimension(ofStage: $0)) * Foundation.log1p(s * mean * bottomH) })
    }

    /// With γ ≥ 0 on a box with lo ≥ 0, every factor `1 + s r_j w` is positive and nondecreasing in w and in
    /// `r_j = √h(κ̄_{j−1})`, and κ̄ is nondecreasing in every coordinate, so each `G_j` and each stage's
    /// `E_{θ_m} log G_m` are nondecreasing in every earlier coordinate; with γ < 0 the later stages fall as the
    /// earlier ones rise, and the bracket keeps stage 1's term.
    public func laterStagesAssociated(box: ClosedRange<Double>) -> Bool { coupling >= 0 && box.lowerBound >= 0 }

    /// `Tr F(θ) ≤ Σ_m d_m w̄² h̄_m` with `w̄ = max(|lo|, |hi|)`, `h̄_1 = 1` and `h̄_m = max(h(0), h(1))` for m ≥ 2
    /// (h is monotone in the share of active coordinates).
    public func traceCeiling(box: ClosedRange<Double>) -> Double {
        let top = Swift.max(box.lowerBound * box.lowerBound, box.upperBound * box.upperBound)
        let topH = Swift.max(h(0), h(1))
        return stageUnits.indices.reduce(0) { $0 + Double(dimension(ofStage: $1)) * top * ($1 == 0 ? 1 : topH) }
    }

    // MARK: exact values

    /// `m = E_U w`.
    var mean: Double { (lo + hi) / 2 }
    /// `⟨w²⟩ = E_U w²`.
    var meanSquare: Double { (lo * lo + lo * hi + hi * hi) / 3 }

    /// `E_U Tr F`, exact: κ̄_{m−1} under the uniform law is Binomial(D_{m−1}, q)/D_{m−1}.
    public var meanTrace: Double {
        let q = (hi - threshold) / (hi - lo)
        var total = Double(d1) * meanSquare
        for m in stageUnits.indices.dropFirst() {
            let before = Double((0..<m).reduce(0) { $0 + dimension(ofStage: $1) })
            let logMeanH = before * Foundation.log(q * Foundation.exp(coupling / before) + 1 - q)
            total += Double(dimension(ofStage: m)) * meanSquare * Foundation.exp(logMeanH)
        }
        return total
    }

    /// b and γ, as results list them.
    public var parameters: [(name: String, value: Double)] { [("threshold", threshold), ("coupling", coupling)] }

    /// `p̃(a)`: the probability that a coordinate with density ∝ 1 + a w on the box is active (stage 1 at
    /// scale s: a = s; a later stage: a = s √h(κ̄) of the stages before).
    public func activeProbability(scale a: Double) -> Double {
        let num = (hi - threshold) + a * (hi * hi - threshold * threshold) / 2
        let den = (hi - lo) + a * (hi * hi - lo * lo) / 2
        return num / den
    }

    /// `log C(n, k)` for k = 0…n, by C(n, k+1) = C(n, k)·(n − k)/(k + 1).
    static func logChoose(_ n: Int) -> [Double] {
        var out = [Double](repeating: 0, count: n + 1)
        for k in 0..<n { out[k + 1] = out[k] + (Foundation.log(Double(n - k)) - Foundation.log(Double(k + 1))) }
        return out
    }

    /// `log B(k; n, p)` for k = 0…n, from `logChoose(n)`.
    static func logBinomial(_ logChoose: [Double], _ p: Double) -> [Double] {
        let n = logChoose.count - 1
        let lp = Foundation.log(p), lq = Foundation.log1p(-p)
        return (0...n).map { k in logChoose[k] + (k > 0 ? Double(k) * lp : 0) + (k < n ? Double(n - k) * lq : 0) }
    }

    /// The exact stage terms at scale s (raw F; pass `s = t√c`): `log Z_1`, and for each stage m ≥ 2
    /// `log E_{π_{<m}} Z_m` (the 2sED's), `E_{π_{<m}} log Z_m` (the lower 2sED's) and the limit `ESS/K` of
    /// π_{<m}-draws weighted by `Z_m`, `(E Z_m)² / E Z_m²`.
    ///
    /// The law of the pooled active count T_{m−1} = S_1 + … + S_{m−1} under π_{<m} is carried forward: under
    /// π_{<2}, T_1 = S_1 ~ Binomial(d_1, p̃(s)); under π_{<m+1} ∝ π_{<m} G_m, T_{m−1} is reweighted by
    /// `Z_m(T_{m−1})` and T_m = T_{m−1} + S_m with S_m | T_{m−1} ~ Binomial(d_m, p̃(s √h(T_{m−1}/D_{m−1}))).
    /// Before that step, values of T_{m−1} whose probability is below `e^{−X}` of the largest are dropped,
    /// `X = 80 + log(D_{m−1} + 1) + Σ_{j>m} R_j` with `R_j` the range of `log Z_j` over κ̄: no later reweighting
    /// can lift what is dropped above e^{−80} of any sum.
    public func exactStages(scale s: Double) -> (logZ1: Double, logMean: [Double], meanLog: [Double], outerESSFraction: [Double]) {
        let choose = stageUnits.indices.map { Self.logChoose(dimension(ofStage: $0)) }
        // R_j: log Z_j ranges over h between h(0) and h(1).
        let range = stageUnits.indices.map { j in
            Double(dimension(ofStage: j)) * Swift.abs(Foundation.log1p(s * mean * h(1).squareRoot()) - Foundation.log1p(s * mean))
        }
        var law = Self.logBinomial(choose[0], activeProbability(scale: s))  // log P(T_{m−1}) under π_{<m}
        var logMean: [Double] = [], meanLog: [Double] = [], ess: [Double] = []
        for m in stageUnits.indices.dropFirst() {
            let before = Double(law.count - 1), dm = Double(dimension(ofStage: m))
            let root = law.indices.map { h(Double($0) / before).squareRoot() }
            let lz = root.map { dm * Foundation.log1p(s * mean * $0) }
            let term = LogSpace.logSumExp(zip(law, lz).map { $0 + $1 })
            let second = LogSpace.logSumExp(zip(law, lz).map { $0 + 2 * $1 })
            var lower = 0.0
            for (a, z) in zip(law, lz) where a > -745 { lower += Foundation.exp(a) * z }
            logMean.append(term)
            meanLog.append(lower)
            ess.append(Foundation.exp(2 * term - second))
            guard m + 1 < stageUnits.count else { break }
            // Reweight T_{m−1} by Z_m, then add S_m: the law of T_m under π_{<m+1}.
            let weight = zip(law, lz).map { $0 + $1 - term }
            let cut = (weight.max() ?? 0) - (80 + Foundation.log(before + 1) + range[(m + 1)...].reduce(0, +))
            let kept = weight.indices.filter { weight[$0] > cut }
            let rows = kept.map { Self.logBinomial(choose[m], activeProbability(scale: s * root[$0])) }
            let d = dimension(ofStage: m)
            var top = [Double](repeating: -.infinity, count: law.count + d)
            for (i, t) in kept.enumerated() {
                for k in 0...d { top[t + k] = Swift.max(top[t + k], weight[t] + rows[i][k]) }
            }
            var sum = [Double](repeating: 0, count: law.count + d)
            for (i, t) in kept.enumerated() {
                for k in 0...d where top[t + k] > -.infinity { sum[t + k] += Foundation.exp(weight[t] + rows[i][k] - top[t + k]) }
            }
            law = zip(top, sum).map { $0 > -.infinity ? $0 + Foundation.log($1) : -.infinity }
        }
        return (Double(d1) * Foundation.log1p(s * mean), logMean, meanLog, ess)
    }

    /// Exact d_ζ(ε), lower d_ζ(ε), the limit outer ESS fraction of each stage m ≥ 2 and the 2sED's stage terms
    /// (`log Z_1`, then `log E_{π_{<m}} Z_m`).
    public func exact(eps: Double, zeta: Double, normalization: Normalization) throws
        -> (dZeta: Double, dZetaLower: Double, stageOuterESSFraction: [Double], stageLogZ: [Double]) {
        try ScaleParameters.checkEpsilon(eps)
        try ScaleParameters.checkZeta(zeta)
        let s = ScaleParameters.t(eps: eps, zeta: zeta) * (try scale(normalization)).squareRoot()
        let e = exactStages(scale: s)
        let d = parameterCount
        return (TwoScale.dimension(logMeanDet: e.logZ1 + e.logMean.reduce(0, +), dimension: d, zeta: zeta, eps: eps),
                TwoScale.dimension(logMeanDet: e.logZ1 + e.meanLog.reduce(0, +), dimension: d, zeta: zeta, eps: eps),
                e.outerESSFraction, [e.logZ1] + e.logMean)
    }
}

/// The layered family (`Setting.family` `layered`): units and coordinates per stage (either list alone sets the
/// number of stages, the other defaults to 10 units of 1 000 coordinates), b (the box's midpoint) and γ (0.12).
public struct LayeredToyFamily: StagedToyFamily {
    public init() {}
    public var name: String { "layered" }
    public var settings: [Setting] { [.units, .unitSize, .threshold, .coupling] }

    public func model(_ given: [Setting: [Double]], box: (Double, Double)) throws -> any ExactStagedToy {
        let n = given[.units] ?? [Double](repeating: 10, count: given[.unitSize]?.count ?? 2)
        let p = given[.unitSize] ?? [Double](repeating: 1000, count: n.count)
        for (setting, list) in [(Setting.units, n), (.unitSize, p)] where list.contains(where: { $0 != $0.rounded() || !$0.isFinite || $0 < 1 || $0 > 1e7 }) {
            throw TwoScaleError.invalid("\(setting)", list.map { "\($0)" }.joined(separator: ","), allowed: "give whole numbers from 1 to 10⁷, one per stage")
        }
        for s in [Setting.threshold, .coupling] {
            if let v = given[s], v.count != 1 { throw TwoScaleError.invalid("\(s)", v.map { "\($0)" }.joined(separator: ","), allowed: "give one number") }
        }
        return try LayeredToy(units: n.map { Int($0) }, unitSize: p.map { Int($0) }, box: box, threshold: given[.threshold]?.first,
                              coupling: given[.coupling]?.first ?? LayeredToy.defaultCoupling)
    }
}
