import Foundation
import Networks
import TwoScaleCore
import TwoScaleNumerics

/// A majorant of one Markov Fisher block that holds at every θ in the box (docs/METHOD.md §19): the
/// block's determinant `G_m(θ) = det(I + s F_m^{1/2})` is at most `Π_i (1 + s √μ_i)^copies` for the
/// `values` μ below, whatever the parameters.
///
/// * Gaussian block (C units, act' bounded by a): each unit's block `σ⁻² E[Σ_p act'² x̃x̃ᵀ]` is below
///   `σ⁻² a² Π` in the Loewner order, `Π = E[Σ_p x̃_p x̃_pᵀ]` the input patches' second moments, so the
///   block's log-determinant is at most C times that of `σ⁻² a² Π` (`copies = C`).
/// * Softmax block: at most that of uniform probabilities (§11): the eigenvalues of `Π/K`, K − 1 times.
///
/// `Π` is known exactly for the first block (the data). For a later block only a bound T on its trace
/// and r on its rank hold over the box (`MarkovFisher.blockInputBounds`); a concave spectral function
/// with a given trace and rank is largest when the r eigenvalues are equal (Jensen), so `values` are then
/// r copies of T/r (scaled as above).
public struct BlockCeiling: Sendable, Equatable {
    /// 0-based block.
    public var block: Int
    /// Units of the block (the softmax block is one unit).
    public var units: Int
    /// How often `values` repeat in the block's bound.
    public var copies: Int
    /// Eigenvalues of one copy of the majorant.
    public var values: [Double]
    /// Whether `values` are an exact spectrum (the first block) or r equal values from a trace bound.
    public var exact: Bool
    /// A bound on the majorant's mean over the previous layer's weights, where one applies (`MeanCeiling`).
    public var mean: MeanCeiling? = nil
    /// The bound on `tr Π_m` over the box behind `values` (nil for the first block, whose values are exact).
    public var inputTrace: Double? = nil
    /// From the third block on, its bound in the mean as a function of the previous block's trace bound (`mean` is
    /// it at that block's `inputTrace`), for the tilted chain.
    public var family: MeanCeilingFamily? = nil

    /// The bound on `log G_m` at scale s (the raw Fisher matrix's factor, `s = t√c`).
    public func logBound(scale s: Double) -> Double {
        Double(copies) * values.reduce(0) { $0 + Foundation.log1p(s * Swift.max(0, $1).squareRoot()) }
    }

    /// A bound on `Tr F_m` at every θ in the box: the majorant's trace, `copies · Σ values` (a Gaussian
    /// unit's block is below its majorant in the Loewner order, or its trace below the trace bound behind
    /// `values`; the softmax block's trace is at most that at uniform probabilities).
    public var traceBound: Double { Double(copies) * values.reduce(0) { $0 + Swift.max(0, $1) } }

    /// The bound this block contributes to the bracket's upper end at scale s: the smaller of the majorant
    /// (`logBound`) and, where there is one, the bound on its mean over the previous layer's weights; with
    /// `power` q, on `(1/q) log` of the q-th moment (the majorant is unchanged: `(sup M^q)^{1/q} = sup M`).
    public func upperLogBound(scale s: Double, power q: Double = 1) -> Double {
        guard let mean else { return logBound(scale: s) }
        return Swift.min(logBound(scale: s), mean.logBound(scale: s, power: q))
    }

    /// The bound on one unit's `log G` at scale s (the block's over its units).
    public func unitLogBound(scale s: Double) -> Double { logBound(scale: s) / Double(units) }

    /// The upper end's stage terms at scale s with every block at its supremum: each block's `upperLogBound`, or,
    /// where `chain` is given (an MLP of three blocks or more) and its sum is smaller, the first block's with the
    /// tilted chain's terms for the rest (docs/METHOD.md §19, "Upper end, tilted"). Of equal sums, the untilted.
    public static func upperTerms(_ ceilings: [BlockCeiling], scale s: Double, chain: TiltedChain?) -> [Double] {
        let supremum = ceilings.map { $0.upperLogBound(scale: s) }
        guard let chain, let first = supremum.first else { return supremum }
        let tilted = [first] + chain.terms(scale: s, power: 1)
        return tilted.reduce(0, +) < supremum.reduce(0, +) ? tilted : supremum
    }

    /// The certified upper end of the 2sED at ε: `ζd + Σ_m upperTerms_m(s) / |log ε|` (s = t√c).
    public static func dZetaUpper(_ ceilings: [BlockCeiling], chain: TiltedChain? = nil, scale s: Double, eps: Double, zeta: Double,
                                  dimension d: Int) -> Double {
        zeta * Double(d) + upperTerms(ceilings, scale: s, chain: chain).reduce(0, +) / Swift.abs(Foundation.log(eps))
    }
}

extension MarkovFisher {
    /// The largest `|act'|` of the hidden activation (1 for relu, tanh and linear; 1/4 for the sigmoid).
    var derivativeBound: Double { activation == .sigmoid ? 0.25 : 1 }

    /// Elementwise bounds on the input samples of every block that hold for every θ in `box`
    /// (interval bound propagation through the layers, with this model's noise draws): block 0's input
    /// is the data (lower = upper); a later block's rows are those of `blockInputs` (`n·R + r`).
    ///
    /// A unit-shared affine layer's output at a patch is `w·x̃` with every `w_i ∈ [lo, hi]` and
    /// `x̃_i ∈ [l_i, u_i]`, so it lies between `Σ_i min(lo l_i, lo u_i, hi l_i, hi u_i)` and the same sum of
    /// maxima (each term on its own, so both ends are attained for one layer on fixed inputs); the
    /// activations, pooling and flattening are nondecreasing, so they map the ends to the ends; the noise
    /// is added as it is.
    public func blockInputBounds(box: ClosedRange<Double>) -> [(lower: Matrix, upper: Matrix)] {
        let n = data.rows, r = noiseSamples
        var lower = data, upper = data
        var expanded = false
        var hidden = 0
        var bounds: [(lower: Matrix, upper: Matrix)] = []
        for (index, layer) in architecture.stack.enumerated() {
            if layer.parametric != nil { bounds.append((lower, upper)) }
            if index == architecture.layers - 1 { break }
            guard let parametric = layer.parametric else {
                lower = layer.forward(lower, parameters: [])
                upper = layer.forward(upper, parameters: [])
                continue
            }
            var (zl, zu) = Self.affineRange(parametric, lower: lower, upper: upper, box: box)
            guard architecture.isActivated(layer: index) else { (lower, upper) = (zl, zu); continue }
            let act = activation
            for i in zl.data.indices { zl.data[i] = act.apply(zl.data[i]); zu.data[i] = act.apply(zu.data[i]) }
            let v = noise[hidden]
            let w = zl.cols
            if expanded {
                for i in zl.data.indices { zl.data[i] += v.data[i]; zu.data[i] += v.data[i] }
                (lower, upper) = (zl, zu)
            } else {
                // The first noisy layer: one row per data input, repeated for the R noise draws.
                var l = v, u = v
                for i in 0..<n { for j in 0..<r { for k in 0..<w {
                    l.data[(i * r + j) * w + k] += zl.data[i * w + k]
                    u.data[(i * r + j) * w + k] += zu.data[i * w + k]
                } } }
                (lower, upper) = (l, u)
                expanded = true
            }
            hidden += 1
        }
        return bounds
    }

    /// The range of a parametric layer's outputs over weights (and biases) in `box`, for inputs between
    /// `lower` and `upper`: rows × outputSize, the same range for every unit at a patch.
    static func affineRange(_ layer: any ParametricLayer, lower: Matrix, upper: Matrix, box: ClosedRange<Double>) -> (Matrix, Matrix) {
        let st = layer.parameterStructure
        let pl = layer.patches(lower), pu = layer.patches(upper)
        let a = box.lowerBound, b = box.upperBound
        var zl = Matrix(rows: lower.rows, cols: layer.outputSize), zu = zl
        let q = pl.cols, units = st.units
        for row in 0..<pl.rows {
            var low = 0.0, high = 0.0
            for i in 0..<q {
                let l = pl.data[row * q + i], u = pu.data[row * q + i]
                let c1 = a * l, c2 = a * u, c3 = b * l, c4 = b * u
                low += Swift.min(Swift.min(c1, c2), Swift.min(c3, c4))
                high += Swift.max(Swift.max(c1, c2), Swift.max(c3, c4))
            }
            let base = row * units  // row = sample·P + position; the output row reads positions × units
            for c in 0..<units { zl.data[base + c] = low; zu.data[base + c] = high }
        }
        return (zl, zu)
    }

    /// The majorant of every block over `box` (`BlockCeiling`).
    public func blockCeilings(box: ClosedRange<Double>) throws -> [BlockCeiling] {
        let bounds = blockInputBounds(box: box)
        let traces = secondMomentTraceBounds(box: box)
        let last = blockDimensions.count - 1
        let k = Double(architecture.classes)
        var effective: [Double] = []  // the trace bound each later block's values come from
        var ceilings = try bounds.enumerated().map { m, xb in
            let layer = architecture.parametric(layer: architecture.parametricLayers[m])
            let st = layer.parameterStructure
            let samples = Double(xb.lower.rows)
            // The factor on Π's eigenvalues: σ⁻² a² for a Gaussian unit, 1/K for the softmax block.
            let factor = m == last ? 1 / k : derivativeBound * derivativeBound / sigma2
            var values: [Double]
            if m == 0 {
                effective.append(traces[0])
                let xa = layer.patches(xb.lower)
                values = try xa.data.withUnsafeBufferPointer {
                    try FisherKernels.gramEigenvalues($0.baseAddress!, rows: xa.rows, cols: xa.cols, alpha: factor / samples)
                }.map { Swift.max(0, $0) }
            } else {
                var big = xb.lower
                for i in big.data.indices { big.data[i] = Swift.max(Swift.abs(xb.lower.data[i]), Swift.abs(xb.upper.data[i])) }
                let xa = layer.patches(big)
                let trace = Swift.min(xa.data.reduce(0) { $0 + $1 * $1 } / samples, traces[m])
                effective.append(trace)
                let rank = Swift.max(1, Swift.min(xa.rows, xa.cols))
                values = [Double](repeating: factor * trace / Double(rank), count: rank)
            }
            return BlockCeiling(block: m, units: m == last ? 1 : st.units, copies: m == last ? architecture.classes - 1 : st.units,
                                values: values, exact: m == 0)
        }
        for m in ceilings.indices.dropFirst() {
            ceilings[m].inputTrace = effective[m]
            if m == 1 {
                ceilings[m].mean = meanCeiling(block: m, box: box, inputBounds: bounds)
            } else if let family = meanCeilingFamily(block: m, box: box, inputBounds: bounds) {
                ceilings[m].family = family
                if effective[m - 1].isFinite { ceilings[m].mean = family.at(trace: effective[m - 1]) }
            }
        }
        return ceilings
    }

    /// A second bound on the trace of every block's patch second moments `Π_m = (1/S) Σ_{s,p} x̃x̃ᵀ`, by the
    /// layers' operator norms rather than per sample (docs/METHOD.md §19; `.infinity` where it does not
    /// apply: after a sigmoid layer). For a unit c with `|act(z)| ≤ |z|` (relu, tanh, linear),
    /// `(1/S) Σ_{s,p} act(w_c·x̃)² ≤ w_cᵀ Π w_c ≤ ρ`, with `ρ = a² min(q λ_max(Π), Σ_ij |Π_ij|)` when Π is
    /// known (the data) and `a² q tr Π` otherwise (a the box's largest magnitude, q the unit's inputs); so
    /// the layer's outputs have mean squared norm at most Cρ, the noise adds at most
    /// `(√(Cρ) + √(|V|²/S))²` (Cauchy–Schwarz), pooling (non-overlapping windows) does not increase it, and a
    /// layer reads each input in at most `overlap` of its patches, plus a 1 per patch for the bias.
    func secondMomentTraceBounds(box: ClosedRange<Double>) -> [Double] {
        let a = Swift.max(Swift.abs(box.lowerBound), Swift.abs(box.upperBound))
        var traceX = data.data.reduce(0) { $0 + $1 * $1 } / Double(data.rows)  // mean |x|² of the current input
        var bounds: [Double] = []
        var hidden = 0
        for (index, any) in architecture.stack.enumerated() {
            guard let layer = any.parametric else { continue }  // pooling and flattening do not increase it
            let st = layer.parameterStructure
            let patchTrace = Double(Self.patchOverlap(layer)) * traceX + (st.bias ? Double(st.positions) : 0)
            bounds.append(patchTrace)
            if index == architecture.layers - 1 { break }
            var rho = a * a * Double(st.unitDimension) * patchTrace
            if bounds.count == 1 {
                let xa = layer.patches(firstBlockInputs)
                let pi = BLAS.gram(xa, transpose: true, alpha: 1 / Double(data.rows))
                let top = (try? SymmetricEigen.eigenvalues(pi).last) ?? nil
                let entrywise = pi.data.reduce(0) { $0 + Swift.abs($1) }
                rho = a * a * Swift.min(entrywise, top.map { Double(st.unitDimension) * $0 } ?? .infinity)
            }
            let outputs = activation == .sigmoid ? Double.infinity : Double(st.units) * rho
            let v = noise[hidden]
            let noiseTrace = v.data.reduce(0) { $0 + $1 * $1 } / Double(v.rows)
            traceX = (outputs.squareRoot() + noiseTrace.squareRoot()) * (outputs.squareRoot() + noiseTrace.squareRoot())
            hidden += 1
        }
        return bounds
    }

    /// The largest number of patches of `layer` that read one input value (1 for a dense layer), found by
    /// extracting the patches of one input whose values are distinct.
    static func patchOverlap(_ any: any Layer) -> Int {
        guard let layer = any.parametric, layer.parameterStructure.positions > 1 else { return 1 }
        // Values 2, 3, …: neither the padding's 0 nor the bias input's 1.
        let x = Matrix(rows: 1, cols: layer.inputSize, data: (0..<layer.inputSize).map { Double($0 + 2) })
        var count = [Int](repeating: 0, count: layer.inputSize)
        for value in layer.patches(x).data where value >= 2 { count[Int(value) - 2] += 1 }
        return count.max() ?? 1
    }
}
