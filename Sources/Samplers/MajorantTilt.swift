import Foundation
import RandomStreams
import TwoScaleCore

/// Tilting a later stage's outer particles by its majorant (docs/METHOD.md §22).
///
/// Where stage m's outer weights `Ẑ_m(θ_{<m})` degenerate because `Z_m` varies with the earlier stages,
/// most of that variation is carried by the stage's majorant given θ_{<m}, `L = log M_m(θ_{<m})`
/// (`StagedModel.stageMajorant`), which costs no island. With β the least-squares slope of the plain
/// islands' `log Ẑ_m^k` on `L^k`, `tiltEarlier` tempers the outer particles from π̂_{<m} towards
/// `γ_λ ∝ π_{<m} e^{λβL}`, λ from 0 to 1, each step's λ keeping an ESS of `moveESSFraction`·K, then
/// systematic resampling and `tiltProposals` Metropolis–Hastings proposals per particle: a unit of any
/// earlier stage j, chosen at random, moved by the reflected random walk (`RandomWalk.reflect`), accepted
/// with `Π_{i=j}^{m−1} G_i(θ')/G_i(θ) · e^{λβ(L' − L)}` (the moved unit's own factor and every later earlier
/// stage's whole factor change). At λ = 1 new islands at the moved particles are weighted by
/// `Ẑ_m e^{−βL}`. For a fixed schedule and β, the steps' mean incremental weights times the final weights'
/// mean estimate `E_{π_{<m}} Z_m` whatever the moves' mixing (β is fitted on islands that are then set
/// aside); the term's variance is the larger of the steps' delta-method sum and the genealogy's
/// (`eveVariance`). The step h of the walk (per coordinate `h·width/√p`) starts at `tiltInitialStep` and is
/// tuned between steps by `RandomWalk.adapted`.
///
/// Random streams: [SMCN, 20, t, m, step] resampling, [SMCN, 21, t, m, step, k] a particle's proposals,
/// [SMCN, 22 and 23, t, m, k] the new islands.
extension StagedSMC {
    /// The share of the variance of `log Ẑ_m^k` the majorant must explain for the stage to be tilted.
    public static var tiltExplainedFraction: Double { 0.5 }
    /// The walk's first step, in box widths over √p.
    static var tiltInitialStep: Double { 0.1 }
    /// The most proposals per particle and tempering step `tiltProposals` may ask for.
    public static var maximumTiltProposals: Int { 10_000 }

    /// Refuses a `tiltProposals` out of range, or given with `moveProposals` (one way of moving at a time).
    public static func checkTilt(proposals n: Int, moveProposals: Int) throws {
        guard (0...maximumTiltProposals).contains(n) else {
            throw TwoScaleError.invalid("\(Setting.tiltMoves)", "\(n)", allowed: "give from 0 (off) to \(maximumTiltProposals) proposals per particle and tempering step")
        }
        guard n == 0 || moveProposals == 0 else {
            throw TwoScaleError.invalid("\(Setting.tiltMoves)", "\(n)", allowed: "use either the majorant tilt or \(Setting.outerMoves), not both")
        }
    }

    /// Whether a stage whose plain outer weights keep an ESS of `ess` among `paths` is tilted under `fit`: nil where
    /// it is (ESS below `moveESSFraction`·K, β > 0, R² ≥ `tiltExplainedFraction`), else the first condition it fails.
    public static func tiltDecision(ess: Double, paths: Int, fit: (slope: Double, explained: Double)) -> TiltDiagnostics.Declined? {
        if !(ess < moveESSFraction * Double(paths)) { return .essAtLeastHalf }
        if !(fit.slope > 0) { return .slopeNotPositive }
        if !(fit.explained >= tiltExplainedFraction) { return .explainedBelowHalf }
        return nil
    }

    /// β and R²: the least-squares slope of `logZ` on the majorant `l` and the share of the variance it
    /// explains; nil where either does not vary.
    static func tiltFit(majorant l: [Double], logZ: [Double]) -> (slope: Double, explained: Double)? {
        let k = Double(l.count)
        guard l.count >= 2, l.count == logZ.count else { return nil }
        let ml = l.reduce(0, +) / k, mz = logZ.reduce(0, +) / k
        var sxy = 0.0, sxx = 0.0, syy = 0.0
        for (a, b) in zip(l, logZ) { sxy += (a - ml) * (b - mz); sxx += (a - ml) * (a - ml); syy += (b - mz) * (b - mz) }
        guard sxx > 0, syy > 0 else { return nil }
        let slope = sxy / sxx, explained = sxy * sxy / (sxx * syy)
        guard slope.isFinite, explained.isFinite else { return nil }
        return (slope, explained)
    }

    /// One outer particle under the tilt: θ_{<m}, its majorant L, and each earlier unit's `log g` at scale s.
    struct TiltParticle: Sendable {
        var state: Model.State
        var majorant: Double
        var unitLog: [[Double]]
    }

    /// What one particle's proposals changed (a `WorkSharing` result): the accepted units in order, the
    /// majorant and unit log-factors after them, and how many were accepted.
    struct TiltMoved: Codable, Sendable {
        struct Change: Codable, Sendable { var stage: Int; var unit: Int; var coordinates: [Double] }
        var changes: [Change]
        var majorant: Double
        var unitLog: [[Double]]
        var accepted: Int
    }

    struct TiltRun {
        var term: (estimate: LogEstimate, shortfall: Double)
        var logWeights: [Double]
        var states: [Model.State]
        var islands: [Island]
        /// Each final particle's ancestor among the K it started from.
        var ancestor: [Int]
    }

    /// Stage m's term with its outer particles tilted by the majorant where the plain weights `plain` (the
    /// islands at `start`) keep less than half of K as ESS and the fit explains at least
    /// `tiltExplainedFraction`; else nil, with the fit in the diagnostics.
    func tiltEarlier(_ start: [Model.State], plain: [Island], stage m: Int, at: Stop, settings: SMCSettings, threads: Int,
                     progress: (String) -> Void) async throws -> (run: TiltRun?, diagnostics: TiltDiagnostics) {
        let me = self
        let K = start.count
        let (t, s) = (at.index, at.scale)
        let majorants: [Double?] = try await sharing.map(K, threads: threads) { k in
            try me.model.stageMajorant(start[k], stage: m, scale: s, box: me.box)
        }
        let l0 = majorants.compactMap { $0 }
        guard l0.count == K, l0.allSatisfy(\.isFinite), let fit = Self.tiltFit(majorant: l0, logZ: plain.map(\.logZ)) else {
            return (nil, TiltDiagnostics(declined: .noFit))
        }
        var diag = TiltDiagnostics(slope: fit.slope, explained: fit.explained)
        let threshold = Self.moveESSFraction * Double(K)
        if let why = Self.tiltDecision(ess: LogSpace.effectiveSampleSize(logWeights: plain.map(\.logZ)), paths: K, fit: fit) {
            diag.declined = why
            return (nil, diag)
        }
        diag.engaged = true
        let beta = fit.slope
        let logs: [[[Double]]] = try await sharing.map(K, threads: threads) { k in
            try (0..<m).map { j in try me.unitLogs(start[k], stage: j, scale: s) }
        }
        var particles = (0..<K).map { TiltParticle(state: start[$0], majorant: l0[$0], unitLog: logs[$0]) }
        var ancestor = Array(0..<K)
        var lambda = 0.0
        var lw = [Double](repeating: 0, count: K)
        var value = 0.0, variance = 0.0, shortfall = 0.0
        var h = Self.tiltInitialStep
        while true {
            let base = lw, from = lambda, l = particles.map(\.majorant)
            let next = diag.steps >= Self.maxMoveSteps ? 1 : Tempering.nextScale(from: lambda, to: 1, threshold: threshold) { l2 in
                LogSpace.effectiveSampleSize(logWeights: (0..<K).map { base[$0] + (l2 - from) * beta * l[$0] })
            }
            for k in 0..<K { lw[k] += (next - lambda) * beta * l[k] }
            lambda = next
            if lambda >= 1 { break }
            let step = LogEstimate.logMeanAndShortfall(lw)
            value += step.estimate.value
            variance += step.estimate.variance
            shortfall += step.shortfall
            var rng = Xoshiro256(seed: seed, stream: [Self.stream, 20, UInt64(t), UInt64(m), UInt64(diag.steps)])
            let idx = Tempering.systematic(LogSpace.normalizedWeights(logWeights: lw), u: rng.uniform())
            ancestor = idx.map { ancestor[$0] }
            particles = idx.map { particles[$0] }
            lw = [Double](repeating: 0, count: K)
            let (now, lam, step0, hNow) = (particles, lambda, diag.steps, h)
            let moved: [TiltMoved] = try await sharing.map(K, threads: threads) { k in
                var rng = Xoshiro256(seed: me.seed, stream: [Self.stream, 21, UInt64(t), UInt64(m), UInt64(step0), UInt64(k)])
                return try me.tiltMove(now[k], stage: m, scale: s, tilt: lam * beta, step: hNow, rng: &rng)
            }
            for k in 0..<K {
                for c in moved[k].changes { model.setUnit(&particles[k].state, stage: c.stage, unit: c.unit, parameters: c.coordinates) }
                particles[k].majorant = moved[k].majorant
                particles[k].unitLog = moved[k].unitLog
            }
            let accepted = moved.reduce(0) { $0 + $1.accepted }, proposed = K * tiltProposals
            diag.steps += 1
            diag.proposals += proposed
            diag.accepted += accepted
            h = RandomWalk.adapted(h, acceptance: Double(accepted) / Double(Swift.max(1, proposed)))
            progress("majorant tilt step \(diag.steps) at λ = \(String(format: "%.3g", lambda)), acceptance \(String(format: "%.2f", diag.acceptance))")
        }
        diag.decorrelation = tiltDecorrelation(start: start, end: particles.map(\.state), ancestor: ancestor, below: m)
        let final = particles.map(\.state)
        let islands: [Island] = try await sharing.map(K, threads: threads) { k in
            try me.island(final[k], stage: m, scale: s, settings: settings, stream: [Self.stream, 22, UInt64(t), UInt64(m), UInt64(k)],
                          drawStream: [Self.stream, 23, UInt64(t), UInt64(m), UInt64(k)], bound: false)
        }
        let logWeights = (0..<K).map { lw[$0] + islands[$0].logZ - beta * particles[$0].majorant }
        let last = LogEstimate.logMeanAndShortfall(logWeights)
        value += last.estimate.value
        variance += last.estimate.variance
        shortfall += last.shortfall
        variance = Swift.max(variance, Self.eveVariance(logWeights: logWeights, eve: ancestor, resamplings: diag.steps))
        let run = TiltRun(term: (LogEstimate(value: value, variance: variance), shortfall), logWeights: logWeights,
                          states: final, islands: islands, ancestor: ancestor)
        return (run, diag)
    }

    /// `log g_u` at scale s of every unit of stage j in `state`.
    func unitLogs(_ state: Model.State, stage j: Int, scale s: Double) throws -> [Double] {
        let unit = try model.stage(state, j, box: box).unit
        return try (0..<model.stageUnits[j].count).map { u in
            LogSpace.logDetSqrt(roots: try unit.roots(model.unitParameters(state, stage: j, unit: u)), scale: s)
        }
    }

    /// `tiltProposals` Metropolis–Hastings proposals for one particle under `π_{<m} e^{a L}` (a = λβ), each a
    /// reflected random-walk step of one unit of an earlier stage chosen uniformly among all of them.
    func tiltMove(_ start: TiltParticle, stage m: Int, scale s: Double, tilt a: Double, step h: Double,
                  rng: inout Xoshiro256) throws -> TiltMoved {
        var p = start
        var changes: [TiltMoved.Change] = []
        let counts = (0..<m).map { model.stageUnits[$0].count }
        let total = counts.reduce(0, +)
        let lo = box.lowerBound, hi = box.upperBound, width = hi - lo
        // Each earlier stage's unit given the stages before it, kept while those do not change.
        var units = [SMCUnit?](repeating: nil, count: m)
        var accepted = 0
        for _ in 0..<tiltProposals {
            var u = Swift.min(total - 1, Int(rng.uniform() * Double(total)))
            var j = 0
            while u >= counts[j] { u -= counts[j]; j += 1 }
            let w = model.unitParameters(p.state, stage: j, unit: u)
            let sd = h * width / Double(w.count).squareRoot()
            let y = w.map { RandomWalk.reflect($0 + sd * rng.normal(), lo, hi) }
            var q = p.state
            model.setUnit(&q, stage: j, unit: u, parameters: y)
            if units[j] == nil { units[j] = try model.stage(p.state, j, box: box).unit }
            let gy = LogSpace.logDetSqrt(roots: try units[j]!.roots(y), scale: s)
            var logA = gy - p.unitLog[j][u]
            var later: [[Double]] = []
            var laterUnits: [SMCUnit] = []
            for i in (j + 1)..<m {
                let unit = try model.stage(q, i, box: box).unit
                let logs = try (0..<counts[i]).map { LogSpace.logDetSqrt(roots: try unit.roots(model.unitParameters(q, stage: i, unit: $0)), scale: s) }
                logA += logs.reduce(0, +) - p.unitLog[i].reduce(0, +)
                later.append(logs)
                laterUnits.append(unit)
            }
            guard let lq = try model.stageMajorant(q, stage: m, scale: s, box: box), lq.isFinite else {
                throw TwoScaleError.failure("smc: stage \(m + 1)'s majorant is not finite; use a smaller \(Setting.box)")
            }
            logA += a * (lq - p.majorant)
            guard rng.metropolisAccepts(logRatio: logA) else { continue }
            p.state = q
            p.majorant = lq
            p.unitLog[j][u] = gy
            changes.append(TiltMoved.Change(stage: j, unit: u, coordinates: y))
            for (n, logs) in later.enumerated() {
                p.unitLog[j + 1 + n] = logs
                units[j + 1 + n] = laterUnits[n]
            }
            accepted += 1
        }
        return TiltMoved(changes: changes, majorant: p.majorant, unitLog: p.unitLog, accepted: accepted)
    }

    /// The smallest decorrelation (`RandomWalk.decorrelation`) of an earlier stage's units, each final
    /// particle's against its ancestor's at the start; nil where no stage's units varied.
    func tiltDecorrelation(start: [Model.State], end: [Model.State], ancestor: [Int], below m: Int) -> Double? {
        var smallest: Double?
        for j in 0..<m {
            let n = model.stageUnits[j].count, p = model.stageUnits[j].dimension
            let coordinates = { (x: Model.State) in (0..<n).flatMap { self.model.unitParameters(x, stage: j, unit: $0) } }
            let before = start.map(coordinates)
            let variances = RandomWalk.variances(before.flatMap { $0 }, particles: start.count * n, dimension: p)
            if let d = RandomWalk.decorrelation(from: ancestor.flatMap { before[$0] }, to: end.flatMap(coordinates),
                                                variances: variances, particles: end.count * n, dimension: p) {
                smallest = Swift.min(smallest ?? d, d)
            }
        }
        return smallest
    }
}
