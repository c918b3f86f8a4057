import Foundation
import RandomStreams
import TwoScaleCore

/// A per-axis Fisher information family `λ(t)` of a separable toy model: the seam a new family plugs
/// into. A family is one type (one file) and one entry in the shipped list of `AxisFamilies`, or a `register` call
/// from a program or a test; `toy` and `bound` then find it by its name (`Setting.family`).
///
/// The exact 2sED needs `⟨√λ⟩` and `⟨λ⟩` over the box (GSL quadrature, `ToyModel`), so a family says
/// where it is defined and where it is singular: `λ(t) ~ |t − t₀|^(−p)` at each singular point t₀.
public protocol AxisFamily: Sendable {
    /// Its name, as `Setting.family` and the results' `family` key spell it.
    var name: String { get }
    func lambda(_ t: Double) -> Double
    /// `√λ(t)` (its own closed form, for accuracy near singular points).
    func sqrtLambda(_ t: Double) -> Double
    /// The parameter domain as a closed interval whose end points may be singular.
    var domain: (lo: Double, hi: Double) { get }
    /// The points where λ is infinite, and the power p there.
    var singularPoints: [Double] { get }
    var singularPower: Double { get }
    /// The largest `√λ` on `[lo, hi]` (the greedy cover's smallest box); by default the larger end value,
    /// right for every family monotone or convex on its domain.
    func maxSqrtLambda(lo: Double, hi: Double) -> Double
    /// `Σ_i λ(t_i)` over `count` draws `t_i` uniform on `[lo, hi]` from `rng`, in order: `Tr F` at one θ.
    func lambdaSum(count: Int, lo: Double, hi: Double, rng: inout Xoshiro256) -> Double
    /// `√λ(t_i)` of `count` such draws, in order: the Fisher roots at one θ.
    func sqrtLambdas(count: Int, lo: Double, hi: Double, rng: inout Xoshiro256) -> [Double]
}

extension AxisFamily {
    public func maxSqrtLambda(lo: Double, hi: Double) -> Double { Swift.max(sqrtLambda(lo), sqrtLambda(hi)) }

    // The loops over a draw's coordinates are requirements with these defaults so that each family gets
    // them compiled with its own λ inlined: a call through the protocol per coordinate costs more than λ.
    public func lambdaSum(count: Int, lo: Double, hi: Double, rng: inout Xoshiro256) -> Double {
        var t = 0.0
        for _ in 0..<count { t += lambda(rng.uniform(lo, hi)) }
        return t
    }

    public func sqrtLambdas(count: Int, lo: Double, hi: Double, rng: inout Xoshiro256) -> [Double] {
        var roots = [Double](repeating: 0, count: count)
        for i in 0..<count { roots[i] = sqrtLambda(rng.uniform(lo, hi)) }
        return roots
    }

    /// Whether `∫ λ(t)^q dt` over `[lo, hi]` is finite.
    func integrable(power q: Double, lo: Double, hi: Double) -> Bool {
        let touches = singularPoints.contains { $0 == lo || $0 == hi }
        return !touches || q * singularPower < 1
    }
}

/// The axis families by name: the shipped ones, then those a program registers.
public enum AxisFamilies {
    /// The families shipped, in the order help texts list them, then those registered.
    private static let registry = NamedRegistry<any AxisFamily>(shipped: [BernoulliFamily(), PoissonFamily(), ExponentialFamily()],
                                                                  name: { $0.name })

    public static var all: [any AxisFamily] { registry.all }

    /// The family of that name, or nil.
    public static func named(_ name: String) -> (any AxisFamily)? { registry.named(name) }

    /// Adds a family under its name (a name any toy family has, `constant` and the staged ones included, is refused).
    public static func register(_ family: any AxisFamily) throws {
        guard registry.add(family, refusedIf: { $0 == "constant" || StagedToyFamilies.named($0) != nil }) else {
            throw TwoScaleError.failure("a toy family named \(family.name) is already registered")
        }
    }

    /// Removes a family added by `register` (the shipped ones stay).
    public static func unregister(_ name: String) { registry.remove(named: name) }
}
