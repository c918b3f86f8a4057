import Foundation
import Networks
import TwoScaleCore
import TwoScaleNumerics

/// A bound on the *mean* over the previous layer's weights of one block's majorant (docs/METHOD.md §19,
/// "Upper end, in the mean"): where `BlockCeiling` takes block m's majorant at its worst θ_{<m}, this takes
/// it in expectation over θ_{m−1} and at its worst θ_{<m−1} only, which is what the bracket's upper end
/// needs (`log Z ≤ log Z_1 + Σ_{m≥2} log sup_{θ_{<m−1}} E_{θ_{m−1}} M_m`).
///
/// Block m's majorant is `M_m = exp(C Σ_i φ(f π_i))`, π the eigenvalues of its input's second moments Π,
/// `φ(λ) = log(1 + s√λ)` (C copies, factor f: `σ⁻² a²` for a Gaussian block, `1/K` for the softmax one).
/// Π's diagonal is majorised by its eigenvalues (Schur) and `Σ φ` is Schur-concave, so
/// `Σ_i φ(f π_i) ≤ Σ_j φ(f Π_jj)`: the bias entry is 1 and entry j is `F_j² = (1/S) Σ_s h_sj²`, unit j of the
/// previous layer, `h_sj = act(w_j·y_s) + v_sj`, which depends on θ_{m−1} only through w_j. The units'
/// weights are independent, so `E_{θ_{m−1}} M_m ≤ (1 + s√f)^{C·ones} Π_j E (1 + α F_j)^C`, `α = s√f`, and
/// each factor is bounded by
///
/// * concentration: `F_j` is Lipschitz in `w_j` with constant `a ‖Y‖_op/√S` (a = act's Lipschitz
///   constant, Y the previous layer's input rows, S of them). The uniform law on an interval of length ℓ
///   satisfies the log-Sobolev inequality `Ent(g²) ≤ 2(ℓ/π)² E g'²` (the circle's, by even reflection), so
///   does its product (tensorisation), and Herbst's argument gives `log E e^{λ(F − EF)} ≤ λ² L²/2` with
///   `L = a ‖Y‖_op ℓ / (π √S)`. With `y^C ≤ (C/(te))^C e^{ty}` for y ≥ 0, t > 0, and `EF ≤ μ̄`:
///   `log E (1 + αF)^C ≤ C log(C/t) − C + t(1 + αμ̄) + t²α²L²/2`, at the t that minimises it;
/// * or the supremum: `C log(1 + α F̄_j)`, `F̄_j² = (1/S) Σ_s max(l_sj², u_sj²)` from the interval bounds.
public struct MeanCeiling: Sendable, Equatable {
    /// C: how often each unit's term repeats (the block's units, or K − 1 for the softmax block).
    public var copies: Int
    /// f: the factor on Π's entries (σ⁻² a² for a Gaussian block, 1/K for the softmax block).
    public var factor: Double
    /// Diagonal entries of Π that are exactly 1 (the bias input).
    public var ones: Int
    /// μ̄_j ≥ E F_j, one per unit of the previous layer.
    public var means: [Double]
    /// L_j: `log E e^{λ(F_j − E F_j)} ≤ λ² L_j² / 2` for every λ.
    public var spreads: [Double]
    /// F̄_j ≥ F_j at every θ in the box.
    public var maxima: [Double]

    /// The bound on `log sup_{θ_{<m−1}} E_{θ_{m−1}} M_m` at scale s (`s = t√c`); with `power` q ≥ 1, on
    /// `(1/q) log sup_{θ_{<m−1}} E_{θ_{m−1}} M_m^q` (`M_m^q` is the same product with qC copies).
    ///
    /// With `tilt` μ ≥ 0, on `(1/q) log sup_{θ_{<m−1}} E_{θ_{m−1}} (M_m e^{μ T_m})^q`, `T_m = ones + Σ_j F_j²` the trace
    /// of Π_m (docs/METHOD.md §19, "Upper end, tilted"): each factor is then `E (1 + αF_j)^{qC} e^{qμ F_j²}`.
    public func logBound(scale s: Double, power q: Double = 1, tilt mu: Double = 0) -> Double {
        let alpha = s * factor.squareRoot(), c = Double(copies) * q, m = mu * q
        var total = c * Double(ones) * Foundation.log1p(alpha) + m * Double(ones)
        for j in means.indices {
            let top = c * Foundation.log1p(alpha * maxima[j]) + m * maxima[j] * maxima[j]
            let moment = m > 0 ? Self.tiltedLogMoment(copies: c, alpha: alpha, tilt: m, mean: means[j], spread: spreads[j])
                : Self.logMoment(copies: c, alpha: alpha, mean: means[j], spread: spreads[j])
            total += Swift.min(top, moment)
        }
        return total / q
    }

    /// `log E (1 + αF)^C e^{μF²}` for F ≥ 0 with `EF ≤ mean` and sub-Gaussian scale `spread` L, μ > 0:
    /// `C log(C/t) − C + t + log E e^{tαF + μF²}` at a t found by golden section (any t > 0 holds), the last term by
    /// `logSquareTilt`; `+∞` where `2μL² ≥ 1`.
    public static func tiltedLogMoment(copies c: Double, alpha: Double, tilt mu: Double, mean: Double, spread: Double) -> Double {
        let sigma = (2 * mu).squareRoot()
        guard sigma * spread < 1 else { return .infinity }
        func value(_ logT: Double) -> Double {
            let t = Foundation.exp(logT)
            return c * (Foundation.log(c) - logT) - c + t + logSquareTilt(slope: t * alpha, sigma: sigma, mean: mean, spread: spread)
        }
        // The exponent is convex in t (a log-moment-generating function of tα plus a convex term); start from the
        // untilted minimiser.
        let y0 = 1 + alpha * mean, v = alpha * alpha * spread * spread
        let t0 = 2 * c / (y0 + (y0 * y0 + 4 * c * v).squareRoot())
        var a = Foundation.log(t0) - 8, b = Foundation.log(t0) + 1
        let golden = (5.0.squareRoot() - 1) / 2
        var x1 = b - golden * (b - a), x2 = a + golden * (b - a)
        var f1 = value(x1), f2 = value(x2)
        for _ in 0..<32 {
            if f1 <= f2 { b = x2; x2 = x1; f2 = f1; x1 = b - golden * (b - a); f1 = value(x1) }
            else { a = x1; x1 = x2; f1 = f2; x2 = a + golden * (b - a); f2 = value(x2) }
        }
        return Swift.min(f1, f2)
    }

    /// A bound on `log E e^{bF + σ²F²/2}` for F ≥ 0 with `EF ≤ mean` and `log E e^{u(F − EF)} ≤ u²L²/2` for every
    /// real u (L = `spread`), σL < 1: with `e^{σ²F²/2} = E_g e^{σgF}` (g standard normal, independent),
    /// `E_F e^{uF} ≤ e^{u⁺ mean + u²L²/2}` at `u = b + σg`, and that Gaussian integral in closed form, split at u = 0.
    public static func logSquareTilt(slope b: Double, sigma: Double, mean: Double, spread: Double) -> Double {
        let k = spread * spread / 2
        guard sigma > 0 else { return Swift.max(0, b) * mean + k * b * b }
        let a = 1 - sigma * sigma * spread * spread
        guard a > 0 else { return .infinity }
        let g0 = -b / sigma  // u ≥ 0 exactly where g ≥ g0
        // ∫ φ(g) e^{−(a − 1)g²/2 + Bg + C} over a half-line: a^{−1/2} e^{C + B²/(2a)} times a normal tail.
        let b1 = 2 * k * b * sigma + mean * sigma, c1 = k * b * b + mean * b
        let b0 = 2 * k * b * sigma, c0 = k * b * b
        let upper = c1 + b1 * b1 / (2 * a) + logHalfErfc((g0 - b1 / a) * (a / 2).squareRoot())
        let lower = c0 + b0 * b0 / (2 * a) + logHalfErfc(-(g0 - b0 / a) * (a / 2).squareRoot())
        let top = Swift.max(upper, lower)
        return -0.5 * Foundation.log(a) + top + Foundation.log(Foundation.exp(upper - top) + Foundation.exp(lower - top))
    }

    /// An upper value of `log(erfc(z)/2)`: exact below z = 20, and `−z² − log(2z√π)` above it
    /// (`erfc z ≤ e^{−z²}/(z√π)` for z > 0).
    static func logHalfErfc(_ z: Double) -> Double {
        z < 20 ? Foundation.log(Foundation.erfc(z) / 2) : -z * z - Foundation.log(2 * z * Double.pi.squareRoot())
    }

    /// The sub-Gaussian scale of an L-Lipschitz function of weights uniform on a box of side ℓ (`width`):
    /// `Lℓ/π`, from the log-Sobolev constant `(ℓ/π)²` of the uniform law on an interval.
    public static func spread(lipschitz: Double, width: Double) -> Double { lipschitz * width / Double.pi }

    /// `log E (1 + αF)^C` for F ≥ 0 with `EF ≤ mean` and sub-Gaussian scale `spread`:
    /// `C log(C/t) − C + t y₀ + t² v / 2` with `y₀ = 1 + α·mean`, `v = α² spread²`, at its minimiser
    /// `t = 2C / (y₀ + √(y₀² + 4Cv))` (exactly `C log y₀` when v = 0).
    public static func logMoment(copies c: Double, alpha: Double, mean: Double, spread: Double) -> Double {
        let y0 = 1 + alpha * mean, v = alpha * alpha * spread * spread
        let t = 2 * c / (y0 + (y0 * y0 + 4 * c * v).squareRoot())
        return c * Foundation.log(c / t) - c + t * y0 + t * t * v / 2
    }
}

extension Activation {
    /// Whether `act(z) ≥ 0` (relu, sigmoid), so that `E act ≥ 0` and only the noise's positive part can raise
    /// the cross term `2 v E act`.
    var isNonnegative: Bool { self == .relu || self == .sigmoid }

    /// A bound on `E act(z)²` from `E z²`: `E z²/2` for relu where z is symmetric (weights on a box symmetric
    /// about 0), `E z²` where `|act(z)| ≤ |z|`, at most 1 for tanh too, 1 for the sigmoid.
    func secondMomentBound(_ ez2: Double, symmetricRelu: Bool) -> Double {
        switch self {
        case .relu: symmetricRelu ? ez2 / 2 : ez2
        case .tanh: Swift.min(1, ez2)
        case .sigmoid: 1
        case .linear: ez2
        }
    }

    /// A bound on `|E act(z)|` from `(E z²)^{1/2}` (`root`): `root/2` for relu where z is symmetric
    /// (`E relu(z) = E|z|/2`), `root` where `|act(z)| ≤ |z|`, at most 1 for tanh too, 1 for the sigmoid.
    func meanBound(_ root: Double, symmetricRelu: Bool) -> Double {
        switch self {
        case .relu: symmetricRelu ? root / 2 : root
        case .tanh: Swift.min(1, root)
        case .sigmoid: 1
        case .linear: root
        }
    }
}

extension MarkovFisher {
    /// The Lipschitz constant of the hidden activation (1 for relu, tanh and linear; 1/4 for the sigmoid).
    var lipschitzBound: Double { activation == .sigmoid ? 0.25 : 1 }

    /// Block 1's `MeanCeiling`, where it is a dense layer reading the first dense layer's activated outputs; nil
    /// elsewhere (later blocks take theirs from `meanCeilingFamily` at their input's trace bound, in
    /// `blockCeilings`). The previous layer's input Y is the data, known exactly: `E z_s² = Var w |y_s|² +
    /// (E w)² (Σ_i y_si)²` per row, `‖Y‖_op` from its Gram matrix. Then `E F_j² = (1/S) Σ_s [E act(z_s)² +
    /// 2 v_sj E act(z_s) + v_sj²]`, with `E act² ≤ E z²` and `|E act| ≤ √(E z²)` where `|act(z)| ≤ |z|` (tanh
    /// also ≤ 1), `E relu² = E z²/2` and `0 ≤ E relu ≤ √(E z²)/2` on a box symmetric about 0, `0 < sigmoid < 1`.
    func meanCeiling(block m: Int, box: ClosedRange<Double>, inputBounds: [(lower: Matrix, upper: Matrix)]) -> MeanCeiling? {
        guard m == 1, let shape = meanCeilingShape(block: m, box: box, inputBounds: inputBounds) else { return nil }
        let (lo, hi) = (box.lowerBound, box.upperBound), width = hi - lo
        let meanW = (lo + hi) / 2, varW = width * width / 12
        let symmetricRelu = activation == .relu && lo == -hi
        let v = shape.noise, rows = v.rows, units = v.cols
        // Per row s of the block's input: E z_s², exact where the previous layer reads the data (its rows
        // repeated over the noise draws).
        let y = shape.prior.patches(firstBlockInputs)
        let q = y.cols, n = y.rows
        guard n > 0, rows % n == 0 else { return nil }
        let perData = (0..<n).map { i -> Double in
            var sq = 0.0, sum = 0.0
            for k in 0..<q { let x = y.data[i * q + k]; sq += x * x; sum += x }
            return varW * sq + meanW * meanW * sum * sum
        }
        let r = rows / n
        let second = (0..<rows).map { perData[$0 / r] }
        let gram = BLAS.gram(y, transpose: true, alpha: 1 / Double(n))
        guard let top = (try? SymmetricEigen.eigenvalues(gram))?.last else { return nil }
        let opNorm2PerRow = Swift.max(0, top)  // ‖Y‖_op² / S
        let spread = MeanCeiling.spread(lipschitz: lipschitzBound * opNorm2PerRow.squareRoot(), width: width)
        let count = Double(rows)
        var means: [Double] = []
        for j in 0..<units {
            var total = 0.0, noise2 = 0.0
            for s in 0..<rows {
                let x = v.data[s * units + j]
                noise2 += x * x
                let e2 = second[s], lift = activation.isNonnegative ? Swift.max(0, x) : Swift.abs(x)
                total += activation.secondMomentBound(e2, symmetricRelu: symmetricRelu)
                    + 2 * lift * activation.meanBound(e2.squareRoot(), symmetricRelu: symmetricRelu)
            }
            means.append(Swift.max(0, (total + noise2) / count).squareRoot())
        }
        return MeanCeiling(copies: shape.copies, factor: shape.factor, ones: shape.ones, means: means,
                           spreads: [Double](repeating: spread, count: units), maxima: shape.maxima)
    }

    /// What block m's `MeanCeiling` takes from the model whatever the previous layer reads: copies, factor, bias
    /// entries, the previous hidden layer's noise draws and each unit's `F̄_j` from the interval bounds; nil where
    /// block m is not a dense layer reading the previous dense layer's activated outputs.
    private func meanCeilingShape(block m: Int, box: ClosedRange<Double>, inputBounds: [(lower: Matrix, upper: Matrix)])
        -> (prior: DenseLayer, copies: Int, factor: Double, ones: Int, noise: Matrix, maxima: [Double])? {
        let index = architecture.parametricLayers[m], previous = architecture.parametricLayers[m - 1]
        guard index == previous + 1, architecture.isActivated(layer: previous),
              let current = architecture.stack[index] as? DenseLayer,
              let prior = architecture.stack[previous] as? DenseLayer,
              let hidden = architecture.stack.indices.filter({ architecture.isActivated(layer: $0) }).firstIndex(of: previous)
        else { return nil }
        let last = m == blockDimensions.count - 1
        let factor = last ? 1 / Double(architecture.classes) : derivativeBound * derivativeBound / sigma2
        let copies = last ? architecture.classes - 1 : current.outputSize
        let v = noise[hidden]
        let rows = v.rows, units = prior.outputSize
        guard units == v.cols, inputBounds[m].lower.rows == rows else { return nil }
        let (l, u) = (inputBounds[m].lower, inputBounds[m].upper)
        let maxima = (0..<units).map { j -> Double in
            var top = 0.0
            for s in 0..<rows {
                let a = l.data[s * l.cols + j], b = u.data[s * u.cols + j]
                top += Swift.max(a * a, b * b)
            }
            return (top / Double(rows)).squareRoot()
        }
        return (prior, copies, factor, current.bias ? 1 : 0, v, maxima)
    }

    /// Block m's (m ≥ 2) `MeanCeiling` as a function of the trace bound T on its previous block's Π
    /// (`MeanCeilingFamily.at(trace:)`); nil where `meanCeiling` has none.
    public func meanCeilingFamily(block m: Int, box: ClosedRange<Double>, inputBounds: [(lower: Matrix, upper: Matrix)]) -> MeanCeilingFamily? {
        guard m >= 2, let shape = meanCeilingShape(block: m, box: box, inputBounds: inputBounds) else { return nil }
        let (lo, hi) = (box.lowerBound, box.upperBound), width = hi - lo
        let meanW = (lo + hi) / 2, varW = width * width / 12
        let v = shape.noise, rows = v.rows, units = v.cols
        var positive: [Double] = [], positive2: [Double] = [], noise2: [Double] = []
        for j in 0..<units {
            var p = 0.0, p2 = 0.0, n2 = 0.0  // Σ_s of v⁺, v⁺², v²
            for s in 0..<rows {
                let x = v.data[s * units + j]
                n2 += x * x
                p += Swift.max(0, x)
                p2 += Swift.max(0, x) * Swift.max(0, x)
            }
            positive.append(p); positive2.append(p2); noise2.append(n2)
        }
        return MeanCeilingFamily(copies: shape.copies, factor: shape.factor, ones: shape.ones, activation: activation,
                                 symmetricRelu: activation == .relu && lo == -hi, lipschitz: lipschitzBound, width: width,
                                 kappa: varW + Double(shape.prior.parameterStructure.unitDimension) * meanW * meanW,
                                 rows: rows, positive: positive, positive2: positive2, noise2: noise2, maxima: shape.maxima)
    }
}

/// Block m's (m ≥ 2) `MeanCeiling` as a function of the trace bound T on its previous block's Π: that layer's
/// input Y is known only through `(1/S) Σ_s |y_s|² ≤ T`, so `‖Y‖_op² ≤ S·T` and `E z_s² ≤ κ|y_s|²`,
/// `κ = Var w + q (E w)²`; `E F_j²` is the activation's second-moment bound at `E z² ≤ κT`, plus twice its mean bound
/// times the noise's root mean square (Cauchy–Schwarz over the rows), plus `(1/S) Σ_s v_sj²` (docs/METHOD.md §19).
/// Every mean and the spread are nondecreasing in T, and so is the bound. For the population Fisher
/// (`populationCeilings`) the noise is averaged: one row with `Σ v² = σ²` and, since v is independent of the
/// activations with mean 0, no cross term (`crossTerm` false).
public struct MeanCeilingFamily: Sendable, Equatable {
    public var copies: Int
    public var factor: Double
    public var ones: Int
    public var activation: Activation
    public var symmetricRelu: Bool
    public var lipschitz: Double
    public var width: Double
    public var kappa: Double
    /// S, and per unit j of the previous layer `Σ_s v_sj⁺`, `Σ_s (v_sj⁺)²`, `Σ_s v_sj²` over its noise draws.
    public var rows: Int
    public var positive: [Double]
    public var positive2: [Double]
    public var noise2: [Double]
    public var maxima: [Double]
    /// Whether `E F_j²` takes the cross term between the activations and the noise (the data's draws: yes).
    public var crossTerm = true

    /// The bound at trace T.
    public func at(trace: Double) -> MeanCeiling {
        let spread = MeanCeiling.spread(lipschitz: lipschitz * trace.squareRoot(), width: width)
        let n = Double(rows)
        let means = positive.indices.map { j -> Double in
            let ez2 = kappa * trace  // (1/S) Σ_s E z_s² ≤ κ T
            let rmsPos = (positive2[j] / n).squareRoot(), rmsAbs = (noise2[j] / n).squareRoot()
            // The cross term over the rows by Cauchy–Schwarz; the sigmoid's |E act| ≤ 1 needs none.
            let rms = activation.isNonnegative ? rmsPos : rmsAbs
            let cross = !crossTerm ? 0 : activation == .sigmoid ? 2 * positive[j] / n
                : 2 * rms * activation.meanBound(ez2.squareRoot(), symmetricRelu: symmetricRelu)
            var mean2 = activation.secondMomentBound(ez2, symmetricRelu: symmetricRelu) + cross
            mean2 += noise2[j] / n
            return Swift.max(0, mean2).squareRoot()
        }
        return MeanCeiling(copies: copies, factor: factor, ones: ones, means: means,
                           spreads: [Double](repeating: spread, count: positive.count), maxima: maxima)
    }
}
