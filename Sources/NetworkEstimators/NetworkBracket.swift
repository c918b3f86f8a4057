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
                                 laterStages: Bool = true, upperDraws: Int? = nil, tangentDraws: Int? = nil,
                                 sharing: any WorkSharing = LocalSharing(),
                                 threads: Int) async throws -> CertifiedBracket {
        try ScaleParameters.checkZeta(zeta)
        for e in eps { try ScaleParameters.checkEpsilon(e) }
        let ceilings = try blockCeilings(box: box)
        let L = blockDimensions.count
        // The first block's sampled upper end takes its share of δ only where its draws are made (decided by
        // the unit's cost, before any draw).
        let first = unitInputs(firstBlockInputs, block: 0)
        let nUpper = upperDraws ?? Self.upperDraws(rows: first.patches.rows, parameters: first.patches.cols)
        // Where the exact factor is too dear to draw (a convolution's channel), the first block keeps its majorant
        // and δ_u stays with the lower ends; elsewhere the tangent route is the alternative.
        let sampled = nUpper >= Self.minimumUpperDraws
        let nTangent = sampled && L > 1 ? tangentDraws ?? Self.tangentDraws(rows: first.patches.rows, parameters: first.patches.cols) : 0
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
        // The first block's sampled moment, by one of two routes per point (the unit's exact factor, or its tangent
        // majorant's many cheaper draws), one of two inequalities and Hölder's exponent, all chosen on pilot draws of
        // streams of their own, so the choice takes no share of δ.
        let logG = upperScales.map { ceilings[0].unitLogBound(scale: $0) }
        // The exact pilot also checks the tangent majorant against the factor at each of its draws.
        let tangents = nTangent >= Self.minimumUpperDraws ? try upperScales.map { try unitTangent(inputs: first, scale: $0) } : nil
        let exactPilot = nUpper >= Self.minimumUpperDraws
            ? try await firstUnitRatios(inputs: first, box: box, scales: upperScales, logG: logG, seed: seed, stream: 11,
                                        draws: Swift.min(nUpper, Self.pilotDraws), tangents: tangents, sharing: sharing,
                                        threads: threads) : nil
        let tangentPilot = nTangent >= Self.minimumUpperDraws
            ? try await firstUnitTangentRatios(inputs: first, box: box, scales: upperScales, logG: logG, seed: seed, stream: 12,
                                               draws: Swift.min(nTangent, Self.tangentPilotDraws), sharing: sharing, threads: threads) : nil
        // On an MLP of three blocks or more the plan also weighs the tilted chain (docs/METHOD.md §19).
        let chain = TiltedChain(ceilings: ceilings)
        let plan = upperScales.indices.map { e in
            Self.firstBlockPlan(ceilings, scale: upperScales[e], units: n1, logG: logG[e], delta: share.upper,
                                pilots: [exactPilot.map { ($0[e], nUpper) }, tangentPilot.map { ($0[e], nTangent) }],
                                tilted: sampled ? Self.tiltedSums(chain, scale: upperScales[e]) : [:])
        }
        let powers = plan.map { $0.power }, inequalities = plan.map { $0.inequality }
        let exactRoute = plan.contains { $0.route == 0 }
            ? try await firstUnitMeanBounds(inputs: first, box: box, scales: upperScales, powers: powers, inequalities: inequalities,
                                            unitBound: { ceilings[0].unitLogBound(scale: $0) }, seed: seed,
                                            delta: share.upper, draws: nUpper, sharing: sharing, threads: threads) : nil
        let tangentRoute = plan.contains { $0.route == 1 }
            ? try await firstUnitTangentBounds(inputs: first, box: box, scales: upperScales, powers: powers, inequalities: inequalities,
                                               unitBound: { ceilings[0].unitLogBound(scale: $0) }, seed: seed,
                                               delta: share.upper, draws: nTangent, sharing: sharing, threads: threads) : nil
        let firstUnit: [Double]? = sampled ? plan.indices.map { e in
            (plan[e].route == 0 ? exactRoute : tangentRoute)?[e] ?? logG[e]
        } : nil
        let d = architecture.parameterCount
        let points = try eps.enumerated().map { ei, e -> CertifiedBracket.Point in
            let s = scales[ei]
            let upper = Self.upperTerms(ceilings, scale: upperScales[ei], firstBlockMean: firstUnit.map { Double(n1) * $0[ei] },
                                        power: powers[ei], chain: chain)
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
    ///
    /// With `chain` (an MLP of three blocks or more), the later blocks' terms are also taken from the tilted chain
    /// (docs/METHOD.md §19, "Upper end, tilted"), paired with either first-block term; the least sum of the four wins.
    static func upperTerms(_ ceilings: [BlockCeiling], scale s: Double, firstBlockMean: Double?, power p: Double = 1,
                           chain: TiltedChain? = nil) -> [Double] {
        let supremum = ceilings.map { $0.upperLogBound(scale: s) }
        var options = [BlockCeiling.upperTerms(ceilings, scale: s, chain: chain)]
        if let first = firstBlockMean, !ceilings.isEmpty {
            var sampled = supremum
            sampled[0] = first
            if ceilings.count > 1 { sampled[1] = secondBlock(ceilings, scale: s, power: p) }
            options.append(sampled)
            if let chain { options.append([first] + chain.terms(scale: s, power: p <= 1 ? .infinity : p / (p - 1))) }
        }
        // The first least sum, so that without the chain the choice is the untilted one's.
        return options.dropFirst().reduce(options[0]) { $1.reduce(0, +) < $0.reduce(0, +) ? $1 : $0 }
    }

    /// The second block's term in Hölder's pair with the first block's p-th moment: its majorant at p = 1, else
    /// the bound on `(1/q) log E_{θ_1} M_2^q`, q = p/(p − 1) (`upperLogBound(scale:power:)`).
    static func secondBlock(_ ceilings: [BlockCeiling], scale s: Double, power p: Double) -> Double {
        p <= 1 ? ceilings[1].logBound(scale: s) : ceilings[1].upperLogBound(scale: s, power: p / (p - 1))
    }

    /// Hölder's exponent p at scale s for a first block whose bound on `(1/p) log E g_u^p` is predicted to be
    /// `unitMoment(p)`: of p = 1, 1.05, …, 4, the one whose pair `n_1 unitMoment(p) + secondBlock(p)` is least (the
    /// least p where the gain is only rounding), with that sum; p = 1 where the second block has no bound in the mean.
    ///
    /// `tilted[k]`, where given, is the tilted chain's sum for blocks 2 onwards at p = 1 + k/20 (`tiltedSums`); the pair
    /// then takes the smaller of it and the untilted sum.
    static func holderPower(_ ceilings: [BlockCeiling], scale s: Double, units n1: Int, tilted: [Int: Double] = [:],
                            unitMoment: (Double) -> Double) -> (power: Double, value: Double) {
        let rest = tilted.isEmpty ? 0 : ceilings.dropFirst(2).reduce(0) { $0 + $1.upperLogBound(scale: s) }
        func predicted(_ k: Int) -> Double {
            let p = 1 + Double(k) / 20
            let later = ceilings.count > 1 ? secondBlock(ceilings, scale: s, power: p) + rest : 0
            return Double(n1) * unitMoment(p) + Swift.min(later, tilted[k] ?? .infinity)
        }
        var best = (power: 1.0, value: predicted(0))
        guard ceilings.count > 1, ceilings[1].mean != nil else { return best }
        for k in 1...60 {
            let value = predicted(k)
            if value < best.value - 1e-9 * Swift.max(1, Swift.abs(best.value)) { best = (1 + Double(k) / 20, value) }
        }
        return best
    }

    /// The p = 1 + k/20 at which the plan also weighs the tilted chain (each sum costs a coordinate descent).
    static let tiltedPowers = [0, 1, 2, 4, 6, 10, 20, 40]

    /// The tilted chain's sum for blocks 2 onwards at each of `tiltedPowers` (q = p/(p − 1); at p = 1 the second
    /// block's supremum).
    static func tiltedSums(_ chain: TiltedChain?, scale s: Double) -> [Int: Double] {
        guard let chain else { return [:] }
        return Dictionary(uniqueKeysWithValues: tiltedPowers.map { k in
            let p = 1 + Double(k) / 20
            return (k, chain.terms(scale: s, power: k == 0 ? .infinity : p / (p - 1)).reduce(0, +))
        })
    }

    /// The first block's route (0: the exact factor, 1: its tangent majorant), inequality and Hölder's exponent at
    /// scale s: for each route with a pilot (its ratios `g/G` in [0, 1], and the draws the route will make) and each
    /// inequality, the bound it is predicted to reach at every p, as if its draws had the pilot's mean and
    /// variance; the least pair wins.
    static func firstBlockPlan(_ ceilings: [BlockCeiling], scale s: Double, units n1: Int, logG: Double, delta: Double,
                               pilots: [([Double], Int)?], tilted: [Int: Double] = [:]) -> (route: Int, power: Double, inequality: MeanInequality) {
        var best: (route: Int, power: Double, inequality: MeanInequality, value: Double)? = nil
        for (route, pilot) in pilots.enumerated() {
            guard let (ratios, draws) = pilot, ratios.count >= 2 else { continue }
            for inequality in MeanInequality.allCases {
                let unitMoment = { (p: Double) -> Double in
                    unitMomentLogBound(ratios: ratios, power: p, count: draws, logG: logG, delta: delta, inequality: inequality)
                }
                let h = holderPower(ceilings, scale: s, units: n1, tilted: tilted, unitMoment: unitMoment)
                if best == nil || h.value < best!.value - 1e-9 * Swift.max(1, Swift.abs(best!.value)) {
                    best = (route, h.power, inequality, h.value)
                }
            }
        }
        return best.map { ($0.route, $0.power, $0.inequality) } ?? (0, 1, .bernstein)
    }

    /// `log G_u + (1/p) log u`, u the `unitMeanBound` on the mean of `(g_u/G_u)^p` (at most 1) from `count` draws of
    /// that mean and sample variance: the bound on `(1/p) log E g_u^p` every route ends in.
    static func unitMomentLogBound(mean: Double, variance: Double, count n: Int, power p: Double, logG: Double, delta: Double,
                                   inequality: MeanInequality?) -> Double {
        logG + Foundation.log(Swift.min(1, unitMeanBound(mean: mean, variance: variance, count: n, delta: delta, inequality: inequality))) / p
    }

    /// `unitMomentLogBound` with the mean and sample variance of the ratios' p-th powers, as if `count` draws had them.
    static func unitMomentLogBound(ratios: [Double], power p: Double, count n: Int, logG: Double, delta: Double,
                                   inequality: MeanInequality?) -> Double {
        let x = ratios.map { Foundation.pow($0, p) }
        let mean = x.reduce(0, +) / Double(x.count)
        let variance = x.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(x.count - 1)
        return unitMomentLogBound(mean: mean, variance: variance, count: n, power: p, logG: logG, delta: delta, inequality: inequality)
    }

    /// The two bounds on a mean in [0, 1] that need only the range (`EmpiricalBernstein`, `ChernoffHoeffding`).
    enum MeanInequality: CaseIterable, Sendable { case bernstein, chernoffHoeffding }

    /// An upper bound on the mean of draws in [0, 1] with probability ≥ 1 − δ: by `inequality`, or where it is nil
    /// the smaller of the two, each at δ/2.
    static func unitMeanBound(mean: Double, variance: Double, count n: Int, delta: Double, inequality: MeanInequality? = nil) -> Double {
        switch inequality {
        case .bernstein?: EmpiricalBernstein.upperMean(mean: mean, variance: variance, count: n, range: 1, delta: delta)
        case .chernoffHoeffding?: ChernoffHoeffding.upperMean(mean: mean, count: n, range: 1, delta: delta)
        case nil: Swift.min(EmpiricalBernstein.upperMean(mean: mean, variance: variance, count: n, range: 1, delta: delta / 2),
                            ChernoffHoeffding.upperMean(mean: mean, count: n, range: 1, delta: delta / 2))
        }
    }

    /// A bound on `(1/p) log E_w g_u(w)^p` of one first-layer unit at each scale (the units are exchangeable: one
    /// bound serves every unit), p the scale's entry of `powers` (1 where nil), holding at every scale with
    /// probability ≥ 1 − `delta` each (docs/METHOD.md §19, "The first block, sampled"): `g_u ≤ G_u`, the unit's
    /// majorant (`unitBound`, its log), so `(g_u/G_u)^p` lies in [0, 1] and `unitMeanBound` (by the scale's entry
    /// of `inequalities`) bounds its mean from `draws` uniform draws of the unit's weights on the first block's
    /// `inputs` (streams "BRKT", 9, k; a ratio above 1 is a defect and an error there); nil where `draws` is fewer
    /// than `minimumUpperDraws`.
    func firstUnitMeanBounds(inputs: UnitInputs, box: ClosedRange<Double>, scales: [Double], powers: [Double]? = nil,
                             inequalities: [MeanInequality]? = nil, unitBound: (Double) -> Double,
                             seed: UInt64, delta: Double, draws n: Int, sharing: any WorkSharing = LocalSharing(),
                             threads: Int) async throws -> [Double]? {
        guard n >= Self.minimumUpperDraws, delta > 0 else { return nil }
        let logG = scales.map(unitBound)
        let ratios = try await firstUnitRatios(inputs: inputs, box: box, scales: scales, logG: logG, seed: seed, stream: 9, draws: n,
                                               sharing: sharing, threads: threads)
        return scales.indices.map { i in
            Self.unitMomentLogBound(ratios: ratios[i], power: powers?[i] ?? 1, count: n, logG: logG[i], delta: delta,
                                    inequality: inequalities?[i])
        }
    }

    /// Per scale, `g_u/G_u` at `draws` uniform draws of one first-layer unit's weights (streams "BRKT", `stream`, k),
    /// clipped to [0, 1]; a ratio above 1 beyond round-off is a defect and an error, and so is, with `tangents` (one
    /// per scale), a draw whose factor lies above its tangent majorant.
    func firstUnitRatios(inputs: UnitInputs, box: ClosedRange<Double>, scales: [Double], logG: [Double], seed: UInt64, stream: UInt64,
                         draws n: Int, tangents: [UnitTangent]? = nil, sharing: any WorkSharing = LocalSharing(),
                         threads: Int) async throws -> [[Double]] {
        let p = unitParameterCount(block: 0)
        let me = self
        let ratios: [[Double]] = try await sharing.map(n, threads: threads) { k in
            var rng = Xoshiro256(seed: seed, stream: [Self.bracketStream, stream, UInt64(k)])
            let w = (0..<p).map { _ in rng.uniform(box.lowerBound, box.upperBound) }
            let roots = try me.unitRoots(w, inputs: inputs)
            return try scales.indices.map { e in
                let g = LogSpace.logDetSqrt(roots: roots, scale: scales[e])
                if let t = tangents?[e] {
                    let bound = me.tangentLogBound(t, weights: w, inputs: inputs)
                    guard bound >= g - 1e-9 * Swift.max(1, Swift.abs(g)) else {
                        throw TwoScaleError.failure("internal error: a first-layer unit's factor lies \(g - bound) nats above its tangent majorant")
                    }
                }
                return Foundation.exp(g - logG[e])
            }
        }
        return try scales.indices.map { i in
            try ratios.map { r in
                guard r[i] >= -1e-9 && r[i] <= 1 + 1e-9 else {
                    throw TwoScaleError.failure("internal error: a first-layer unit's factor lies \(Foundation.log(r[i])) nats above its proved majorant")
                }
                return Swift.min(1, Swift.max(0, r[i]))
            }
        }
    }

    /// The draws of the exact route's pilot and of the tangent route's.
    static let pilotDraws = 256, tangentPilotDraws = 16_384

    /// The tangent route of the first block's sampled moment (docs/METHOD.md §19, "The first block, sampled"): the
    /// bound of `firstUnitMeanBounds` on `min(ĝ, G_u)` in place of `g_u`, ĝ the unit's tangent majorant
    /// (`unitTangent`), which needs only the pre-activations, so it affords many more draws (streams "BRKT", 10,
    /// chunk; the chunks' moments merged in order, so the result does not depend on the threads); nil where
    /// `draws` is fewer than `minimumUpperDraws`.
    func firstUnitTangentBounds(inputs: UnitInputs, box: ClosedRange<Double>, scales: [Double], powers: [Double]? = nil,
                                inequalities: [MeanInequality]? = nil, unitBound: (Double) -> Double, seed: UInt64, delta: Double, draws n: Int,
                                sharing: any WorkSharing = LocalSharing(), threads: Int) async throws -> [Double]? {
        guard n >= Self.minimumUpperDraws, delta > 0 else { return nil }
        let tangents = try scales.map { try unitTangent(inputs: inputs, scale: $0) }
        let logG = scales.map(unitBound)
        let pw = scales.indices.map { powers?[$0] ?? 1 }
        let chunk = Self.tangentChunk(rows: inputs.patches.rows)
        let chunks = (n + chunk - 1) / chunk
        let me = self
        // Per chunk and scale: the count, mean and summed squared deviations of `(min(ĝ, G)/G)^p` (Welford).
        let parts: [[[Double]]] = try await sharing.map(chunks, threads: threads) { c in
            let ratios = me.tangentChunkRatios(inputs: inputs, tangents: tangents, logG: logG, box: box, seed: seed, stream: 10,
                                               chunk: c, draws: Swift.min(chunk, n - c * chunk))
            return scales.indices.map { e in
                var out = [0.0, 0.0, 0.0]
                for r in ratios[e] {
                    let x = Foundation.pow(r, pw[e])
                    out[0] += 1
                    let d = x - out[1]
                    out[1] += d / out[0]
                    out[2] += d * (x - out[1])
                }
                return out
            }
        }
        return scales.indices.map { e in
            var count = 0.0, mean = 0.0, m2 = 0.0
            for part in parts {
                let nb = part[e][0], total = count + nb, d = part[e][1] - mean
                mean += d * nb / total
                m2 += part[e][2] + d * d * count * nb / total
                count = total
            }
            return Self.unitMomentLogBound(mean: Swift.min(1, Swift.max(0, mean)), variance: Swift.max(0, m2 / (count - 1)), count: n,
                                           power: pw[e], logG: logG[e], delta: delta, inequality: inequalities?[e])
        }
    }

    /// Per scale, `min(ĝ, G_u)/G_u` at `draws` uniform weights of chunk c (streams "BRKT", `stream`, c).
    func tangentChunkRatios(inputs: UnitInputs, tangents: [UnitTangent], logG: [Double], box: ClosedRange<Double>, seed: UInt64,
                            stream: UInt64, chunk c: Int, draws m: Int) -> [[Double]] {
        let xa = inputs.patches, rows = xa.rows, p = xa.cols
        var rng = Xoshiro256(seed: seed, stream: [Self.bracketStream, stream, UInt64(c)])
        var w = Matrix(rows: m, cols: p)
        for i in 0..<(m * p) { w.data[i] = rng.uniform(box.lowerBound, box.upperBound) }
        let z = BLAS.product(w, xa, transB: true)
        var a = [Double](repeating: 0, count: rows)
        var out = tangents.map { _ in [Double](repeating: 0, count: m) }
        for j in 0..<m {
            for i in 0..<rows { let d = activation.derivative(z.data[j * rows + i]); a[i] = d * d }
            for e in tangents.indices { out[e][j] = Foundation.exp(Swift.min(tangents[e].logBound(weights: a), logG[e]) - logG[e]) }
        }
        return out
    }

    /// Per scale, the tangent route's ratios `min(ĝ, G_u)/G_u` at `draws` weights (streams "BRKT", `stream`, chunk).
    func firstUnitTangentRatios(inputs: UnitInputs, box: ClosedRange<Double>, scales: [Double], logG: [Double], seed: UInt64, stream: UInt64,
                                draws n: Int, sharing: any WorkSharing = LocalSharing(), threads: Int) async throws -> [[Double]] {
        let tangents = try scales.map { try unitTangent(inputs: inputs, scale: $0) }
        let chunk = Self.tangentChunk(rows: inputs.patches.rows)
        let me = self
        let parts: [[[Double]]] = try await sharing.map((n + chunk - 1) / chunk, threads: threads) { c in
            me.tangentChunkRatios(inputs: inputs, tangents: tangents, logG: logG, box: box, seed: seed, stream: stream, chunk: c,
                                  draws: Swift.min(chunk, n - c * chunk))
        }
        return scales.indices.map { e in parts.flatMap { $0[e] } }
    }

    /// Weights per chunk of the tangent route: at most 4 096, and at most 2²² pre-activations.
    static func tangentChunk(rows: Int) -> Int { Swift.max(1, Swift.min(4096, (1 << 22) / Swift.max(1, rows))) }

    /// The tangent route's draws: as many as about 10¹¹ multiply-adds of the pre-activations allow, at most 10⁷.
    static func tangentDraws(rows: Int, parameters p: Int) -> Int {
        Swift.min(maximumTangentDraws, Int(1e11 / Swift.max(1, Double(rows) * Double(p + 2))))
    }

    static let maximumTangentDraws = 10_000_000

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
