import Foundation
import Sampling
import TwoScaleCore
import TwoScaleNumerics
import TwoScaleFormats

extension MarkovFisher {
    static let bracketStream: UInt64 = 0x4252_4B54  // "BRKT"

    /// The model a run's settings describe (a spectra store's `meta.json`): its data read again from the
    /// same source, its noise drawn again from the same seed.
    public init(configuration c: NetworkRunConfiguration) throws {
        guard c.fisher == .markov, let sigma2 = c.sigma2, let r = c.noiseSamples else {
            throw TwoScaleError.failure("the settings describe the \(c.fisher.rawValue) FIM, not the Markov FIM")
        }
        let architecture = try Architecture(parsing: c.arch, bias: c.bias)
        let data = try DataSource.load(c.data, samples: c.samples, labels: LabelColumn(rawValue: c.labels) ?? .none,
                                       standardize: c.standardize, seed: c.seed, inputSize: architecture.inputSize,
                                       inputShape: architecture.inputShape)
        try self.init(architecture: architecture, activation: c.activation, data: data.inputs, sigma2: sigma2, noiseSamples: r,
                      noiseSeed: c.seed)
    }

    /// Unit u of block m's parameters in `net`, laid out as `setUnit` writes them.
    func unitParameters(_ net: Network, block m: Int, unit u: Int) -> [Double] {
        let layer = architecture.parametricLayers[m]
        let st = architecture.structure(layer: layer)
        let rows = m == blockDimensions.count - 1 ? Array(0..<st.units) : [u]
        return rows.flatMap { r in st.unitIndices(r).map { net.blocks[layer][$0] } }
    }

    /// The certified bracket of the 2sED and the lower 2sED at every ε (`CertifiedBracket`, docs/METHOD.md
    /// §19), for this model (its data and noise draws) at normalisation `scale` (c).
    ///
    /// The upper ends come from `blockCeilings`. The lower ends from `draws` uniform networks (streams
    /// "BRKT", 0, k, from `seed`): per draw, every first-layer unit's `log g_u` (n₁ draws of the unit) and
    /// each later block's `log G_m`, at every scale; each mean is bounded below at level δ/(L·E).
    public func certifiedBracket(box: ClosedRange<Double>, eps: [Double], zeta: Double, scale c: Double, seed: UInt64,
                                 draws: Int = CertifiedBracket.defaultDraws, delta: Double = CertifiedBracket.defaultDelta,
                                 laterStages: Bool = true, threads: Int) async throws -> CertifiedBracket {
        try ScaleParameters.checkZeta(zeta)
        for e in eps { try ScaleParameters.checkEpsilon(e) }
        guard c.isFinite, c >= 0 else { throw TwoScaleError.failure("bracket: the normalisation c = \(c) is not a finite number ≥ 0") }
        let ceilings = try blockCeilings(box: box)
        let L = blockDimensions.count
        let n1 = units(block: 0).count
        let me = self
        let first = unitInputs(data, block: 0)
        // Per draw: the roots of every first-layer unit, then of every later block (streams "BRKT", 0, k: the
        // Markov end's samplers use "BRKT", 1… of their own).
        let roots: [[[Double]]] = try await Parallel.map(draws, threads: threads) { k in
            var rng = Xoshiro256(seed: seed, stream: [Self.bracketStream, 0, UInt64(k)])
            let net = Network.uniform(architecture: me.architecture, activation: me.activation, box: box, rng: &rng)
            var out = try (0..<n1).map { u in try me.unitRoots(me.unitParameters(net, block: 0, unit: u), inputs: first) }
            let raw = try (1..<Swift.max(1, L)).map { m in try me.blockEigenvalues(net, block: m, inputs: try me.blockInputs(net, block: m)) }
            // The round-off rule's scale is the whole F(θ)'s largest eigenvalue (docs/METHOD.md §2).
            let top = out.flatMap { $0 }.map { $0 * $0 }.max() ?? 0
            let scale = Swift.max(top, Spectrum.largestMagnitude(raw))
            for eig in raw { out.append(try Spectrum(eigenvalues: eig, scale: scale).roots) }
            return out
        }
        // Half of δ for Jensen's ends (over L stages and E points), a quarter each for Markov's on Z and on Z_1
        // (over E points).
        let level = delta / 2 / Double(L * Swift.max(1, eps.count))
        let markovLevel = delta / 4 / Double(Swift.max(1, eps.count))
        let scales = eps.map { ScaleParameters.t(eps: $0, zeta: zeta) * c.squareRoot() }
        let markov = try await unbiasedLogZ(box: box, scales: scales, seed: seed, laterStages: laterStages, threads: threads)
        let d = architecture.parameterCount
        let points = try eps.enumerated().map { ei, e -> CertifiedBracket.Point in
            let s = scales[ei]
            let upper = ceilings.map { $0.logBound(scale: s) }
            let unitSamples = roots.flatMap { $0[0..<n1].map { LogSpace.logDetSqrt(roots: $0, scale: s) } }
            var lower = [Double(n1) * Swift.max(0, try EmpiricalBernstein.lowerMean(unitSamples, range: ceilings[0].unitLogBound(scale: s), delta: level))]
            for m in 1..<Swift.max(1, L) {
                let samples = roots.map { LogSpace.logDetSqrt(roots: $0[n1 + m - 1], scale: s) }
                lower.append(Swift.max(0, try EmpiricalBernstein.lowerMean(samples, range: upper[m], delta: level)))
            }
            // Markov: P(Ẑ ≥ Z/δ') ≤ δ' for the unbiased estimate of Z (all stages), and of Z_1 (stage 1).
            let level = Foundation.log(markovLevel)
            return CertifiedBracket.Point(eps: e, zeta: zeta, dimension: d, stageUpper: upper, stageLower: lower,
                                          markov: markov.logZ[s].map { Swift.max(0, $0 + level) },
                                          stageOneMarkov: Swift.max(0, markov.logZ1[s]! + level))
        }
        return CertifiedBracket(delta: delta, draws: draws, points: points)
    }

    /// The sampler of a block's unit given its inputs: its roots, screened by its trace (as the smc
    /// estimator's units, without gradients).
    func bracketUnit(_ inputs: UnitInputs, box: ClosedRange<Double>) -> SMCUnit {
        let me = self
        return SMCUnit(dimension: units(block: inputs.block).dimension, box: box,
                       roots: { w in try me.unitRoots(w, inputs: inputs) },
                       screen: { @Sendable w in me.unitTrace(w, inputs: inputs) })
    }

    /// An unbiased estimate `Ẑ(s)` of `Z(s) = E_θ Π_m G_m` at every scale, returned as its logarithm (the
    /// Markov lower end, docs/METHOD.md §19). Every sampler replays a fixed schedule (`FrozenSchedule`):
    ///
    /// * stage 1: one adaptive pilot of the first-layer unit, then one replay per unit on its own stream;
    ///   the product of their `Ẑ_u` is unbiased for `Z_1`, and their weighted populations for the
    ///   unnormalised law of θ_1;
    /// * later stages, per scale: `outerParticles` outer particles drawn from those populations (a unit's
    ///   weights picked independently per unit), an island per outer particle that replays, for each of the
    ///   block's units, one schedule piloted on the first outer particle's inputs (fixed with respect to
    ///   every island's own draws), the stage's factor `mean_k Ẑ_m^k`, and multinomial resampling in
    ///   proportion to `Ẑ_m^k` before the next stage, whose θ_m come from the islands' populations.
    ///
    /// This is a particle filter with unbiased weights (random-weight resampling, Fearnhead et al. 2008),
    /// so `Ẑ = Ẑ_1 Π_{m≥2} mean_k Ẑ_m^k` is unbiased for Z.
    /// Without `laterStages` only stage 1 runs (`logZ` is empty): the islands cost, per ε, about an eighth of
    /// the smc estimator's, which a plain run with a long ε grid would pay many times over.
    func unbiasedLogZ(box: ClosedRange<Double>, scales: [Double], seed: UInt64, laterStages: Bool = true, threads: Int) async throws
        -> (logZ: [Double: Double], logZ1: [Double: Double]) {
        let stops = Array(Set(scales)).sorted()
        let L = blockDimensions.count
        let B = CertifiedBracket.self
        let first = bracketUnit(unitInputs(data, block: 0), box: box)
        let stageOne = try SMCSettings(particles: B.unitParticles, replicates: 2, essFraction: 0.8, moves: B.unitSweeps)
        let schedule1 = try FrozenSchedule.pilot(first, stops: stops, settings: stageOne, seed: seed, stream: [Self.bracketStream, 1])
        let n1 = units(block: 0).count
        let stage1: [(logZ: [Double], populations: [SMCPopulation])] = try await Parallel.map(n1, threads: threads) { u in
            try schedule1.replayKeeping(first, stops: stops, particles: B.unitParticles, seed: seed, stream: [Self.bracketStream, 2, UInt64(u)])
        }
        let me = self
        var out: [Double: Double] = [:], outStage1: [Double: Double] = [:]
        for (t, s) in stops.enumerated() {
            var logZ = stage1.reduce(0) { $0 + $1.logZ[t] }
            outStage1[s] = logZ
            guard laterStages else { continue }
            if L > 1 {
                var nets: [Network] = (0..<B.outerParticles).map { k in
                    var rng = Xoshiro256(seed: seed, stream: [Self.bracketStream, 3, UInt64(t), UInt64(k)])
                    var net = zeroNetwork()
                    for u in 0..<n1 { setUnit(&net, block: 0, unit: u, parameters: Self.pick(stage1[u].populations[t], rng: &rng)) }
                    return net
                }
                for m in 1..<L {
                    let last = m == L - 1
                    let n = units(block: m).count
                    let pilotUnit = bracketUnit(unitInputs(try blockInputs(nets[0], block: m), block: m), box: box)
                    let islandSettings = try SMCSettings(particles: B.islandParticles, replicates: 2, essFraction: NetworkSMC.islandESSFraction,
                                                         moves: NetworkSMC.defaultIslandSweeps)
                    let schedule = try FrozenSchedule.pilot(pilotUnit, stops: [s], settings: islandSettings, seed: seed,
                                                            stream: [Self.bracketStream, 4, UInt64(t), UInt64(m)])
                    let current = nets
                    let islands: [(logZ: Double, net: Network)] = try await Parallel.map(current.count, threads: threads) { k in
                        var net = current[k]
                        let unit = me.bracketUnit(me.unitInputs(try me.blockInputs(net, block: m), block: m), box: box)
                        var rng = Xoshiro256(seed: seed, stream: [Self.bracketStream, 6, UInt64(t), UInt64(m), UInt64(k)])
                        var lz = 0.0
                        for u in 0..<n {
                            let r = try schedule.replayKeeping(unit, stops: [s], particles: B.islandParticles, seed: seed,
                                                               stream: [Self.bracketStream, 5, UInt64(t), UInt64(m), UInt64(k), UInt64(u)])
                            lz += r.logZ[0]
                            if !last { me.setUnit(&net, block: m, unit: u, parameters: Self.pick(r.populations[0], rng: &rng)) }
                        }
                        return (lz, net)
                    }
                    let lz = islands.map(\.logZ)
                    logZ += LogSpace.logMeanExp(lz)
                    if !last {
                        var rng = Xoshiro256(seed: seed, stream: [Self.bracketStream, 7, UInt64(t), UInt64(m)])
                        let w = LogSpace.normalizedWeights(logWeights: lz)
                        nets = (0..<islands.count).map { _ in islands[AnnealedSMC.pick(w, u: rng.uniform())].net }
                    }
                }
            }
            out[s] = logZ
        }
        return (out, outStage1)
    }

    /// One particle of a weighted population, drawn in proportion to its weight.
    static func pick(_ pop: SMCPopulation, rng: inout Xoshiro256) -> [Double] {
        let i = AnnealedSMC.pick(pop.weights, u: rng.uniform())
        let p = pop.x.count / pop.weights.count
        return Array(pop.x[(i * p)..<((i + 1) * p)])
    }
}

/// A measurement point that can carry a certified bracket (both estimators' points).
public protocol BracketedPoint {
    var eps: Double { get }
    var dZeta: Double { get }
    var dZetaLower: Double? { get set }
    var ci95Lower: ClosedRange<Double>? { get set }
    var bracket: CertifiedBracket.Point? { get set }
}

extension NetworkMeasurement.Point: BracketedPoint {}
extension NetworkSMCMeasurement.Point: BracketedPoint {}

/// A network measurement whose points take a bracket.
protocol BracketedMeasurement {
    associatedtype P: BracketedPoint
}

extension BracketedMeasurement {
    /// Puts each point's bracket beside it, lowers a lower 2sED (and its interval) that lies above the
    /// 2sED's bracket to its upper end (Jensen: lower 2sED ≤ 2sED ≤ hi), and returns what lies outside its
    /// bracket (`BracketCheck`), nil when nothing does.
    static func attach(_ b: CertifiedBracket, to points: inout [P]) -> BracketCheck? {
        var check = BracketCheck()
        for i in points.indices {
            guard let p = b.points.first(where: { $0.eps == points[i].eps }) else { continue }
            points[i].bracket = p
            check.inspect(eps: p.eps, estimate: points[i].dZeta, lower: points[i].dZetaLower, bracket: p)
            if let l = points[i].dZetaLower, l > p.dZeta.upperBound {
                points[i].dZetaLower = p.dZeta.upperBound
                points[i].ci95Lower = points[i].ci95Lower.map { Swift.min($0.lowerBound, p.dZeta.upperBound)...p.dZeta.upperBound }
            }
        }
        return check.isEmpty ? nil : check
    }
}
