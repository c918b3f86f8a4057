import Foundation
import Networks
import TwoScaleCore

/// The spectrum of a network's Fisher information at one parameter point θ: `fisher`'s result.
///
/// Per block (a parametric layer of the Markov FIM, or the whole output FIM): all d_m eigenvalues in
/// ascending order with round-off negatives clamped to 0 (and counted), the trace, and the numerical
/// rank (eigenvalues above d_m·2⁻⁵²·λ_max of the block).
public struct FisherMeasurement: Sendable, Encodable {
    public struct Block: Sendable, Equatable, Encodable {
        /// The block's layer in the stack, 1-based (pooling layers count); 0 for the output FIM.
        public var layer: Int
        public var parameters: Int
        public var trace: Double
        public var rank: Int
        public var clamped: Int
        /// All d_m eigenvalues, ascending, clamped at 0.
        public var eigenvalues: [Double]
    }

    public var dimension: Int
    public var fisher: FisherKind
    public var trace: Double
    public var architecture: String
    public var bias: Bool
    public var samples: Int
    /// Markov FIM only: σ² and R.
    public var sigma2: Double?
    public var noiseSamples: Int?
    /// The inputs of the run, as the caller names them: the hidden activation, the data source, the weights
    /// file (nil where θ was drawn from `box` with `seed`), the seed of the noise (and of θ where drawn).
    public var activation: Activation?
    public var data: String?
    public var weights: String?
    public var box: [Double]?
    public var seed: UInt64?
    public var blocks: [Block]

    /// The spectra of every block of `model` at `net` (blocks computed concurrently), assembled.
    public static func measure(_ model: any FisherModel, at net: Network, samples: Int, sigma2: Double?, noiseSamples: Int) async throws -> FisherMeasurement {
        let count = model.blockDimensions.count
        let spectra = try await Parallel.map(count, threads: count) { m in
            let x = try model.blockInputs(net, block: m)
            return try model.blockEigenvalues(net, block: m, inputs: x)
        }
        return try FisherMeasurement(kind: model.kind, architecture: model.architecture, samples: samples, spectra: spectra,
                                     sigma2: model.kind == .markov ? sigma2 : nil, noiseSamples: noiseSamples)
    }

    /// Assembles the blocks from raw eigenvalues (`spectra[m]`: the nonzero part of block m's spectrum).
    public init(kind: FisherKind, architecture: Architecture, samples: Int, spectra: [[Double]], sigma2: Double?, noiseSamples: Int) throws {
        let dims = kind == .markov ? architecture.blockParameterCounts : [architecture.parameterCount]
        guard spectra.count == dims.count else {
            throw TwoScaleError.failure("fisher: \(spectra.count) spectra for \(dims.count) blocks")
        }
        let scale = Spectrum.largestMagnitude(spectra)  // λ_max of the whole F(θ): round-off is relative to it
        var blocks: [Block] = []
        for (m, raw) in spectra.enumerated() {
            let d = dims[m]
            let top = raw.map(Swift.abs).max() ?? 0
            let clamped: Int
            do { clamped = try Spectrum.checkRoundOff(raw, scale: scale) } catch let e as TwoScaleError {
                throw e.prefixed("the Fisher block \(m + 1): ")
            }
            var values = [Double](repeating: 0, count: d - raw.count) + raw.map { Swift.max(0, $0) }
            values.sort()
            let tol = Double(d) * Double.ulpOfOne * top
            blocks.append(Block(layer: kind == .markov ? architecture.parametricLayers[m] + 1 : 0, parameters: d,
                                trace: values.reduce(0, +), rank: values.filter { $0 > tol }.count, clamped: clamped, eigenvalues: values))
        }
        dimension = architecture.parameterCount
        fisher = kind
        trace = blocks.map(\.trace).reduce(0, +)
        self.architecture = architecture.notation
        bias = architecture.bias
        self.samples = samples
        self.sigma2 = sigma2
        self.noiseSamples = sigma2 == nil ? nil : noiseSamples
        self.blocks = blocks
    }
}
