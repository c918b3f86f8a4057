import Foundation
import Networks
import Samplers
import TwoScaleCore
import TwoScaleNumerics

extension MarkovFisher {
    /// A deterministic upper bound on `E_θ Tr F(θ)` for θ uniform on `box`, with this model's data and noise
    /// draws (docs/METHOD.md §19, "c inside"): where `StageCeiling`'s majorants bound the trace at every θ,
    /// this bounds its mean, by second moments propagated through the layers in expectation, per sample.
    ///
    /// Let `m_s` bound `E|h_s|²`, h_s sample s's input to a layer (the data: exact). A unit-shared layer's
    /// patches have `Σ_p E|x̃_sp|² ≤ o·m_s + P` (o the most patches that read one input, P the positions, the
    /// bias's 1 once per patch); its weights are i.i.d., independent of x̃, so
    /// `E (w·x̃)² = Var w |x̃|² + (E w)² (Σ_i x̃_i)² ≤ κ |x̃|²`, `κ = Var w + q (E w)²` for q inputs. Then:
    ///
    /// * a Gaussian block's trace is `σ⁻² (1/S) Σ_{s,c,p} E[act'(z)² |x̃_sp|²] ≤ σ⁻² η' C (1/S) Σ_s (o·m_s + P)`,
    ///   with `η' = a²` (a = max |act'|), or `η' = 1/2` for relu on a box symmetric about 0, where z is
    ///   symmetric given x̃, so `P(z > 0) ≤ 1/2`;
    /// * the softmax block's is at most `(1 − 1/K)` times the mean `|x̃|²` of its rows;
    /// * a hidden layer's outputs `a_spc = act(z_spc)` have `E Σ_{p,c} a² ≤ A_s = η C κ (o·m_s + P)` where
    ///   `|act(z)| ≤ |z|` (η = 1, or 1/2 for relu on a symmetric box: `E relu(z)² = E z²/2`), and at most the
    ///   outputs' count for the sigmoid. The noise draws v add `2 Σ_{p,c} v_spc E a_spc + |v_s|²`. The
    ///   channels' weights are i.i.d., so `g_sp = E a_spc` is the same for every channel c, and the cross term
    ///   is `2 Σ_p g_sp G_sp` with `G_sp = Σ_c v_spc`: at most `2 √(Σ_p G_sp²) √(Σ_p g_sp²)` (Cauchy–Schwarz),
    ///   with `g_sp² ≤ E a² / C` per channel (Jensen), or, for relu on a symmetric box, where
    ///   `0 ≤ g_sp = E|z|/2 ≤ √(E z²)/2`, with `G_sp⁺` in place of `G_sp` and `g_sp² ≤ κ E|x̃_sp|²/4`; for
    ///   the sigmoid, `|g_sp| ≤ 1`. Pooling over non-overlapping windows and flattening do not increase it.
    ///
    /// Nil where the architecture has a layer this does not cover.
    public func meanTraceBound(box: ClosedRange<Double>) -> Double? {
        let lo = box.lowerBound, hi = box.upperBound
        let meanW = (lo + hi) / 2, varW = (hi - lo) * (hi - lo) / 12
        let symmetricRelu = activation == .relu && lo == -hi
        let eta = symmetricRelu ? 0.5 : 1.0
        let derivative = symmetricRelu ? 0.5 : derivativeBound * derivativeBound
        let last = blockDimensions.count - 1
        let x0 = firstBlockInputs
        // m_s per row: one per data input until the first noisy layer, then one per (input, noise draw).
        var m = (0..<x0.rows).map { i in (0..<x0.cols).reduce(0) { $0 + x0.data[i * x0.cols + $1] * x0.data[i * x0.cols + $1] } }
        var total = 0.0, block = 0, hidden = 0, expanded = false
        for index in architecture.parametricLayers[0]..<architecture.layers {
            let any = architecture.stack[index]
            guard let layer = any.parametric else {
                if architecture.isActivated(layer: index) { return nil }
                continue  // pooling and flattening do not increase it
            }
            let st = layer.parameterStructure
            let overlap = Double(Self.patchOverlap(any)), positions = Double(st.positions), bias = st.bias ? positions : 0
            var patches = m.map { overlap * $0 + bias }
            if block == 0 {
                // The first block's patches are the data's: exact.
                let xa = layer.patches(x0)
                let perRow = xa.rows / x0.rows
                patches = (0..<x0.rows).map { i in
                    xa.data[(i * perRow * xa.cols)..<((i + 1) * perRow * xa.cols)].reduce(0) { $0 + $1 * $1 }
                }
            }
            let meanPatches = patches.reduce(0, +) / Double(patches.count)
            if block == last {
                let k = Double(architecture.classes)
                return total + (1 - 1 / k) * meanPatches / positions
            }
            guard architecture.isActivated(layer: index) else { return nil }
            total += derivative / sigma2 * Double(st.units) * meanPatches
            let kappa = varW + Double(st.unitDimension) * meanW * meanW
            let units = st.units, p = st.positions
            let v = noise[hidden]
            let r = expanded ? 1 : v.rows / patches.count
            m = (0..<v.rows).map { row in
                let s = row / r  // the row of `patches` this noise row extends
                let a2 = activation == .sigmoid ? Double(layer.outputSize) : eta * Double(units) * kappa * patches[s]
                var g2 = 0.0, noise2 = 0.0
                for q in 0..<p {
                    var sum = 0.0
                    for c in 0..<units {
                        let x = v.data[row * v.cols + q * units + c]
                        sum += x
                        noise2 += x * x
                    }
                    let big = symmetricRelu ? Swift.max(0, sum) : sum
                    g2 += big * big
                }
                // Σ_p g_sp² bound: relu on a symmetric box κ Σ_p E|x̃_sp|² / 4; sigmoid P; else E Σ a² / C.
                let gg = symmetricRelu ? kappa * patches[s] / 4 : (activation == .sigmoid ? Double(p) : a2 / Double(units))
                return a2 + 2 * g2.squareRoot() * gg.squareRoot() + noise2
            }
            expanded = true
            hidden += 1
            block += 1
        }
        return nil
    }
}

extension MarkovFisher {
    /// c's interval for a certified bracket of this model (`StagedSMC.bracketScale`), with the trace of its
    /// majorants `ceilings` (`blockCeilings(box:)`) as the draws' range and `meanTraceBound` as a
    /// deterministic bound on their mean, at δ_c.
    public func scaleRange(_ normalization: Normalization, box: ClosedRange<Double>, ceilings: [BlockCeiling], seed: UInt64,
                           draws: Int = CertifiedBracket.traceDraws, delta: Double, sharing: any WorkSharing = LocalSharing(),
                           threads: Int) async throws -> ScaleRange {
        try await StagedSMC<MarkovFisher>.bracketScale(model: self, normalization: normalization, box: box, seed: seed, draws: draws,
                                                       ceiling: ceilings.reduce(0) { $0 + $1.traceBound },
                                                       meanBound: meanTraceBound(box: box), delta: delta, sharing: sharing, threads: threads)
    }
}
