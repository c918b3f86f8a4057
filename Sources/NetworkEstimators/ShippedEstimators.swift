import Estimation

/// The estimators twoscale ships, installed into the one registry (`EstimatorRegistry`, module Estimation)
/// in the order help texts and errors list them. The command line installs them at launch; a program using
/// the library calls `install()` once before it asks the registry for an estimator.
public enum ShippedEstimators {
    public static let all: [any NetworkEstimator.Type] = [PlainEstimator.self, SMCEstimator.self, TemperingEstimator.self]

    /// Installs `all` (again: no change).
    public static func install() { EstimatorRegistry.install(shipped: all) }
}
