import Foundation
import Networks
import RandomStreams
import TwoScaleCore
import TwoScaleFormats

/// Settings of the adversarial search for `sup_{θ∈Θ} |R(θ) − R_n(θ)|`.
public struct AdversarialSettings: Sendable, Equatable {
    /// Starting points S ≥ 1, θ₀ ~ U(Θ) each; every start is climbed once per sign of g.
    public var starts: Int
    /// Projected Adam steps T ≥ 0 per (start, sign).
    public var iterations: Int
    /// Adam's step η = `stepFraction · (hi − lo)`, constant (0 < `stepFraction` ≤ 1).
    public var stepFraction: Double
    public var seed: UInt64

    public init(starts: Int, iterations: Int, stepFraction: Double = 0.02, seed: UInt64) throws {
        guard starts >= 1, starts <= 1_000_000 else {
            throw TwoScaleError.invalid("\(Setting.adversarialStarts)", "\(starts)", allowed: "give from 1 to 10⁶ starting points")
        }
        guard iterations >= 0, iterations <= 10_000_000 else {
            throw TwoScaleError.invalid("\(Setting.adversarialIterations)", "\(iterations)", allowed: "give from 0 to 10⁷ iterations")
        }
        guard stepFraction.isFinite, stepFraction > 0, stepFraction <= 1 else {
            throw TwoScaleError.invalid("\(Setting.adversarialStep)", "\(stepFraction)", allowed: "the step, a fraction of the box width, must lie in (0, 1]")
        }
        self.starts = starts
        self.iterations = iterations
        self.stepFraction = stepFraction
        self.seed = seed
    }
}

/// One climb: a start and the sign of g it ascends.
public struct AdversarialClimb: Sendable, Equatable {
    public var start: Int
    /// +1: ascent on g = R − R_n; −1: ascent on −g.
    public var sign: Int
    /// g(θ₀).
    public var initialGap: Double
    /// The largest `sign · g` over the iterates θ₀…θ_T.
    public var best: Double
    /// Iterates found outside Θ (0 by construction; counted, not assumed).
    public var iteratesOutsideBox: Int
}

/// The outcome of the search: the best |g| found, a lower estimate of `sup_{θ∈Θ} |R(θ) − R_n(θ)|`.
public struct AdversarialResult: Sendable, Equatable {
    /// `|g(θ*)| = |R(θ*) − R_n(θ*)|`, the largest over every climb and iterate.
    public var deviation: Double
    /// The sign of `g(θ*)` (+1: R above R_n; ties at g = 0 count +1).
    public var sign: Int
    /// θ*.
    public var network: Network
    /// R(θ*) on the population sample and its Monte Carlo standard error `sd/√M`.
    public var populationRisk: Double
    public var populationRiskError: Double
    public var populationSize: Int
    /// R_n(θ*).
    public var empiricalRisk: Double
    /// Every climb, in the order (start 0, +1), (start 0, −1), (start 1, +1), …
    public var climbs: [AdversarialClimb]
    /// Iterates checked against Θ (`2 S (T + 1)`), and how many lay outside it.
    public var iteratesChecked: Int
    public var iteratesOutsideBox: Int

    public var allIteratesInBox: Bool { iteratesOutsideBox == 0 }
    /// Per start, the largest |g| of its two climbs.
    public var perStart: [Double] {
        stride(from: 0, to: climbs.count, by: 2).map { i in Swift.max(climbs[i].best, climbs[i + 1].best) }
    }
}

/// An adversarial lower estimate of `sup_{θ∈Θ} |R(θ) − R_n(θ)|` for the bounded 1-Lipschitz loss
/// `ℓ = 1 − p_θ(y|x)` (`ProbabilityLoss`): R on a fixed `PopulationSample` of M inputs with exact label
/// expectations (Monte Carlo error `sd/√M`, reported at θ*), R_n on the training set.
///
/// From each of S starts θ₀ ~ U(Θ) (start s draws from `Xoshiro256(seed:, stream: ["ADVS", s])`), two
/// climbs: projected gradient ascent on `g(θ) = R(θ) − R_n(θ)` and on `−g`. Each step is one Adam step
/// (β₁ = 0.9, β₂ = 0.999, ϵ = 10⁻⁸) with the constant step η = `stepFraction · (hi − lo)` on the exact
/// gradient of ±g, then the projection onto Θ (every coordinate clamped); T steps, every iterate θ₀…θ_T
/// checked to lie in Θ and the best kept. Adam moves each coordinate by about η per step whatever the
/// gradient's scale, so T·η ≥ (hi − lo) lets a climb cross the box. The climbs run concurrently, each
/// from its own stream, and are reduced in index order (the first climb wins ties), so the result does not
/// depend on the number of threads.
public enum AdversarialDeviation {
    static let stream: UInt64 = 0x4144_5653  // "ADVS"

    /// `threads`: climbs run at once (default: the active cores, at most 2); the result does not depend on it.
    public static func search(architecture: Architecture, activation: Activation, box: ParameterBox, data: Dataset,
                              population: PopulationSample, settings: AdversarialSettings,
                              threads: Int? = nil) async throws -> AdversarialResult {
        try check(architecture: architecture, activation: activation, data: data, population: population)
        let width = Swift.max(1, threads ?? Swift.min(ProcessInfo.processInfo.activeProcessorCount, 2))
        let climbs = try await Parallel.map(2 * settings.starts, threads: width) { u in
            try climb(u, architecture: architecture, activation: activation, box: box, data: data, population: population, settings: settings)
        }
        return try reduce(climbs, data: data, population: population, settings: settings)
    }

    /// The same search with its climbs one after another, for callers that already run many searches at
    /// once (`EmpiricalGap`, one per (n, trial)): the same result as `search`, bit for bit.
    public static func searchSerially(architecture: Architecture, activation: Activation, box: ParameterBox, data: Dataset,
                                      population: PopulationSample, settings: AdversarialSettings) throws -> AdversarialResult {
        try check(architecture: architecture, activation: activation, data: data, population: population)
        let climbs = try (0..<(2 * settings.starts)).map { u in
            try climb(u, architecture: architecture, activation: activation, box: box, data: data, population: population, settings: settings)
        }
        return try reduce(climbs, data: data, population: population, settings: settings)
    }

    /// Climb u of a search: start u / 2, ascending g for even u and −g for odd u.
    static func climb(_ u: Int, architecture: Architecture, activation: Activation, box: ParameterBox, data: Dataset,
                      population: PopulationSample, settings: AdversarialSettings) throws -> (climb: AdversarialClimb, network: Network) {
        try climb(start: u / 2, sign: u % 2 == 0 ? 1 : -1, architecture: architecture, activation: activation,
                  box: box, data: data, population: population, settings: settings)
    }

    /// Validates the data and the population sample against the architecture (typed errors).
    static func check(architecture: Architecture, activation: Activation, data: Dataset, population: PopulationSample) throws {
        let probe = Network.zeros(architecture: architecture, activation: activation)
        _ = try ProbabilityLoss.empirical(probe, on: data)
        _ = try ProbabilityLoss.population(probe, on: population)
    }

    /// The best climb in index order (the first wins ties), re-evaluated at its θ*.
    static func reduce(_ climbs: [(climb: AdversarialClimb, network: Network)], data: Dataset, population: PopulationSample,
                       settings: AdversarialSettings) throws -> AdversarialResult {
        var bestIndex = 0
        for (i, c) in climbs.enumerated() where c.climb.best > climbs[bestIndex].climb.best { bestIndex = i }
        let theta = climbs[bestIndex].network
        let r = try ProbabilityLoss.population(theta, on: population)
        let rn = try ProbabilityLoss.empirical(theta, on: data)
        let g = r.risk - rn.risk
        return AdversarialResult(deviation: Swift.abs(g), sign: g >= 0 ? 1 : -1, network: theta,
                                 populationRisk: r.risk, populationRiskError: r.standardError, populationSize: population.count,
                                 empiricalRisk: rn.risk, climbs: climbs.map(\.climb),
                                 iteratesChecked: 2 * settings.starts * (settings.iterations + 1),
                                 iteratesOutsideBox: climbs.reduce(0) { $0 + $1.climb.iteratesOutsideBox })
    }

    /// θ₀ of start s.
    public static func startingPoint(_ s: Int, architecture: Architecture, activation: Activation, box: ParameterBox,
                                     seed: UInt64) -> Network {
        var rng = Xoshiro256(seed: seed, stream: [stream, UInt64(s)])
        return box.uniform(architecture: architecture, activation: activation, rng: &rng)
    }

    static func climb(start s: Int, sign: Int, architecture: Architecture, activation: Activation, box: ParameterBox,
                      data: Dataset, population: PopulationSample,
                      settings: AdversarialSettings) throws -> (climb: AdversarialClimb, network: Network) {
        var net = startingPoint(s, architecture: architecture, activation: activation, box: box, seed: settings.seed)
        var opt = Optimizer(settings: try OptimizerSettings(kind: .adam, learningRate: settings.stepFraction * box.width),
                            parameterCount: architecture.parameterCount)
        let sg = Double(sign)
        var result = AdversarialClimb(start: s, sign: sign, initialGap: 0, best: -.infinity, iteratesOutsideBox: 0)
        var bestNet = net
        for t in 0...settings.iterations {
            let last = t == settings.iterations
            let r = try ProbabilityLoss.population(net, on: population, gradient: !last)
            let rn = try ProbabilityLoss.empirical(net, on: data, gradient: !last)
            let g = r.risk - rn.risk
            guard g.isFinite else {
                throw TwoScaleError.failure("adversarial search: g(θ) is not finite at start \(s + 1), step \(t)")
            }
            if !box.contains(net) { result.iteratesOutsideBox += 1 }
            if t == 0 { result.initialGap = g }
            if sg * g > result.best { result.best = sg * g; bestNet = net }
            guard !last, let gr = r.gradient, let gn = rn.gradient else { break }
            // Adam descends: hand it −∇(sign·g) to climb sign·g.
            var d = gr
            for j in d.indices { d[j] = -sg * (gr[j] - gn[j]) }
            opt.step(&net, gradient: d)
            box.project(&net)
        }
        return (result, bestNet)
    }
}
