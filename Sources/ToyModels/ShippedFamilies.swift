import Foundation

/// `λ(t) = 1/(t(1−t))` on (0, 1): a Bernoulli(t) observation.
public struct BernoulliFamily: AxisFamily {
    public init() {}
    public var name: String { "bernoulli" }
    public func lambda(_ t: Double) -> Double { 1 / (t * (1 - t)) }
    public func sqrtLambda(_ t: Double) -> Double { 1 / (t * (1 - t)).squareRoot() }
    public var domain: (lo: Double, hi: Double) { (0, 1) }
    public var singularPoints: [Double] { [0, 1] }
    public var singularPower: Double { 1 }
}

/// `λ(t) = 1/t` on (0, ∞): a Poisson(t) observation.
public struct PoissonFamily: AxisFamily {
    public init() {}
    public var name: String { "poisson" }
    public func lambda(_ t: Double) -> Double { 1 / t }
    public func sqrtLambda(_ t: Double) -> Double { 1 / t.squareRoot() }
    public var domain: (lo: Double, hi: Double) { (0, .infinity) }
    public var singularPoints: [Double] { [0] }
    public var singularPower: Double { 1 }
}

/// `λ(t) = 1/t²` on (0, ∞): an exponential observation with mean t.
public struct ExponentialFamily: AxisFamily {
    public init() {}
    public var name: String { "exponential" }
    public func lambda(_ t: Double) -> Double { 1 / (t * t) }
    public func sqrtLambda(_ t: Double) -> Double { 1 / t }
    public var domain: (lo: Double, hi: Double) { (0, .infinity) }
    public var singularPoints: [Double] { [0] }
    public var singularPower: Double { 2 }
}
