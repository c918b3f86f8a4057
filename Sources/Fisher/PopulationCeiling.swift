import Foundation
import Networks
import RandomStreams
import TwoScaleCore
import TwoScaleNumerics

/// The certified upper end for the *population* Fisher of an MLP whose inputs are `x ~ N(0, I)` (the
/// synthetic Gaussian and teacher tasks), averaged over the inputs and the hidden noise `v ~ N(0, σ² I)`
/// instead of conditioned on a run's N inputs and noise draws (docs/METHOD.md §19, "The population
/// Fisher"): the theorem's quantity for the stochastic network.
///
/// Block m's population majorant is that of §19 with `Π_m = E x̃_m x̃_mᵀ`: for the first block
/// `Π_0 = I` (q inputs and the bias), known exactly; for a later block a bound T_m on its trace over the box,
/// `T_m = C_{m−1}(ρ_{m−1} + σ²) + bias`, with `ρ = sup_w E act(w·ỹ)² ≤ a_box² q λ_max(Π_{m−1})` where
/// `|act(z)| ≤ |z|` (≤ 1 for tanh and the sigmoid), `λ_max(Π_0) = 1` and `λ_max(Π) ≤ T` after it (the
/// noise is independent of the activations and has mean 0, so it adds σ² and no cross term). Its mean
/// over the previous layer's weights (`MeanCeiling`) takes `E F_j² = E_w E act(w·ỹ)² + σ²` and the
/// Lipschitz constant `a λ_max(Π_{m−1})^{1/2}` of `F_j(w) = ‖act(w·ỹ) + v‖_{L²}`.
extension MarkovFisher {
    /// Whether the population bounds apply: every layer dense (an MLP).
    public var isMLP: Bool { architecture.stack.allSatisfy { $0 is DenseLayer } }

    static let populationStream: UInt64 = 0x504F_5055  // "POPU"

    /// `E w²` for w uniform on the box.
    static func meanSquare(_ box: ClosedRange<Double>) -> Double {
        let lo = box.lowerBound, hi = box.upperBound
        return (lo * lo + lo * hi + hi * hi) / 3
    }

    /// Per block m: the population trace bound `T_m` of its input's second moments over the box, and
    /// `λ_m ≥ λ_max(Π_m)` (1 for the data, `T_m` after it); per block but the last, `ρ_m ≥ sup_w E act(w·ỹ)²`
    /// of its units.
    func populationTraces(box: ClosedRange<Double>) -> (traces: [Double], rho: [Double], lambda: [Double]) {
        let a = Swift.max(Swift.abs(box.lowerBound), Swift.abs(box.upperBound))
        var traces: [Double] = [], rho: [Double] = [], lambda: [Double] = []
        var trace = 0.0, top = 1.0
        for (m, index) in architecture.parametricLayers.enumerated() {
            let st = architecture.structure(layer: index)
            if m == 0 {
                trace = Double(st.unitDimension)  // Π_0 = I on the inputs and the bias
                top = 1
            }
            traces.append(trace)
            lambda.append(top)
            guard m < blockDimensions.count - 1 else { break }
            var r = a * a * Double(st.unitDimension) * top
            if activation == .sigmoid || activation == .tanh { r = activation == .sigmoid ? 1 : Swift.min(1, r) }
            rho.append(r)
            let next = architecture.structure(layer: architecture.parametricLayers[m + 1])
            trace = Double(st.units) * (r + sigma2) + (next.bias ? 1 : 0)
            top = trace
        }
        return (traces, rho, lambda)
    }

    /// Every block's population majorant (`BlockCeiling`, with its `MeanCeiling` for blocks after the first, its
    /// input's trace bound, and from the third block on the family the tilted chain takes): the upper end of the
    /// population 2sED is `ζd + Σ BlockCeiling.upperTerms(…) / |log ε|` at c's upper end.
    public func populationCeilings(box: ClosedRange<Double>) throws -> [BlockCeiling] {
        guard isMLP else {
            throw TwoScaleError.invalid("\(Setting.populationFisher)", architecture.notation, allowed: "the population Fisher needs an MLP (dense layers only)")
        }
        let (traces, rho, lambda) = populationTraces(box: box)
        let last = blockDimensions.count - 1
        let k = Double(architecture.classes)
        let lo = box.lowerBound, hi = box.upperBound, width = hi - lo
        let varW = width * width / 12, meanW = (lo + hi) / 2
        let symmetricRelu = activation == .relu && lo == -hi
        return blockDimensions.indices.map { m in
            let st = architecture.structure(layer: architecture.parametricLayers[m])
            let factor = m == last ? 1 / k : derivativeBound * derivativeBound / sigma2
            let copies = m == last ? architecture.classes - 1 : st.units
            let r = st.unitDimension
            let values = m == 0 ? [Double](repeating: factor, count: r)  // Π_0 = I
                                : [Double](repeating: factor * traces[m] / Double(r), count: r)
            var ceiling = BlockCeiling(block: m, units: m == last ? 1 : st.units, copies: copies, values: values, exact: m == 0)
            guard m >= 1 else { return ceiling }
            ceiling.inputTrace = traces[m]
            let prior = architecture.structure(layer: architecture.parametricLayers[m - 1])
            let top = (rho[m - 1] + sigma2).squareRoot()
            guard m == 1 else {
                // After the first hidden layer, E z² ≤ κ T and λ_max(Π) ≤ T: a function of the previous trace T
                // (the tilted chain's `MeanCeilingFamily`), taken at its bound for the untilted chain.
                let family = MeanCeilingFamily(copies: copies, factor: factor, ones: st.bias ? 1 : 0, activation: activation,
                                               symmetricRelu: symmetricRelu, lipschitz: lipschitzBound, width: width,
                                               kappa: varW + Double(prior.unitDimension) * meanW * meanW, rows: 1,
                                               positive: [Double](repeating: 0, count: prior.units),
                                               positive2: [Double](repeating: 0, count: prior.units),
                                               noise2: [Double](repeating: sigma2, count: prior.units),
                                               maxima: [Double](repeating: top, count: prior.units), crossTerm: false)
                ceiling.family = family
                ceiling.mean = family.at(trace: traces[m - 1])
                return ceiling
            }
            // E_w E act(w·ỹ)²: E z² = q E w² on the data (x ~ N(0, I) and the bias).
            let act2 = activation.secondMomentBound(Double(prior.unitDimension) * Self.meanSquare(box), symmetricRelu: symmetricRelu)
            let mean = (act2 + sigma2).squareRoot()
            let spread = MeanCeiling.spread(lipschitz: lipschitzBound * lambda[m - 1].squareRoot(), width: width)
            ceiling.mean = MeanCeiling(copies: copies, factor: factor, ones: st.bias ? 1 : 0,
                                       means: [Double](repeating: mean, count: prior.units),
                                       spreads: [Double](repeating: spread, count: prior.units),
                                       maxima: [Double](repeating: top, count: prior.units))
            return ceiling
        }
    }

    /// A deterministic bound U on the population `E_θ Tr F` (exact for relu on a box symmetric about 0):
    /// with `s_0 = q` (`E|x̃|²`: the inputs and the bias), a Gaussian block's trace is
    /// `σ⁻² η' C_m s_m` (`η' = 1/2` for relu on a symmetric box, where `P(z > 0 | x̃) = 1/2`, else `a²`), and
    /// `s_{m+1} = C_m (η κ s_m + σ²) + bias` (`E relu(z)² = E z²/2` there, `κ = Var w + q (E w)²`; at most
    /// `C_m (1 + σ²) + bias` for the sigmoid); the softmax block's is at most `(1 − 1/K) s_L`.
    public func populationMeanTraceBound(box: ClosedRange<Double>) -> Double {
        let lo = box.lowerBound, hi = box.upperBound, width = hi - lo
        let varW = width * width / 12, meanW = (lo + hi) / 2
        let symmetricRelu = activation == .relu && lo == -hi
        let derivative = symmetricRelu ? 0.5 : derivativeBound * derivativeBound
        let last = blockDimensions.count - 1
        var total = 0.0
        var s = 0.0
        for (m, index) in architecture.parametricLayers.enumerated() {
            let st = architecture.structure(layer: index)
            if m == 0 { s = Double(st.unitDimension) }
            if m == last { return total + (1 - 1 / Double(architecture.classes)) * s }
            total += derivative / sigma2 * Double(st.units) * s
            let kappa = varW + Double(st.unitDimension) * meanW * meanW
            let next = architecture.structure(layer: architecture.parametricLayers[m + 1])
            let act2 = activation.secondMomentBound(kappa * s, symmetricRelu: symmetricRelu)
            s = Double(st.units) * (act2 + sigma2) + (next.bias ? 1 : 0)
        }
        return total
    }

    /// c's interval for the population Fisher (`ScaleRange`; `none`: c = 1 exactly): U from
    /// `populationMeanTraceBound`, L from `draws` draws of `Tr F(θ)` at uniform θ on fresh inputs
    /// `x ~ N(0, I)` (`batch` of them) and fresh noise (streams "POPU", k, from `seed`), whose mean is the
    /// population's `E_θ Tr F`: the truncated empirical Bernstein bound from the level 64·U, at δ_c/2.
    public func populationScaleRange(_ normalization: Normalization, box: ClosedRange<Double>, seed: UInt64,
                                     draws: Int = CertifiedBracket.traceDraws, batch: Int = 32, delta: Double,
                                     sharing: any WorkSharing = LocalSharing(), threads: Int) async throws -> ScaleRange {
        guard normalization == .trace else { return .exact(1) }
        let arch = architecture, act = activation, s2 = sigma2
        let q = arch.stack[0].inputSize
        let traces: [Double] = try await sharing.map(draws, threads: threads) { k in
            var rng = Xoshiro256(seed: seed, stream: [Self.populationStream, UInt64(k)])
            let x = Matrix(rows: batch, cols: q, data: (0..<(batch * q)).map { _ in rng.normal() })
            let model = try MarkovFisher(architecture: arch, activation: act, data: x, sigma2: s2, noiseSamples: 1,
                                         noiseSeed: rng.next())
            return try model.uniformTrace(box: box, rng: &rng)
        }
        let bound = populationMeanTraceBound(box: box)
        let range = try ScaleRange.estimated(traces: traces, dimension: architecture.parameterCount, levelsFrom: 64 * Swift.max(bound, 1e-300),
                                             meanBound: bound, delta: delta)
        guard range.range.upperBound.isFinite else {
            throw TwoScaleError.failure("population bracket: \(draws) trace draws do not bound E_θ Tr F away from 0 at δ_c = \(delta); use \(Setting.normalize) none")
        }
        return range
    }
}
