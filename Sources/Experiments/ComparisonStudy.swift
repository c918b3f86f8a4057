import Foundation
import Training
import Statistics
import Estimation
import Networks
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// The architecture comparison over replicate seeds: every architecture's 2sEDs, baselines and trained
/// measures (mean ± sd over the seeds), and each measure's Kendall τ_b against the mean training loss:
/// `compare`'s result (docs/METHOD.md §16). JSON keys in this order.
public struct ComparisonStudy: Sendable, Encodable {
    public var summaries: [ArchitectureSummary]
    public var measures: [ComparisonMeasure]
    /// τ of the lower and nested 2sED against the training loss (always defined: see `run`).
    public var tauLower: KendallTau
    public var tauNested: KendallTau
    public var epsN: Double
    public var n: Int
    public var settings: ArchitectureComparison.Settings
    public var flatTolerance: Double

    public var allFlat: Bool { summaries.allSatisfy { $0.flat(tolerance: flatTolerance) } }

    static let pExact = "exact", pNormal = "normal approximation (ties or n > 50)"

    /// Measures every architecture with `seeds` replicates (`progress(i, r)` before each, `measured` after),
    /// then ranks. The 2sEDs' τ must exist: where it is undefined (a constant measure), the error says why.
    public static func run(_ architectures: [Architecture], seeds: Int, comparison: ArchitectureComparison, fisherInputs: Matrix,
                           train: Dataset, holdout: Dataset?, epsN: Double, n: Int, flatTolerance: Double,
                           progress: (_ architecture: Int, _ replicate: Int) -> Void = { _, _ in },
                           measured: (ArchitectureComparison.Entry) -> Void = { _ in }) async throws -> ComparisonStudy {
        var summaries: [ArchitectureSummary] = []
        for (i, a) in architectures.enumerated() {
            var entries: [ArchitectureComparison.Entry] = []
            for r in 0..<seeds {
                progress(i, r)
                let e = try await comparison.measure(a, replicate: r, fisherInputs: fisherInputs, train: train, holdout: holdout)
                measured(e)
                entries.append(e)
            }
            summaries.append(ArchitectureSummary(architecture: a, entries: entries))
        }
        let measures = ComparisonMeasure.all(summaries)
        func tau(_ name: String) throws -> KendallTau {
            let m = measures.first { $0.name == name }
            return try m?.tau ?? KendallTau(m?.values ?? [], summaries.map { $0.mean(\.trainLoss) })
        }
        return ComparisonStudy(summaries: summaries, measures: measures, tauLower: try tau("d_zeta_lower"), tauNested: try tau("d_zeta"),
                               epsN: epsN, n: n, settings: comparison.settings, flatTolerance: flatTolerance)
    }

    typealias Key = ResultKey

    /// One architecture: sizes, then each measure's mean and sd over the seeds.
    struct Point: Encodable {
        var m: ArchitectureSummary
        var flatTolerance: Double

        func encode(to encoder: any Encoder) throws {
            typealias E = ArchitectureComparison.Entry
            var c = encoder.container(keyedBy: Key.self)
            func both(_ key: String, _ f: (E) -> Double) throws {
                try c.encode(m.mean(f), forKey: Key(key))
                try c.encode(m.sd(f), forKey: Key(key + "_sd"))
            }
            let a = m.architecture
            try c.encode(a.notation, forKey: Key("arch"))
            try c.encode(a.parameterCount, forKey: Key("parameters"))
            try c.encode(a.parametricLayers.count, forKey: Key("layers"))
            try c.encode(a.hiddenWidths.min() ?? 0, forKey: Key("min_hidden_width"))
            try c.encode(a.hiddenWidths.last ?? 0, forKey: Key("last_hidden_width"))
            try c.encode(m.entries.count, forKey: Key("seeds"))
            try both("d_zeta_lower", \.dZetaLower)
            try both("d_zeta", \.dZeta)
            try both("d_zeta_joint", \.dZetaJoint)
            try c.encode(m.mean(\.dZetaLower) / Double(a.parameterCount), forKey: Key("lower_per_parameter"))
            if let h = m.meanHalfWidth(\.ci95HalfWidth), let hl = m.meanHalfWidth(\.ci95HalfWidthLower) {
                try c.encode(h, forKey: Key("d_zeta_ci95_halfwidth"))
                try c.encode(hl, forKey: Key("d_zeta_lower_ci95_halfwidth"))
            }
            // smc: the upper bounds' estimates (docs/ESTIMATORS.md §6), when every seed has one.
            if m.entries.allSatisfy({ $0.dZetaUpper != nil && $0.dZetaLowerUpper != nil }) {
                try both("d_zeta_upper") { $0.dZetaUpper ?? .nan }
                try both("d_zeta_lower_upper") { $0.dZetaLowerUpper ?? .nan }
            }
            // The certified brackets, joined over the seeds (each seed's model has its own noise draws and c).
            if let b = m.bracket(\.bracket), let bl = m.bracket(\.bracketLower) {
                try c.encode([b.lowerBound, b.upperBound], forKey: Key("d_zeta_bracket"))
                try c.encode([bl.lowerBound, bl.upperBound], forKey: Key("d_zeta_lower_bracket"))
            }
            try c.encode(m.entries.flatMap(\.ess), forKey: Key("ess"))
            try both("train_loss", \.trainLoss)
            if m.entries.allSatisfy({ $0.trainAccuracy != nil }) { try both("train_accuracy") { $0.trainAccuracy ?? .nan } }
            if m.entries.allSatisfy({ $0.holdoutLoss != nil }) {
                try both("holdout_loss") { $0.holdoutLoss ?? .nan }
                try both("holdout_accuracy") { $0.holdoutAccuracy ?? .nan }
            }
            try both("initial_weight_norm", \.initialWeightNorm)
            try both("initial_path_norm", \.initialPathNorm)
            try both("distance_from_init", \.distanceFromInit)
            try both("sharpness", \.sharpness)
            try c.encode(m.entries.map { $0.lastEpochShare.isFinite ? $0.lastEpochShare : nil }, forKey: Key("last_epoch_share"))
            try c.encode(m.flat(tolerance: flatTolerance), forKey: Key("training_flat"))
            try c.encode(m.entries.reduce(0) { $0 + $1.spectraSeconds }, forKey: Key("spectra_seconds"))
            try c.encode(m.entries.reduce(0) { $0 + $1.trainingSeconds }, forKey: Key("training_seconds"))
        }
    }

    struct Measure: Encodable {
        var m: ComparisonMeasure

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(m.name, forKey: Key("name"))
            try c.encode(m.description, forKey: Key("description"))
            try c.encode(m.tau?.tau, forKey: Key("kendall_tau_vs_train_loss"))
            try c.encode(m.tau?.pValue, forKey: Key("p_value"))
            try c.encode(m.tau.map { $0.exact ? pExact : pNormal } ?? "undefined: the measure is constant over these architectures",
                         forKey: Key("p_value_method"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(n, forKey: Key("n"))
        try c.encode(epsN, forKey: Key("eps_n"))
        try c.encode(settings.zeta, forKey: Key("zeta"))
        try c.encode(settings.estimator.rawValue, forKey: Key("estimator"))
        try c.encode(settings.budget.paths, forKey: Key("paths"))
        try c.encode(settings.budget.inner, forKey: Key("inner"))
        try EstimatorRegistry.estimator(settings.estimator).encodeSettings(settings.budget, into: &c)
        try c.encode(settings.sigma2, forKey: Key("sigma2"))
        try c.encode(settings.training.epochs, forKey: Key("epochs"))
        try c.encode(summaries.first?.entries.count ?? 0, forKey: Key("seeds"))
        try c.encode("the last epoch brought less than \(NumberText.format(flatTolerance)) of the whole decrease of the training loss since initialisation, for every seed",
                     forKey: Key("flat_criterion"))
        try c.encode(allFlat, forKey: Key("all_training_flat"))
        try c.encode("mean over \(ArchitectureComparison.sharpnessDraws) draws of L(θ̂ + u) − L(θ̂) on the training set, u ~ N(0, (\(ArchitectureComparison.sharpnessScale)·rms(θ̂))² I)",
                     forKey: Key("sharpness_definition"))
        try c.encode("every τ compares the per-architecture means over the seeds", forKey: Key("rank_note"))
        try c.encode(tauLower.tau, forKey: Key("kendall_tau_lower_vs_train_loss"))
        try c.encode(tauLower.pValue, forKey: Key("p_value_lower"))
        try c.encode(tauNested.tau, forKey: Key("kendall_tau_nested_vs_train_loss"))
        try c.encode(tauNested.pValue, forKey: Key("p_value_nested"))
        try c.encode(tauLower.exact ? Self.pExact : Self.pNormal, forKey: Key("p_value_method"))
        try c.encode(measures.map(Measure.init), forKey: Key("measures"))
        try c.encode(summaries.map { Point(m: $0, flatTolerance: flatTolerance) }, forKey: Key("points"))
        let brackets = summaries.count * (summaries.first?.entries.count ?? 0)
        try c.encode(CertifiedBracket.defaultDelta * Double(brackets), forKey: Key("bracket_delta"))
        try c.encode(pairs, forKey: Key("pairs"))
    }

    /// Every pair of architectures, and whether their certified brackets order them with certainty.
    public var pairs: [BracketPair] {
        var out: [BracketPair] = []
        for i in summaries.indices {
            for j in summaries.indices where j > i {
                let a = summaries[i], b = summaries[j]
                out.append(BracketPair(a: a.architecture.notation, b: b.architecture.notation,
                                       order: BracketPair.order(a.bracket(\.bracket), b.bracket(\.bracket)),
                                       orderLower: BracketPair.order(a.bracket(\.bracketLower), b.bracket(\.bracketLower))))
            }
        }
        return out
    }
}

/// Two architectures' certified brackets side by side (`compare`'s `pairs`): `certain` when their 2sED
/// brackets are disjoint, so the order of their 2sEDs holds whatever the estimates' errors (up to the
/// brackets' δ), and `order` ("<" when a's 2sED is below b's, ">" above, null when the brackets overlap);
/// the same for the lower 2sED.
public struct BracketPair: Sendable, Equatable, Encodable {
    public var a: String
    public var b: String
    public var order: String?
    public var orderLower: String?

    /// "<" or ">" when the brackets are disjoint, nil when they overlap or one is missing.
    public static func order(_ x: ClosedRange<Double>?, _ y: ClosedRange<Double>?) -> String? {
        guard let x, let y else { return nil }
        if x.upperBound < y.lowerBound { return "<" }
        if y.upperBound < x.lowerBound { return ">" }
        return nil
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: ResultKey.self)
        try c.encode(a, forKey: ResultKey("a"))
        try c.encode(b, forKey: ResultKey("b"))
        try c.encode(order != nil, forKey: ResultKey("certain"))
        try c.encode(order, forKey: ResultKey("order"))
        try c.encode(orderLower != nil, forKey: ResultKey("certain_lower"))
        try c.encode(orderLower, forKey: ResultKey("order_lower"))
    }
}
