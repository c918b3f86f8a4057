import Foundation
import RandomStreams
import TwoScaleCore

/// The most Metropolis sweeps per tempering step that `Setting.sweeps`, `JointSMC`'s default and the
/// precision target's rounds may reach.
let jointMaximumSweeps = 1_000

/// Joint tempering: one annealed SMC sampler on the whole θ of a `StagedModel`, for `log E_θ G_s` with
/// `G_s = Π_m det(I + s F_m^{1/2})` (the 2sED's term), where the staged estimator's outer weights
/// degenerate (docs/METHOD.md §21).
///
/// The targets `π_s ∝ G_s · U(box)` run from s = 0 to the largest stop as in `AnnealedSMC` (adaptive steps
/// keeping the ESS ≥ τP, systematic resampling), but the moves are Metropolis-within-Gibbs over the
/// stages' units: a reflected random walk in one unit's coordinates at a time, accepted with the ratio of
/// the *whole* `G_s`, so a unit of stage m is moved under every later stage's factor as well (its change
/// of θ_{≤m} changes the later stages' spectra, which are recomputed). Every move keeps `π_s` invariant,
/// so `Ẑ(s) = Π_steps mean_i w_i` is unbiased for Z(s) whatever the mixing; but where a step's `sweeps`
/// leave wide units near where they started, `log Ẑ` comes out low in a way the replicates share, which
/// their spread does not show (docs/ESTIMATORS.md §8). So each replicate then anneals its particles back
/// down its own schedule to s = 0 (`Tempering.reverse`): the reverse pass's `−log Ẑ_rev(s)` lags the other
/// way and comes out high, and the hull of the two passes' intervals (`ReportedInterval.bidirectional`) is
/// wide where the sweeps fall short (docs/METHOD.md §21).
public struct JointSMC<Model: UniformStagedModel>: Sendable {
    public var model: Model
    public var box: ClosedRange<Double>
    public var seed: UInt64
    /// Particles per replicate sampler, replicates, Gibbs sweeps per step, the ESS fraction τ.
    public var particles: Int
    public var replicates: Int
    public var sweeps: Int
    public var essFraction: Double
    /// How the replicates are shared out (this process, or also the ranks of an MPI job).
    public var sharing: any WorkSharing = LocalSharing()
    /// Where each replicate saves its progress after every tempering step (`joint-r`), and where a run
    /// continues from: nil saves nothing. A replicate continued from its snapshot ends with the same bytes.
    public var checkpoints: (any SamplerCheckpoints)?
    /// Told when a replicate continues from its snapshot, and when one finishes; and, at most once a minute
    /// (`progressEvery` seconds), where a replicate's forward or reverse pass stands.
    public var progress: (@Sendable (String) -> Void)?
    public var progressEvery: Double = 60

    static var stream: UInt64 { 0x4A4F_494E }  // "JOIN"

    /// Metropolis sweeps over every unit per tempering step unless `Setting.sweeps` says otherwise: a quarter
    /// of the widest unit's coordinates, `max(5, ⌈max_m p_m / 4⌉)` (at most 1000), the ratio at which the two
    /// passes' interval was validated on layered toys, and 5 where units are narrow (docs/ESTIMATORS.md §8).
    /// A random walk in all of a unit's p coordinates at once needs of order p accepted moves to forget where
    /// it started.
    public static func defaultSweeps(units: [StageUnits]) -> Int {
        let widest = units.map(\.dimension).max() ?? 1
        return Swift.min(jointMaximumSweeps, Swift.max(5, (widest + 3) / 4))
    }

    /// `Setting.sweeps`: 1 to `jointMaximumSweeps` Metropolis sweeps per tempering step.
    public static func checkSweeps(_ sweeps: Int) throws {
        guard (1...jointMaximumSweeps).contains(sweeps) else {
            throw TwoScaleError.invalid("\(Setting.sweeps)", "\(sweeps)", allowed: "joint: Metropolis sweeps per tempering step, 1 to \(jointMaximumSweeps)")
        }
    }

    /// `sweeps` nil: `defaultSweeps(units:)` of the model's units.
    public init(model: Model, box: ClosedRange<Double>, seed: UInt64, particles: Int, replicates: Int = 4, sweeps: Int? = nil,
                essFraction: Double = 0.8) throws {
        let sweeps = sweeps ?? Self.defaultSweeps(units: model.stageUnits)
        guard particles >= 4, particles <= 1_000_000, replicates >= 2, replicates <= 1_000, sweeps >= 1, sweeps <= jointMaximumSweeps,
              essFraction > 0, essFraction < 1, essFraction * Double(particles) > 1 else {
            throw TwoScaleError.failure("joint SMC: particles 4…10⁶, replicates 2…1000, sweeps 1…\(jointMaximumSweeps) and τP > 1 (got \(particles), \(replicates), \(sweeps), τ = \(essFraction))")
        }
        self.model = model
        self.box = box
        self.seed = seed
        self.particles = particles
        self.replicates = replicates
        self.sweeps = sweeps
        self.essFraction = essFraction
    }

    public struct Result: Sendable {
        /// `logZ[t][r]`: replicate r's log Ẑ at stop t.
        public var logZ: [[Double]]
        /// The replicates combined at each stop (`log mean_r Ẑ_r`, bias-corrected, with its variance times
        /// `StudentT.varianceInflation`).
        public var estimates: [LogEstimate]
        /// `d log Z / d log s` at each stop (replicates pooled by Ẑ), for the normalisation's variance.
        public var slope: [Double]
        /// The reverse pass: `reverseLogZ[t][r]`, replicate r's `−log Ẑ_rev` at stop t (its estimate of
        /// `log Z(s_t)` from s_t back to 0), and the replicates combined (the mean of their `Ẑ_rev` estimates
        /// `1/Z`, bias-corrected and widened as `estimates`, then negated).
        public var reverseLogZ: [[Double]]
        public var reverseEstimates: [LogEstimate]
        /// What the intervals are built from: the replicates' mean `log Ẑ_r` (forward) and mean `−log Ẑ_rev,r`
        /// (reverse), each with variance `s²/R` times `StudentT.varianceInflation`. Since `Ẑ_r` is unbiased,
        /// `E log Ẑ_r ≤ log Z` whatever the moves' mixing (Jensen), and from exact draws `−E log Ẑ_rev ≥ log Z`;
        /// the mean of logs is also close to normal where the `Ẑ_r` themselves are too heavy-tailed for their
        /// spread to be estimated from R values (docs/METHOD.md §21).
        public var meanLog: [LogEstimate]
        public var reverseMeanLog: [LogEstimate]
        public var steps: Int
        public var proposals: Int
        public var accepted: Int

        /// Stop t's result at ε as every caller reports it: the forward and reverse passes' `log E det` (the
        /// point estimates), each pass's 95% interval from its mean of logs (`meanLog`), all with ĉ's variance
        /// added (`TraceEstimate.addedVariance` at the stop's slope), and both passes' replicates.
        public func point(_ t: Int, eps: Double, zeta: Double, dimension d: Int, logVarianceOfC: Double) -> EpsilonEstimate {
            let cv = TraceEstimate.addedVariance(slope: slope[t], logVarianceOfC: logVarianceOfC)
            var forward = estimates[t], reverse = reverseEstimates[t], low = meanLog[t], high = reverseMeanLog[t]
            forward.variance += cv
            reverse.variance += cv
            low.variance += cv
            high.variance += cv
            var p = EpsilonEstimate(eps: eps, zeta: zeta, dimension: d, estimate: forward, normalizationVariance: cv)
            p.replicateLogZ = logZ[t]
            p.setReverse(reverse, dimension: d, replicates: reverseLogZ[t])
            p.ci95 = low.dimension(d: d, zeta: zeta, eps: eps).ci95
            p.ci95Joint = p.ci95
            p.ci95Reverse = high.dimension(d: d, zeta: zeta, eps: eps).ci95
            return p
        }
    }

    /// Runs the replicates (in parallel) through the ascending `stops`.
    public func run(stops: [Double], threads: Int) async throws -> Result {
        precondition(!stops.isEmpty && zip(stops, stops.dropFirst()).allSatisfy { $0 < $1 } && stops[0] >= 0)
        let me = self, reporter = progress.map { StepReporter(every: progressEvery, say: $0) }
        let reps = try await sharing.map(replicates, threads: threads) { r in
            var rng = Xoshiro256(seed: me.seed, stream: [Self.stream, UInt64(r)])
            return try me.replicate(r, stops: stops, rng: &rng, reporter: reporter)
        }
        let logZ = stops.indices.map { t in reps.map { $0.logZ[t] } }
        let reverseLogZ = stops.indices.map { t in reps.map { $0.reverseLogZ[t] } }
        let inflation = StudentT.varianceInflation(replicates: replicates)
        func combined(_ l: [Double]) -> LogEstimate {
            let c = LogEstimate.combine(l)
            var e = LogEstimate.corrected(logZ: c.logZ, relVar: c.relVar)
            e.variance *= inflation
            return e
        }
        let estimates = logZ.map(combined)
        let reverseEstimates = reverseLogZ.map { l -> LogEstimate in
            var e = combined(l.map { -$0 })
            e.value = -e.value
            return e
        }
        func meanLog(_ l: [Double]) -> LogEstimate {
            let mean = l.reduce(0, +) / Double(l.count)
            let s2 = l.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(l.count - 1)
            return LogEstimate(value: mean, variance: s2 / Double(l.count) * inflation)
        }
        let slope = stops.indices.map { t -> Double in
            let w = LogSpace.normalizedWeights(logWeights: logZ[t])
            return zip(w, reps).reduce(0) { $0 + $1.0 * $1.1.slope[t] }
        }
        return Result(logZ: logZ, estimates: estimates, slope: slope, reverseLogZ: reverseLogZ, reverseEstimates: reverseEstimates,
                      meanLog: logZ.map(meanLog), reverseMeanLog: reverseLogZ.map(meanLog),
                      steps: reps.reduce(0) { $0 + $1.steps },
                      proposals: reps.reduce(0) { $0 + $1.proposals }, accepted: reps.reduce(0) { $0 + $1.accepted })
    }

    /// One particle: θ, its stages' units given θ_{<m}, and the roots of every unit.
    struct Particle {
        var state: Model.State
        var stages: [StageUnit]
        var roots: [[[Double]]]
    }

    func particle(_ state: Model.State) throws -> Particle {
        let units = model.stageUnits
        var stages: [StageUnit] = [], roots: [[[Double]]] = []
        for m in units.indices {
            let st = try model.stage(state, m, box: box)
            stages.append(st)
            roots.append(try (0..<units[m].count).map { u in try st.unit.roots(model.unitParameters(state, stage: m, unit: u)) })
        }
        return Particle(state: state, stages: stages, roots: roots)
    }

    static func ell(_ p: Particle, _ s: Double) -> Double {
        p.roots.reduce(0) { $0 + $1.reduce(0) { $0 + LogSpace.logDetSqrt(roots: $1, scale: s) } }
    }

    static func slope(_ p: Particle, _ s: Double) -> Double {
        p.roots.reduce(0) { $0 + $1.reduce(0) { $0 + LogSpace.logDetSqrtSlope(roots: $1, scale: s) } }
    }

    struct Replicate: Codable, Sendable {
        var logZ: [Double] = []
        var slope: [Double] = []
        var reverseLogZ: [Double] = []
        var steps = 0, proposals = 0, accepted = 0
    }

    /// Replicate r (its generator `rng`), continued from its snapshot in `checkpoints` where there is one;
    /// `reporter` is told where it stands after each step.
    func replicate(_ r: Int, stops: [Double], rng: inout Xoshiro256, reporter: StepReporter? = nil) throws -> Replicate {
        let name = "joint-\(r)"
        let snapshot = try checkpoints?.load(name).map { try Snapshot(decoding: $0, name: name, sampler: self, replicate: r, stops: stops) }
        var system: Particles
        var phase = Snapshot.Phase.forward
        if let snapshot {
            if case .done = snapshot.phase {
                progress?("joint sampler \(r + 1): finished earlier (\(name))")
                return snapshot.out
            }
            system = Particles(sampler: self, particles: try snapshot.states.map { try particle($0) }, h: snapshot.h)
            (system.out, system.schedule, system.weights, phase) = (snapshot.out, snapshot.schedule, snapshot.weights, snapshot.phase)
            rng = snapshot.rng
            progress?("joint sampler \(r + 1): continues from \(name) (\(snapshot.phase.name), scale \(snapshot.cursor?.weights.scale ?? 0))")
        } else {
            let particles = try (0..<particles).map { _ in try particle(model.uniformState(box: box, rng: &rng)) }
            system = Particles(sampler: self, particles: particles, h: model.stageUnits.map { RandomWalk.initialStep(dimension: $0.dimension) })
        }
        func save(_ phase: Snapshot.Phase, _ cursor: TemperingCursor?, _ system: Particles, _ rng: Xoshiro256) throws {
            try checkpoints?.save(name, final: cursor == nil) {
                Snapshot(phase: phase, cursor: cursor, states: system.particles.map(\.state), h: system.h, out: system.out,
                              schedule: system.schedule, weights: system.weights, rng: rng).encoded(sampler: self, replicate: r, stops: stops)
            }
        }
        let top = stops[stops.count - 1]
        let saved: ((TemperingCursor, Particles, Xoshiro256) throws -> Void)? = checkpoints == nil && reporter == nil ? nil : { cursor, system, rng in
            reporter?.report("joint sampler \(r + 1): forward pass at scale \(StepReporter.scale(cursor.weights.scale)) of "
                             + "\(StepReporter.scale(top)), \(cursor.steps) tempering steps")
            try save(.forward, cursor, system, rng)
        }
        if case .forward = phase {
            let steps = try Tempering.run(&system, stops: stops, essFraction: essFraction, rng: &rng, from: snapshot?.cursor, saved: saved)
            system.out.steps = steps
        }
        // The reverse pass: back from the last stop down the forward run's scales, through the other stops, to 0.
        // With cum_k = log Ẑ[Z(down_k)/Z(top)], stop t's estimate of log Z(s_t) is cum(s_t) − cum(0) (the segment
        // from s_t down), the top's −cum(0).
        guard top > 0 else {
            system.out.reverseLogZ = stops.map { _ in 0 }
            try save(.done, nil, system, rng)
            progress?("joint sampler \(r + 1): done, \(system.out.steps) tempering steps")
            return system.out
        }
        let down = Array(stops.dropLast().reversed().filter { $0 > 0 }) + [0]
        // The acceptance reported is the forward pass's.
        var proposals = system.out.proposals, accepted = system.out.accepted, cursor: TemperingCursor?
        if case .reverse(let p, let a) = phase {
            (proposals, accepted, cursor) = (p, a, snapshot?.cursor)
        } else {
            // The reverse pass starts from unweighted draws: resample by the last stop's weights.
            system.resample(Tempering.systematic(system.weights, u: rng.uniform()))
        }
        let back = Array(system.schedule.reversed()), rungs = Tempering.reverseLadder(from: top, schedule: back, stops: down).count
        let savedReverse: ((TemperingCursor, Particles, Xoshiro256) throws -> Void)? = checkpoints == nil && reporter == nil ? nil : { cursor, system, rng in
            reporter?.report("joint sampler \(r + 1): reverse pass at scale \(StepReporter.scale(cursor.weights.scale)), "
                             + "\(cursor.index) of \(rungs) scales done")
            try save(.reverse(forwardProposals: proposals, forwardAccepted: accepted), cursor, system, rng)
        }
        let cum = try Tempering.reverse(&system, from: top, schedule: back, stops: down, rng: &rng,
                                        cursor: cursor, saved: savedReverse)
        (system.out.proposals, system.out.accepted) = (proposals, accepted)
        let atZero = cum[cum.count - 1]
        system.out.reverseLogZ = stops.map { s in s == top ? -atZero : s > 0 ? cum[down.firstIndex(of: s)!] - atZero : 0 }
        try save(.done, nil, system, rng)
        progress?("joint sampler \(r + 1): done, \(system.out.steps) tempering steps")
        return system.out
    }

    /// One replicate's forward pass alone: at each of the ascending `stops`, its particles' states and their
    /// normalised weights there, a weighted sample of `π_s ∝ G_s · U` (the lower 2sED's `π_{m−1}` where the
    /// model is a prefix of stages, `StagePrefix`), after `settleSweeps` further sweeps there.
    /// With `progress` (and `rng` as it was saved there), continues that pass instead; `saved` is handed the pass's
    /// progress after every resample–move step (`final` false) and after each stop's settling sweeps (`final` true);
    /// `stepped` the scale reached and the steps so far, after every step.
    func forwardDraws(stops: [Double], settleSweeps: Int = 0, rng: inout Xoshiro256, from progress: ForwardProgress? = nil,
                      saved: ((ForwardProgress, _ final: Bool) throws -> Void)? = nil,
                      stepped: ((_ scale: Double, _ steps: Int) -> Void)? = nil) throws -> [Draws] {
        var system: Particles
        if let p = progress {
            let snapshot = p.joint
            system = Particles(sampler: self, particles: try snapshot.states.map { try particle($0) }, h: snapshot.h)
            (system.out, system.schedule, system.weights, system.draws) = (snapshot.out, snapshot.schedule, snapshot.weights, p.draws)
            rng = snapshot.rng
        } else {
            let particles = try (0..<particles).map { _ in try particle(model.uniformState(box: box, rng: &rng)) }
            system = Particles(sampler: self, particles: particles, h: model.stageUnits.map { RandomWalk.initialStep(dimension: $0.dimension) })
        }
        system.keepDraws = true
        system.settleSweeps = settleSweeps
        func hook(final: Bool) -> ((TemperingCursor, Particles, Xoshiro256) throws -> Void)? {
            let told = final ? nil : stepped
            guard saved != nil || told != nil else { return nil }
            return { cursor, system, rng in
                told?(cursor.weights.scale, cursor.steps)
                try saved?(ForwardProgress(joint: Snapshot(phase: .forward, cursor: cursor, states: system.particles.map(\.state), h: system.h,
                                                           out: system.out, schedule: system.schedule, weights: system.weights, rng: rng),
                                           draws: system.draws), final)
            }
        }
        _ = try Tempering.run(&system, stops: stops, essFraction: essFraction, rng: &rng, from: progress?.joint.cursor,
                              saved: hook(final: false), settled: hook(final: true))
        return system.draws
    }

    /// A weighted sample at one stop (`forwardDraws`): the particles' states and their normalised weights.
    typealias Draws = (states: [Model.State], weights: [Double])

    /// Where `forwardDraws` stands: its replicate's snapshot in the forward pass and the draws kept so far.
    struct ForwardProgress {
        var joint: Snapshot
        var draws: [Draws]

        func write(to w: inout SnapshotWriter, sampler: JointSMC) {
            joint.write(to: &w, sampler: sampler)
            sampler.write(draws, to: &w)
        }

        init(joint: Snapshot, draws: [Draws]) { (self.joint, self.draws) = (joint, draws) }

        init(from reader: inout SnapshotReader, sampler: JointSMC) throws {
            joint = try Snapshot(from: &reader, sampler: sampler)
            guard joint.phase == .forward, joint.cursor != nil else { throw SnapshotReader.damaged(reader.name) }
            draws = try sampler.readDraws(from: &reader)
        }
    }

    /// Weighted samples at stops, each its weights and its states.
    func write(_ draws: [Draws], to w: inout SnapshotWriter) {
        w.int(draws.count)
        for d in draws {
            w.doubles(d.weights)
            write(d.states, to: &w)
        }
    }

    func readDraws(from reader: inout SnapshotReader) throws -> [Draws] {
        try (0..<reader.count()).map { _ in
            let weights = try reader.doubles()
            return (try readStates(from: &reader, count: weights.count), weights)
        }
    }

    /// A replicate's particles as `Tempering` sees them.
    struct Particles: TemperedSystem {
        let sampler: JointSMC
        var particles: [Particle]
        /// The random walk's step per stage.
        var h: [Double]
        var out = Replicate()
        /// The scales at which the forward run resampled and moved, and its normalised weights at the last
        /// stop, for the reverse pass.
        var schedule: [Double] = []
        var weights: [Double] = []
        /// With `keepDraws`, the particles' states and normalised weights at each stop (`forwardDraws`), after
        /// `settleSweeps` further sweeps there.
        var keepDraws = false
        var settleSweeps = 0
        var draws: [Draws] = []

        var count: Int { particles.count }
        func logTarget(_ i: Int, at s: Double) -> Double { JointSMC.ell(particles[i], s) }
        mutating func resample(_ idx: [Int]) { particles = idx.map { particles[$0] } }
        mutating func move(at s: Double, ell: inout [Double], rng: inout Xoshiro256) throws {
            try sampler.move(&particles, ell: &ell, s: s, h: &h, rng: &rng, out: &out)
        }
        mutating func stepped(at s: Double, moved: Bool) {
            if moved { schedule.append(s) }
        }
        mutating func settle(at s: Double, ell: inout [Double], rng: inout Xoshiro256) throws {
            guard settleSweeps > 0 else { return }
            var more = sampler
            more.sweeps = settleSweeps
            try more.move(&particles, ell: &ell, s: s, h: &h, rng: &rng, out: &out)
        }
        mutating func collect(stop s: Double, logZ: Double, weights: TemperingWeights) {
            out.logZ.append(logZ)
            let w = weights.normalized
            self.weights = w
            out.slope.append((0..<count).reduce(0) { $0 + w[$1] * JointSMC.slope(particles[$1], s) })
            if keepDraws { draws.append((particles.map(\.state), w)) }
        }
    }

    /// `sweeps` Metropolis-within-Gibbs sweeps over every stage's units, each a reflected random walk in
    /// the unit's coordinates (per-coordinate scale: the particles' spread, pooled over the stage's units)
    /// accepted with `min(1, G_s(θ')/G_s(θ))`; later stages' units and roots are recomputed for θ'.
    func move(_ ps: inout [Particle], ell: inout [Double], s: Double, h: inout [Double], rng: inout Xoshiro256,
              out: inout Replicate) throws {
        let units = model.stageUnits
        let lo = box.lowerBound, hi = box.upperBound, width = hi - lo
        let n = ps.count
        for _ in 0..<sweeps {
            for m in units.indices {
                let p = units[m].dimension
                // Per-coordinate spread over particles and the stage's exchangeable units.
                var mean = [Double](repeating: 0, count: p), sq = mean
                for i in 0..<n {
                    for u in 0..<units[m].count {
                        let x = model.unitParameters(ps[i].state, stage: m, unit: u)
                        for j in 0..<p { mean[j] += x[j]; sq[j] += x[j] * x[j] }
                    }
                }
                let cnt = Double(n * units[m].count)
                let sd = (0..<p).map { j -> Double in
                    RandomWalk.clamped(Swift.max(0, sq[j] / cnt - (mean[j] / cnt) * (mean[j] / cnt)).squareRoot(), width: width)
                }
                var acc = 0
                for i in 0..<n {
                    for u in 0..<units[m].count {
                        let x = model.unitParameters(ps[i].state, stage: m, unit: u)
                        let y = (0..<p).map { j in RandomWalk.reflect(x[j] + h[m] * sd[j] * rng.normal(), lo, hi) }
                        var q = ps[i]
                        model.setUnit(&q.state, stage: m, unit: u, parameters: y)
                        q.roots[m][u] = try q.stages[m].unit.roots(y)
                        for later in (m + 1)..<units.count {
                            let st = try model.stage(q.state, later, box: box)
                            q.stages[later] = st
                            q.roots[later] = try (0..<units[later].count).map { v in
                                try st.unit.roots(model.unitParameters(q.state, stage: later, unit: v))
                            }
                        }
                        // Δ log G_s: the moved unit and every later stage.
                        var logA = LogSpace.logDetSqrt(roots: q.roots[m][u], scale: s) - LogSpace.logDetSqrt(roots: ps[i].roots[m][u], scale: s)
                        for later in (m + 1)..<units.count {
                            for v in 0..<units[later].count {
                                logA += LogSpace.logDetSqrt(roots: q.roots[later][v], scale: s)
                                    - LogSpace.logDetSqrt(roots: ps[i].roots[later][v], scale: s)
                            }
                        }
                        out.proposals += 1
                        if rng.metropolisAccepts(logRatio: logA) {
                            ps[i] = q
                            ell[i] += logA
                            acc += 1
                            out.accepted += 1
                        }
                    }
                }
                h[m] = RandomWalk.adapted(h[m], acceptance: Double(acc) / Double(n * units[m].count))
            }
        }
    }
}
