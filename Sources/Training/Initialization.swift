import Foundation
import Networks
import RandomStreams
import TwoScaleCore
import TwoScaleNumerics

/// How the trainer draws θ₀.
public enum Initialization: Sendable, Equatable {
    /// Glorot (Xavier) uniform: `W_m ~ U(−a_m, a_m)`, `a_m = √(6/(fan_in + fan_out))` (a dense layer:
    /// `n_{m−1} + n_m`), biases 0.
    case glorot
    /// The parameter box Θ of docs/METHOD.md §2: every weight and bias `~ U(lo, hi)` (default `[-1, 1]`).
    case box(lo: Double, hi: Double)

    /// Draws the network; the same generator state gives the same network.
    public func network(architecture: Architecture, activation: Activation, rng: inout Xoshiro256) -> Network {
        switch self {
        case let .box(lo, hi):
            return Network.uniform(architecture: architecture, activation: activation, box: lo...hi, rng: &rng)
        case .glorot:
            var net = Network.uniform(architecture: architecture, activation: activation, box: -1...1, rng: &rng)
            for m in architecture.parametricLayers {
                let st = architecture.structure(layer: m), fans = architecture.parametric(layer: m).fans
                let a = (6.0 / Double(fans.fanIn + fans.fanOut)).squareRoot()
                for i in 0..<st.weightCount { net.blocks[m][i] *= a }
                for i in st.weightCount..<st.parameterCount { net.blocks[m][i] = 0 }
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
