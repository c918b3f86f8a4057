import Foundation
import RandomStreams
import TwoScaleCore

/// The smc estimator's run, stage by stage (docs/ESTIMATORS.md §2–§5): the trace normalisation, stage 1's
/// pooled sampler over every stop, then per ε the later stages' islands, each stage a function of its own,
/// their terms summed in `StageSum` and turned into an `EpsilonEstimate`.
extension StagedSMC {
    public func run(eps: [Double], zeta: Double, normalization: Normalization, lower: Bool, threads: Int,
                    progress: @escaping @Sendable (String) -> Void = { _ in }) async throws -> Result {
        try ScaleParameters.checkZeta(zeta)
        try Self.checkTilt(proposals: tiltProposals, moveProposals: moveProposals)
        try Self.checkChains(chains)
        for e in eps { try ScaleParameters.checkEpsilon(e) }
        let d = model.parameterCount
        // With several chains, each a whole run on a seed of its own (`chain`), joined per ε (`StageSum(chains:)`).
        var runs: [ChainRun] = []
        for c in 0..<chains {
            let label = chains > 1 ? "chain \(c + 1) of \(chains): " : ""
            runs.append(try await chain(c).chainRun(eps: eps, zeta: zeta, normalization: normalization, lower: lower, threads: threads,
                                                    progress: { progress(label + $0) }))
        }
        let first = runs[0]
        var islands = SMCDiagnostics()
        for r in runs { islands.merge(r.islands) }
        // Stage 1's decorrelation, as every diagnostic the rule reads, averaged over the chains.
        let mixed = runs.compactMap(\.stage1.minDecorrelation)
        let decorrelation = mixed.count == chains ? mixed.reduce(0, +) / Double(chains) : nil
        let points = try eps.indices.map { i in
            let sum = chains > 1 ? StageSum(chains: runs.map { $0.sums[i] }) : first.sums[i]
            var point = try sum.point(eps: eps[i], zeta: zeta, dimension: d, lower: lower, logVarianceOfC: first.logVarianceOfC)
            point.stageOneDecorrelation = decorrelation
            return point
        }
        return Result(points: points, scale: first.scale, trace: first.trace, stage1: first.stage1, islands: islands)
    }

    /// One chain's run: ĉ, stage 1 and the later stages, each ε's stages summed but not yet made a point (`lower`:
    /// whether the lower 2sED is reported, which decides where islands are sized, `sizesStage`).
    struct ChainRun {
        var sums: [StageSum]
        var scale: Double
        var logVarianceOfC: Double
        var trace: TraceEstimate
        var stage1: SMCDiagnostics
        var islands: SMCDiagnostics
    }

    func chainRun(eps: [Double], zeta: Double, normalization: Normalization, lower: Bool, threads: Int,
                  progress: @escaping @Sendable (String) -> Void) async throws -> ChainRun {
        let d = model.parameterCount
        let units = model.stageUnits
        progress("trace normalisation from \(traceDraws) uniform draws")
        let trace = try await traceEstimate(threads: threads)
        let (c, varLogC) = try trace.scale(normalization, dimension: d)
        let sOf = eps.map { ScaleParameters.t(eps: $0, zeta: zeta) * c.squareRoot() }
        let stops = Array(Set(sOf)).sorted()
        let first = try await stageOne(stops: stops, threads: threads, progress: progress)
        let settings = try (0..<units.count).map { m in m == 0 ? first.settings : try self.islandSettings(block: m) }
        let sized = sizesIslands(stageOneDecorrelation: first.estimate.diagnostics.minDecorrelation)
        var islandsDiag = SMCDiagnostics()
        var sums: [StageSum] = []
        for (ei, e) in eps.enumerated() {
            let at = Stop(eps: e, index: stops.firstIndex(of: sOf[ei])!, scale: sOf[ei])
            var sum = StageSum(first: Self.block(first.estimate, units: units[0].count, stop: at.index),
                               replicates: first.estimate.logZ[at.index].count)
            if units.count == 1, let sup = first.stage.supremumRoots {
                // One stage: its supremum is a number, not an estimate.
                let b = Self.supremum(try sup(), scale: at.scale)
                sum.bound = StageSum.Bound(stage: LogEstimate(value: b.log), slope: b.slope)
            }
            if units.count > 1 {
                progress("ε = \(e): \(units.count - 1) later stage(s), \(paths) islands each")
                var outer = OuterParticles(particles: outerParticles(from: first.estimate, stop: at.index),
                                           first: first.estimate, stop: at.index, genealogy: units.count > 2 && moveProposals == 0)
                for m in 1..<units.count {
                    let sizeThis = sized && Self.sizesStage(afterESS: sum.stageESS, logWeightVariance: sum.stageLogVariance,
                                                            islandNoiseVariance: sum.stageIslandNoiseVariance, paths: paths,
                                                            afterTilt: sum.stageTilts.contains { $0.engaged }, lower: lower)
                    try await laterStage(m, at: at, outer: &outer, sum: &sum, settings: settings[m], sized: sizeThis,
                                         islandsDiag: &islandsDiag, threads: threads, progress: progress)
                }
            }
            sums.append(sum)
        }
        return ChainRun(sums: sums, scale: c, logVarianceOfC: varLogC, trace: trace, stage1: first.estimate.diagnostics, islands: islandsDiag)
    }

    /// One ε as the later stages see it: ε, its stop's index in the run's stops, and the scale s.
    struct Stop {
        var eps: Double
        var index: Int
        var scale: Double
    }

    /// Stage 1: its units are exchangeable, so `Z_1 = Z_{1,1}^{n_1}`; one pooled sampler (in
    /// `stageOneTasks` runs) estimates `log Z_{1,1}` over every stop at once.
    func stageOne(stops: [Double], threads: Int, progress: (String) -> Void) async throws
        -> (estimate: SMCUnitEstimate, stage: StageUnit, settings: SMCSettings) {
        let n1 = model.stageUnits[0].count
        let settings = try stageOneSettings(units: n1)
        let tasks = Self.stageOneTasks(units: n1)
        progress("stage 1: \(n1) exchangeable unit(s), \(tasks * replicates) samplers of \(settings.particles) particles over \(stops.count) scale(s)")
        let me = self
        let stage = try model.stage(model.emptyState(), 0, box: box)
        let unit = stage.unit
        let keep = model.stageUnits.count > 1
        // Each task's replicates have streams of their own, so they run side by side and are joined per task.
        let r = settings.replicates
        let parts: [SMCUnitEstimate] = try await sharing.map(tasks * r, threads: threads) { i in
            try AnnealedSMC.run(unit, stops: stops, settings: settings, seed: me.seed,
                                stream: [Self.stream, 1, UInt64(i / r)], keepPopulations: keep, replicates: (i % r)..<(i % r + 1))
        }
        let runs = (0..<tasks).map { k in SMCUnitEstimate.joined(Array(parts[(k * r)..<((k + 1) * r)])) }
        return (SMCUnitEstimate.pooled(runs), stage, settings)
    }

    /// Stage 2's outer particles θ_{<2}: for each of K, one draw from stage 1's pooled population per unit.
    func outerParticles(from first: SMCUnitEstimate, stop t: Int) -> [Model.State] {
        (0..<paths).map { k in
            var rng = Xoshiro256(seed: seed, stream: [Self.stream, 4, UInt64(t), UInt64(k)])
            var state = model.emptyState()
            for u in 0..<model.stageUnits[0].count {
                model.setUnit(&state, stage: 0, unit: u, parameters: first.draw(stop: t, rng: &rng))
            }
            return state
        }
    }

    /// The outer particles between stages, where their units were drawn from, and their genealogy.
    struct OuterParticles {
        var particles: [Model.State]
        /// Where particle k's units of the previous stage were drawn from (`sources[sourceOf[k]]`: stage 1's
        /// pooled sampler, then each particle's island), for `moveEarlier`.
        var sources: [UnitSource]
        var sourceOf: [Int]
        /// The genealogy over three or more stages (`genealogyVariance`; not with moves, whose steps keep
        /// their own): each particle's ancestor among stage 2's outer particles, per ancestor its
        /// descendants' share of the lower 2sED's terms, and the later stages' summed variances so far.
        var genealogy: Bool
        var eve: [Int]
        var lowerByEve: [Double]
        var laterVariance = 0.0, lowerLaterVariance = 0.0
        /// The later stages' standard deviations summed so far (their Cauchy–Schwarz bound, squared).
        var laterSD = 0.0, lowerLaterSD = 0.0

        init(particles: [Model.State], first: SMCUnitEstimate, stop t: Int, genealogy: Bool) {
            self.particles = particles
            sources = [UnitSource(population: first, stop: t)]
            sourceOf = [Int](repeating: 0, count: particles.count)
            self.genealogy = genealogy
            eve = Array(particles.indices)
            lowerByEve = [Double](repeating: 0, count: particles.count)
        }
    }

    /// Stage m ≥ 2 at one ε: an island per outer particle; with `moveProposals`, a degenerate stage's
    /// weights tempered in (`moveEarlier`); the stage's terms added to `sum`; before the last stage, the
    /// outer particles resampled and given their islands' draws of the stage's units.
    func laterStage(_ m: Int, at: Stop, outer: inout OuterParticles, sum: inout StageSum, settings base: SMCSettings, sized: Bool,
                    islandsDiag: inout SMCDiagnostics, threads: Int, progress: @escaping @Sendable (String) -> Void) async throws {
        let last = m == model.stageUnits.count - 1
        let start = outer.particles
        var current = start
        let n = model.stageUnits[m].count
        let (t, s) = (at.index, at.scale)
        var settings = base
        var islands: [Island]
        var tiltAncestor: [Int]? = nil
        if sized {
            let say: @Sendable (String) -> Void = { progress("ε = \(at.eps), stage \(m + 1): " + $0) }
            (settings, islands) = try await sizedIslands(m, start: start, at: at, settings: base, threads: threads, progress: say)
        } else {
            islands = try await islandBatch(m, start: start, at: at, settings: settings, from: 0, threads: threads)
        }
        if last, islands.allSatisfy({ $0.boundLog != nil }) {
            sum.addBound(logs: islands.map { $0.boundLog! }, slopes: islands.map { $0.boundSlope! })
        }
        let lz = islands.map(\.logZ), noise = islands.map(\.noise)
        for i in islands { islandsDiag.merge(i.diag) }
        // The 2sED's term: the log-mean of the outer weights, less the excess that raising the islands'
        // pooled estimates to the n-th power gives them (`powerBias`).
        let excess = Self.powerBias(noise: noise, units: n)
        var term = LogEstimate.logMeanAndShortfall(lz)
        // With `moveProposals`, a degenerate stage's weights are tempered in and θ_{m−1} moved under them
        // (`moveEarlier`); the stage's diagnostics stay those of the plain weights.
        var finalLogW = lz
        let plain = islands
        // With `tiltProposals`, a degenerate stage's outer particles tilted by its majorant (`tiltEarlier`); the
        // stage's diagnostics, and the weights the interval's rule reads, are then the tilted run's.
        var (weights, noises, excessUsed) = (lz, noise, excess)
        if tiltProposals > 0 {
            let tilt = try await tiltEarlier(start, plain: islands, stage: m, at: at, settings: settings, threads: threads,
                                             progress: { progress("ε = \(at.eps), stage \(m + 1): " + $0) })
            sum.stageTilts.append(tilt.diagnostics)
            if let r = tilt.run {
                term = r.term
                finalLogW = r.logWeights
                current = r.states
                islands = r.islands
                (weights, noises) = (r.logWeights, r.islands.map(\.noise))
                excessUsed = Self.powerBias(noise: noises, units: n)
                if outer.genealogy { tiltAncestor = r.ancestor }
            }
        }
        if moveProposals > 0, LogSpace.effectiveSampleSize(logWeights: lz) < Self.moveESSFraction * Double(paths) {
            let moved = try await moveEarlier(current, sources: outer.sourceOf.map { outer.sources[$0] }, islands: islands, stage: m,
                                              scale: s, stop: t, settings: settings, threads: threads,
                                              progress: { progress("ε = \(at.eps), stage \(m + 1): " + $0) })
            term = moved.term
            finalLogW = moved.logWeights
            current = moved.states
            islands = moved.islands
            sum.stageMoves.append(moved.diagnostics)
        } else if moveProposals > 0 {
            sum.stageMoves.append(OuterMoveDiagnostics())
        }
        term.estimate = LogEstimate(value: term.estimate.value - excessUsed.value, variance: term.estimate.variance + excessUsed.variance)
        var lowerTerm = LogEstimate.mean(plain.map(\.lower))
        lowerTerm.variance *= Self.populationVarianceFactor
        sum.add(term: term, lower: lowerTerm)
        if outer.genealogy {
            outer.laterVariance += term.estimate.variance
            outer.lowerLaterVariance += lowerTerm.variance
            outer.laterSD += term.estimate.variance.squareRoot()
            outer.lowerLaterSD += lowerTerm.variance.squareRoot()
            let lowerMean = plain.reduce(0) { $0 + $1.lower } / Double(paths)
            for (k, i) in plain.enumerated() { outer.lowerByEve[outer.eve[k]] += (i.lower - lowerMean) / Double(paths) }
            if last {
                // Stage 2's outer particles, the ancestors, are drawn from stage 1's finite population: the
                // same factor as each stage's lower term. Either way at least the stages' Cauchy–Schwarz bound
                // (Σ_m √V_m)², which holds whatever their correlations, given each stage's variance.
                let eve = tiltAncestor.map { $0.map { outer.eve[$0] } } ?? outer.eve
                let g = Self.genealogyVariance(logWeights: weights, eve: eve, lowerByEve: outer.lowerByEve, resamplings: model.stageUnits.count - 2)
                let nested = Swift.max(Self.populationVarianceFactor * g.nested, outer.laterSD * outer.laterSD)
                let lower = Swift.max(Self.populationVarianceFactor * g.lower, outer.lowerLaterSD * outer.lowerLaterSD)
                sum.joint.variance += Swift.max(0, nested - outer.laterVariance)
                sum.low.variance += Swift.max(0, lower - outer.lowerLaterVariance)
            }
        }
        // The tilted particles' lineages, to the ancestors among stage 2's outer particles.
        if let a = tiltAncestor { outer.eve = a.map { outer.eve[$0] } }
        let w = LogSpace.normalizedWeights(logWeights: finalLogW)
        sum.slope += zip(w, islands).reduce(0) { $0 + $1.0 * $1.1.slope }
        sum.stageESS.append(LogSpace.effectiveSampleSize(logWeights: weights))
        sum.stageNoise.append(Self.noiseShare(noise: noises, logZ: weights))
        sum.stageLogVariance.append(LogEstimate.sampleVariance(weights))
        if outer.genealogy { sum.stageIslandInner.append(settings.particles * settings.replicates) }
        // σ̄² wherever the rule reads it: without moves (with them each stage's islands are many, and their
        // noise is not measured).
        if moveProposals == 0 { sum.stageIslandNoiseVariance.append(LogEstimate.mean(noises).value) }
        if !last { resampleOuter(&outer, weights: w, current: current, islands: islands, stage: m, stop: t) }
    }

    /// The outer particles of stage m + 1: resampled ∝ their stage-m weights (systematic), each given its
    /// island's draws of stage m's units; with moves, each distinct island's population kept once as the
    /// source of its particles' units.
    func resampleOuter(_ outer: inout OuterParticles, weights w: [Double], current: [Model.State], islands: [Island],
                       stage m: Int, stop t: Int) {
        var rng = Xoshiro256(seed: seed, stream: [Self.stream, 7, UInt64(t), UInt64(m)])
        let idx = Tempering.systematic(w, u: rng.uniform())
        if outer.genealogy { outer.eve = idx.map { outer.eve[$0] } }
        outer.particles = idx.map { k in
            var state = current[k]
            for (u, x) in islands[k].units.enumerated() { model.setUnit(&state, stage: m, unit: u, parameters: x) }
            return state
        }
        if moveProposals > 0 {
            var index = [Int: Int]()
            var sources: [UnitSource] = []
            outer.sourceOf = idx.map { k in
                if let i = index[k] { return i }
                index[k] = sources.count
                sources.append(UnitSource(population: islands[k].population!, stop: 0))
                return sources.count - 1
            }
            outer.sources = sources
        }
    }
}

/// What the stages add up to at one ε as they are run: `log E det` of the 2sED and of the lower 2sED, the
/// slope in log s, each stage's term and diagnostics, and the upper bound (`UpperBound`: the earlier
/// stages' terms, then the last stage's supremum).
struct StageSum {
    var joint: LogEstimate
    var slope: Double
    var low: LogEstimate
    var stageTerms: [LogEstimate]
    var stageESS: [Double] = []
    var stageNoise: [Double] = []
    var stageLogVariance: [Double] = []
    /// With two or more later stages, each one's island size J; without outer moves, each later stage's
    /// islands' mean noise variance σ̄² (nats²).
    var stageIslandInner: [Int] = []
    var stageIslandNoiseVariance: [Double] = []
    var stageShortfall: [Double] = []
    var stageMoves: [OuterMoveDiagnostics] = []
    var stageTilts: [TiltDiagnostics] = []
    var bound: Bound?
    /// Stage 1's replicates, whose spread is its variance estimate.
    let stageOneReplicates: Int
    /// Whether this sums independent chains (`init(chains:)`), whose spread is already the whole variance.
    var chained = false

    struct Bound {
        var joint, low: LogEstimate
        var slope: Double
        var stage, stageLower: LogEstimate
        var logVariance = 0.0, shortfall = 0.0

        /// A one-stage model's bound: its supremum, a number.
        init(stage: LogEstimate, slope: Double) {
            (joint, low, self.slope, self.stage, stageLower) = (stage, stage, slope, stage, stage)
        }

        init(joint: LogEstimate, low: LogEstimate, slope: Double, stage: LogEstimate, stageLower: LogEstimate,
             logVariance: Double, shortfall: Double) {
            (self.joint, self.low, self.slope, self.stage, self.stageLower) = (joint, low, slope, stage, stageLower)
            (self.logVariance, self.shortfall) = (logVariance, shortfall)
        }
    }

    /// Stage 1's block (`StagedSMC.block`) from its R replicates.
    init(first: (logZ: Double, corrected: LogEstimate, log: LogEstimate, slope: Double, noise: Double), replicates: Int) {
        stageOneReplicates = replicates
        joint = first.corrected
        slope = first.slope
        low = joint
        stageTerms = [joint]
    }

    /// A later stage's 2sED term (with its lognormal shortfall) and lower term.
    mutating func add(term: (estimate: LogEstimate, shortfall: Double), lower: LogEstimate) {
        stageTerms.append(term.estimate)
        stageShortfall.append(term.shortfall)
        joint = joint + term.estimate
        low = low + lower
    }

    /// The last stage's supremum at each outer particle, on top of the earlier stages' terms.
    mutating func addBound(logs lb: [Double], slopes: [Double]) {
        let (stage, shortfall) = LogEstimate.logMeanAndShortfall(lb)
        let wb = LogSpace.normalizedWeights(logWeights: lb)
        let stageLower = LogEstimate.mean(lb)
        bound = Bound(joint: joint + stage, low: low + stageLower, slope: slope + zip(wb, slopes).reduce(0) { $0 + $1.0 * $1.1 },
                      stage: stage, stageLower: stageLower, logVariance: LogEstimate.sampleVariance(lb), shortfall: shortfall)
    }

    /// The variance of stage 1's term plus the later stages' together at its Cauchy–Schwarz bound,
    /// `Var(A + B) ≤ (√Var A + √Var B)²`: the later stages' outer particles are drawn from stage 1's own
    /// population, so the two errors are correlated, and their covariance is not estimated
    /// (docs/ESTIMATORS.md §5). `total` is the parts' variances added, the later stages' taken as
    /// `total − first`.
    static func correlated(first v1: Double, total: Double) -> Double {
        let later = Swift.max(0, total - v1)
        return v1 + later + 2 * (v1 * later).squareRoot()
    }

    /// The point at ε: the normalisation's variance `(slope/2)² Var log ĉ` added to both estimates (not to
    /// chains': `chained`) and, with the bound's own slope, to the bound's.
    func point(eps e: Double, zeta: Double, dimension d: Int, lower: Bool, logVarianceOfC varLogC: Double) throws -> EpsilonEstimate {
        var joint = joint, low = low
        // Stage 1's variance is the spread of R replicates: widened to Student's t with R − 1 degrees of
        // freedom, so that the normal quantile of the interval gives its t quantile.
        var v1 = stageTerms[0].variance
        if !chained, stageOneReplicates >= 2 {
            let added = v1 * (StudentT.varianceInflation(replicates: stageOneReplicates) - 1)
            v1 += added
            joint.variance += added
            low.variance += added
        }
        if !chained, stageTerms.count > 1 {
            joint.variance = Self.correlated(first: v1, total: joint.variance)
            low.variance = Self.correlated(first: v1, total: low.variance)
        }
        // Independent chains' spread holds ĉ's error as it holds every other part's; the bound (the first
        // chain's) does not.
        let cv = chained ? 0 : TraceEstimate.addedVariance(slope: slope, logVarianceOfC: varLogC)
        joint.variance += cv
        low.variance += cv
        guard joint.value.isFinite, low.value.isFinite else {
            throw TwoScaleError.failure("smc: log E det at ε = \(e) is not finite; the spectra hold infinite values (use a smaller \(Setting.box))")
        }
        var point = EpsilonEstimate(eps: e, zeta: zeta, dimension: d, estimate: joint, lower: lower ? low : nil,
                             stageESS: stageESS, normalizationVariance: cv)
        point.stages = stageTerms
        point.islandNoise = stageNoise
        point.logVariance = stageLogVariance
        point.islandInner = stageIslandInner
        point.islandNoiseVariance = stageIslandNoiseVariance
        point.tailShortfall = stageShortfall
        point.moves = stageMoves
        point.tilts = stageTilts
        if var b = bound, b.joint.value.isFinite, b.low.value.isFinite {
            let boundCV = TraceEstimate.addedVariance(slope: b.slope, logVarianceOfC: varLogC)
            b.joint.variance += boundCV
            b.low.variance += boundCV
            point.bound = UpperBound(eps: e, zeta: zeta, dimension: d, estimate: b.joint, lower: lower ? b.low : nil,
                                     stage: b.stage, stageLower: b.stageLower, stageLogVariance: b.logVariance,
                                     stageShortfall: b.shortfall, normalizationVariance: boundCV)
        }
        return point
    }
}
