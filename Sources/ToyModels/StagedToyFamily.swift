import Foundation
import Samplers
import TwoScaleCore

/// A staged toy model whose 2sED is exact: what `toy` needs of a staged family beside the sampler's
/// `CertifiedStagedModel`, so that the networks' estimators run on it and are judged against exact values.
public protocol ExactStagedToy: CertifiedStagedModel {
    /// The box every coordinate lives in.
    var box: ClosedRange<Double> { get }
    /// `E_U Tr F` at θ uniform on the box, exact.
    var meanTrace: Double { get }
    /// The family's own parameters beside the stages and the box, in the order results list them
    /// (result keys: the names as given).
    var parameters: [(name: String, value: Double)] { get }
    /// Exact d_ζ(ε), lower d_ζ(ε), the limit outer ESS fraction of each stage m ≥ 2 (as K → ∞), and the
    /// 2sED's stage terms (`log Z_1`, then `log E_{π_{<m}} Z_m`, raw log-determinants).
    func exact(eps: Double, zeta: Double, normalization: Normalization) throws
        -> (dZeta: Double, dZetaLower: Double, stageOuterESSFraction: [Double], stageLogZ: [Double])
}

extension ExactStagedToy {
    /// The normalisation constant c, from the exact mean trace.
    public func scale(_ normalization: Normalization) throws -> Double {
        try normalization.constant(dimension: parameterCount, meanTrace: meanTrace)
    }
}

/// A family of staged exact toys, the seam a new one plugs into: one type (one file) and a line in
/// the shipped list of `StagedToyFamilies`, or a `register` call from a program or a test. `toy` finds it by its name
/// (`Setting.family`), takes its settings, and runs the exact values and the staged estimators on it.
public protocol StagedToyFamily: Sendable {
    /// Its name, as `Setting.family` and the results' `family` key spell it.
    var name: String { get }
    /// The settings it owns (a plug-in declares its own with `Setting.declare`); each takes a list of numbers.
    var settings: [Setting] { get }
    /// Its model on the box `lo:hi` from the settings given (a setting absent takes the family's default).
    func model(_ given: [Setting: [Double]], box: (Double, Double)) throws -> any ExactStagedToy
}

/// The staged toy families by name: the shipped ones, then those a program registers.
public enum StagedToyFamilies {
    /// The families shipped, in the order help texts list them, then those registered.
    private static let registry = NamedRegistry<any StagedToyFamily>(shipped: [LayeredToyFamily()], name: { $0.name })

    public static var all: [any StagedToyFamily] { registry.all }

    /// The family of that name, or nil.
    public static func named(_ name: String) -> (any StagedToyFamily)? { registry.named(name) }

    /// Every setting some staged family owns, with the first family that owns it.
    public static var owners: [Setting: any StagedToyFamily] {
        var out: [Setting: any StagedToyFamily] = [:]
        for f in all { for s in f.settings where out[s] == nil { out[s] = f } }
        return out
    }

    /// Adds a family under its name (a name any toy family has, `constant` included, is refused).
    public static func register(_ family: any StagedToyFamily) throws {
        guard registry.add(family, refusedIf: { Family(name: $0) != nil }) else {
            throw TwoScaleError.failure("a toy family named \(family.name) is already registered")
        }
    }

    /// Removes a family added by `register` (the shipped ones stay).
    public static func unregister(_ name: String) { registry.remove(named: name) }
}
