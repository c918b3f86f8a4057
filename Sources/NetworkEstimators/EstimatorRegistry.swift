import Foundation
import TwoScaleCore

/// The network estimators by name: the one place that maps an `EstimatorKind` to its implementation
/// (docs/ARCHITECTURE.md, "An estimator"). The commands and the library ask the estimator found here what
/// it reads and does; no other code tests for a name (`EstimatorSeamTests` checks Sources/ for it).
///
/// Adding an estimator: its implementation (a `NetworkEstimator`, with its `EstimatorKind`) and one line
/// in `builtIn`. A program (or a test) may `register` one at run time.
public enum EstimatorRegistry {
    /// The estimators shipped, in the order help texts and errors list them.
    static let builtIn: [any NetworkEstimator.Type] = [PlainEstimator.self, SMCEstimator.self, JointEstimator.self]

    /// `ed`'s estimator when none is given and the run needs no uniform-path spectra.
    public static let edDefault: EstimatorKind = SMCEstimator.kind

    private final class Added: @unchecked Sendable {
        let lock = NSLock()
        var list: [any NetworkEstimator.Type] = []
    }

    private static let added = Added()

    /// Every estimator: the shipped ones, then those registered.
    public static var all: [any NetworkEstimator.Type] {
        added.lock.lock()
        defer { added.lock.unlock() }
        return builtIn + added.list
    }

    public static var kinds: [EstimatorKind] { all.map { $0.kind } }

    /// The estimators that estimate the lower 2sED, as a phrase for errors ("plain or smc").
    public static var lowerEstimators: String {
        var names: [String] = []
        for e in all where e.estimatesLower { names.append(e.kind.rawValue) }
        return names.joined(separator: " or ")
    }

    /// Adds an estimator under its name (a name already taken is refused).
    public static func register(_ estimator: any NetworkEstimator.Type) throws {
        guard !kinds.contains(estimator.kind) else {
            throw TwoScaleError.failure("an estimator named \(estimator.kind) is already registered")
        }
        added.lock.lock()
        defer { added.lock.unlock() }
        added.list.append(estimator)
    }

    /// Removes an estimator added by `register` (the shipped ones stay).
    public static func unregister(_ kind: EstimatorKind) {
        added.lock.lock()
        defer { added.lock.unlock() }
        added.list.removeAll { $0.kind == kind }
    }

    /// The estimator of that name.
    public static func estimator(_ kind: EstimatorKind) throws -> any NetworkEstimator.Type {
        guard let e = all.first(where: { $0.kind == kind }) else {
            throw TwoScaleError.invalid("\(Setting.estimator)", kind.rawValue, allowed: "give one of " + kinds.map(\.rawValue).joined(separator: ", "))
        }
        return e
    }

    /// The estimator a run uses when none is given: `edDefault`, or where it needs uniform-path spectra
    /// (a store, shards, MPI ranks, …) the first estimator that produces them.
    public static func defaultKind(needsStoredSpectra: Bool) -> EstimatorKind {
        guard needsStoredSpectra else { return edDefault }
        return all.first(where: { $0.storesSpectra })?.kind ?? edDefault
    }

    /// The first of the `given` settings that is another estimator's and not one of `kind`'s, with
    /// the estimator it belongs to (an error: it would be ignored).
    public static func foreignSetting(_ given: [Setting], for kind: EstimatorKind) -> (setting: Setting, owner: EstimatorKind)? {
        let own = Set((try? estimator(kind))?.settings ?? [])
        for setting in given where !own.contains(setting) {
            if let owner = all.first(where: { $0.settings.contains(setting) }) { return (setting, owner.kind) }
        }
        return nil
    }
}
