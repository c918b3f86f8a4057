import Foundation

/// The `kronecker` metric of the moves (`MoveMetric.kronecker`), for a unit whose p
/// coordinates are a matrix of R rows of m (the softmax unit: one row `w_c` per class over the same m
/// inputs, the bias last).
///
/// The metric (inverse mass matrix) is `D (A ⊗ B) D`: `D = diag(sd)` the particles' per-coordinate spread
/// (as in the diagonal metric), `A` an R × R correlation between rows and `B` an m × m correlation
/// within a row. With `y = (x − x̄) / sd` the scaled particles, B is the correlation of the rows `y_c`
/// pooled over the rows and the particles, A that of the columns `y_{·k}` pooled over the columns and the
/// particles, each shrunk towards the identity by its dimension over its number of pooled vectors. For a
/// separable correlation `A ⊗ B` these are consistent estimates of the two factors.
///
/// Why: the softmax unit's log-determinant does not change when the same vector is added to every
/// class row (the logits' common shift), so at a large scale its target is a slab, narrow in the
/// contrasts between rows (pinned by the logits `W x_n`) and as wide as the box along the shift. The
/// coordinates of one input across the classes are then correlated nearly to 1, which a diagonal metric
/// cannot express: its trajectories must take contrast-sized steps and about `√κ` of them (κ the
/// condition number of the target's covariance) to move along the shift. Within a row, inputs that the
/// data hardly separate correlate as well (B).
///
/// In whitened coordinates `q = (L_A ⊗ L_B)⁻¹ D⁻¹ x` (`A = L_A L_Aᵀ`, `B = L_B L_Bᵀ`) the momentum
/// `v ~ N(0, I)` moves q freely and the box `[lo, hi]^p` is a polytope: coordinate (c, k) meets a face
/// where `sd_{ck} · n_{ck}·q` reaches it, `n_{ck} = L_A[c, ·] ⊗ L_B[k, ·]`. `drift` follows that free
/// flight exactly and reflects the momentum specularly at each face it meets
/// (`v ← v − 2 (n·v / |n|²) n`): a billiard, reversible and volume-preserving, so the leapfrog map (and the Kronecker walk's flight) stays
/// a valid Metropolis proposal and the uniform prior needs no correction. With `A = I, B = I` the flight
/// is the diagonal metric's folded one.
struct KroneckerMetric {
    /// R rows of m.
    let rows: Int, m: Int
    let sd: [Double]
    /// `L_A` (R × R) and `L_B` (m × m), lower triangular, row-major.
    let la: [Double], lb: [Double]
    /// `|L_A[c, ·]|²` and `|L_B[k, ·]|²`.
    let normA: [Double], normB: [Double]

    init(rows: Int, m: Int, sd: [Double], la: [Double], lb: [Double]) {
        precondition(sd.count == rows * m && la.count == rows * rows && lb.count == m * m)
        self.rows = rows
        self.m = m
        self.sd = sd
        self.la = la
        self.lb = lb
        normA = KroneckerMetric.rowNorms(la, rows)
        normB = KroneckerMetric.rowNorms(lb, m)
    }

    /// The metric of particles `x` (row-major `particles × p`, p = `sd.count`) with per-coordinate
    /// spread `sd`, for rows of `rowLength`.
    init(_ x: [Double], particles n: Int, rowLength m: Int, spread sd: [Double]) {
        let p = sd.count
        precondition(m >= 1 && p % m == 0 && x.count == n * p)
        let r = p / m
        var mean = [Double](repeating: 0, count: p)
        for i in 0..<n { for j in 0..<p { mean[j] += x[i * p + j] } }
        for j in 0..<p { mean[j] /= Double(n) }
        var a = [Double](repeating: 0, count: r * r), b = [Double](repeating: 0, count: m * m)
        var y = [Double](repeating: 0, count: p)
        for i in 0..<n {
            for j in 0..<p { y[j] = (x[i * p + j] - mean[j]) / sd[j] }
            for c in 0..<r {
                for k in 0..<m where y[c * m + k] != 0 {
                    let v = y[c * m + k]
                    for k2 in 0...k { b[k * m + k2] += v * y[c * m + k2] }
                    for c2 in 0...c { a[c * r + c2] += v * y[c2 * m + k] }
                }
            }
        }
        let factorA = KroneckerMetric.choleskyOfCorrelation(a, r, shrink: Double(r) / Double(n * m))
        let factorB = KroneckerMetric.choleskyOfCorrelation(b, m, shrink: Double(m) / Double(n * r))
        self.init(rows: r, m: m, sd: sd, la: factorA, lb: factorB)
    }

    /// The Cholesky factor of the correlation of a scatter matrix s (lower triangle filled), shrunk
    /// towards the identity by `min(1, shrink)`; the identity where it is not positive definite. A
    /// coordinate that never varies gets unit variance and no correlation.
    static func choleskyOfCorrelation(_ s: [Double], _ k: Int, shrink: Double) -> [Double] {
        let alpha = Swift.min(1, Swift.max(0, shrink))
        var c = [Double](repeating: 0, count: k * k)
        for i in 0..<k {
            for j in 0...i {
                let denom = (s[i * k + i] * s[j * k + j]).squareRoot()
                let r = i == j ? 1 : (denom > 0 ? (1 - alpha) * s[i * k + j] / denom : 0)
                c[i * k + j] = r
                c[j * k + i] = r
            }
        }
        return cholesky(c, k) ?? identity(k)
    }

    /// The lower Cholesky factor of a symmetric k × k matrix (row-major), or nil if it is not
    /// numerically positive definite.
    static func cholesky(_ a: [Double], _ k: Int) -> [Double]? {
        var l = [Double](repeating: 0, count: k * k)
        for i in 0..<k {
            for j in 0...i {
                var sum = a[i * k + j]
                for t in 0..<j { sum -= l[i * k + t] * l[j * k + t] }
                if i == j {
                    guard sum > 1e-12, sum.isFinite else { return nil }
                    l[i * k + i] = sum.squareRoot()
                } else {
                    l[i * k + j] = sum / l[j * k + j]
                }
            }
        }
        return l
    }

    static func identity(_ k: Int) -> [Double] {
        var l = [Double](repeating: 0, count: k * k)
        for i in 0..<k { l[i * k + i] = 1 }
        return l
    }

    static func rowNorms(_ l: [Double], _ k: Int) -> [Double] {
        (0..<k).map { i in (0...i).reduce(0) { $0 + l[i * k + $1] * l[i * k + $1] } }
    }

    /// `v ← v + h · (L_A ⊗ L_B)ᵀ D g`: a half or whole momentum step for the gradient g of ℓ in x
    /// (`L_Aᵀ G L_B` with G the scaled gradient as an R × m matrix).
    func kick(_ v: inout [Double], gradient g: [Double], by h: Double) {
        var t = [Double](repeating: 0, count: rows * m)
        for c in 0..<rows {
            for k in 0..<m {
                let gk = sd[c * m + k] * g[c * m + k]
                guard gk != 0 else { continue }
                for c2 in 0...c { t[c2 * m + k] += la[c * rows + c2] * gk }
            }
        }
        for c in 0..<rows {
            for k2 in 0..<m {
                var acc = 0.0
                for k in k2..<m { acc += t[c * m + k] * lb[k * m + k2] }
                v[c * m + k2] += h * acc
            }
        }
    }

    /// The velocity `u = D (L_A ⊗ L_B) v` (`L_A V L_Bᵀ`, scaled).
    func velocity(_ v: [Double], into u: inout [Double]) {
        var t = [Double](repeating: 0, count: rows * m)
        for c in 0..<rows {
            for k in 0..<m {
                var acc = 0.0
                for k2 in 0...k { acc += v[c * m + k2] * lb[k * m + k2] }
                t[c * m + k] = acc
            }
        }
        for c in 0..<rows {
            for k in 0..<m {
                var acc = 0.0
                for c2 in 0...c { acc += la[c * rows + c2] * t[c2 * m + k] }
                u[c * m + k] = sd[c * m + k] * acc
            }
        }
    }

    /// Free flight of x for `time` at velocity u (from momentum v), reflected at every face of
    /// `[lo, hi]^p` it meets: at the first face met, coordinate (c, k) is set on the face, v is reflected
    /// across `n_{ck}` and u recomputed, and the flight goes on for the time left. False if the flight
    /// meets more than `100 p` faces (a trajectory the caller rejects).
    func drift(_ x: inout [Double], momentum v: inout [Double], velocity u: inout [Double], time: Double,
               lo: Double, hi: Double) -> Bool {
        let p = x.count
        var left = time
        var events = 0
        while true {
            var first = left, hit = -1
            for j in 0..<p {
                let uj = u[j]
                if uj > 0 {
                    let t = (hi - x[j]) / uj
                    if t < first { first = t; hit = j }
                } else if uj < 0 {
                    let t = (lo - x[j]) / uj
                    if t < first { first = t; hit = j }
                }
            }
            let t = Swift.max(0, first)
            for j in 0..<p { x[j] = Swift.min(hi, Swift.max(lo, x[j] + t * u[j])) }
            guard hit >= 0 else { return true }
            x[hit] = u[hit] > 0 ? hi : lo
            let c = hit / m, k = hit % m
            var dot = 0.0
            for c2 in 0...c {
                let a = la[c * rows + c2]
                for k2 in 0...k { dot += a * lb[k * m + k2] * v[c2 * m + k2] }
            }
            let f = 2 * dot / (normA[c] * normB[k])
            for c2 in 0...c {
                let a = f * la[c * rows + c2]
                for k2 in 0...k { v[c2 * m + k2] -= a * lb[k * m + k2] }
            }
            velocity(v, into: &u)
            left -= t
            events += 1
            guard events <= 100 * p else { return false }
        }
    }
}

/// The Kronecker metrics a unit's replicate samplers move with, by scale: those a *scout* sampler
/// estimated from its own particles at each of its resample–move steps (`AnnealedSMC.run`).
///
/// Why a scout: a metric estimated from the particles it then moves makes each kernel depend on the
/// population it acts on, and the sampler's `Ẑ` is then no longer unbiased. With `D (A ⊗ B) D` fitted
/// from 16–32 particles (7² + 16² correlations on 54-16-7's softmax unit) that self-dependence was
/// measured: the Kronecker walk's islands at J = 32 sat about a nat above their J = 320 values
/// (docs/lab/ESTIMATORS-LOG.md, "A Kronecker random walk"). A scout is an independent run of the same sampler
/// (its own stream, its `Ẑ` discarded); given its schedule every replicate's kernels are fixed in
/// advance of its own particles, and the replicates stay independent of each other given the scout, so
/// their spread is still their variance. It costs one more sampler per unit that uses the metric.
struct MetricSchedule {
    /// `(scale, metric)` in the order recorded (ascending scale).
    private(set) var stops: [(scale: Double, metric: KroneckerMetric)] = []

    mutating func append(scale: Double, _ metric: KroneckerMetric) {
        stops.append((scale, metric))
    }

    /// The metric for a move at scale `s`: the last recorded at a scale ≤ s (the scout's population
    /// nearest below, so at most as sharp as the target); below the first, the first (fitted to a
    /// slightly sharper target); nil when empty (the scout never moved: the replicate then uses the
    /// diagonal metric).
    func metric(at s: Double) -> KroneckerMetric? {
        (stops.last { $0.scale <= s } ?? stops.first)?.metric
    }
}
