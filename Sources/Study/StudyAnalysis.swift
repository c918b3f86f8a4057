import Foundation
import Statistics
import Networks
import Training
import TwoScaleCore

/// What a study measures and ranks: per data set, one row per model (architecture × training
/// hyperparameters) and seed.
public enum StudyMeasure: String, CaseIterable, Sendable, Codable {
    case dZeta = "d_zeta"
    case dZetaBracketLow = "d_zeta_bracket_low"
    case dZetaBracketHigh = "d_zeta_bracket_high"
    case dZetaLower = "d_zeta_lower"
    case parameters
    case depth
    case lastWidth = "last_width"
    case narrowestWidth = "narrowest_width"
    case genericRank = "generic_rank"
    /// The 2sED's ε → 0 limit ζd + (1 − ζ)r, free from d and the generic rank r.
    case rankLimit = "rank_limit"
    case logPathNorm = "log_path_norm"
    case logSpectralProduct = "log_spectral_product"
    case fisherRao = "fisher_rao"
    case flatness = "pacbayes_mag_flatness"
    case abbasED = "abbas_ed"

    /// Where the measure is an estimate with its own uncertainty, the law each architecture's value is
    /// redrawn from in the bootstrap (`FisherCell.redraw`); nil for a measure taken as exact.
    func redraw(_ f: FisherCell) -> Redraw? {
        switch self {
        case .dZeta: return f.redraw(lower: false)
        case .dZetaLower: return f.redraw(lower: true)
        default: return nil
        }
    }

    /// The 2sED's own rows (compared with every other measure).
    public var isTwoScale: Bool { [.dZeta, .dZetaBracketLow, .dZetaBracketHigh, .dZetaLower].contains(self) }

    public var kind: String {
        switch self {
        case .dZeta, .dZetaBracketLow, .dZetaBracketHigh, .dZetaLower: return "2sED"
        case .parameters, .depth, .lastWidth, .narrowestWidth, .genericRank, .rankLimit: return "free baseline"
        case .logPathNorm, .logSpectralProduct, .fisherRao, .flatness, .abbasED: return "classic"
        }
    }

    func value(_ f: FisherCell, _ t: TrainingCell, _ a: Architecture, zeta: Double) -> Double {
        switch self {
        case .rankLimit: return zeta * Double(a.parameterCount) + (1 - zeta) * Double(f.genericRank)
        case .dZeta: return f.dZeta
        case .dZetaBracketLow: return f.bracket[0]
        case .dZetaBracketHigh: return f.bracket[1]
        case .dZetaLower: return f.dZetaLower
        case .parameters: return Double(a.parameterCount)
        case .depth: return Double(a.parametricLayers.count)
        case .lastWidth: return Double(a.hiddenWidths.last ?? 0)
        case .narrowestWidth: return Double(a.hiddenWidths.min() ?? 0)
        case .genericRank: return Double(f.genericRank)
        case .logPathNorm: return t.logPathNorm
        case .logSpectralProduct: return t.logSpectralProduct
        case .fisherRao: return t.fisherRao
        case .flatness: return t.flatness
        case .abbasED: return f.abbasED
        }
    }
}

/// The targets: the final training loss at the fixed budget (the paper's claim: a larger 2sED, a lower
/// loss, so its τ is read with the sign flipped) and the error gap (test − training; a complexity
/// measure should rank it positively).
public enum StudyTarget: String, CaseIterable, Sendable, Codable {
    case trainLoss = "train_loss"
    case gap

    /// The sign that makes "the measure predicts as expected" a positive τ (pre-registered).
    public var orientation: Double { self == .trainLoss ? -1 : 1 }

    func value(_ t: TrainingCell) -> Double { self == .trainLoss ? t.trainLoss : t.gap }
}

/// One row of the study's table: a measure ranked against a target on one data set.
public struct StudyRow: Sendable, Encodable {
    public var dataset: String
    public var target: String
    public var measure: String
    public var kind: String
    /// Oriented τ_b over the models' seed means, with its hierarchical-bootstrap 95% interval (nil, with
    /// `note`, where τ is undefined: a measure constant over the models).
    @NullIfNil public var tau: Double? = nil
    @NullIfNil public var tauLow: Double? = nil
    @NullIfNil public var tauHigh: Double? = nil
    /// τ(d_zeta) − τ(this measure), oriented, with its interval, the bootstrap p-value and Holm's
    /// correction over the measures of this data set and target (nil for d_zeta itself).
    @NullIfNil public var diff: Double? = nil
    @NullIfNil public var diffLow: Double? = nil
    @NullIfNil public var diffHigh: Double? = nil
    @NullIfNil public var p: Double? = nil
    @NullIfNil public var pHolm: Double? = nil
    /// Jiang's granulated τ (oriented) per varied hyperparameter, and Ψ (nil where undefined: a measure
    /// constant within every group, e.g. an architecture-only measure under a training hyperparameter).
    @NullIfNil public var psiArchitecture: Double? = nil
    @NullIfNil public var psiLearningRate: Double? = nil
    @NullIfNil public var psiBatch: Double? = nil
    @NullIfNil public var psi: Double? = nil
    /// For the 2sED: the least and the greatest oriented τ over every value of each architecture's 2sED
    /// inside its certified bracket (`BracketKendall`; bounds that every such assignment respects).
    @NullIfNil public var tauBracketLow: Double? = nil
    @NullIfNil public var tauBracketHigh: Double? = nil
    @NullIfNil public var note: String? = nil

    init(dataset: String, target: String, measure: String, kind: String, psiArchitecture: Double?, psiLearningRate: Double?,
         psiBatch: Double?, psi: Double?) {
        (self.dataset, self.target, self.measure, self.kind) = (dataset, target, measure, kind)
        (self.psiArchitecture, self.psiLearningRate, self.psiBatch, self.psi) = (psiArchitecture, psiLearningRate, psiBatch, psi)
    }

    enum CodingKeys: String, CodingKey {
        case dataset, target, measure, kind, tau, tauLow = "tau_low", tauHigh = "tau_high"
        case diff, diffLow = "diff_low", diffHigh = "diff_high", p, pHolm = "p_holm"
        case psiArchitecture = "psi_architecture", psiLearningRate = "psi_lr", psiBatch = "psi_batch", psi, note
        case tauBracketLow = "tau_bracket_low", tauBracketHigh = "tau_bracket_high"
    }
}

/// Does the 2sED add anything beyond the Fisher rank? τ(2sED, target | generic rank), oriented.
public struct StudyPartialRow: Sendable, Encodable {
    public var dataset: String
    public var target: String
    public var measure: String
    public var control: String
    @NullIfNil public var tau: Double? = nil
    @NullIfNil public var tauLow: Double? = nil
    @NullIfNil public var tauHigh: Double? = nil
    /// Why τ is missing (the control ranks like the measure or the target), else nil.
    @NullIfNil public var note: String? = nil

    enum CodingKeys: String, CodingKey {
        case dataset, target, measure, control, tau, tauLow = "tau_low", tauHigh = "tau_high", note
    }
}

/// The statistics of a finished study (docs/STUDY.md): every measure's oriented τ with its
/// hierarchical-bootstrap interval, τ differences against the 2sED with Holm-corrected p-values, the
/// granulated τ per hyperparameter, and the rank-partialled τ, per data set and target.
public enum StudyAnalysis {
    public static func analyze(grid: StudyGrid, cells: StudyCells, replicates: Int, threads: Int) async throws -> (rows: [StudyRow], partial: [StudyPartialRow]) {
        let archs = try grid.architectures.map(\.architecture)
        let settings = grid.trainingSettings
        let zeta = grid.fisher.zeta
        var rows: [StudyRow] = [], partial: [StudyPartialRow] = []
        for (di, d) in grid.datasets.enumerated() {
            // Models in grid order: architecture, then (lr, batch).
            var models: [(a: Int, s: Int)] = []
            for a in archs.indices { for s in settings.indices { models.append((a, s)) } }
            func column(_ f: (FisherCell, TrainingCell, Architecture) -> Double) -> [[Double]] {
                models.map { m in cells.training[di][m.a][m.s].map { t in f(cells.fisher[di][m.a], t, archs[m.a]) } }
            }
            let hyper = models.map { m in [Double(m.a), settings[m.s].learningRate, Double(settings[m.s].batchSize)] }
            // The bootstrap's unit is the architecture: its templates share its Fisher measures, and its
            // 2sED is redrawn from its own uncertainty in every replicate (`HierarchicalBootstrap.resampleClusters`).
            let clusters = models.map(\.a)
            func redraws(_ measure: StudyMeasure, _ o: Double) -> [Redraw]? {
                let laws = archs.indices.compactMap { a in measure.redraw(cells.fisher[di][a])?.scaled(o) }
                return laws.count == archs.count ? laws : nil
            }
            func design(_ columns: [[Redraw]?]) throws -> ResamplingDesign { try ResamplingDesign(cluster: clusters, redraws: columns) }
            for target in StudyTarget.allCases {
                let o = target.orientation
                let y = column { _, t, _ in target.value(t) }
                let boot = try HierarchicalBootstrap(replicates: replicates, seed: grid.seed, threads: threads)
                let base = column { f, t, a in StudyMeasure.dZeta.value(f, t, a, zeta: zeta) * o }
                let yMeans = y.map { $0.reduce(0, +) / Double($0.count) }
                var targetRows: [StudyRow] = []
                for measure in StudyMeasure.allCases {
                    let x = column { f, t, a in measure.value(f, t, a, zeta: zeta) * o }
                    let xMeans = x.map { $0.reduce(0, +) / Double($0.count) }
                    let g = try GranulatedKendall(hyperparameters: hyper, measure: xMeans, target: yMeans)
                    var row = StudyRow(dataset: d.name, target: target.rawValue, measure: measure.rawValue, kind: measure.kind,
                                       psiArchitecture: g.perHyperparameter[0], psiLearningRate: g.perHyperparameter[1],
                                       psiBatch: g.perHyperparameter[2], psi: g.psi)
                    do {
                        let k = try await StudyStatistics.kendall(measure: x, target: y, bootstrap: boot,
                                                                  design: try design([redraws(measure, o), nil]))
                        (row.tau, row.tauLow, row.tauHigh) = (k.estimate, k.lower, k.upper)
                        if measure != .dZeta {
                            let pd = try await StudyStatistics.pairedDifference(measureA: base, measureB: x, target: y, bootstrap: boot,
                                                                                design: try design([redraws(.dZeta, o), redraws(measure, o), nil]))
                            (row.diff, row.diffLow, row.diffHigh, row.p) = (pd.difference.estimate, pd.difference.lower, pd.difference.upper, pd.pValue)
                        }
                    } catch let e as TwoScaleError {
                        row.note = "\(e)"
                    }
                    if measure == .dZeta {
                        let brackets = archs.indices.map { a in
                            let b = cells.fisher[di][a].bracket
                            return Swift.min(o * b[0], o * b[1])...Swift.max(o * b[0], o * b[1])
                        }
                        let range = BracketKendall.bounds(brackets: brackets, cluster: clusters, target: yMeans)
                        (row.tauBracketLow, row.tauBracketHigh) = (range?.lowerBound, range?.upperBound)
                    }
                    targetRows.append(row)
                }
                let tested = targetRows.indices.filter { targetRows[$0].p != nil }
                let adjusted = try Holm.adjust(tested.map { targetRows[$0].p ?? 1 })
                for (k, i) in tested.enumerated() { targetRows[i].pHolm = adjusted[k] }
                rows += targetRows
                // Controls: the generic rank r, and r with the parameter count d together (the ζd term of the
                // 2sED carries d).
                let controlSets: [[StudyMeasure]] = [[.genericRank], [.parameters, .genericRank]]
                for measure in [StudyMeasure.dZeta, .dZetaLower] {
                    let x = column { f, t, a in measure.value(f, t, a, zeta: zeta) * o }
                    for controls in controlSets {
                        let z = controls.map { c in column { f, t, a in c.value(f, t, a, zeta: zeta) } }
                        var row = StudyPartialRow(dataset: d.name, target: target.rawValue, measure: measure.rawValue,
                                                  control: controls.map(\.rawValue).joined(separator: "+"))
                        do {
                            let k = try await StudyStatistics.partialKendall(measure: x, target: y, controls: z, bootstrap: boot,
                                                                             design: try design([redraws(measure, o), nil] + controls.map { _ in nil }))
                            (row.tau, row.tauLow, row.tauHigh) = (k.estimate, k.lower, k.upper)
                        } catch let e as TwoScaleError {
                            row.note = "\(e)"
                        }
                        partial.append(row)
                    }
                }
            }
        }
        return (rows, partial)
    }
}
