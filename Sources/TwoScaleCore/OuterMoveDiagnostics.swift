/// What moving the earlier stage under a later stage's weights did (`StagedSMC.moveEarlier`), per stage:
/// the tempering steps, the Metropolis–Hastings proposals of θ_{m−1} (each with a fresh island) and how
/// many were accepted. All zero where the plain weights kept their ESS and nothing was moved.
public struct OuterMoveDiagnostics: Sendable, Equatable, Codable {
    public var steps: Int
    public var proposals: Int
    public var accepted: Int
    /// The share of the K particles that are distinct at the end (after the last move).
    public var distinct: Double
    /// The share of the K initial particles that still have descendants at the end (the genealogy the
    /// variance estimate reads; near 1/K it has collapsed).
    public var ancestors: Double

    public init(steps: Int = 0, proposals: Int = 0, accepted: Int = 0, distinct: Double = 1, ancestors: Double = 1) {
        self.steps = steps
        self.proposals = proposals
        self.accepted = accepted
        self.distinct = distinct
        self.ancestors = ancestors
    }

    public var acceptance: Double { proposals > 0 ? Double(accepted) / Double(proposals) : 0 }
}
