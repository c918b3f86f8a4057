import Foundation

/// The later blocks' upper end with each block's bound in the mean handed down as an exponential of its input's
/// trace instead of taken at that trace's worst case (docs/METHOD.md §19, "Upper end, tilted").
///
/// Block m's bound in the mean over θ_{m−1} depends on the earlier layers only through `T_{m−1} = tr Π_{m−1}`, and
/// is nondecreasing in it: `E_{θ_{m−1}}[M_m e^{μ_{m+1} T_m}] ≤ H_m(T_{m−1})`. The chain of `MeanCeiling` takes
/// `H_m` at the box's worst `T_{m−1}`. Here `log H_m(T) ≤ a_m + μ_m T` on `[0, T̄_{m−1}]` for a chosen `μ_m ≥ 0`
/// (`a_m` the least such intercept, bounded on cells by monotonicity), and `e^{μ_m T_{m−1}}` joins the level below:
/// `T_{m−1} = ones + Σ_j F_j²` over the same units whose `(1 + αF_j)^C` make up `M_{m−1}`'s Schur bound, so that
/// level's factors become `E (1 + αF_j)^C e^{μ_m F_j²}` (`MeanCeiling.logBound(scale:power:tilt:)`). At block 1
/// the product meets the first block in Hölder's pair, `(E (M_1 e^{μ_2 T_1})^q)^{1/q}`. With every μ = 0 the
/// terms are the untilted chain's; the μ are chosen by coordinate descent on candidate slopes, and any choice holds.
public struct TiltedChain: Sendable, Equatable {
    /// Block 1's bound in the mean (its previous layer reads the data).
    public var second: MeanCeiling
    /// Blocks 2, 3, …: each one's bound in the mean as a function of the previous block's trace.
    public var later: [MeanCeilingFamily]
    /// `sup log M_m`'s ceilings of blocks 1, 2, … (`BlockCeiling.logBound`).
    public var ceilings: [BlockCeiling]
    /// `T̄_m`, the bound on `tr Π_m` over the box, of blocks 1, 2, ….
    public var traces: [Double]

    public init(second: MeanCeiling, later: [MeanCeilingFamily], ceilings: [BlockCeiling], traces: [Double]) {
        self.second = second
        self.later = later
        self.ceilings = ceilings
        self.traces = traces
    }

    /// The chain of an MLP's blocks `ceilings` (`MarkovFisher.blockCeilings`): nil unless every block from the
    /// second on has a bound in the mean and there is a third block (not on two blocks, nor after a convolution).
    public init?(ceilings all: [BlockCeiling]) {
        guard all.count >= 3, let second = all[1].mean else { return nil }
        var later: [MeanCeilingFamily] = [], traces: [Double] = []
        for m in 1..<all.count {
            guard let t = all[m].inputTrace, t.isFinite, t >= 0 else { return nil }
            traces.append(t)
            if m >= 2 {
                guard let f = all[m].family else { return nil }
                later.append(f)
            }
        }
        self.init(second: second, later: later, ceilings: Array(all[1...]), traces: traces)
    }

    /// `log H_m(T)` for block m ≥ 2 (`later[m − 2]`) with the tilt `next` handed down from block m + 1: the smaller of
    /// its tilted bound in the mean at trace T and `sup log M_m + next · T̄_m`.
    func logH(block m: Int, trace: Double, next: Double, scale s: Double) -> Double {
        let mean = later[m - 2].at(trace: trace).logBound(scale: s, tilt: next)
        return Swift.min(mean, ceilings[m - 1].logBound(scale: s) + next * traces[m - 1])
    }

    /// `a_m`: an upper value of `sup_{T ∈ [0, T̄_{m−1}]} log H_m(T) − μT`. On a cell `[T_k, T_{k+1}]` it is at most
    /// `log H_m(T_{k+1}) − μ T_k` (H nondecreasing); cells whose value exceeds the best attained one by more than
    /// `tolerance` are halved, at most `evaluations` times in all.
    /// `base` are `log H_m` at `basePoints(block: m)` (`baseValues`), which every slope shares.
    func intercept(block m: Int, slope mu: Double, next: Double, scale s: Double, base: [Double]? = nil,
                   tolerance: Double = 0.01, evaluations: Int = 96) -> Double {
        let top = traces[m - 2]
        guard mu > 0, top > 0 else { return logH(block: m, trace: top, next: next, scale: s) }
        var points = basePoints(block: m)
        var values = base ?? baseValues(block: m, next: next, scale: s)
        var spent = points.count
        while true {
            var attained = -Double.infinity, worst = -Double.infinity, cell = 0
            for k in points.indices {
                attained = Swift.max(attained, values[k] - mu * points[k])
                if k + 1 < points.count {
                    let u = values[k + 1] - mu * points[k]
                    if u > worst { worst = u; cell = k }
                }
            }
            if worst <= attained + tolerance || spent >= evaluations { return worst }
            let mid = (points[cell] + points[cell + 1]) / 2
            guard mid > points[cell], mid < points[cell + 1] else { return worst }
            points.insert(mid, at: cell + 1)
            values.insert(logH(block: m, trace: mid, next: next, scale: s), at: cell + 1)
            spent += 1
        }
    }

    /// The cells' first ends: 0 and `T̄ 2^{−j/2}`, j = 24, …, 0 (T̄ = `traces[m − 2]`, the last exactly).
    func basePoints(block m: Int) -> [Double] {
        let top = traces[m - 2]
        var points: [Double] = [0] + (0...24).map { top * Foundation.pow(2, Double($0 - 24) / 2) }
        points[points.count - 1] = top
        return points
    }

    func baseValues(block m: Int, next: Double, scale s: Double) -> [Double] {
        basePoints(block: m).map { logH(block: m, trace: $0, next: next, scale: s) }
    }

    /// Block 1's term with the tilt `next` from block 2: `(1/q) log E (M_1 e^{next·T_1})^q` at Hölder's q (q = ∞:
    /// its supremum, per unit or as a whole), the smaller of the bound in the mean and `sup log M_1 + next · T̄_1`.
    func secondTerm(next: Double, power q: Double, scale s: Double) -> Double {
        let whole = ceilings[0].logBound(scale: s) + next * traces[0]
        guard q.isFinite else {
            let alpha = s * second.factor.squareRoot(), c = Double(second.copies)
            let units = second.maxima.reduce(c * Double(second.ones) * Foundation.log1p(alpha) + next * Double(second.ones)) {
                $0 + c * Foundation.log1p(alpha * $1) + next * $1 * $1
            }
            return Swift.min(whole, units)
        }
        return Swift.min(whole, second.logBound(scale: s, power: q, tilt: next))
    }

    /// Block k + 1's term (k = 0: block 1's) at the slopes `mu` (`mu[i]` handed down by block i + 2).
    func term(_ k: Int, slopes mu: [Double], power q: Double, scale s: Double, cache: inout [Int: [Double: [Double]]]) -> Double {
        guard k > 0 else { return secondTerm(next: mu.first ?? 0, power: q, scale: s) }
        let m = k + 1, next = k < mu.count ? mu[k] : 0
        let base = cache[m]?[next] ?? baseValues(block: m, next: next, scale: s)
        cache[m, default: [:]][next] = base
        return intercept(block: m, slope: mu[k - 1], next: next, scale: s, base: base)
    }

    /// The terms of blocks 1, 2, … (stages 2, 3, …) at scale s with block 1 at Hölder's power q (`.infinity` where the
    /// first block pairs at p = 1): at every slope 0 the untilted chain's, else the least sum the coordinate descent
    /// finds. Block m's candidate slopes are its `log H_m` secants at `T̄ 2^{−j/3}` (no tilt from above); a slope
    /// changes its own block's term and the one below.
    public func terms(scale s: Double, power q: Double) -> [Double] {
        var mu = [Double](repeating: 0, count: later.count)
        var cache: [Int: [Double: [Double]]] = [:]  // block → tilt from above → its base values
        var best = (0...later.count).map { term($0, slopes: mu, power: q, scale: s, cache: &cache) }
        let candidates: [[Double]] = later.indices.map { i in
            let m = i + 2, t = traces[m - 2]
            guard t > 0 else { return [] }
            return (0...32).compactMap { j -> Double? in
                let x = t * Foundation.pow(2, -Double(j) / 3), y = 0.95 * x
                let slope = (logH(block: m, trace: x, next: 0, scale: s) - logH(block: m, trace: y, next: 0, scale: s)) / (x - y)
                return slope.isFinite && slope > 0 ? slope : nil
            }
        }
        for _ in 0..<6 {
            var moved = false
            for i in mu.indices {
                for candidate in candidates[i] + [0] where candidate != mu[i] {
                    var trial = mu
                    trial[i] = candidate
                    let below = term(i, slopes: trial, power: q, scale: s, cache: &cache)
                    let own = term(i + 1, slopes: trial, power: q, scale: s, cache: &cache)
                    let gain = best[i] + best[i + 1] - below - own
                    if gain > 1e-9 * Swift.max(1, Swift.abs(best.reduce(0, +))) {
                        best[i] = below; best[i + 1] = own; mu = trial; moved = true
                    }
                }
            }
            if !moved { break }
        }
        return best
    }
}
