import Foundation
import Networks
import TwoScaleCore
import TwoScaleNumerics

/// Which Fisher information matrix a measurement uses (docs/METHOD.md §11–12).
public enum FisherKind: String, Sendable, CaseIterable, Codable {
    /// The Markov (joint) FIM of the stochastic network: block diagonal over layers.
    case markov
    /// The output FIM of the deterministic network (σ = 0): one block.
    case output
}

/// The contract between Fisher estimators and the Monte Carlo design (docs/METHOD.md §11–13).
///
/// A model has `blockCount` blocks (L for `markov`, 1 for `output`). Block m's Fisher matrix depends
/// on the parameters of layers `0...m` only, through the distribution of the block's input. The Monte
/// Carlo driver computes `blockInputs` once per path and reuses it for all J inner draws of block m
/// (only `θ_m` changes there), then `blockEigenvalues` per draw.
public protocol FisherModel: Sendable {
    var kind: FisherKind { get }
    var architecture: Architecture { get }
    /// Parameters per block (sums to d).
    var blockDimensions: [Int] { get }
    /// The samples of the input of block m (rows), given the network (only layers < m are used):
    /// the N data inputs for m = 0; for m ≥ 1, the N·R noisy hidden states `x_{m}` (common random
    /// numbers: the same noise draws for every θ). For `output` this is the data.
    func blockInputs(_ net: Network, block m: Int) throws -> Matrix
    /// The eigenvalues of `F_m`, ascending (clamping of round-off negatives left to the caller), given
    /// the network and the block's input samples. At most `blockDimensions[m]` values: any omitted
    /// ones are zeros (e.g. `OutputFisher` returns `min(d, N(K−1))`, the rank bound of its Gram).
    func blockEigenvalues(_ net: Network, block m: Int, inputs: Matrix) throws -> [Double]
}

extension FisherKind {
    /// Checks the data a Fisher estimator averages over: at least one input, n_0 features, all finite.
    func validate(data: Matrix, architecture: Architecture) throws {
        let name = self == .markov ? "the Markov Fisher matrix" : "the output Fisher matrix"
        guard data.rows >= 1 else { throw TwoScaleError.usage("\(name) needs at least one data input") }
        guard data.cols == architecture.inputSize else {
            throw TwoScaleError.usage("the data has \(data.cols) features but the architecture \(architecture) takes \(architecture.inputSize) inputs")
        }
        guard data.data.allSatisfy(\.isFinite) else { throw TwoScaleError.failure("the data holds a non-finite number") }
    }
}
