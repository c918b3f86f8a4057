import Foundation
import TwoScaleCore

/// Jiang et al.'s granulated Kendall coefficient (ICLR 2020, §3 Eq. 4–5): how well a measure ranks the
/// target when only one hyperparameter changes. For hyperparameter i, the models are grouped by the
/// values of every *other* hyperparameter; within each group (the models that differ only in i)
/// τ(measure, target) is computed, and
///
///     ψ_i = mean over the groups of τ,        Ψ = (1/n) Σ_i ψ_i.
///
/// τ here is τ_b, which equals Jiang's τ (their Eq. 2, ties counted as 0 and normalised by all pairs)
/// when a group has no ties. A group's τ is undefined when it has fewer than 2 models or a constant
/// measure or target; such groups are left out of ψ_i (`definedGroups` counts the others), a
/// hyperparameter with no defined group has ψ_i = nil, and Ψ averages the defined ψ_i. One row per
/// model (typically its seed mean); rows that share every hyperparameter fall into the same groups.
public struct GranulatedKendall: Sendable, Equatable {
    /// ψ_i per hyperparameter (nil where no group has a defined τ).
    public let perHyperparameter: [Double?]
    /// Per hyperparameter: the groups with a defined τ, and all groups.
    public let definedGroups: [Int]
    public let groups: [Int]
    /// Ψ: the mean of the defined ψ_i (nil when none is).
    public let psi: Double?

    /// `hyperparameters[k]` holds model k's value of every hyperparameter (one row per model, the same
    /// hyperparameters in the same order); `measure[k]`, `target[k]` its values.
    public init<H: Hashable>(hyperparameters: [[H]], measure: [Double], target: [Double]) throws {
        let n = hyperparameters.count
        guard n >= 3 else { throw TwoScaleError.usage("the granulated τ needs at least 3 models (got \(n))") }
        guard measure.count == n, target.count == n else {
            throw TwoScaleError.usage("ragged data: \(n) hyperparameter rows, \(measure.count) measure values, \(target.count) target values")
        }
        guard let h = hyperparameters.first?.count, h >= 1 else { throw TwoScaleError.usage("the granulated τ needs at least one hyperparameter") }
        guard hyperparameters.allSatisfy({ $0.count == h }) else { throw TwoScaleError.usage("ragged data: the models have different numbers of hyperparameters") }
        guard (measure + target).allSatisfy(\.isFinite) else { throw TwoScaleError.usage("the granulated τ: a measure or target value is not finite") }

        var psiI: [Double?] = [], defined: [Int] = [], all: [Int] = []
        for i in 0..<h {
            // Groups in order of first appearance (a deterministic sum, whatever the hashing).
            var index: [[H]: Int] = [:]
            var members: [[Int]] = []
            for (k, row) in hyperparameters.enumerated() {
                var key = row
                key.remove(at: i)
                if let g = index[key] { members[g].append(k) } else { index[key] = members.count; members.append([k]) }
            }
            let taus = members.compactMap { g in KendallTau.tauB(g.map { measure[$0] }, g.map { target[$0] }) }
            psiI.append(taus.isEmpty ? nil : taus.reduce(0, +) / Double(taus.count))
            defined.append(taus.count)
            all.append(members.count)
        }
        perHyperparameter = psiI
        definedGroups = defined
        groups = all
        let d = psiI.compactMap { $0 }
        psi = d.isEmpty ? nil : d.reduce(0, +) / Double(d.count)
    }
}
