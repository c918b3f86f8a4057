import Foundation

/// The name of a Monte Carlo estimator of `E_θ det(I + t F̂^{1/2})` (docs/ESTIMATORS.md), as `Setting.estimator`
/// and the results' `estimator` key spell it.
///
/// An open set of names, not an enum: what an estimator does is its implementation's, found by name in
/// the one registry (`EstimatorRegistry` in the module Estimation, for networks and toy models alike),
/// so a new estimator adds a name and an implementation and no code elsewhere tests for a name.
public struct EstimatorKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }

    /// Uniform draws of the whole θ, averaged in log space (the first version's estimator).
    public static let plain = EstimatorKind(rawValue: "plain")
    /// Factorised over independent blocks, each by an adaptive SMC sampler annealed in the scale.
    public static let smc = EstimatorKind(rawValue: "smc")
    /// One annealed sampler over all of θ, every layer moved under the whole determinant (joint tempering;
    /// its name until 27 Nov 2026 was `joint`, which names the joint 2sED elsewhere: `EstimatorRegistry.renamed`).
    public static let tempering = EstimatorKind(rawValue: "tempering")
}
