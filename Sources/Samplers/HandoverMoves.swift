import Foundation
import RandomStreams
import TwoScaleCore

/// Moving the units an island hands to the next stage (docs/ESTIMATORS.md §3, "The handed-over units").
///
/// Before a further stage, the outer particles are resampled ∝ `Ẑ_m^k = (Ẑ_u^k)^n` and extended by n draws
/// of the stage's units from their island's own population. For one unit this is exact: selecting ∝ Ẑ and
/// drawing from the population that gave Ẑ leaves `(θ_{<m}, θ_m)` distributed as `π_{<m+1}` (the
/// auxiliary-particle argument). For n pooled units it is not: the n-th power favours islands whose
/// populations overweight where `g_u` is large, n − 1 times more than the one draw pays for, so the
/// handed-over units lean towards that region and every later stage that depends on them inherits the lean.
/// Each drawn unit is therefore moved by `handoverSweepsPerCoordinate`·p sweeps of a random walk invariant
/// for the unit's conditional target given θ_{<m} (`RandomWalk.move` at the stage's scale): the moved units
/// keep the right law wherever the draws had it and forget the lean as the walk mixes. The walk's scale per
/// coordinate is the box's uniform spread, width/√12, not the island population's (the islands the power
/// favours have the narrowest populations); its step starts at 2.38/√p, is tuned after each of the first half
/// of the sweeps by `RandomWalk.adapted` on that particle's own acceptances, and is then held fixed, so that
/// the second half is a fixed kernel that leaves the target invariant.
extension StagedSMC {
    /// Sweeps per coordinate of a handed-over unit (0: the draws as they are).
    public static var defaultHandoverSweepsPerCoordinate: Int { 2 }

    /// `units` (n draws of a stage's unit at scale s) after `sweepsPerCoordinate`·p sweeps of the random walk
    /// invariant for `unit`'s target.
    static func handover(_ units: [[Double]], unit: SMCUnit, scale s: Double, sweepsPerCoordinate: Int,
                         rng: inout Xoshiro256) throws -> [[Double]] {
        guard sweepsPerCoordinate > 0, let first = units.first, !first.isEmpty else { return units }
        let p = first.count
        let sd = [Double](repeating: (unit.box.upperBound - unit.box.lowerBound) / 12.0.squareRoot(), count: p)
        var x = units.flatMap { $0 }
        var roots = try units.map { try unit.roots($0) }
        var ell = roots.map { LogSpace.logDetSqrt(roots: $0, scale: s) }
        var screen: [Double] = []
        var step = RandomWalk.initialStep(dimension: p)
        var diag = SMCDiagnostics()
        let sweeps = sweepsPerCoordinate * p
        for sweep in 0..<sweeps {
            // `move` proposes at `step` and leaves its adapted step in `h`, kept only in the first half.
            var h = step
            try RandomWalk.move(unit, s: s, x: &x, roots: &roots, ell: &ell, screen: &screen, h: &h, sweeps: 1, rng: &rng,
                                diag: &diag, frozen: FrozenMove(spread: sd, slope: 0, steps: [step]))
            if sweep < sweeps / 2 { step = h }
        }
        return units.indices.map { Array(x[($0 * p)..<(($0 + 1) * p)]) }
    }
}
