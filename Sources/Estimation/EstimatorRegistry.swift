import Foundation
import ToyModels
import TwoScaleCore

/// The estimators by name, for networks and toys alike: the one place that maps an `EstimatorKind` to its
/// implementation (docs/ARCHITECTURE.md, "An estimator"). The commands, the experiments and the study ask
/// the estimator found here what it reads and does; no other code tests for a name, and they do not import
/// a concrete estimator (`EstimatorSeamTests` checks both).
///
/// The shipped estimators are installed by NetworkEstimators (`ShippedEstimators.install()`, which the
/// command line calls at launch and a program calls once); a program or a test may `register` more.
public enum EstimatorRegistry {
    /// `ed`'s estimator when none is given and the run needs no uniform-path spectra.
    public static let edDefault: EstimatorKind = .smc

    /// Former names, still accepted with a note: `joint` was joint tempering's, and is the joint 2sED's in
    /// `bound` and `gap`.
    public static let renamed: [EstimatorKind: EstimatorKind] = [EstimatorKind(rawValue: "joint"): .tempering]

    /// The current name of `kind` (itself unless renamed).
    public static func current(_ kind: EstimatorKind) -> EstimatorKind { renamed[kind] ?? kind }

    /// The note a former name prints (nil for a current one).
    public static func renameNote(_ kind: EstimatorKind) -> String? {
        renamed[kind].map { "\(Setting.estimator) \(kind) is now \(Setting.estimator) \($0) (joint tempering); the old name, which clashed with the joint 2sED of bound and gap, will go" }
    }

    private final class Table: @unchecked Sendable {
        let lock = NSLock()
        var shipped: [any NetworkEstimator.Type] = []
        var added: [any NetworkEstimator.Type] = []
    }

    private static let table = Table()

    /// Every estimator: the shipped ones in their order, then those registered.
    public static var all: [any NetworkEstimator.Type] {
        table.lock.lock()
        defer { table.lock.unlock() }
        return table.shipped + table.added
    }

    public static var kinds: [EstimatorKind] { all.map { $0.kind } }

    /// Installs the shipped estimators, in the order help texts and errors list them (again: no change).
    public static func install(shipped: [any NetworkEstimator.Type]) {
        table.lock.lock()
        defer { table.lock.unlock() }
        guard table.shipped.isEmpty else { return }
        table.shipped = shipped
        table.added.removeAll { e in shipped.contains { $0.kind == e.kind } }
    }

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
        table.lock.lock()
        defer { table.lock.unlock() }
        table.added.append(estimator)
    }

    /// Removes an estimator added by `register` (the shipped ones stay).
    public static func unregister(_ kind: EstimatorKind) {
        table.lock.lock()
        defer { table.lock.unlock() }
        table.added.removeAll { $0.kind == kind }
    }

    /// The estimator of that name.
    public static func estimator(_ kind: EstimatorKind) throws -> any NetworkEstimator.Type {
        let kind = current(kind)
        guard let e = all.first(where: { $0.kind == kind }) else {
            let known = kinds.isEmpty ? "none is installed (a program calls ShippedEstimators.install() once)"
                : "give one of " + kinds.map(\.rawValue).joined(separator: ", ")
            throw TwoScaleError.invalid("\(Setting.estimator)", kind.rawValue, allowed: known)
        }
        return e
    }

    /// The toy models' run of the estimator of that name (`toy` with `Setting.monteCarlo`), under its name.
    public static func toyMethod(_ kind: EstimatorKind) throws -> ToyMonteCarlo.Method {
        guard var m = toy(of: try estimator(kind)) else {
            let names = all.filter { toy(of: $0) != nil }.map { $0.kind.rawValue }.joined(separator: ", ")
            throw TwoScaleError.invalid("\(Setting.estimator)", kind.rawValue, allowed: "a toy model is estimated by one of " + names)
        }
        m.kind = kind
        return m
    }

    /// An estimator's toy run (opened from the existential, which the compiler needs here).
    static func toy(of e: any NetworkEstimator.Type) -> ToyMonteCarlo.Method? {
        func open<E: NetworkEstimator>(_ t: E.Type) -> ToyMonteCarlo.Method? { t.toy }
        return open(e)
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
