import Estimation
import Fisher
import Foundation
import Networks
import RandomStreams
import Samplers
import TwoScaleCore
import TwoScaleNumerics
import TwoScaleFormats

extension MarkovFisher {
    static let bracketStream: UInt64 = 0x4252_4B54  // "BRKT"

    /// Unit u of block m's parameters in `net`, laid out as `setUnit` writes them.
    func unitParameters(_ net: Network, block m: Int, unit u: Int) -> [Double] {
        let layer = architecture.parametricLayers[m]
        let st = architecture.structure(layer: layer)
        let rows = m == blockDimensions.count - 1 ? Array(0..<st.units) : [u]
        return rows.flatMap { r in st.unitIndices(r).map { net.blocks[layer][$0] } }
    }

    /// How many parameters unit u of block m has (`unitParameters`' length: the softmax block is one unit).
    func unitParameterCount(block m: Int) -> Int {
        let st = architecture.structure(layer: architecture.parametricLayers[m])
        return (m == blockDimensions.count - 1 ? st.units : 1) * st.unitIndices(0).count
    }

    /// The certified bracket of the 2sED and the lower 2sED at every ε (`CertifiedBracket`, docs/METHOD.md
    /// §19), for this model (its data and noise draws), with the normalisation c inside: for `trace`, its
    /// interval (`ScaleRange`) from `traceDraws` uniform draws of Tr F (streams "BRKT", 8, k), with the
    /// blocks' majorants' trace as range and `meanTraceBound` as a deterministic bound on the mean.
    ///
    /// The upper ends come from `blockCeilings` at c's upper end. The lower ends, at c's lower end, from
    /// `draws` uniform networks (streams "BRKT", 0, k, from `seed`): per draw, every first-layer unit's
    /// `log g_u` (n₁ draws of the unit) and each later block's `log G_m`; each mean is bounded below at
    /// Jensen's share of δ over L stages and E points (`CertifiedBracket.shares`).
    public func certifiedBracket(box: ClosedRange<Double>, eps: [Double], zeta: Double, normalization: Normalization, seed: UInt64,
                                 draws: Int = CertifiedBracket.defaultDraws, traceDraws: Int = CertifiedBracket.traceDraws,
                                 delta: Double = CertifiedBracket.defaultDelta,
                                 laterStages: Bool = true, upperDraws: Int? = nil, sharing: any WorkSharing = LocalSharing(),
                                 threads: Int) async throws -> CertifiedBracket {
        try ScaleParameters.checkZeta(zeta)
        for e in eps { try ScaleParameters.checkEpsilon(e) }
        let ceilings = try blockCeilings(box: box)
        let L = blockDimensions.count
        // The first block's sampled upper end takes its share of δ only where its draws are made (decided by
        // the unit's cost, before any draw).
        let first = unitInputs(firstBlockInputs, block: 0)
        let nUpper = upperDraws ?? Self.upperDraws(rows: first.patches.rows, parameters: first.patches.cols)
        let sampled = nUpper >= Self.minimumUpperDraws
        let share = CertifiedBracket.shares(delta: delta, estimatedScale: normalization == .trace, sampledUpper: sampled, stages: L,
                                            points: eps.count)
        let c = try await scaleRange(normalization, box: box, ceilings: ceilings, seed: seed, draws: traceDraws, delta: share.scale,
                                     sharing: sharing, threads: threads)
        let n1 = units(block: 0).count
        let me = self
        // Per draw: the roots of every first-layer unit, then of every later block (streams "BRKT", 0, k: the
        // Markov end's samplers use "BRKT", 1… of their own).
        let roots: [[[Double]]] = try await sharing.map(draws, threads: threads) { k in
            var rng = Xoshiro256(seed: seed, stream: [Self.bracketStream, 0, UInt64(k)])
            let net = Network.uniform(architecture: me.architecture, activation: me.activation, box: box, rng: &rng)
            var out = try (0..<n1).map { u in try me.unitRoots(me.unitParameters(net, block: 0, unit: u), inputs: first) }
            let inputs = try me.blockInputs(net, blocks: L)
            let raw = try (1..<Swift.max(1, L)).map { m in try me.blockEigenvalues(net, block: m, inputs: inputs[m]) }
            // The round-off rule's scale is the whole F(θ)'s largest eigenvalue (docs/METHOD.md §2).
            let top = out.flatMap { $0 }.map { $0 * $0 }.max() ?? 0
            let scale = Swift.max(top, Spectrum.largestMagnitude(raw))
            for eig in raw { out.append(try Spectrum(eigenvalues: eig, scale: scale).roots) }
            return out
        }
        let level = share.jensen, markovLevel = share.markov
        // The lower ends at c's lower end, the upper ends at its upper end.
        let scales = eps.map { ScaleParameters.t(eps: $0, zeta: zeta) * c.range.lowerBound.squareRoot() }
        let upperScales = eps.map { ScaleParameters.t(eps: $0, zeta: zeta) * c.range.upperBound.squareRoot() }
        let markov = try await unbiasedLogZ(box: box, scales: scales, seed: seed, laterStages: laterStages, sharing: sharing, threads: threads)
        // Hölder's exponent per point, fixed before any draw (it costs no share of δ).
        let powers = upperScales.map { Self.holderPower(ceilings, scale: $0, units: n1, draws: nUpper, delta: share.upper) }
        let firstUnit = sampled ? try await firstUnitMeanBounds(inputs: first, box: box, scales: upperScales, powers: powers,
                                                                unitBound: { ceilings[0].unitLogBound(scale: $0) }, seed: seed,
                                                                delta: share.upper, draws: nUpper, sharing: sharing, threads: threads) : nil
        let d = architecture.parameterCount
        let points = try eps.enumerated().map { ei, e -> CertifiedBracket.Point in
            let s = scales[ei]
            let upper = Self.upperTerms(ceilings, scale: upperScales[ei], firstBlockMean: firstUnit.map { Double(n1) * $0[ei] },
                                        power: powers[ei])
            let lowRanges = ceilings.map { $0.logBound(scale: s) }
            let unitSamples = roots.flatMap { $0[0..<n1].map { LogSpace.logDetSqrt(roots: $0, scale: s) } }
            var lower = [Double(n1) * Swift.max(0, try EmpiricalBernstein.lowerMean(unitSamples, range: ceilings[0].unitLogBound(scale: s), delta: level))]
            for m in 1..<Swift.max(1, L) {
                let samples = roots.map { LogSpace.logDetSqrt(roots: $0[n1 + m - 1], scale: s) }
                lower.append(Swift.max(0, try EmpiricalBernstein.lowerMean(samples, range: lowRanges[m], delta: level)))
            }
            // Markov: P(Ẑ ≥ Z/δ') ≤ δ' for the unbiased estimate of Z (all stages), and of Z_1 (stage 1).
            let level = Foundation.log(markovLevel)
            return CertifiedBracket.Point(eps: e, zeta: zeta, dimension: d, stageUpper: upper, stageLower: lower,
                                          markov: markov.logZ[s].map { Swift.max(0, $0 + level) },
                                          stageOneMarkov: Swift.max(0, markov.logZ1[s]! + level))
        }
        return CertifiedBracket(delta: delta, draws: draws, points: points, scale: c)
    }

    /// The upper end's stage terms at scale s (docs/METHOD.md §19, "The first block, sampled"): the first block
    /// at its majorant with every later block at the smaller of its majorant and its mean over the previous
    /// layer's weights (`upperLogBound`), or, where `firstBlockMean` is given and the sum is smaller, Hölder's
    /// pair: `firstBlockMean` bounds `(1/p) log E G_1^p` and the second block takes `(1/q) log E M_2^q`,
    /// `1/p + 1/q = 1` (at p = 1, `log Z_1` with the second block at its majorant). Both means are over θ_1, so
    /// `E[G_1 M_2] ≤ E G_1 · E M_2` would need them uncorrelated (a relu unit's many active samples raise both);
    /// Hölder's inequality needs nothing.
    static func upperTerms(_ ceilings: [BlockCeiling], scale s: Double, firstBlockMean: Double?, power p: Double = 1) -> [Double] {
        let supremum = ceilings.map { $0.upperLogBound(scale: s) }
        guard let first = firstBlockMean, !ceilings.isEmpty else { return supremum }
        var sampled = supremum
        sampled[0] = first
        if ceilings.count > 1 { sampled[1] = secondBlock(ceilings, scale: s, power: p) }
        return sampled.reduce(0, +) < supremum.reduce(0, +) ? sampled : supremum
    }

    /// The second block's term in Hölder's pair with the first block's p-th moment: its majorant at p = 1, else
    /// the bound on `(1/q) log E_{θ_1} M_2^q`, q = p/(p − 1) (`upperLogBound(scale:power:)`).
    static func secondBlock(_ ceilings: [BlockCeiling], scale s: Double, power p: Double) -> Double {
        p <= 1 ? ceilings[1].logBound(scale: s) : ceilings[1].upperLogBound(scale: s, power: p / (p - 1))
    }

    /// Hölder's exponent p for the first block's sampled moment at scale s: of p = 1, 1.05, …, 4, the one whose
    /// predicted pair `n_1 (log G_u + (1/p) log b_0) + secondBlock(p)` is least, b_0 the sampled bound's value
    /// were every draw 0 (where it sits when the unit's mean is far below its majorant). It reads no draw.
    static func holderPower(_ ceilings: [BlockCeiling], scale s: Double, units n1: Int, draws n: Int, delta: Double) -> Double {
        guard ceilings.count > 1, ceilings[1].mean != nil, n >= 2, delta > 0 else { return 1 }
        let floor = Foundation.log(unitMeanBound(mean: 0, variance: 0, count: n, delta: delta))
        let unit = ceilings[0].unitLogBound(scale: s)
        let predicted = { (p: Double) in Double(n1) * (unit + floor / p) + secondBlock(ceilings, scale: s, power: p) }
        // The least p wherever the gain is only rounding (a second block at its majorant for every q).
        var best = (p: 1.0, value: predicted(1))
        for k in 1...60 {
            let p = 1 + Double(k) / 20, value = predicted(p)
            if value < best.value - 1e-9 * Swift.max(1, Swift.abs(best.value)) { best = (p, value) }
        }
        return best.p
    }

    /// An upper bound on the mean of draws in [0, 1] with probability ≥ 1 − δ: the smaller of the empirical
    /// Bernstein and the Chernoff–Hoeffding bounds, each at δ/2.
    static func unitMeanBound(mean: Double, variance: Double, count n: Int, delta: Double) -> Double {
        Swift.min(EmpiricalBernstein.upperMean(mean: mean, variance: variance, count: n, range: 1, delta: delta / 2),
                  ChernoffHoeffding.upperMean(mean: mean, count: n, range: 1, delta: delta / 2))
    }

    /// A bound on `(1/p) log E_w g_u(w)^p` of one first-layer unit at each scale (the units are exchangeable: one
    /// bound serves every unit), p the scale's entry of `powers` (1 where nil), holding at every scale with
    /// probability ≥ 1 − `delta` each (docs/METHOD.md §19, "The first block, sampled"): `g_u ≤ G_u`, the unit's
    /// majorant (`unitBound`, its log), so `(g_u/G_u)^p` lies in [0, 1] and `unitMeanBound` bounds its mean from
    /// `draws` uniform draws of the unit's weights on the first block's `inputs` (streams "BRKT", 9, k; a ratio
    /// above 1 is a defect and an error there); nil where `draws` is fewer than `minimumUpperDraws`.
    func firstUnitMeanBounds(inputs: UnitInputs, box: ClosedRange<Double>, scales: [Double], powers: [Double]? = nil,
                             unitBound: (Double) -> Double,
                             seed: UInt64, delta: Double, draws n: Int, sharing: any WorkSharing = LocalSharing(),
                             threads: Int) async throws -> [Double]? {
        guard n >= Self.minimumUpperDraws, delta > 0 else { return nil }
        let p = unitParameterCount(block: 0)
        let me = self
        let logG = scales.map(unitBound)
        // Per draw, the unit's factor over its majorant at every scale.
        let ratios: [[Double]] = try await sharing.map(n, threads: threads) { k in
            var rng = Xoshiro256(seed: seed, stream: [Self.bracketStream, 9, UInt64(k)])
            let w = (0..<p).map { _ in rng.uniform(box.lowerBound, box.upperBound) }
            let roots = try me.unitRoots(w, inputs: inputs)
            return scales.indices.map { Foundation.exp(LogSpace.logDetSqrt(roots: roots, scale: scales[$0]) - logG[$0]) }
        }
        return try scales.indices.map { i in
            let p = powers?[i] ?? 1
            let x = ratios.map { $0[i] }
            for r in x where !(r >= -1e-9 && r <= 1 + 1e-9) {
                throw TwoScaleError.failure("internal error: a first-layer unit's factor lies \(Foundation.log(r)) nats above its proved majorant")
            }
            let moments = x.map { Foundation.pow(Swift.min(1, Swift.max(0, $0)), p) }
            let mean = moments.reduce(0, +) / Double(n)
            let variance = moments.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(n - 1)
            let u = Self.unitMeanBound(mean: mean, variance: variance, count: n, delta: delta)
            return logG[i] + Foundation.log(Swift.min(1, u)) / p
        }
    }

    /// The draws of the first-layer unit behind the sampled upper end: as many as about 10¹⁰ multiply-adds of
    /// its Fisher block allow (`rows` input patches of `parameters` entries; the Gram route below `parameters`
    /// rows), at most `maximumUpperDraws`.
    static func upperDraws(rows: Int, parameters p: Int) -> Int {
        let r = Double(rows), q = Double(p)
        let cost = r * q + (rows <= p ? r * r * r : r * q * q + q * q * q)
        return Swift.min(maximumUpperDraws, Int(1e10 / Swift.max(1, cost)))
    }

    /// The sampled upper end's draws: at most 2·10⁴, and none below 1 000 (there it could not beat the
    /// majorant by more than a few nats per unit).
    static let maximumUpperDraws = 20_000, minimumUpperDraws = 1_000

    /// An unbiased estimate of `Z(s)` and of stage 1's `Z_1` at every scale, as logarithms: the generic
    /// particle filter with frozen schedules on this network's layers (`StagedSMC.unbiasedLogZ`).
    func unbiasedLogZ(box: ClosedRange<Double>, scales: [Double], seed: UInt64, laterStages: Bool = true,
                      sharing: any WorkSharing = LocalSharing(), threads: Int) async throws
        -> (logZ: [Double: Double], logZ1: [Double: Double]) {
        try await MarkovSMC.Staged.unbiasedLogZ(model: self, box: box, seed: seed, scales: scales, laterStages: laterStages,
                                                 sharing: sharing, threads: threads)
    }
}
