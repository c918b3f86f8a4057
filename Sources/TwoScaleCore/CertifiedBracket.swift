import Foundation

/// A bracket `[lo, hi]` around the 2sED (and the lower 2sED) that holds by construction, not by an
/// estimator's error model (docs/METHOD.md §19):
///
/// * `hi` is deterministic: every stage's determinant is below a majorant that holds at every θ in the
///   box, so `log Z ≤ Σ_m log Ḡ_m`.
/// * `lo` holds with probability ≥ 1 − δ over the bracket's own uniform draws: by Jensen
///   `log Z ≥ Σ_m E_θ log G_m` (and `log Z_1 = n_1 log Z_u ≥ n_1 E log g_u` over the exchangeable first-layer
///   units), and each mean is bounded below by the empirical Bernstein inequality with the majorant as
///   the range, at `δ/(L·E)` for L stages and E grid points, so every printed lower end holds at once.
///   The lower 2sED's later stages are known to be at least the model's floors (`stageFloor`, 0 where nothing
///   more is proved), and, where the model's later stages are associated with the earlier ones (`associated`),
///   at least their Jensen means under the uniform law (Harris's inequality); its lower end is stage 1's term
///   plus these, which bound the 2sED's later terms too.
///
/// Both ends are for the model as computed: the data inputs, the noise draws and the normalisation c
/// that the run used.
public struct CertifiedBracket: Sendable, Equatable {
    /// How far a 2sED of `size` summed from d logs may lie from the same value summed another way: each log
    /// is within an ulp or two, so the sum is within (d + 16)·2ε of its size (ε = 2⁻⁵²; 8ε is used).
    public static func rounding(dimension d: Int, size: Double) -> Double { 8 * Double.ulpOfOne * Double(d + 16) * size }

    public struct Point: Sendable, Equatable {
        public var eps: Double
        public var zeta: Double
        public var dZeta: ClosedRange<Double>
        public var dZetaLower: ClosedRange<Double>
        /// Per stage, the majorant's `log Ḡ_m` and the certified lower value of `E log G_m` (nats; stage 1
        /// already times its units).
        public var stageUpper: [Double]
        public var stageLower: [Double]
        /// Lower values of `log Z` and of stage 1's `log Z_1` by Markov's inequality on unbiased estimates
        /// (nil: not computed).
        public var markov: Double?
        public var stageOneMarkov: Double?
        /// Per stage, a deterministic lower value of `log E_{θ_m} G_m` at every θ_{<m} (entry 0 unused).
        public var stageFloor: [Double]

        /// The ends from the stage terms: `hi` from the majorants; `lo` the largest of Jensen's (all stages),
        /// Markov's on Z, and Markov's on Z_1 (later stages ≥ 0); the lower 2sED's `lo` the larger stage-1
        /// term plus each later stage's floor (`stageFloor`, zeros by default). With `associated` (every `G_j` and
        /// every `E_{θ_m} log G_m` nondecreasing in each coordinate of the earlier stages, so that
        /// `E_{π_{<m}} ≥ E_U` for the latter, Harris's inequality) a later stage's Jensen term may stand for its
        /// floor. That staged sum is a lower end of both.
        public init(eps: Double, zeta: Double, dimension d: Int, stageUpper: [Double], stageLower: [Double],
                    markov: Double? = nil, stageOneMarkov: Double? = nil, stageFloor: [Double]? = nil, associated: Bool = false) {
            self.eps = eps
            self.zeta = zeta
            self.stageUpper = stageUpper
            self.stageLower = stageLower
            self.markov = markov
            self.stageOneMarkov = stageOneMarkov
            let floor = stageFloor ?? stageUpper.map { _ in 0 }
            self.stageFloor = floor
            let l = Swift.abs(Foundation.log(eps)), base = zeta * Double(d)
            // Each end is widened by its rounding; where a ceiling is attained (a stage that does not vary) the
            // exact value and the end differ only in rounding, either way.
            let rounding = { (terms: [Double]) in
                CertifiedBracket.rounding(dimension: d, size: Swift.abs(base) + terms.reduce(0) { $0 + Swift.abs($1) } / l)
            }
            let hi = base + stageUpper.reduce(0, +) / l + rounding(stageUpper)
            let first = Swift.max(stageLower.first ?? 0, stageOneMarkov ?? 0)
            let staged = stageLower.indices.dropFirst().reduce(first) { sum, m in
                sum + Swift.max(m < floor.count ? floor[m] : 0, associated ? stageLower[m] : 0)
            }
            let jensen = Swift.max(stageLower.reduce(0, +), staged, markov ?? 0)
            dZeta = Swift.min(base + jensen / l - rounding([jensen]), hi)...hi
            dZetaLower = Swift.min(base + staged / l - rounding([staged]), hi)...hi
        }

        /// Whether `value` lies in the 2sED's bracket.
        public func contains(_ value: Double) -> Bool { dZeta.contains(value) }

        /// A point's lower 2sED estimate and its interval, lowered to the 2sED's upper end where the estimate
        /// lies above it (Jensen: lower 2sED ≤ 2sED ≤ `hi`), anything else unchanged; what lies outside the
        /// bracket (the 2sED `estimate`, the lower 2sED before lowering) goes into `check`.
        public func capping(estimate: Double, lower: Double?, interval: ClosedRange<Double>?,
                            recordingIn check: inout BracketCheck) -> (lower: Double?, interval: ClosedRange<Double>?) {
            check.inspect(eps: eps, estimate: estimate, lower: lower, bracket: self)
            let hi = dZeta.upperBound
            guard let l = lower, l > hi else { return (lower, interval) }
            return (hi, interval.map { Swift.min($0.lowerBound, hi)...Swift.min($0.upperBound, hi) })
        }
    }

    /// The probability with which an end may fail (all of them together).
    public var delta: Double
    /// Uniform parameter draws behind the lower ends.
    public var draws: Int
    public var points: [Point]
    /// The normalisation constant's interval: the upper ends are taken at its upper end, the lower ends at
    /// its lower end (an exact c is its own interval).
    public var scale: ScaleRange

    public init(delta: Double, draws: Int, points: [Point], scale: ScaleRange) {
        self.delta = delta
        self.draws = draws
        self.points = points
        self.scale = scale
    }

    /// δ's shares: c's interval takes `scaleShare`·δ when c is estimated (nothing when exact); a sampled upper
    /// end (a network's first block, `sampledUpper`) `upperShare`·δ, per grid point over E points (`upper`); of
    /// the rest, Jensen's ends take half (`jensen`, per stage and grid point, over L stages and E points) and
    /// Markov's on Z and on Z_1 a quarter each (`markov`, per grid point).
    public static func shares(delta: Double, estimatedScale: Bool, sampledUpper: Bool = false, stages L: Int, points E: Int)
        -> (scale: Double, upper: Double, jensen: Double, markov: Double) {
        let e = Double(Swift.max(1, E))
        let scale = estimatedScale ? delta * scaleShare : 0
        let upper = sampledUpper ? delta * upperShare : 0
        let rest = delta - scale - upper
        return (scale, upper / e, rest / 2 / (Double(L) * e), rest / 4 / e)
    }

    /// The shares of δ that an estimated c's interval and a sampled upper end take.
    public static let scaleShare = 0.25, upperShare = 0.125

    /// c's interval (`ScaleRange`) for `normalization`: `none` is c = 1 exactly; `trace` comes from `traces`,
    /// uniform draws of Tr F each in `[0, ceiling]`, with the deterministic bound `meanBound` on their mean
    /// where the model has one, at δ_c = `delta`. An interval with no finite upper end would leave the
    /// bracket's upper end unbounded: that is an error that says how to narrow it.
    public static func scaleRange(_ normalization: Normalization, traces: [Double], dimension d: Int, ceiling: Double,
                                  meanBound: Double?, delta: Double) throws -> ScaleRange {
        guard normalization == .trace else { return .exact(1) }
        let r = try ScaleRange.estimated(traces: traces, dimension: d, ceiling: ceiling, meanBound: meanBound, delta: delta)
        guard r.range.upperBound.isFinite else {
            throw TwoScaleError.failure("bracket: \(traces.count) trace draws (mean Tr F \(traces.reduce(0, +) / Double(traces.count)), its proved ceiling \(ceiling)) do not bound E_θ Tr F away from 0 at δ_c = \(delta), so the trace normalisation's c has no finite upper end; use \(Setting.normalize) none")
        }
        return r
    }

    /// The uniform draws of Tr F behind c's interval.
    public static let traceDraws = 10_000

    /// The default δ and number of draws; the particles and sweeps of each first-layer unit's frozen sampler,
    /// and the outer particles and island particles of the later stages' (docs/METHOD.md §19).
    public static let defaultDelta = 0.01, defaultDraws = 200, unitParticles = 64, unitSweeps = 10
    public static let outerParticles = 8, islandParticles = 32

    /// What the ends are, and what they are conditional on (for reports and JSON).
    public static let upperMethod = "each stage's determinant at its majorant over the box (Gaussian units at act' = max |act'| on all of the input's second moments, the softmax stage at uniform probabilities; hidden states by interval bounds and operator norms; for an MLP's later stages the smaller of that and a bound on its mean over the previous layer's weights, by Schur's diagonal bound and log-Sobolev concentration (after the second stage, where smaller, handed down as an exponential of its input's trace); for a network's first block, where the sum is smaller, an upper value of one unit's p-th moment over uniform draws of its own, of its factor or of its tangent majorant, the majorant as range (by the empirical Bernstein or the Chernoff–Hoeffding inequality), with probability ≥ 1 − δ/8, paired by Hölder's inequality with the second block's q-th moment, route, inequality and p chosen on pilot draws), at the upper end of c's interval (with probability ≥ 1 − δ/8 for an estimated c: the empirical Bernstein inequality on the bracket's own uniform draws of Tr F, truncated), docs/METHOD.md §19"
    public static let lowerMethod = "probability ≥ 1 − δ: the larger of Jensen's log E ≥ E log per stage over uniform draws (each mean by the empirical Bernstein inequality with the majorant as range) and Markov's inequality on unbiased estimates of Z (smc runs) and of stage 1's Z_1 (frozen-schedule SMC samplers and a particle filter with unbiased weights), at the lower end of c's interval (the smaller of the empirical Bernstein upper value with the majorants' trace as range and a deterministic bound on E Tr F); of δ, an estimated c's interval takes δ/4, a network's sampled first-block upper end δ/8 (where its draws are made), and of the rest Jensen's ends half, each of Markov's a quarter"
    public static let conditionalOn = "the data inputs and the noise draws of this run (the normalisation c is inside: its interval from the trace draws)"
}

/// JSON (`ed`'s `bracket`): `delta`, `draws`, `upper`, `lower`, `conditional_on`, and per point `eps`,
/// `d_zeta_bracket`, `d_zeta_lower_bracket`, `stage_log_upper`, `stage_log_lower`.
extension CertifiedBracket: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ResultKey.self)
        try c.encode(delta, forKey: ResultKey("delta"))
        try c.encode(draws, forKey: ResultKey("draws"))
        try c.encode(Self.upperMethod, forKey: ResultKey("upper"))
        try c.encode(Self.lowerMethod, forKey: ResultKey("lower"))
        try c.encode(Self.conditionalOn, forKey: ResultKey("conditional_on"))
        try c.encode(scale, forKey: ResultKey("normalization"))
        try c.encode(points, forKey: ResultKey("points"))
    }
}

extension CertifiedBracket.Point: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ResultKey.self)
        try c.encode(eps, forKey: ResultKey("eps"))
        try c.encode([dZeta.lowerBound, dZeta.upperBound], forKey: ResultKey("d_zeta_bracket"))
        try c.encode([dZetaLower.lowerBound, dZetaLower.upperBound], forKey: ResultKey("d_zeta_lower_bracket"))
        try c.encode(stageUpper, forKey: ResultKey("stage_log_upper"))
        try c.encode(stageLower, forKey: ResultKey("stage_log_lower"))
        try c.encode(markov, forKey: ResultKey("log_z_markov"))
        try c.encode(stageOneMarkov, forKey: ResultKey("stage1_log_markov"))
    }
}

/// What lies outside a certified bracket: a 2sED estimate outside `[lo, hi]` (the true value is inside,
/// up to δ for `lo`), or a lower 2sED estimate above the 2sED's `hi` (the true lower 2sED is at most the
/// 2sED; the printed one is lowered to `hi`). JSON (`ed`'s `bracket_check`, present only when it finds
/// something): a list of `quantity` (`d_zeta` or `d_zeta_lower`), `eps`, `estimate`, `bracket`.
public struct BracketCheck: Sendable, Equatable, Encodable {
    public struct Case: Sendable, Equatable, Encodable {
        public var quantity: String
        public var eps: Double
        public var estimate: Double
        public var bracket: [Double]
    }

    public var cases: [Case] = []
    public var isEmpty: Bool { cases.isEmpty }

    public init() {}

    /// Records the 2sED `estimate` if it lies outside the point's bracket, and the lower 2sED if above
    /// the 2sED's upper end.
    public mutating func inspect(eps: Double, estimate: Double, lower: Double?, bracket p: CertifiedBracket.Point) {
        if !p.dZeta.contains(estimate) {
            cases.append(Case(quantity: "d_zeta", eps: eps, estimate: estimate, bracket: [p.dZeta.lowerBound, p.dZeta.upperBound]))
        }
        if let l = lower, l > p.dZeta.upperBound {
            cases.append(Case(quantity: "d_zeta_lower", eps: eps, estimate: l, bracket: [p.dZeta.lowerBound, p.dZeta.upperBound]))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(cases)
    }
}
