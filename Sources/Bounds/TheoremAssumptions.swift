import Foundation
import TwoScaleCore

/// One assumption of the generalisation theorem (docs/METHOD.md §15) and whether a run meets it:
/// `met` is true or false where the run's settings decide it, nil where nothing in the run can (n ≥ n₀,
/// the constants C, H, K).
public struct TheoremAssumption: Sendable, Equatable, Encodable {
    public var assumption: String
    public var met: Bool?
    public var why: String
}

/// What a `bound` run can say about the theorem's assumptions, from the d_ζ source it was given.
public enum TheoremAssumptions {
    /// The model behind a d_ζ source, as far as the run knows it.
    public enum Source: Sendable {
        /// An exact toy model: its Fisher matrix is given, not a network's on data.
        case toy
        /// A network's spectra store: its activation, whether its inputs are bounded (a file of data) or
        /// unbounded (Gaussian), its Fisher matrix (Markov or output), N inputs and R noise draws per input,
        /// and whether the tail takes the population Fisher's upper end instead of the store's.
        case network(activation: String, boundedInputs: Bool, markov: Bool, inputs: Int, noiseDraws: Int?, population: Bool = false)
    }

    public static func check(_ source: Source, zeta: Double) -> [TheoremAssumption] {
        var out = [TheoremAssumption(assumption: "ζ ≥ 2/3", met: zeta >= 2.0 / 3.0 - 1e-12,
                                     why: "the theorem's tail needs ζ ≥ 2/3; this run has ζ = \(NumberText.format(zeta, digits: 6))")]
        switch source {
        case .toy:
            out.append(TheoremAssumption(assumption: "d_ζ is that of the model whose risk is bounded", met: nil,
                                         why: "a toy model's d_ζ is exact for its own Fisher matrix; which model and loss it stands for is the user's claim"))
        case let .network(activation, bounded, markov, inputs, noiseDraws, population):
            let smooth = activation != "relu"
            out.append(TheoremAssumption(assumption: "the model is C^{1,1} in θ", met: smooth,
                                         why: smooth ? "\(activation) is smooth" : "relu has no derivative at 0, so the model is not C^{1,1} in θ"))
            out.append(TheoremAssumption(assumption: "p_θ(y|x) is bounded below, so the loss is Lipschitz in θ uniformly", met: bounded,
                                         why: bounded ? "the inputs come from a file, bounded, and θ from a bounded box"
                                             : "Gaussian inputs are unbounded, so p_θ(y|x) has no lower bound over x"))
            let draws = markov ? ", \(noiseDraws ?? 1) noise draw(s) per input" : ""
            if population {
                out.append(TheoremAssumption(assumption: "d_ζ of the population Fisher information", met: true,
                                             why: "the tail takes the certified upper end of the population Fisher's d_ζ (inputs N(0, I), the hidden noise averaged); the printed estimate is still that of the store's N = \(inputs) inputs\(draws)"))
            } else {
                out.append(TheoremAssumption(assumption: "d_ζ of the population Fisher information", met: false,
                                             why: "the store's d_ζ, and its certified upper end, are those of N = \(inputs) inputs\(draws) (the upper end for that stand-in's true c, the estimate at its ĉ); nothing bounds the finite-N value against the population's, in either direction"))
            }
        }
        out.append(TheoremAssumption(assumption: "n ≥ n₀", met: nil, why: "the theorem holds from an unknown n₀ on; the tail is printed as if every n given were ≥ n₀"))
        out.append(TheoremAssumption(assumption: "the constants C, H, K", met: nil, why: "unknown; user-set (default 1)"))
        return out
    }
}
