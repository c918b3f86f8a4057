import Estimation
import Fisher
import Foundation
import Networks
import RandomStreams
import Samplers
import TwoScaleCore
import TwoScaleNumerics

/// The `smc` estimator of a network's 2sED and lower 2sED under the Markov FIM: `StagedSMC` on the
/// network's layers (a Gaussian layer's neurons and the softmax layer are the stages' exchangeable
/// units, `MarkovFisher: StagedModel`), then what only a network has: the Fisher rank over uniform
/// draws, the generic rank and the certified bracket (docs/ESTIMATORS.md, docs/METHOD.md §19).

public struct MarkovSMC: Sendable {
    /// The generic estimator on this network's layers: its model, box, seed and budget.
    public var staged: Staged

    public var model: MarkovFisher { staged.model }
    public var box: ClosedRange<Double> { staged.box }
    public var seed: UInt64 { staged.seed }
    public var paths: Int { staged.paths }
    public var inner: Int { staged.inner }
    /// How the independent items are shared out (this process's threads, or also MPI ranks).
    public var sharing: any WorkSharing {
        get { staged.sharing }
        set { staged.sharing = newValue }
    }

    /// Independence sweeps in stage 1 and the islands (`StagedSMC.independenceMoves`).
    public var independenceMoves: Bool {
        get { staged.independenceMoves }
        set { staged.independenceMoves = newValue }
    }

    /// Random-walk proposals under a degenerate layer's majorant tilt (`StagedSMC.tiltProposals`; 0: off).
    public var tiltProposals: Int {
        get { staged.tiltProposals }
        set { staged.tiltProposals = newValue }
    }

    /// Independent whole runs joined (`StagedSMC.chains`; 1: one run).
    public var chains: Int {
        get { staged.chains }
        set { staged.chains = newValue }
    }

    static let stream: UInt64 = 0x534D_434E  // "SMCN"

    /// The default budget (`ed`'s, with the smc estimator): K = 64 outer particles, J = 32 island particles.
    public static let defaultPaths = Staged.defaultPaths, defaultInner = Staged.defaultInner
    /// Stage 1: K·`stageOneParticles` particles per first-layer neuron, `defaultStageOneSweeps` sweeps per step.
    public static let stageOneParticles = Staged.stageOneParticles, defaultStageOneSweeps = Staged.defaultStageOneSweeps,
                      maximumStageOneSweeps = Staged.maximumStageOneSweeps
    /// The islands' schedule (`StagedSMC`).
    public static let islandESSFraction = Staged.islandESSFraction, defaultIslandSweeps = Staged.defaultIslandSweeps

    public typealias Staged = StagedSMC<MarkovFisher>

    public init(model: MarkovFisher, box: ClosedRange<Double>, seed: UInt64, paths: Int, inner: Int,
                traceDraws: Int, replicates: Int = 2, islandSweeps: Int = MarkovSMC.defaultIslandSweeps,
                stageOneSweeps: Int = MarkovSMC.defaultStageOneSweeps, moveProposals: Int = 0) throws {
        try Network.checkBox(box)
        staged = try Staged(model: model, box: box, seed: seed, paths: paths, inner: inner, traceDraws: traceDraws,
                            replicates: replicates, islandSweeps: islandSweeps, stageOneSweeps: stageOneSweeps,
                            moveProposals: moveProposals)
    }

    /// The budget the samplers can run with (`StagedSMC.checkBudget`).
    public static func checkBudget(paths: Int, inner: Int, traceDraws: Int, layers: Int, replicates: Int = 2,
                                   islandSweeps: Int = MarkovSMC.defaultIslandSweeps, stageOneSweeps: Int = MarkovSMC.defaultStageOneSweeps,
                                   moveProposals: Int = 0) throws {
        try Staged.checkBudget(paths: paths, inner: inner, traceDraws: traceDraws, layers: layers, replicates: replicates,
                               islandSweeps: islandSweeps, stageOneSweeps: stageOneSweeps, moveProposals: moveProposals)
    }

    /// The staged estimator's result (points, ĉ, stage-1 and island diagnostics) and what only a network has.
    public struct Result: Sendable {
        public var staged: Staged.Result
        public var points: [EpsilonEstimate] { staged.points }
        public var scale: Double { staged.scale }
        public var trace: TraceEstimate { staged.trace }
        public var stage1: SMCDiagnostics { staged.stage1 }
        public var islands: SMCDiagnostics { staged.islands }
        /// The Fisher rank per layer over `rankDraws` uniform draws.
        public var rank: FisherRank
        /// The generic rank (closed-form bound and witness): the ε → 0 limit's r when proved.
        public var generic: GenericRank
        /// The certified bracket at every ε, at this run's ĉ (`CertifiedBracket`).
        public var bracket: CertifiedBracket
    }

    /// Uniform parameter draws whose full Markov spectra give the Fisher rank.
    public static let rankDraws = 32

    /// The Fisher rank per layer from `rankDraws` uniform networks (full block spectra, stream 8).
    public func rankEstimate(threads: Int) async throws -> FisherRank {
        let me = self
        let raws: [[[Double]]] = try await sharing.map(Self.rankDraws, threads: threads) { k in
            var rng = Xoshiro256(seed: me.seed, stream: [Self.stream, 8, UInt64(k)])
            let net = Network.uniform(architecture: me.model.architecture, activation: me.model.activation, box: me.box, rng: &rng)
            return try (0..<me.model.blockDimensions.count).map { m in
                try me.model.blockEigenvalues(net, block: m, inputs: try me.model.blockInputs(net, block: m))
            }
        }
        let perDraw: [[Spectrum]] = try raws.map { raw in
            let scale = Spectrum.largestMagnitude(raw)
            return try raw.map { try Spectrum(eigenvalues: $0, scale: scale) }
        }
        return try FisherRank(perDraw: perDraw, parameters: model.blockDimensions,
                              layers: Array(1...model.blockDimensions.count))
    }

    /// ĉ from `traceDraws` uniform networks (`Tr F` needs no eigenproblem).
    public func traceEstimate(threads: Int) async throws -> TraceEstimate {
        try await staged.traceEstimate(threads: threads)
    }

    func stageOneSettings(units n: Int) throws -> SMCSettings { try staged.stageOneSettings(units: n) }
    static func stageOneTasks(units n: Int) -> Int { Staged.stageOneTasks(units: n) }
    func islandSettings(block m: Int) throws -> SMCSettings { try staged.islandSettings(block: m) }
    static func noiseShare(noise: [Double], logZ: [Double]) -> Double { Staged.noiseShare(noise: noise, logZ: logZ) }
    static func block(_ est: SMCUnitEstimate, units n: Int, stop t: Int)
        -> (logZ: Double, corrected: LogEstimate, log: LogEstimate, slope: Double, noise: Double) {
        Staged.block(est, units: n, stop: t)
    }

    /// The unit of block `inputs.block` as the sampler sees it: its roots, and its trace as the
    /// delayed-acceptance screen (docs/ESTIMATORS.md §2).
    func unit(inputs: UnitInputs) -> SMCUnit { model.smcUnit(inputs: inputs, box: box) }

    /// The n exchangeable units of block m given its inputs, as one pooled sampler over `stops`.
    func runBlock(_ m: Int, inputs x: Matrix, stops: [Double], settings: SMCSettings, stream: [UInt64],
                  keep: Bool) throws -> (units: Int, estimate: SMCUnitEstimate) {
        let n = model.units(block: m).count
        return (n, try staged.runBlock(unit(inputs: model.unitInputs(x, block: m)), units: n, stops: stops, settings: settings,
                                       stream: stream, keep: keep))
    }

    public func run(eps: [Double], zeta: Double, normalization: Normalization, lower: Bool, threads: Int,
                    progress: @escaping @Sendable (String) -> Void = { _ in }) async throws -> Result {
        let r = try await staged.run(eps: eps, zeta: zeta, normalization: normalization, lower: lower, threads: threads,
                                     progress: progress)
        progress("Fisher rank from \(Self.rankDraws) uniform draws")
        let rank = try await rankEstimate(threads: threads)
        progress("generic Fisher rank: closed-form bound and witness")
        let generic = try GenericRank(model: model, box: box, seed: seed)
        progress("certified bracket from \(CertifiedBracket.defaultDraws) uniform draws (and \(CertifiedBracket.traceDraws) of Tr F for c)")
        let bracket = try await model.certifiedBracket(box: box, eps: eps, zeta: zeta, normalization: normalization, seed: seed, sharing: sharing,
                                                       threads: threads)
        return Result(staged: r, rank: rank, generic: generic, bracket: bracket)
    }
}
