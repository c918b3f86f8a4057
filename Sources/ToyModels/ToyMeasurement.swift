import Foundation
import Samplers
import TwoScaleCore

/// Everything `toy` reports of an exact toy model on a grid of ε (docs/METHOD.md §8–9): the exact 2sED
/// (with the chosen normalisation and with the raw metric c = 1), the box counts of the raw metric, the
/// determinant bound, the covering ratio N(ε)·ε^(d_ζ) and, for non-constant families, the greedy 1-D
/// cover. The measures each family takes: constant λ has an exact minimal cover and its lower bound;
/// the others have the two-scale cover and the greedy product cover. JSON keys are the fields' snake-case
/// names in this order; a count that does not exist or does not fit a double is null.
public struct ToyMeasurement: Sendable, Encodable {
    /// One ε of the grid.
    public struct Point: Sendable, Encodable {
        public var eps: Double
        public var dZeta: Double
        public var count: BoxCount
        public var logDetBound: Double
        public var dZetaRaw: Double
        /// Constant family: log of the minimal cover's lower bound; others: the greedy cover (nil when
        /// capped or off).
        public var logLowerBound: Double?
        public var greedy: BoxCount?
        public var monteCarlo: MonteCarloPoint?
        var constant: Bool

        /// `log N(ε) / |log ε|`, nil without a finite cover.
        public var coverDimension: Double? { count.log.isFinite ? count.log / Swift.abs(Foundation.log(eps)) : nil }
        /// `d_ζ(c = 1)·|log ε| = log ε^(−d_ζ)`.
        public var logEpsPowMinusDZeta: Double { dZetaRaw * Swift.abs(Foundation.log(eps)) }
        /// `log N(ε) − d_ζ(c=1)|log ε|`, nil without a finite cover.
        public var logCoverRatio: Double? { count.log.isFinite ? count.log - logEpsPowMinusDZeta : nil }

        enum CodingKeys: String, CodingKey {
            case eps, dZeta, logBoxCount, boxCount, logDetBound, dZetaRaw, coverDimension, logEpsPowMinusDZeta, logCoverRatio
            case logLowerBound, logGreedyCount, greedyCount
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(eps, forKey: .eps)
            try c.encode(dZeta, forKey: .dZeta)
            try c.encode(count.log.isFinite ? count.log : nil, forKey: .logBoxCount)
            try c.encode(count.exact, forKey: .boxCount)
            try c.encode(logDetBound.isFinite ? logDetBound : nil, forKey: .logDetBound)
            try c.encode(dZetaRaw, forKey: .dZetaRaw)
            try c.encode(coverDimension, forKey: .coverDimension)
            try c.encode(logEpsPowMinusDZeta, forKey: .logEpsPowMinusDZeta)
            try c.encode(logCoverRatio, forKey: .logCoverRatio)
            if constant {
                try c.encode(logLowerBound, forKey: .logLowerBound)
            } else {
                try c.encode(greedy?.log, forKey: .logGreedyCount)
                try c.encode(greedy?.exact, forKey: .greedyCount)
            }
            try monteCarlo?.encode(to: encoder)
        }
    }

    /// The Monte Carlo estimate at one ε beside the exact value: the first trial's estimate and
    /// interval, and over all trials the coverage of the exact value and the error statistics.
    public struct MonteCarloPoint: Sendable, Encodable {
        public var dZetaMc: Double
        public var ci95Mc: ClosedRange<Double>
        public var errorMc: Double
        /// smc only: the standard error of log E det and ĉ's share of the variance.
        public var seLogDet: Double??
        public var normalizationShare: Double?
        /// With more than one trial.
        public var trials: Int?
        public var covered: Int?
        public var coverage: Double?
        public var mcMean: Double?
        public var mcBias: Double?
        public var mcSd: Double?
        public var meanHalfWidth: Double?

        enum CodingKeys: String, CodingKey {
            case dZetaMc = "d_zeta_mc", ci95Mc = "ci95_mc", errorMc = "error_mc", seLogDet, normalizationShare
            case trials, covered, coverage, mcMean, mcBias, mcSd, meanHalfWidth
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(dZetaMc, forKey: .dZetaMc)
            try c.encode(ci95Mc, forKey: .ci95Mc)
            try c.encode(errorMc, forKey: .errorMc)
            if let se = seLogDet { try c.encode(se, forKey: .seLogDet) }
            try c.encodeIfPresent(normalizationShare, forKey: .normalizationShare)
            try c.encodeIfPresent(trials, forKey: .trials)
            try c.encodeIfPresent(covered, forKey: .covered)
            try c.encodeIfPresent(coverage, forKey: .coverage)
            try c.encodeIfPresent(mcMean, forKey: .mcMean)
            try c.encodeIfPresent(mcBias, forKey: .mcBias)
            try c.encodeIfPresent(mcSd, forKey: .mcSd)
            try c.encodeIfPresent(meanHalfWidth, forKey: .meanHalfWidth)
        }
    }

    /// The Monte Carlo run's settings and diagnostics (first trial).
    public struct MonteCarloSummary: Sendable, Encodable {
        public var estimator: EstimatorKind
        public var paths: Int
        public var seed: UInt64
        public var trials: Int
        public var mcScale: Double
        public var smc: SMCDiagnostics.Summary?
        public var minEss: Double?
        public var traceDraws: Int?

        enum CodingKeys: String, CodingKey { case estimator, paths, seed, mcScale, smc, minEss, traceDraws }
    }

    /// The metric of each column, stated once per report.
    public static let metricNote = "metric: d_zeta uses the chosen \(Setting.normalize); the box counts, log_det_bound, d_zeta_raw, log_eps_pow_minus_d_zeta and log_cover_ratio all use the raw Fisher metric (c = 1), so a count is compared with ε^(−d_ζ) of the same metric"
    public static let greedyNote = "greedy 1-D cover^d: the greedy cover is computed axis by axis and is left out (\"> \(Setting.greedyMax)\", null in JSON) where one axis would need more than \(Setting.greedyMax) boxes"

    public var model: ToyModel
    public var zeta: Double
    public var normalization: Normalization
    /// Largest greedy cover per axis (0: off).
    public var greedyMax: Int
    public var points: [Point]
    /// `max_ε log(N(ε)·ε^(d_ζ,raw))` over the grid (−∞ without a finite cover).
    public var logCoveringConstant: Double
    /// Whether some ε had its greedy cover left out for exceeding `greedyMax`.
    public var greedyCapped: Bool
    public var monteCarlo: MonteCarloSummary?

    public var constant: Bool { model.family == .constant }

    enum CodingKeys: String, CodingKey {
        case dimension, zeta, normalization, family, box, boxCountKind, meanSqrtLambda, meanLambda, quadratureError, metricNote
        case logCoveringConstant, coveringConstant, greedyNote, points
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(model.dimension, forKey: .dimension)
        try c.encode(zeta, forKey: .zeta)
        try c.encode(normalization.rawValue, forKey: .normalization)
        try c.encode(model.family.name, forKey: .family)
        try c.encode([model.lo, model.hi], forKey: .box)
        try c.encode(constant ? "exact-minimal" : "two-scale-cover", forKey: .boxCountKind)
        if !constant {
            try c.encode(model.meanSqrtLambda[0], forKey: .meanSqrtLambda)
            try c.encode(model.meanLambda?[0], forKey: .meanLambda)
            try c.encode([model.quadratureError.sqrt, model.quadratureError.lambda].filter(\.isFinite), forKey: .quadratureError)
        }
        try c.encode(Self.metricNote, forKey: .metricNote)
        let finite = logCoveringConstant.isFinite
        try c.encode(finite ? logCoveringConstant : nil, forKey: .logCoveringConstant)
        try c.encode(finite && logCoveringConstant < 700 ? Foundation.exp(logCoveringConstant) : nil, forKey: .coveringConstant)
        if !constant { try c.encode(Self.greedyNote, forKey: .greedyNote) }
        try monteCarlo?.encode(to: encoder)
        try c.encode(points, forKey: .points)
    }

    /// The exact measures of `model` at each ε.
    public static func measure(model: ToyModel, eps: [Double], zeta: Double, normalization: Normalization,
                               greedyMax: Int) throws -> ToyMeasurement {
        var points: [Point] = []
        var logConstant = -Double.infinity
        var capped = false
        let constant = model.family == .constant
        for e in eps {
            let count: BoxCount = constant ? BoxCover.constantMinimal(model, eps: e) : try BoxCover.twoScale(model, eps: e, zeta: zeta)
            let greedy = greedyMax > 0 && !constant ? try BoxCover.greedy(model, eps: e, maxBoxes: greedyMax) : nil
            if greedyMax > 0, !constant, greedy == nil { capped = true }
            let p = Point(eps: e, dZeta: try model.twoScaleDimension(eps: e, zeta: zeta, normalization: normalization),
                          count: count, logDetBound: BoxCover.logDetBound(model, eps: e),
                          dZetaRaw: try model.twoScaleDimension(eps: e, zeta: zeta, normalization: .none),
                          logLowerBound: constant ? BoxCover.constantLowerBound(model, eps: e) : nil,
                          greedy: greedy, monteCarlo: nil, constant: constant)
            if let r = p.logCoverRatio { logConstant = Swift.max(logConstant, r) }
            points.append(p)
        }
        return ToyMeasurement(model: model, zeta: zeta, normalization: normalization, greedyMax: greedyMax, points: points,
                              logCoveringConstant: logConstant, greedyCapped: capped, monteCarlo: nil)
    }

    /// Runs `trials` Monte Carlo estimates of every ε (trial i with seed `seed + i`) and adds them beside
    /// the exact values (`Setting.monteCarlo`).
    /// `traceDraws` nil: the default for the model's dimension (`ToyMonteCarlo` resolves it).
    public mutating func runMonteCarlo(method: ToyMonteCarlo.Method, paths: Int, seed: UInt64, trials: Int, traceDraws: Int?,
                                       bootstrap: Int, threads: Int) async throws {
        let eps = points.map(\.eps)
        var results: [ToyMonteCarlo.Result] = []
        var drawsUsed = traceDraws ?? 0
        for i in 0..<trials {
            let mc = try ToyMonteCarlo(model: model, method: method, paths: paths, seed: seed &+ UInt64(i),
                                       traceDraws: traceDraws, bootstrap: bootstrap)
            drawsUsed = mc.traceDraws
            results.append(try await mc.run(eps: eps, zeta: zeta, normalization: normalization, threads: threads))
        }
        try addMonteCarlo(results, method: method, paths: paths, seed: seed, traceDraws: drawsUsed)
    }

    /// Adds Monte Carlo trials (the same ε grid) beside the exact values: the first trial's estimate and,
    /// over all trials, how often the 95% interval holds the exact value, the bias and the spread.
    public mutating func addMonteCarlo(_ trials: [ToyMonteCarlo.Result], method: ToyMonteCarlo.Method, paths: Int, seed: UInt64,
                                       traceDraws: Int) throws {
        guard let first = trials.first, trials.allSatisfy({ $0.points.count == points.count }) else {
            throw TwoScaleError.failure("toy \(Setting.monteCarlo): every trial needs one estimate per ε")
        }
        let smc = method.separateTrace  // smc: standard errors, ĉ from its own draws
        for i in points.indices {
            let mc = first.points[i], exact = points[i].dZeta
            var q = MonteCarloPoint(dZetaMc: mc.dZeta, ci95Mc: mc.interval95, errorMc: mc.dZeta - exact,
                                    seLogDet: smc ? .some(mc.standardError) : nil, normalizationShare: smc ? mc.normalizationShare : nil)
            if trials.count > 1 {
                let ests = trials.map { $0.points[i].dZeta }
                let n = Double(ests.count)
                let mean = ests.reduce(0, +) / n
                // Held up to rounding: where every draw gives the same spectrum (a constant λ) the interval has
                // no width and the estimate and the exact value are one number summed two ways; the allowance is
                // the certified bracket's (docs/METHOD.md §19).
                let slack = CertifiedBracket.rounding(dimension: model.dimension, size: Swift.abs(exact))
                let covered = trials.filter { $0.points[i].interval95.lowerBound - slack <= exact
                                              && exact <= $0.points[i].interval95.upperBound + slack }.count
                q.trials = trials.count
                q.covered = covered
                q.coverage = Double(covered) / n
                q.mcMean = mean
                q.mcBias = mean - exact
                q.mcSd = (ests.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (n - 1)).squareRoot()
                q.meanHalfWidth = trials.reduce(0) { $0 + ($1.points[i].interval95.upperBound - $1.points[i].interval95.lowerBound) / 2 } / n
            }
            points[i].monteCarlo = q
        }
        monteCarlo = MonteCarloSummary(estimator: method.kind, paths: paths, seed: seed, trials: trials.count, mcScale: first.scale,
                                       smc: first.diagnostics?.summary, minEss: first.minESS, traceDraws: smc ? traceDraws : nil)
    }
}

