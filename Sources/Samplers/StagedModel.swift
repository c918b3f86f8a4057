import Foundation
import RandomStreams
import TwoScaleCore

/// A model whose Fisher matrix is block diagonal over stages m = 1…L, where stage m's block depends on
/// θ_{≤m} only and, given θ_{<m}, is a product of `count` exchangeable units: each the same function of
/// its own `dimension` coordinates, with the same uniform prior on the box (docs/METHOD.md §13). A
/// Markov network's layers are such stages, and so are the stages of the layered toy model. The smc
/// estimator (`StagedSMC`) needs nothing else of a model.
public protocol StagedModel: Sendable {
    /// θ, or the part of it that is set: stage by stage, unit by unit.
    associatedtype State: Sendable

    /// d, all stages' coordinates.
    var parameterCount: Int { get }
    /// The exchangeable units of each stage.
    var stageUnits: [StageUnits] { get }
    /// θ with no unit set yet.
    func emptyState() -> State
    /// Sets the coordinates of unit `u` of stage `m`.
    func setUnit(_ state: inout State, stage m: Int, unit u: Int, parameters: [Double])
    /// Stage m's unit given θ_{<m} (set in `state`), as the sampler sees it on `box`; for the last stage,
    /// also the roots of the unit's supremum over its own coordinates, when the model knows them.
    func stage(_ state: State, _ m: Int, box: ClosedRange<Double>) throws -> StageUnit
    /// `Tr F(θ)` at θ uniform on `box`, drawn from `rng` (for the trace normalisation).
    func uniformTrace(box: ClosedRange<Double>, rng: inout Xoshiro256) throws -> Double
    /// Unit u of stage m's coordinates in `state`.
    func unitParameters(_ state: State, stage m: Int, unit u: Int) -> [Double]
    /// `log M_m(θ_{<m})` at scale s: a function of the earlier stages only, at least `log G_m(θ)` for every θ_m
    /// in the box (the stage's majorant given θ_{<m}, which `tiltEarlier` tempers in); nil where the model
    /// has none.
    func stageMajorant(_ state: State, stage m: Int, scale s: Double, box: ClosedRange<Double>) throws -> Double?
}

extension StagedModel {
    public func stageMajorant(_ state: State, stage m: Int, scale s: Double, box: ClosedRange<Double>) throws -> Double? { nil }
}

/// How many exchangeable units a stage has, and how many coordinates each.
public struct StageUnits: Sendable, Equatable {
    public var count: Int
    public var dimension: Int
    public init(count: Int, dimension: Int) {
        self.count = count
        self.dimension = dimension
    }
}

/// One stage's unit given the earlier stages: the sampler's `SMCUnit`, and optionally the square roots
/// `r̄` with `det(I + s F_u(x)^{1/2}) ≤ Π_i (1 + s r̄_i)` for every x in the box (the upper bound's stage).
public struct StageUnit: Sendable {
    public var unit: SMCUnit
    public var supremumRoots: (@Sendable () throws -> [Double])?
    public init(unit: SMCUnit, supremumRoots: (@Sendable () throws -> [Double])? = nil) {
        self.unit = unit
        self.supremumRoots = supremumRoots
    }
}
