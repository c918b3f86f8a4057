import Foundation
import Samplers
import TwoScaleCore

/// A staged toy family (`toy`): the exact 2sED and lower 2sED of an `ExactStagedToy` (the layered toy, or any
/// `StagedToyFamilies` finds) at each ε, the limit outer ESS fraction, and with `Setting.monteCarlo` the smc
/// estimator (`StagedSMC`, the code that measures networks) beside them over one or more trials.
public struct StagedToyMeasurement<Model: ExactStagedToy>: Sendable, Encodable {
    public struct Point: Sendable, Encodable {
        public var eps: Double
        public var dZeta: Double
        public var dZetaLower: Double
        /// Per stage m ≥ 2, `(E_{π_{<m}} Z_m)² / E_{π_{<m}} Z_m²`: the ESS per outer particle that draws of the
        /// earlier stages weighted by stage m reach as K → ∞ (exact).
        public var stageOuterEssFraction: [Double]
        /// Their product, the path's (two stages: stage 2's).
        public var outerEssFraction: Double { stageOuterEssFraction.reduce(1, *) }
        /// The exact stage terms of the 2sED: `log Z_1`, then `log E_{π_{<m}} Z_m` (raw log-determinants).
        public var stageLogZ: [Double]
        /// With `Setting.monteCarlo`: its keys sit beside the exact ones (as the other toys' do).
        public var monteCarlo: MonteCarloPoint?

        enum CodingKeys: String, CodingKey { case eps, dZeta, dZetaLower, outerEssFraction, stageOuterEssFraction, stageLogZ }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(eps, forKey: .eps)
            try c.encode(dZeta, forKey: .dZeta)
            try c.encode(dZetaLower, forKey: .dZetaLower)
            try c.encode(outerEssFraction, forKey: .outerEssFraction)
            if stageOuterEssFraction.count > 1 { try c.encode(stageOuterEssFraction, forKey: .stageOuterEssFraction) }
            try c.encode(stageLogZ, forKey: .stageLogZ)
            try monteCarlo?.encode(to: encoder)
        }
    }

    /// The smc estimate at one ε: the first trial's estimates and intervals, its outer ESS (fraction of K),
    /// and over all trials how often each 95% interval held the exact value.
    public struct MonteCarloPoint: Sendable, Encodable {
        public var dZetaMc: Double
        public var ci95Mc: ClosedRange<Double>
        public var errorMc: Double
        public var dZetaLowerMc: Double?
        public var ci95LowerMc: ClosedRange<Double>?
        public var errorLowerMc: Double?
        public var stageEssFraction: [Double]
        public var stageIslandNoise: [Double]
        /// The sample variance of the outer log-weights per stage m ≥ 2 (nats²).
        public var stageLogVarMc: [Double]
        /// With two or more later stages: the first trial's island size J and islands' mean noise σ̄² per stage.
        public var stageIslandInner: [Int] = []
        public var stageIslandNoiseVar: [Double] = []
        /// The estimator's stage terms (bias-corrected logs) and their errors against the exact ones.
        public var stageLogZMc: [Double]
        public var stageErrorMc: [Double]
        /// With `Setting.outerMoves`: what moving stage 1 did (first trial); else empty.
        public var stageMoves: [OuterMoveDiagnostics] = []
        /// With `Setting.tiltMoves`: what the majorant tilt did per later stage (first trial); else empty.
        public var stageTilt: [TiltDiagnostics] = []
        public var trials: Int?
        public var covered: Int?
        public var coveredLower: Int?
        public var mcBias: Double?
        public var mcSd: Double?
        public var meanHalfWidth: Double?
        public var mcBiasLower: Double?
        /// The largest outer ESS fraction over the trials.
        public var maxStageEssFraction: Double?
        /// The first trial's certified brackets (c inside: its interval from the bracket's own trace draws), and
        /// over the trials how often each held the exact value.
        public var dZetaBracket: ClosedRange<Double>
        public var dZetaLowerBracket: ClosedRange<Double>
        public var bracketCovered: Int?
        public var bracketCoveredLower: Int?
        /// The first trial's reported intervals (`ReportedInterval`: the sampled one where the diagnostics
        /// let it stand, else the bracket), and over the trials how often each held the exact value and
        /// how many fell back to the bracket.
        public var intervalMc: ReportedInterval
        public var intervalLowerMc: ReportedInterval?
        public var coveredInterval: Int?
        public var coveredIntervalLower: Int?
        public var bracketFallbacks: Int?
        /// Among the trials whose reported interval is the sampled one, how many held the exact value (2sED;
        /// lower 2sED, whose own fallbacks are `bracketFallbacksLower`).
        public var coveredSampled: Int?
        public var coveredSampledLower: Int?
        public var bracketFallbacksLower: Int?
        /// Over the trials, the median width of the reported interval relative to the exact value,
        /// `(hi − lo) / exact` (2sED and lower 2sED).
        public var medianIntervalWidth: Double?
        public var medianIntervalLowerWidth: Double?
        /// With `Setting.joint`: joint tempering's 2sED and interval (first trial), and its coverage over trials.
        public var dZetaJointMc: Double?
        public var ci95JointMc: ClosedRange<Double>?
        public var errorJointMc: Double?
        public var coveredJoint: Int?
        public var mcBiasJoint: Double?
        public var mcSdJoint: Double?
        /// With `Setting.joint`: its reverse pass's 2sED and interval and the interval to read (first trial:
        /// `ReportedInterval.bidirectional`), and over the trials how often that interval held and its median
        /// width relative to the exact value.
        public var dZetaReverseJointMc: Double?
        public var ci95ReverseJointMc: ClosedRange<Double>?
        public var intervalJointMc: ReportedInterval?
        public var coveredJointInterval: Int?
        public var medianJointIntervalWidth: Double?
        /// With `Setting.joint`: the lower 2sED with the earlier layers drawn by joint tempering
        /// (`TemperedLower`): first trial's value, interval and error, and over the trials its coverage, mean
        /// error and median interval width relative to the exact value.
        public var dZetaLowerJointMc: Double?
        public var ci95LowerJointMc: ClosedRange<Double>?
        public var errorLowerJointMc: Double?
        public var coveredLowerJoint: Int?
        public var mcBiasLowerJoint: Double?
        public var medianJointLowerWidth: Double?
        /// With `Setting.joint`: the tempered lower 2sED's interval to read (first trial:
        /// `ReportedInterval.temperedLower`) and its islands' J and noise per later stage, and over the trials
        /// how often that interval held and how often it was the bracket.
        public var intervalLowerJointMc: ReportedInterval?
        public var stageIslandInnerLowerJoint: [Int]?
        public var stageIslandNoiseVarLowerJoint: [Double]?
        /// The pilot's σ̄² at the J the islands ran at (`EpsilonEstimate.islandNoiseVarianceSized`).
        public var stageIslandNoiseVarSizedLowerJoint: [Double]?
        /// Replicates whose islands stopped at the sizing's cap above its target (`EpsilonEstimate.islandReplicatesCapped`).
        public var stageIslandReplicatesCappedLowerJoint: [Int]?
        /// With `Setting.joint`: the smallest decorrelation of stage 1's moves behind it (first trial).
        public var stage1DecorrelationLowerJoint: Double?
        public var coveredLowerJointInterval: Int?
        public var bracketFallbacksLowerJoint: Int?

        enum CodingKeys: String, CodingKey {
            case dZetaMc, ci95Mc, errorMc, dZetaLowerMc, ci95LowerMc, errorLowerMc, stageEssFraction, stageIslandNoise,
                 stageLogVarMc, stageLogZMc, stageErrorMc, trials, covered, coveredLower, mcBias, mcSd, meanHalfWidth, mcBiasLower,
                 maxStageEssFraction, dZetaBracket, dZetaLowerBracket, bracketCovered, bracketCoveredLower,
                 coveredInterval, coveredIntervalLower, bracketFallbacks, coveredSampled, coveredSampledLower,
                 bracketFallbacksLower, medianIntervalWidth, medianIntervalLowerWidth, dZetaJointMc, ci95JointMc, errorJointMc,
                 coveredJoint, mcBiasJoint, mcSdJoint, dZetaReverseJointMc, ci95ReverseJointMc, coveredJointInterval,
                 medianJointIntervalWidth, stageMoves, stageTilt, stageIslandInner, stageIslandNoiseVar, dZetaLowerJointMc,
                 ci95LowerJointMc, errorLowerJointMc, coveredLowerJoint, mcBiasLowerJoint, medianJointLowerWidth,
                 stageIslandInnerLowerJoint, stageIslandNoiseVarLowerJoint, stageIslandNoiseVarSizedLowerJoint, stage1DecorrelationLowerJoint, coveredLowerJointInterval,
                 bracketFallbacksLowerJoint, stageIslandReplicatesCappedLowerJoint
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(dZetaMc, forKey: .dZetaMc)
            try c.encode(ci95Mc, forKey: .ci95Mc)
            try c.encode(errorMc, forKey: .errorMc)
            try c.encodeIfPresent(dZetaLowerMc, forKey: .dZetaLowerMc)
            try c.encodeIfPresent(ci95LowerMc, forKey: .ci95LowerMc)
            try c.encodeIfPresent(errorLowerMc, forKey: .errorLowerMc)
            var r = encoder.container(keyedBy: ResultKey.self)
            try intervalMc.encode(into: &r, key: "interval_mc")
            try intervalLowerMc?.encode(into: &r, key: "interval_lower_mc")
            try c.encode(stageEssFraction, forKey: .stageEssFraction)
            try c.encode(stageIslandNoise, forKey: .stageIslandNoise)
            try c.encode(stageLogVarMc, forKey: .stageLogVarMc)
            if !stageIslandInner.isEmpty { try c.encode(stageIslandInner, forKey: .stageIslandInner) }
            if !stageIslandNoiseVar.isEmpty { try c.encode(stageIslandNoiseVar, forKey: .stageIslandNoiseVar) }
            try c.encode(stageLogZMc, forKey: .stageLogZMc)
            try c.encode(stageErrorMc, forKey: .stageErrorMc)
            if !stageMoves.isEmpty { try c.encode(stageMoves, forKey: .stageMoves) }
            if !stageTilt.isEmpty { try c.encode(stageTilt, forKey: .stageTilt) }
            try c.encodeIfPresent(trials, forKey: .trials)
            try c.encodeIfPresent(covered, forKey: .covered)
            try c.encodeIfPresent(coveredLower, forKey: .coveredLower)
            try c.encodeIfPresent(mcBias, forKey: .mcBias)
            try c.encodeIfPresent(mcSd, forKey: .mcSd)
            try c.encodeIfPresent(meanHalfWidth, forKey: .meanHalfWidth)
            try c.encodeIfPresent(mcBiasLower, forKey: .mcBiasLower)
            try c.encodeIfPresent(maxStageEssFraction, forKey: .maxStageEssFraction)
            try c.encode(dZetaBracket, forKey: .dZetaBracket)
            try c.encode(dZetaLowerBracket, forKey: .dZetaLowerBracket)
            try c.encodeIfPresent(bracketCovered, forKey: .bracketCovered)
            try c.encodeIfPresent(bracketCoveredLower, forKey: .bracketCoveredLower)
            try c.encodeIfPresent(coveredInterval, forKey: .coveredInterval)
            try c.encodeIfPresent(coveredIntervalLower, forKey: .coveredIntervalLower)
            try c.encodeIfPresent(bracketFallbacks, forKey: .bracketFallbacks)
            try c.encodeIfPresent(coveredSampled, forKey: .coveredSampled)
            try c.encodeIfPresent(coveredSampledLower, forKey: .coveredSampledLower)
            try c.encodeIfPresent(bracketFallbacksLower, forKey: .bracketFallbacksLower)
            try c.encodeIfPresent(medianIntervalWidth, forKey: .medianIntervalWidth)
            try c.encodeIfPresent(medianIntervalLowerWidth, forKey: .medianIntervalLowerWidth)
            try c.encodeIfPresent(dZetaJointMc, forKey: .dZetaJointMc)
            try c.encodeIfPresent(ci95JointMc, forKey: .ci95JointMc)
            try c.encodeIfPresent(errorJointMc, forKey: .errorJointMc)
            try c.encodeIfPresent(coveredJoint, forKey: .coveredJoint)
            try c.encodeIfPresent(mcBiasJoint, forKey: .mcBiasJoint)
            try c.encodeIfPresent(mcSdJoint, forKey: .mcSdJoint)
            try c.encodeIfPresent(dZetaReverseJointMc, forKey: .dZetaReverseJointMc)
            try c.encodeIfPresent(ci95ReverseJointMc, forKey: .ci95ReverseJointMc)
            try intervalJointMc?.encode(into: &r, key: "interval_joint_mc")
            try c.encodeIfPresent(coveredJointInterval, forKey: .coveredJointInterval)
            try c.encodeIfPresent(medianJointIntervalWidth, forKey: .medianJointIntervalWidth)
            try c.encodeIfPresent(dZetaLowerJointMc, forKey: .dZetaLowerJointMc)
            try c.encodeIfPresent(ci95LowerJointMc, forKey: .ci95LowerJointMc)
            try c.encodeIfPresent(errorLowerJointMc, forKey: .errorLowerJointMc)
            try c.encodeIfPresent(coveredLowerJoint, forKey: .coveredLowerJoint)
            try c.encodeIfPresent(mcBiasLowerJoint, forKey: .mcBiasLowerJoint)
            try c.encodeIfPresent(medianJointLowerWidth, forKey: .medianJointLowerWidth)
            try intervalLowerJointMc?.encode(into: &r, key: "interval_lower_joint_mc")
            try c.encodeIfPresent(stageIslandInnerLowerJoint, forKey: .stageIslandInnerLowerJoint)
            try c.encodeIfPresent(stageIslandNoiseVarLowerJoint, forKey: .stageIslandNoiseVarLowerJoint)
            try c.encodeIfPresent(stageIslandNoiseVarSizedLowerJoint, forKey: .stageIslandNoiseVarSizedLowerJoint)
            try c.encodeIfPresent(stageIslandReplicatesCappedLowerJoint, forKey: .stageIslandReplicatesCappedLowerJoint)
            try c.encodeIfPresent(stage1DecorrelationLowerJoint, forKey: .stage1DecorrelationLowerJoint)
            try c.encodeIfPresent(coveredLowerJointInterval, forKey: .coveredLowerJointInterval)
            try c.encodeIfPresent(bracketFallbacksLowerJoint, forKey: .bracketFallbacksLowerJoint)
        }
    }

    public struct MonteCarloSummary: Sendable, Encodable {
        public var estimator: EstimatorKind
        public var paths: Int
        public var inner: Int
        public var seed: UInt64
        public var trials: Int
        public var traceDraws: Int
        public var mcScale: Double
        /// The brackets' δ and uniform draws.
        public var bracketDelta: Double
        public var bracketDraws: Int
        public var smc: Diagnostics
        /// With `Setting.joint`: its Metropolis sweeps per tempering step.
        public var jointSweeps: Int? = nil
        /// Stage 1's sweeps per step, where not the default (`StagedSMC.defaultStageOneSweeps`).
        public var stage1Sweeps: Int? = nil
        /// true with independence sweeps (`StagedSMC.independenceMoves`); absent when off.
        public var independenceMoves: Bool? = nil
        /// The independent runs joined (`StagedSMC.chains`), where more than one.
        public var chains: Int? = nil
        public struct Diagnostics: Sendable, Encodable {
            public var stage1: SMCDiagnostics.Summary
            public var islands: SMCDiagnostics.Summary
        }
    }

    /// The family's name (the results' `family` key).
    public var family: String
    public var model: Model
    public var zeta: Double
    public var normalization: Normalization
    /// The exact normalisation constant c.
    public var scale: Double
    public var points: [Point]
    public var monteCarlo: MonteCarloSummary?

    enum CodingKeys: String, CodingKey {
        case family, dimension, stageUnits, box, zeta, normalization, scale, meanTrace, points, monteCarlo
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(family, forKey: .family)
        try c.encode(model.parameterCount, forKey: .dimension)
        try c.encode(model.stageUnits.map { ["count": $0.count, "dimension": $0.dimension] }, forKey: .stageUnits)
        try c.encode([model.box.lowerBound, model.box.upperBound], forKey: .box)
        var own = encoder.container(keyedBy: ResultKey.self)
        for (name, value) in model.parameters { try own.encode(value, forKey: ResultKey(name)) }
        try c.encode(zeta, forKey: .zeta)
        try c.encode(normalization, forKey: .normalization)
        try c.encode(scale, forKey: .scale)
        try c.encode(model.meanTrace, forKey: .meanTrace)
        try c.encode(points, forKey: .points)
        try c.encodeIfPresent(monteCarlo, forKey: .monteCarlo)
    }

    /// The exact values at every ε.
    public static func measure(family: String, model: Model, eps: [Double], zeta: Double, normalization: Normalization) throws -> Self {
        let points = try eps.map { e -> Point in
            let x = try model.exact(eps: e, zeta: zeta, normalization: normalization)
            return Point(eps: e, dZeta: x.dZeta, dZetaLower: x.dZetaLower, stageOuterEssFraction: x.stageOuterESSFraction,
                         stageLogZ: x.stageLogZ, monteCarlo: nil)
        }
        return StagedToyMeasurement(family: family, model: model, zeta: zeta, normalization: normalization,
                                     scale: try model.scale(normalization), points: points, monteCarlo: nil)
    }

    /// The fewest coordinates of a unit on which `toy` turns the independence sweeps on by default.
    public static var wideUnitCoordinates: Int { 100 }

    /// Whether `toy` runs the smc estimator with independence sweeps where the command line leaves
    /// `Setting.independenceMoves` unset: where some stage's units have `wideUnitCoordinates` coordinates or more.
    /// There the random walk's few sweeps per step barely move a unit, and its estimate came out low on every
    /// exact case measured (docs/ESTIMATORS.md §2); on networks no gain was measured, so `ed` keeps them off.
    public static func independenceMovesByDefault(_ model: Model) -> Bool {
        model.stageUnits.contains { $0.dimension >= wideUnitCoordinates }
    }

    /// `trials` runs of the smc estimator (trial i with seed `seed + i`) beside the exact values. Returns the
    /// first trial's points with their brackets and reported intervals (what `PrecisionTarget` reads).
    @discardableResult
    public mutating func runMonteCarlo(paths: Int, inner: Int, seed: UInt64, trials: Int, traceDraws: Int?, islandSweeps: Int,
                                       stageOneSweeps: Int = StagedSMC<Model>.defaultStageOneSweeps,
                                       moveProposals: Int = 0, tiltProposals: Int = 0, chains: Int = 1, independenceMoves: Bool = false, joint: Bool = false, jointSweeps: Int? = nil, threads: Int, progress: @escaping @Sendable (String) -> Void = { _ in }) async throws -> [EpsilonEstimate] {
        let eps = points.map(\.eps)
        let draws = traceDraws ?? TraceEstimate.defaultDraws(parameters: model.parameterCount)
        // One trial: the smc run, its certified bracket and, with `joint`, joint tempering.
        let model = self.model, zeta = self.zeta, normalization = self.normalization
        @Sendable func trial(_ i: Int, threads: Int, say: @escaping @Sendable (String) -> Void) async throws
            -> (StagedSMC<Model>.Result, CertifiedBracket, [EpsilonEstimate]?) {
            var smc = try StagedSMC<Model>(model: model, box: model.box, seed: seed &+ UInt64(i), paths: paths, inner: inner,
                                    traceDraws: draws, islandSweeps: islandSweeps, stageOneSweeps: stageOneSweeps,
                                    moveProposals: moveProposals)
            smc.independenceMoves = independenceMoves
            smc.tiltProposals = tiltProposals
            smc.chains = chains
            let r = try await smc.run(eps: eps, zeta: zeta, normalization: normalization, lower: true, threads: threads, progress: say)
            // The bracket as on networks: c's interval from trace draws of its own.
            let bracket = try await smc.certifiedBracket(eps: eps, zeta: zeta, normalization: normalization, threads: threads)
            guard joint else { return (r, bracket, nil) }
            // Joint tempering at the same ĉ, on streams of its own.
            let (c, varLogC) = try r.trace.scale(normalization, dimension: model.parameterCount)
            let sOf = eps.map { ScaleParameters.t(eps: $0, zeta: zeta) * c.squareRoot() }
            let stops = Array(Set(sOf)).sorted()
            var joint = try JointSMC(model: model, box: model.box, seed: seed &+ UInt64(i), particles: paths, sweeps: jointSweeps)
            joint.progress = say
            let j = try await joint.run(stops: stops, threads: threads)
            // The lower 2sED, its later stages' earlier layers drawn by tempering (`TemperedLower`), its islands from
            // the default J as the tempering estimator takes them on networks, whatever `inner`: below it, islands
            // whose noise passes the gate still fall short by more than their interval (docs/ESTIMATORS.md §8).
            var lowerRun = smc
            lowerRun.inner = StagedSMC<Model>.defaultInner
            let tl = try await lowerRun.temperedLower(stops: stops, particles: paths, replicates: joint.replicates, sweeps: jointSweeps,
                                                      islands: Swift.max(1, paths / joint.replicates), threads: threads, progress: say)
            return (r, bracket, eps.indices.map { k in
                let t = stops.firstIndex(of: sOf[k])!
                var p = j.point(t, eps: eps[k], zeta: zeta, dimension: model.parameterCount, logVarianceOfC: varLogC)
                tl.setLower(on: &p, stop: t, slope: j.slope[t], logVarianceOfC: varLogC, dimension: model.parameterCount)
                p.bracket = bracket.points[k]
                p.chooseIntervals(paths: paths)
                return p
            })
        }
        // Trials are independent (each its own seed): with several, up to `threads` run side by side on one
        // thread each; every number is the same as one after the other.
        var byTrial = [(StagedSMC<Model>.Result, CertifiedBracket, [EpsilonEstimate]?)?](repeating: nil, count: trials)
        if trials == 1 {
            byTrial[0] = try await trial(0, threads: threads, say: progress)
        } else {
            let lanes = Swift.max(1, Swift.min(threads, trials))
            let perTrial = lanes == 1 ? threads : 1
            try await withThrowingTaskGroup(of: (Int, (StagedSMC<Model>.Result, CertifiedBracket, [EpsilonEstimate]?)).self) { group in
                var next = 0, done = 0
                func start() {
                    let i = next
                    next += 1
                    group.addTask { (i, try await trial(i, threads: perTrial, say: { @Sendable _ in })) }
                }
                while next < lanes { start() }
                while let (i, out) = try await group.next() {
                    byTrial[i] = out
                    done += 1
                    progress("trial \(done) of \(trials) done")
                    if next < trials { start() }
                }
            }
        }
        let results = byTrial.map { $0!.0 }, brackets = byTrial.map { $0!.1 }
        let joints = byTrial.compactMap { $0!.2 }
        let first = results[0]
        // The reported intervals of trial r at point i.
        func reported(_ r: Int, _ i: Int) -> (ReportedInterval, ReportedInterval?) {
            results[r].points[i].reportedIntervals(bracket: brackets[r].points[i], paths: paths)
        }
        for i in points.indices {
            let mc = first.points[i], exact = points[i]
            var q = MonteCarloPoint(dZetaMc: mc.dZeta, ci95Mc: mc.interval95, errorMc: mc.dZeta - exact.dZeta,
                                    dZetaLowerMc: mc.dZetaLower, ci95LowerMc: mc.ci95Lower,
                                    errorLowerMc: mc.dZetaLower.map { $0 - exact.dZetaLower },
                                    stageEssFraction: mc.ess.map { $0 / Double(paths) }, stageIslandNoise: mc.islandNoise,
                                    stageLogVarMc: mc.logVariance,
                                    stageLogZMc: mc.stages.map(\.value), stageErrorMc: zip(mc.stages, exact.stageLogZ).map { $0.value - $1 },
                                    dZetaBracket: brackets[0].points[i].dZeta, dZetaLowerBracket: brackets[0].points[i].dZetaLower,
                                    intervalMc: reported(0, i).0, intervalLowerMc: reported(0, i).1)
            q.stageMoves = mc.moves
            q.stageTilt = mc.tilts
            (q.stageIslandInner, q.stageIslandNoiseVar) = (mc.islandInner, mc.islandNoiseVariance)
            if trials > 1 {
                let ests = results.map { $0.points[i].dZeta }
                let n = Double(ests.count)
                let mean = ests.reduce(0, +) / n
                q.trials = trials
                q.covered = results.filter { $0.points[i].interval95.contains(exact.dZeta) }.count
                q.coveredLower = results.filter { $0.points[i].ci95Lower?.contains(exact.dZetaLower) ?? false }.count
                q.mcBias = mean - exact.dZeta
                q.mcSd = LogEstimate.sampleVariance(ests).squareRoot()
                q.meanHalfWidth = results.reduce(0) { $0 + ($1.points[i].interval95.upperBound - $1.points[i].interval95.lowerBound) / 2 } / n
                let lows = results.compactMap { $0.points[i].dZetaLower }
                q.mcBiasLower = lows.reduce(0, +) / Double(lows.count) - exact.dZetaLower
                if joint {
                    let js = joints.map { $0[i].dZeta }
                    let jm = js.reduce(0, +) / n
                    q.coveredJoint = joints.filter { $0[i].interval95.contains(exact.dZeta) }.count
                    q.mcBiasJoint = jm - exact.dZeta
                    q.mcSdJoint = LogEstimate.sampleVariance(js).squareRoot()
                    let read = joints.compactMap { $0[i].interval?.range }
                    q.coveredJointInterval = read.filter { $0.contains(exact.dZeta) }.count
                    q.medianJointIntervalWidth = exact.dZeta > 0 && !read.isEmpty
                        ? Quantiles.quantile(read.map { ($0.upperBound - $0.lowerBound) / exact.dZeta }.sorted(), 0.5) : nil
                    let lows = joints.compactMap { $0[i].ci95Lower }
                    q.coveredLowerJoint = lows.filter { $0.contains(exact.dZetaLower) }.count
                    q.mcBiasLowerJoint = joints.compactMap { $0[i].dZetaLower }.reduce(0, +) / n - exact.dZetaLower
                    q.medianJointLowerWidth = exact.dZetaLower > 0 && !lows.isEmpty
                        ? Quantiles.quantile(lows.map { ($0.upperBound - $0.lowerBound) / exact.dZetaLower }.sorted(), 0.5) : nil
                    let readLower = joints.compactMap { $0[i].intervalLower }
                    q.coveredLowerJointInterval = readLower.filter { $0.range.contains(exact.dZetaLower) }.count
                    q.bracketFallbacksLowerJoint = readLower.filter { $0.source == .bracket }.count
                }
                q.bracketCovered = brackets.filter { $0.points[i].dZeta.contains(exact.dZeta) }.count
                q.bracketCoveredLower = brackets.filter { $0.points[i].dZetaLower.contains(exact.dZetaLower) }.count
                let chosen = results.indices.map { reported($0, i) }
                q.coveredInterval = chosen.filter { $0.0.range.contains(exact.dZeta) }.count
                q.coveredIntervalLower = chosen.filter { $0.1?.range.contains(exact.dZetaLower) ?? false }.count
                q.bracketFallbacks = chosen.filter { $0.0.source == .bracket }.count
                q.coveredSampled = chosen.filter { $0.0.source == .sampled && $0.0.range.contains(exact.dZeta) }.count
                q.bracketFallbacksLower = chosen.filter { $0.1?.source == .bracket }.count
                q.coveredSampledLower = chosen.filter { $0.1?.source == .sampled && $0.1!.range.contains(exact.dZetaLower) }.count
                func medianWidth(_ ranges: [ClosedRange<Double>], _ exact: Double) -> Double? {
                    guard !ranges.isEmpty, exact > 0 else { return nil }
                    return Quantiles.quantile(ranges.map { ($0.upperBound - $0.lowerBound) / exact }.sorted(), 0.5)
                }
                q.medianIntervalWidth = medianWidth(chosen.map(\.0.range), exact.dZeta)
                q.medianIntervalLowerWidth = medianWidth(chosen.compactMap { $0.1?.range }, exact.dZetaLower)
                q.maxStageEssFraction = results.compactMap { $0.points[i].ess.last }.max().map { $0 / Double(paths) }
            }
            if let j = joints.first?[i] {
                q.dZetaJointMc = j.dZeta
                q.ci95JointMc = j.ci95
                (q.dZetaReverseJointMc, q.ci95ReverseJointMc, q.intervalJointMc) = (j.dZetaReverse, j.ci95Reverse, j.interval)
                q.errorJointMc = j.dZeta - exact.dZeta
                (q.dZetaLowerJointMc, q.ci95LowerJointMc) = (j.dZetaLower, j.ci95Lower)
                q.errorLowerJointMc = j.dZetaLower.map { $0 - exact.dZetaLower }
                (q.intervalLowerJointMc, q.stageIslandInnerLowerJoint, q.stageIslandNoiseVarLowerJoint, q.stage1DecorrelationLowerJoint)
                    = (j.intervalLower, j.lower ? j.islandInner : nil, j.lower ? j.islandNoiseVariance : nil, j.stageOneDecorrelation)
                (q.stageIslandNoiseVarSizedLowerJoint, q.stageIslandReplicatesCappedLowerJoint)
                    = (j.lower ? j.islandNoiseVarianceSized : nil, j.lower ? j.islandReplicatesCapped : nil)
            }
            points[i].monteCarlo = q
        }
        monteCarlo = MonteCarloSummary(estimator: .smc, paths: paths, inner: inner, seed: seed, trials: trials, traceDraws: draws,
                                       mcScale: first.scale, bracketDelta: brackets[0].delta, bracketDraws: brackets[0].draws,
                                       smc: .init(stage1: first.stage1.summary, islands: first.islands.summary),
                                       jointSweeps: joint ? jointSweeps ?? JointSMC<Model>.defaultSweeps(units: model.stageUnits) : nil,
                                       stage1Sweeps: stageOneSweeps == StagedSMC<Model>.defaultStageOneSweeps ? nil : stageOneSweeps,
                                       independenceMoves: independenceMoves ? true : nil, chains: chains > 1 ? chains : nil)
        return first.points.indices.map { i in
            var p = first.points[i]
            p.bracket = brackets[0].points[i]
            (p.interval, p.intervalLower) = reported(0, i)
            return p
        }
    }
}
