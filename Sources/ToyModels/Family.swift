import Foundation
import TwoScaleCore

/// The family of a separable toy model: `constant` (a λ per axis, given) or an `AxisFamily` `λ(t)` shared
/// by every axis. Equal when their names are.
public enum Family: Sendable, Equatable, CustomStringConvertible {
    case constant
    case axis(any AxisFamily)

    /// The shipped axis families (`AxisFamilies` finds any by name).
    public static let bernoulli = Family.axis(BernoulliFamily())
    public static let poisson = Family.axis(PoissonFamily())
    public static let exponential = Family.axis(ExponentialFamily())

    /// `constant`, or a registered axis family's name; nil for any other.
    public init?(name: String) {
        if name == "constant" { self = .constant; return }
        guard let f = AxisFamilies.named(name) else { return nil }
        self = .axis(f)
    }

    /// Every family's name: `constant`, then the axis families in registry order.
    public static var names: [String] { ["constant"] + AxisFamilies.all.map(\.name) }

    public var name: String {
        switch self {
        case .constant: return "constant"
        case .axis(let f): return f.name
        }
    }

    public var description: String { name }

    public static func == (a: Family, b: Family) -> Bool { a.name == b.name }

    /// The axis family (nil for `constant`, whose λ are given per axis).
    public var axisFamily: (any AxisFamily)? {
        if case .axis(let f) = self { return f }
        return nil
    }
}
