/// What tilting a later stage's outer particles by its majorant did (`StagedSMC.tiltEarlier`, docs/METHOD.md
/// §22), per stage m ≥ 2: the fit of the plain islands' `log Ẑ_m` on the majorant that decided whether to
/// tilt, and, where it did, the tempering steps, the random-walk proposals and how far they moved.
public struct TiltDiagnostics: Sendable, Equatable, Codable {
    /// Why a stage was not tilted: the first of the tilt's conditions (`StagedSMC.tiltDecision`) it failed.
    public enum Declined: String, Sendable, Equatable, Codable {
        /// No fit: the stage has no majorant, or the majorant or the islands' logs did not vary.
        case noFit = "no_fit"
        /// The plain outer weights kept an ESS of at least half of K: nothing to mend.
        case essAtLeastHalf = "ess_at_least_half"
        /// The fit's slope β is not positive.
        case slopeNotPositive = "slope_not_positive"
        /// The majorant explains less than `StagedSMC.tiltExplainedFraction` of the outer log-weights' variance.
        case explainedBelowHalf = "explained_below_half"
    }

    /// Whether the stage was tilted (its outer ESS below half of K and the fit good enough).
    public var engaged: Bool
    /// Why not, where it was not (nil where it was).
    public var declined: Declined?
    /// β, the least-squares slope of `log Ẑ_m` on the majorant over the outer particles (0 where not fitted).
    public var slope: Double
    /// The share of the variance of `log Ẑ_m` that the fit explains (R², 0 where not fitted).
    public var explained: Double
    public var steps: Int
    public var proposals: Int
    public var accepted: Int
    /// The smallest decorrelation of an earlier stage's units over the moves (`RandomWalk.decorrelation`, each
    /// final particle against its ancestor at the start; about 1 where the moves forgot their start); nil
    /// where nothing moved.
    public var decorrelation: Double?

    public init(engaged: Bool = false, declined: Declined? = nil, slope: Double = 0, explained: Double = 0, steps: Int = 0,
                proposals: Int = 0, accepted: Int = 0, decorrelation: Double? = nil) {
        (self.engaged, self.declined, self.slope, self.explained) = (engaged, declined, slope, explained)
        (self.steps, self.proposals, self.accepted, self.decorrelation) = (steps, proposals, accepted, decorrelation)
    }

    public var acceptance: Double { proposals > 0 ? Double(accepted) / Double(proposals) : 0 }
}
