import Foundation
import TwoScaleCore

/// Diagnostics of annealed samplers, pooled over replicates (and units, by `merge`).
public struct SMCDiagnostics: Sendable, Equatable, Codable {
    /// Intermediate scales (resample–move steps) per replicate sampler: largest seen.
    public var maxSteps: Int = 0
    /// Total resample–move steps over all samplers.
    public var steps: Int = 0
    /// Samplers run.
    public var samplers: Int = 0
    /// Metropolis–Hastings proposals and acceptances.
    public var proposals: Int = 0
    public var accepted: Int = 0
    /// Proposals whose spectrum was computed (all of them without a screen; with one, those that passed
    /// the delayed-acceptance screen).
    public var evaluated: Int = 0
    /// Smallest ESS fraction (ESS / particles) seen at a recorded stop.
    public var minStopESS: Double = 1
    /// Smallest decorrelation of a move (`RandomWalk.decorrelation`: 1 where the particles end as far from
    /// where they started as independent draws would); nil before any move.
    public var minDecorrelation: Double? = nil

    public init() {}

    public var acceptanceRate: Double? { proposals > 0 ? Double(accepted) / Double(proposals) : nil }
    /// The share of proposals whose spectrum was computed (1 without a screen).
    public var evaluatedFraction: Double? { proposals > 0 ? Double(evaluated) / Double(proposals) : nil }
    public var meanSteps: Double { samplers > 0 ? Double(steps) / Double(samplers) : 0 }

    public mutating func merge(_ o: SMCDiagnostics) {
        maxSteps = Swift.max(maxSteps, o.maxSteps)
        steps += o.steps
        samplers += o.samplers
        proposals += o.proposals
        accepted += o.accepted
        evaluated += o.evaluated
        minStopESS = Swift.min(minStopESS, o.minStopESS)
        if let d = o.minDecorrelation { minDecorrelation = Swift.min(minDecorrelation ?? d, d) }
    }
}

extension SMCDiagnostics {
    /// What a report shows of the diagnostics: samplers, mean and largest number of steps, the
    /// Metropolis–Hastings acceptance rate (null without proposals) and the smallest stop ESS fraction.
    public struct Summary: Sendable, Equatable, Encodable {
        public var samplers: Int
        public var meanSteps: Double
        public var maxSteps: Int
        @NullIfNil public var acceptance: Double?
        /// Spectra computed per proposal: the share of proposals that passed the delayed-acceptance
        /// screen (below 1 with it).
        @NullIfNil public var evaluated: Double?
        public var minStopEssFraction: Double
        /// The smallest decorrelation of a move (null without moves).
        @NullIfNil public var minDecorrelation: Double?
    }

    public var summary: Summary {
        Summary(samplers: samplers, meanSteps: meanSteps, maxSteps: maxSteps, acceptance: acceptanceRate,
                evaluated: evaluatedFraction, minStopEssFraction: minStopESS, minDecorrelation: minDecorrelation)
    }
}
