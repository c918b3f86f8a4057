import Fisher
import Foundation
import SpectraStore
import ToyModels
import TwoScaleCore

/// A setting an estimator reads beyond K and J (smc's `Setting.traceDraws`, `.islandSweeps`, `.outerMoves`;
/// tempering's `.sweeps`): a whole number and its default. The command line spells it as a flag; the
/// estimator's `checkBudget` judges its value; a setting given to a run of another estimator is an error
/// (`EstimatorRegistry.foreignSetting`).
public struct EstimatorOption: Sendable {
    public var setting: Setting
    /// Its value where none is given (nil: the estimator derives it from the model, as the trace draws' d/2).
    public var defaultValue: Int?

    public init(_ setting: Setting, defaultValue: Int?) {
        self.setting = setting
        self.defaultValue = defaultValue
    }
}

/// The values given to an estimator's own settings (`EstimatorOption`), by setting; a setting not given
/// takes the estimator's default.
public struct EstimatorSettings: Sendable, Equatable {
    private var values: [Setting: Int]

    public init(_ values: [Setting: Int] = [:]) { self.values = values }

    public subscript(_ setting: Setting) -> Int? {
        get { values[setting] }
        set { values[setting] = newValue }
    }

    /// The settings given, in a fixed order (by name).
    public var given: [Setting] { values.keys.sorted { $0.name < $1.name } }

    /// The value of `option`: as given, else its default, else `fallback` (a default the estimator derives).
    public func value(_ option: EstimatorOption, fallback: Int = 0) -> Int { values[option.setting] ?? option.defaultValue ?? fallback }
}

/// The budget of one estimator run: K, J and the estimator's own settings (`EstimatorSettings`).
public struct EstimatorBudget: Sendable, Equatable {
    public var paths: Int
    public var inner: Int
    public var settings: EstimatorSettings

    public init(paths: Int, inner: Int, settings: EstimatorSettings = EstimatorSettings()) {
        self.paths = paths
        self.inner = inner
        self.settings = settings
    }
}

/// What to measure from a network's Fisher spectra (`ed` and `analyze`): the ε grid and ζ, whether to
/// add the lower 2sED, the normalisation, the bootstrap, and the Abbas et al. ED's sample sizes and γ.
public struct MeasurementRequest: Sendable, Equatable {
    public var eps: [Double]
    public var zeta: Double
    public var lower: Bool
    public var normalization: Normalization
    /// Percentile-bootstrap resamples over paths for the intervals (0: none).
    public var bootstrap: Int
    /// Sample sizes n of the Abbas ED (empty: not computed).
    public var abbasN: [Double]
    public var gamma: Double
    /// Parallel tasks; results do not depend on it.
    public var threads: Int

    public init(eps: [Double], zeta: Double, lower: Bool = false, normalization: Normalization = .trace, bootstrap: Int = 200,
                abbasN: [Double] = [], gamma: Double = 1, threads: Int = 1) {
        self.eps = eps
        self.zeta = zeta
        self.lower = lower
        self.normalization = normalization
        self.bootstrap = bootstrap
        self.abbasN = abbasN
        self.gamma = gamma
        self.threads = threads
    }
}

/// The command an estimator runs under, which sets its default K and J.
public enum EstimatorUse: Sendable {
    case ed, compare
}

/// What an estimator measures: the model (Markov FIM), the parameter box and seed of its draws, the budget,
/// and the run's settings as a report records them (`ed`; nil where only the common result is wanted,
/// as in `compare`).
public struct EstimatorProblem: Sendable {
    public var model: MarkovFisher
    public var box: ClosedRange<Double>
    public var seed: UInt64
    public var budget: EstimatorBudget
    public var configuration: NetworkRunConfiguration?
    /// How the independent items are shared out (this process, or also the ranks of an MPI job).
    public var sharing: any WorkSharing = LocalSharing()
    /// The folder an estimator that `savesCheckpoints` keeps its progress in and continues from (`Setting.checkpoint`).
    public var checkpoint: String?

    public init(model: MarkovFisher, box: ClosedRange<Double>, seed: UInt64, budget: EstimatorBudget,
                configuration: NetworkRunConfiguration? = nil) {
        self.model = model
        self.box = box
        self.seed = seed
        self.budget = budget
        self.configuration = configuration
    }
}

/// An estimator of the 2sED: the seam every estimator implements (docs/ARCHITECTURE.md, "An estimator").
/// It is found by its name (`EstimatorKind`) in `EstimatorRegistry`, and the commands (`ed`, `analyze`,
/// `compare`, `toy` with `Setting.monteCarlo`), the experiments and the study ask it, never the name, what it needs and does.
/// Concrete estimators live outside this module (NetworkEstimators ships plain, smc and tempering) and plug in
/// through `EstimatorRegistry`.
public protocol NetworkEstimator: Sendable {
    /// Its name, as `Setting.estimator` and the results' `estimator` key spell it.
    static var kind: EstimatorKind { get }
    /// The settings only this estimator reads beyond K and J (`EstimatorOption`): given to a run of another
    /// estimator they are an error, not ignored (`EstimatorRegistry.foreignSetting`).
    static var options: [EstimatorOption] { get }
    /// Settings it reads that the commands own (plain: `Setting.bootstrap`), refused with other estimators too.
    static var commandSettings: [Setting] { get }
    /// Its run on the separable toy models (`toy` with `Setting.monteCarlo`), where it has one (`ToyMonteCarlo.Method`).
    static var toy: ToyMonteCarlo.Method? { get }
    /// Whether it estimates the staged toy models (the layered family of `toy`).
    static var estimatesStagedToys: Bool { get }
    /// Whether its samples are uniform-path spectra, which a spectra store holds: such an estimator runs
    /// `ed`'s store route (`SpectraRun`: `Setting.store`, `Setting.resume`, `Setting.shard`, MPI ranks, `Setting.abbasSampleSize`, `Setting.fisherRoute
    /// output`) and `analyze`; any other runs end to end through `estimate`.
    static var storesSpectra: Bool { get }
    /// Whether its 95% intervals cover (a comparison reports their mean half-width).
    static var reportsIntervals: Bool { get }
    /// Whether it estimates the lower 2sED (`compare` ranks by it; `ed` asks for it with `Setting.lower`).
    static var estimatesLower: Bool { get }
    /// Whether a run saves its progress in `EstimatorProblem.checkpoint` and continues from it (`Setting.checkpoint`).
    static var savesCheckpoints: Bool { get }
    /// K and J where the user gives none.
    static func defaultBudget(_ use: EstimatorUse) -> (paths: Int, inner: Int)
    /// Checks a budget for a network of `layers` parametric layers, before any data is read.
    static func checkBudget(_ budget: EstimatorBudget, layers: Int) throws
    /// The settings keys a result records for this estimator (`compare`'s JSON).
    static func encodeSettings(_ budget: EstimatorBudget, into c: inout KeyedEncodingContainer<ResultKey>) throws
    /// The 2sED (nested, joint, with `request.lower` the lower 2sED) at every ε of the request, with the
    /// estimator's diagnostics and, where the problem has a configuration, its full typed report.
    static func estimate(_ problem: EstimatorProblem, request: MeasurementRequest,
                         progress: @escaping @Sendable (String) -> Void) async throws -> NetworkEstimate
}

extension NetworkEstimator {
    public static var options: [EstimatorOption] { [] }
    public static var commandSettings: [Setting] { [] }
    /// Every setting only this estimator reads: its options' and the command settings it claims.
    public static var settings: [Setting] { options.map(\.setting) + commandSettings }
    public static var toy: ToyMonteCarlo.Method? { nil }
    public static var estimatesStagedToys: Bool { false }
    public static var storesSpectra: Bool { false }
    public static var reportsIntervals: Bool { false }
    public static var estimatesLower: Bool { true }
    public static var savesCheckpoints: Bool { false }
    public static func checkBudget(_ budget: EstimatorBudget, layers: Int) throws {}
    public static func encodeSettings(_ budget: EstimatorBudget, into c: inout KeyedEncodingContainer<ResultKey>) throws {}
}

/// An estimator's own typed result (`PlainReport`, `SMCReport`): what `ed` prints as JSON.
public protocol NetworkEstimateReport: Encodable, Sendable {
    var seconds: Double { get set }
}

/// The one result every network estimator returns: per ε the 2sEDs and what a caller compares or warns
/// about, the certified bracket, the checks behind `ed`'s warnings, and the estimator's own report.
/// Its JSON is the report's (an estimator without one: `estimator` and `points`).
public struct NetworkEstimate: Sendable, Encodable {
    /// One ε of the grid (`EpsilonEstimate`) in the common keys (an estimator without a report of its own, or
    /// one that keeps them): `eps`, `d_zeta`, `d_zeta_joint`, then where present `d_zeta_lower`, `ci95`,
    /// `ci95_lower`, and the estimator's `extras` under their names.
    public struct PointKeys: Encodable {
        let p: EpsilonEstimate

        public init(_ p: EpsilonEstimate) { self.p = p }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: ResultKey.self)
            try c.encode(p.eps, forKey: ResultKey("eps"))
            try c.encode(p.dZeta, forKey: ResultKey("d_zeta"))
            try c.encode(p.dZetaJoint, forKey: ResultKey("d_zeta_joint"))
            try c.encodeIfPresent(p.dZetaLower, forKey: ResultKey("d_zeta_lower"))
            try c.encodeIfPresent(p.ci95, forKey: ResultKey("ci95"))
            try c.encodeIfPresent(p.ci95Lower, forKey: ResultKey("ci95_lower"))
            for x in p.extras { try c.encode(x.value, forKey: ResultKey(x.name)) }
        }
    }

    /// What `ed` warns about, where the estimator checks it (nil: nothing found, or not checked).
    public struct Diagnostics: Sendable {
        public var degeneracy: WeightDegeneracy?
        public var lowerAboveNested: LowerAboveNested?
        public var tailShortfall: TailShortfall?
        public var aboveBound: EstimateAboveBound?
        /// The point whose upper bound is expected to fall short by more than its interval reaches.
        public var boundShortfall: EpsilonEstimate?
        public var bracketCheck: BracketCheck?

        public init(degeneracy: WeightDegeneracy? = nil, lowerAboveNested: LowerAboveNested? = nil, tailShortfall: TailShortfall? = nil,
                    aboveBound: EstimateAboveBound? = nil, boundShortfall: EpsilonEstimate? = nil, bracketCheck: BracketCheck? = nil) {
            self.degeneracy = degeneracy
            self.lowerAboveNested = lowerAboveNested
            self.tailShortfall = tailShortfall
            self.aboveBound = aboveBound
            self.boundShortfall = boundShortfall
            self.bracketCheck = bracketCheck
        }
    }

    public var kind: EstimatorKind
    public var points: [EpsilonEstimate]
    /// K, as the warnings quote it.
    public var paths: Int
    /// The normalisation c used.
    public var scale: Double
    public var bracket: CertifiedBracket?
    public var diagnostics: Diagnostics
    /// The estimator's own typed result (nil where the problem had no configuration).
    public var report: (any NetworkEstimateReport)?

    /// The bracket (on the points' own ε grid) is attached to the points (`EpsilonEstimate.attach`): a lower
    /// 2sED above its ε's bracket is lowered to the bracket's upper end here, as `ed`'s report does, so that
    /// `compare` and `study`, which read these points, never print it above; what lay outside is the
    /// `bracketCheck` where `diagnostics` brings none.
    public init(kind: EstimatorKind, points: [EpsilonEstimate], paths: Int, scale: Double, bracket: CertifiedBracket?,
                diagnostics: Diagnostics = Diagnostics(), report: (any NetworkEstimateReport)? = nil) {
        var points = points
        let check = bracket.flatMap { EpsilonEstimate.attach($0, to: &points) }
        self.kind = kind
        self.points = points
        self.paths = paths
        self.scale = scale
        self.bracket = bracket
        self.diagnostics = diagnostics
        if diagnostics.bracketCheck == nil, let check { self.diagnostics.bracketCheck = check }
        self.report = report
    }

    /// The run's wall time, kept in the report.
    public var seconds: Double {
        get { report?.seconds ?? 0 }
        set { report?.seconds = newValue }
    }

    public func encode(to encoder: any Encoder) throws {
        if let report { return try report.encode(to: encoder) }
        var c = encoder.container(keyedBy: ResultKey.self)
        try c.encode(kind, forKey: ResultKey("estimator"))
        try c.encode(points.map(PointKeys.init), forKey: ResultKey("points"))
    }
}
