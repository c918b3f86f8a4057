import Foundation
import Networks
import TwoScaleCore
import TwoScaleNumerics

/// How the trainer draws θ₀.
public enum Initialization: Sendable, Equatable {
    /// Glorot (Xavier) uniform: `W_m ~ U(−a_m, a_m)`, `a_m = √(6/(n_{m−1} + n_m))`, biases 0.
    case glorot
    /// The parameter box Θ of docs/METHOD.md §2: every weight and bias `~ U(lo, hi)` (default `[-1, 1]`).
    case box(lo: Double, hi: Double)

    /// Draws the network; the same generator state gives the same network.
    public func network(architecture: Architecture, activation: Activation, rng: inout Xoshiro256) -> MLP {
        switch self {
        case let .box(lo, hi):
            return MLP.uniform(architecture: architecture, activation: activation, box: lo...hi, rng: &rng)
        case .glorot:
            var net = MLP.uniform(architecture: architecture, activation: activation, box: -1...1, rng: &rng)
            for m in 0..<architecture.layers {
                let a = (6.0 / Double(architecture.sizes[m] + architecture.sizes[m + 1])).squareRoot()
                for i in net.weights[m].data.indices { net.weights[m].data[i] *= a }
                for i in net.biases[m].indices { net.biases[m][i] = 0 }
            }
            return net
        }
    }

    public var description: String {
        switch self {
        case .glorot: return "glorot-uniform"
        case let .box(lo, hi): return "uniform box [\(lo), \(hi)]"
        }
    }
}
