import Foundation
import RandomStreams
import Samplers
import TwoScaleCore

/// The Monte Carlo estimators run on a separable toy model, where the exact answer is known: the
/// ground truth the network estimators are checked against.
///
/// * `plain`: K draws θ^k ~ U(box^d), the layered estimator with one block (the same code as networks),
///   ĉ from the same draws, a percentile bootstrap over draws for the interval.
/// * `smc`: every axis is an independent unit (as every neuron of a Gaussian layer is), so
///   `log E det = Σ_i log Z_i(s)`, each `Z_i` from `AnnealedSMC` with K particles per replicate; ĉ from
///   `traceDraws` separate uniform draws (by default one per two axes, at least 1 000, as for networks),
///   its uncertainty carried into the interval.
///
/// Random streams: draw k of `plain` from `Xoshiro256(seed:, stream: [TOY, 1, k])`, axis i's replicate r
/// of `smc` from `[TOY, 2, i, r]`, trace draw k from `[TOY, 3, k]`.
public struct ToyMonteCarlo: Sendable {
    public var model: ToyModel
    /// The estimator run (`Method.plain`, `Method.smc`; `EstimatorRegistry.toyMethod` finds one by name).
    public var method: Method
    public var estimator: EstimatorKind { method.kind }
    public var paths: Int
    public var seed: UInt64
    public var traceDraws: Int
    public var bootstrap: Int
    public var smc: SMCSettings

    static let stream: UInt64 = 0x544F_59  // "TOY"

    /// `traceDraws` nil: `TraceEstimate.defaultDraws` for the model's dimension (one per two axes, at least 1 000).
    public init(model: ToyModel, method: Method, paths: Int, seed: UInt64, traceDraws: Int? = nil,
                bootstrap: Int = 200, replicates: Int = 2) throws {
        let traceDraws = traceDraws ?? TraceEstimate.defaultDraws(parameters: model.dimension)
        guard paths >= 2, paths <= 10_000_000 else {
            throw TwoScaleError.invalid("\(Setting.paths)", "\(paths)", allowed: "the Monte Carlo budget K must be from 2 to 10⁷")
        }
        guard TraceEstimate.allowedDraws.contains(traceDraws) else {
            throw TwoScaleError.invalid("\(Setting.traceDraws)", "\(traceDraws)", allowed: "give from 2 to 10⁷ draws")
        }
        guard bootstrap == 0 || (2...100_000).contains(bootstrap) else {
            throw TwoScaleError.invalid("\(Setting.bootstrap)", "\(bootstrap)", allowed: "an interval needs 2 to 10⁵ resamples (0 disables it)")
        }
        let (work, o) = paths.multipliedReportingOverflow(by: model.dimension)
        guard !o, work <= 1 << 31 else {
            throw TwoScaleError.invalid("\(Setting.paths)", "\(paths)", allowed: "K·d = \(paths)·\(model.dimension) exceeds 2³¹ draws; use fewer paths")
        }
        self.model = model
        self.method = method
        self.paths = paths
        self.seed = seed
        self.traceDraws = traceDraws
        self.bootstrap = bootstrap
        smc = try SMCSettings(particles: Swift.max(4, paths / replicates), replicates: replicates)
    }

    /// `√λ_i` on axis i as a function of θ_i. The family is resolved here, once per axis, not in every
    /// call: matching it per coordinate copies the family, which costs more than λ itself.
    func sqrtLambda(axis i: Int) -> @Sendable (Double) -> Double {
        switch model.family {
        case .constant:
            let root = model.lambdas[i].squareRoot()
            return { _ in root }
        case .axis(let f):
            return { f.sqrtLambda($0) }
        }
    }

    /// `√λ_i(θ_i)` of every axis at one uniform draw θ from `rng` (axis by axis, one uniform each).
    func sqrtLambdas(_ rng: inout Xoshiro256) -> [Double] {
        let d = model.dimension, lo = model.lo, hi = model.hi
        switch model.family {
        case .constant:
            return (0..<d).map { i in _ = rng.uniform(lo, hi); return model.lambdas[i].squareRoot() }
        case .axis(let f):
            return f.sqrtLambdas(count: d, lo: lo, hi: hi, rng: &rng)
        }
    }

    /// `Tr F(θ) = Σ_i λ_i(θ_i)` at one uniform draw θ from `rng`, summed in axis order.
    func trace(_ rng: inout Xoshiro256) -> Double {
        let d = model.dimension, lo = model.lo, hi = model.hi
        switch model.family {
        case .constant:
            var t = 0.0
            for i in 0..<d { _ = rng.uniform(lo, hi); t += model.lambdas[i] }
            return t
        case .axis(let f):
            return f.lambdaSum(count: d, lo: lo, hi: hi, rng: &rng)
        }
    }

    /// A result per ε, plus the estimator's diagnostics.
    public struct Result: Sendable {
        public var points: [EpsilonEstimate]
        public var diagnostics: SMCDiagnostics?
        /// plain: the smallest ESS of the draws' weights over the grid.
        public var minESS: Double?
        public var scale: Double
    }

    public func run(eps: [Double], zeta: Double, normalization: Normalization, threads: Int) async throws -> Result {
        try ScaleParameters.checkZeta(zeta)
        for e in eps { try ScaleParameters.checkEpsilon(e) }
        return try await method.run(self, eps, zeta, normalization, threads)
    }

    /// One toy estimator: its name, how it runs, and whether it reports a standard error, the normalisation's
    /// share and its own trace draws (`ToyMeasurement.addMonteCarlo`). The estimators of the one registry
    /// (`EstimatorRegistry`, module Estimation) name theirs (`NetworkEstimator.toy`); this module names none.
    public struct Method: Sendable {
        public var kind: EstimatorKind
        public var run: @Sendable (ToyMonteCarlo, [Double], Double, Normalization, Int) async throws -> Result
        public var separateTrace: Bool

        public init(kind: EstimatorKind, separateTrace: Bool,
                    run: @escaping @Sendable (ToyMonteCarlo, [Double], Double, Normalization, Int) async throws -> Result) {
            self.kind = kind
            self.run = run
            self.separateTrace = separateTrace
        }

        /// K uniform draws, the layered estimator with one block, a bootstrap interval.
        public static let plain = Method(kind: .plain, separateTrace: false) {
            try await $0.runPlain(eps: $1, zeta: $2, normalization: $3, threads: $4)
        }
        /// Every axis an independent unit, each by an annealed SMC sampler; ĉ from its own draws.
        public static let smc = Method(kind: .smc, separateTrace: true) {
            try await $0.runSMC(eps: $1, zeta: $2, normalization: $3, threads: $4)
        }
    }

    func checkFinite(_ v: Double, _ what: String) throws {
        guard v.isFinite else {
            throw TwoScaleError.failure("\(what) is not finite (\(v)); a Fisher eigenvalue overflowed — use a box away from the family's singular point")
        }
    }

    func runPlain(eps: [Double], zeta: Double, normalization: Normalization, threads: Int) async throws -> Result {
        let d = model.dimension
        let me = self
        let spectra: [Spectrum] = try await Parallel.map(paths, threads: threads) { k in
            var rng = Xoshiro256(seed: me.seed, stream: [Self.stream, 1, UInt64(k)])
            let sp = Spectrum(roots: me.sqrtLambdas(&rng))
            try me.checkFinite(sp.trace, "Tr F(θ) at draw \(k)")
            return sp
        }
        let layered = try LayeredSpectra(dimension: d, layerDimensions: [d], own: [spectra], inner: [[]])
        let est = try LayeredEstimator(spectra: layered, normalization: normalization)
        let pts = try est.points(eps: eps, zeta: zeta, bootstrap: bootstrap, seed: seed)
        var minESS = Double.infinity
        let points = pts.map { p -> EpsilonEstimate in
            let s = ScaleParameters.t(eps: p.eps, zeta: zeta) * est.scale.squareRoot()
            let lw = spectra.map { $0.logDetSqrt(scale: s) }
            minESS = Swift.min(minESS, LogSpace.effectiveSampleSize(logWeights: lw))
            var q = EpsilonEstimate(eps: p.eps, zeta: zeta, dimension: d,
                                    estimate: LogEstimate(value: LogSpace.logMeanExp(lw), variance: 0))
            q.ci95 = p.ci95 ?? q.dZeta...q.dZeta
            q.standardError = nil
            return q
        }
        return Result(points: points, diagnostics: nil, minESS: minESS, scale: est.scale)
    }

    /// ĉ from `traceDraws` independent uniform draws of θ.
    func traceEstimate(threads: Int) async throws -> TraceEstimate {
        let me = self
        let traces: [Double] = try await Parallel.map(traceDraws, threads: threads) { k in
            var rng = Xoshiro256(seed: me.seed, stream: [Self.stream, 3, UInt64(k)])
            let t = me.trace(&rng)
            try me.checkFinite(t, "Tr F(θ) at trace draw \(k)")
            return t
        }
        return TraceEstimate(traces: traces)
    }

    func runSMC(eps: [Double], zeta: Double, normalization: Normalization, threads: Int) async throws -> Result {
        let d = model.dimension
        let trace = try await traceEstimate(threads: threads)
        let (c, varLogC) = try trace.scale(normalization, dimension: d)
        // Stops: the scales s = t(ε)·√c of the grid, ascending (several ε may share one).
        let sOf = eps.map { ScaleParameters.t(eps: $0, zeta: zeta) * c.squareRoot() }
        let stops = Array(Set(sOf)).sorted()
        let index = Dictionary(uniqueKeysWithValues: stops.enumerated().map { ($1, $0) })
        let chunk = 256
        let chunks = (d + chunk - 1) / chunk
        let me = self
        let settings = smc
        let box = model.lo...model.hi
        // Per chunk of axes: per stop, Σ log-estimates, Σ slopes, and the pooled diagnostics.
        let parts: [([LogEstimate], [Double], SMCDiagnostics)] = try await Parallel.map(chunks, threads: threads) { b in
            var acc = [LogEstimate](repeating: LogEstimate(), count: stops.count)
            var slope = [Double](repeating: 0, count: stops.count)
            var diag = SMCDiagnostics()
            for i in (b * chunk)..<Swift.min(d, (b + 1) * chunk) {
                let root = me.sqrtLambda(axis: i)
                let unit = SMCUnit(dimension: 1, box: box) { x in [root(x[0])] }
                let u = try AnnealedSMC.run(unit, stops: stops, settings: settings, seed: me.seed,
                                            stream: [Self.stream, 2, UInt64(i)])
                for t in stops.indices {
                    let cmb = u.combined(t)
                    acc[t] = acc[t] + LogEstimate.corrected(logZ: cmb.logZ, relVar: cmb.relVar)
                    slope[t] += u.slope[t]
                }
                diag.merge(u.diagnostics)
            }
            return (acc, slope, diag)
        }
        var total = [LogEstimate](repeating: LogEstimate(), count: stops.count)
        var slope = [Double](repeating: 0, count: stops.count)
        var diag = SMCDiagnostics()
        for (a, s, g) in parts {
            for t in stops.indices { total[t] = total[t] + a[t]; slope[t] += s[t] }
            diag.merge(g)
        }
        var points: [EpsilonEstimate] = []
        for (e, s) in zip(eps, sOf) {
            let t = index[s]!
            let cv = TraceEstimate.addedVariance(slope: slope[t], logVarianceOfC: varLogC)
            var est = total[t]
            est.variance += cv
            try checkFinite(est.value, "log E det at ε = \(e)")
            points.append(EpsilonEstimate(eps: e, zeta: zeta, dimension: d, estimate: est, normalizationVariance: cv))
        }
        return Result(points: points, diagnostics: diag, minESS: nil, scale: c)
    }
}
