import Foundation
import Networks
import RandomStreams
import Samplers
import TwoScaleCore
import TwoScaleNumerics

/// The Markov FIM as the generic smc sampler's model (`StagedModel`, Samplers): block m is stage m, a
/// Gaussian layer's neurons (or the softmax layer) its exchangeable units, a network its state
/// (docs/ESTIMATORS.md). `MarkovSMC` runs `StagedSMC` on it.
extension MarkovFisher: StagedModel {
    public typealias State = Network

    public var parameterCount: Int { architecture.parameterCount }

    public var stageUnits: [StageUnits] {
        (0..<blockDimensions.count).map { m in
            let u = units(block: m)
            return StageUnits(count: u.count, dimension: u.dimension)
        }
    }

    public func emptyState() -> Network { zeroNetwork() }

    public func setUnit(_ state: inout Network, stage m: Int, unit u: Int, parameters: [Double]) {
        setUnit(&state, block: m, unit: u, parameters: parameters)
    }

    /// A unit of block m as the sampler sees it: its roots, and its trace as the delayed-acceptance screen.
    public func smcUnit(inputs: UnitInputs, box: ClosedRange<Double>) -> SMCUnit {
        let model = self
        return SMCUnit(dimension: units(block: inputs.block).dimension, box: box,
                       roots: { w in try model.unitRoots(w, inputs: inputs) },
                       screen: { @Sendable w in model.unitTrace(w, inputs: inputs) })
    }

    /// Block m's unit given the earlier layers of `net`; the softmax block's supremum is its spectrum at
    /// uniform probabilities (`softmaxSupremumRoots`).
    public func stage(_ net: Network, _ m: Int, box: ClosedRange<Double>) throws -> StageUnit {
        let x = try blockInputs(net, block: m)
        let inputs = unitInputs(x, block: m)
        let model = self
        let last = m == blockDimensions.count - 1
        var supremum: (@Sendable () throws -> [Double])? = nil
        if last { supremum = { @Sendable in try model.softmaxSupremumRoots(inputs: inputs) } }
        return StageUnit(unit: smcUnit(inputs: inputs, box: box), supremumRoots: supremum)
    }

    /// Block m's majorant at the earlier layers of `net` (§19's `BlockCeiling` with Π_m the block's exact
    /// input second moments): `C Σ_i log(1 + s√(a²π_i/σ²))` for a Gaussian block of C units,
    /// `(K − 1) Σ_i log(1 + s√(π_i/K))` for the softmax block.
    public func stageMajorant(_ net: Network, stage m: Int, scale s: Double, box: ClosedRange<Double>) throws -> Double? {
        guard m > 0 else { return nil }
        let x = try blockInputs(net, block: m)
        let layer = architecture.parametric(layer: architecture.parametricLayers[m])
        let last = m == blockDimensions.count - 1
        let units = layer.parameterStructure.units
        let factor = last ? 1 / Double(architecture.classes) : derivativeBound * derivativeBound / sigma2
        let xa = layer.patches(x)
        let values = try xa.data.withUnsafeBufferPointer {
            try FisherKernels.gramEigenvalues($0.baseAddress!, rows: xa.rows, cols: xa.cols, alpha: factor / Double(x.rows))
        }
        let ceiling = BlockCeiling(block: m, units: last ? 1 : units, copies: last ? architecture.classes - 1 : units,
                                   values: values.map { Swift.max(0, $0) }, exact: true)
        return ceiling.logBound(scale: s)
    }

    public func uniformTrace(box: ClosedRange<Double>, rng: inout Xoshiro256) throws -> Double {
        let net = Network.uniform(architecture: architecture, activation: activation, box: box, rng: &rng)
        var t = 0.0
        for (m, x) in try blockInputs(net, blocks: blockDimensions.count).enumerated() {
            t += try blockTrace(net, block: m, inputs: x)
        }
        return t
    }
}

/// Joint tempering's view of the network (`JointSMC`): θ uniform on the box, and a stage's unit as its
/// coordinates (a Gaussian layer's neuron; the softmax layer's whole weight matrix, its one unit).
extension MarkovFisher: UniformStagedModel {
    public func uniformState(box: ClosedRange<Double>, rng: inout Xoshiro256) -> Network {
        Network.uniform(architecture: architecture, activation: activation, box: box, rng: &rng)
    }

    public func unitParameters(_ net: Network, stage m: Int, unit u: Int) -> [Double] {
        let layer = architecture.parametricLayers[m]
        let st = architecture.structure(layer: layer)
        let rows = m == blockDimensions.count - 1 ? Array(0..<st.units) : [u]
        return rows.flatMap { r in st.unitIndices(r).map { net.blocks[layer][$0] } }
    }
}
