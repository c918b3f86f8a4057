import Bounds
import Fisher
import Foundation
import Training
import Networks
import RandomStreams
import TwoScaleCore

/// Where `gap`'s bound takes d_ζ(ε_n) from.
public enum GapDimensionSource: String, Sendable, CaseIterable {
    /// A spectra store of the student: the certified bracket's upper end (an upper bound of d_ζ by
    /// construction), or, where the store has none, a one-sided 95% bootstrap upper value (labelled).
    case store
    /// `ζd + (1 − ζ)r`, r the generic rank of the student's Markov FIM (`GenericRank`): the ε → 0 limit.
    case rankLimit = "rank-limit"
    /// d, the parameter count.
    case parameters
}

/// The constant values of d_ζ that need no spectra store: the ε → 0 limit `ζd + (1 − ζ)r` and d itself,
/// with the words that say what each is — and is not (docs/METHOD.md §5: d_ζ(ε) is not monotone in ε,
/// and `d_ζ ≤ d` fails in general, so neither is an upper bound of d_ζ(ε_n) at a finite ε_n).
public struct GapDimension: Sendable {
    public var source: GapDimensionSource
    public var value: Double
    /// d, and with `rank-limit` the generic rank r (with whether a witness proved it).
    public var dimension: Int
    public var rank: Int?
    public var rankProved: Bool?
    public var description: String
    public var method: String

    /// d itself.
    public static func parameters(student: Architecture) -> GapDimension {
        let d = student.parameterCount
        return GapDimension(source: .parameters, value: Double(d), dimension: d, rank: nil, rankProved: nil,
                            description: "the parameter count d = \(d)",
                            method: "d, the parameter count: a reference value, NOT an upper bound of d_ζ(ε_n) (d_ζ ≤ d fails in general, docs/METHOD.md §5), so the tail is not conservative")
    }

    /// `ζd + (1 − ζ)r`, r the generic rank of the student's Markov FIM on `samples` teacher inputs
    /// (x ~ N(0, I) from the stream `(seed, 205)`), noise σ² and R draws per input seeded by `seed`.
    public static func rankLimit(task: TeacherTask, student: Architecture, activation: Activation, box: ClosedRange<Double>,
                                 samples: Int, sigma2: Double, noiseSamples: Int, zeta: Double, seed: UInt64) throws -> GapDimension {
        guard samples >= 1, samples <= 100_000 else {
            throw TwoScaleError.invalid("\(Setting.rankSamples)", "\(samples)", allowed: "give from 1 to 100000 inputs for the Fisher matrix's generic rank")
        }
        var rng = Xoshiro256(seed: seed, stream: [205])
        let inputs = task.inputs(count: samples, rng: &rng)
        let model = try MarkovFisher(architecture: student, activation: activation, data: inputs, sigma2: sigma2,
                                     noiseSamples: noiseSamples, noiseSeed: seed)
        let g = try GenericRank(model: model, box: box, seed: seed)
        let d = student.parameterCount
        let r = g.proved ? g.bound : g.witness
        let value = zeta * Double(d) + (1 - zeta) * Double(r)
        let rankWords = g.proved ? "the generic rank r = \(r) (proved by a witness)" : "r = \(r), a lower bound of the generic rank (no witness attained the bound \(g.bound))"
        return GapDimension(source: .rankLimit, value: value, dimension: d, rank: r, rankProved: g.proved,
                            description: "ζd + (1 − ζ)r with d = \(d) and \(rankWords) of the student's Markov FIM on N = \(samples) teacher inputs (σ² = \(NumberText.format(sigma2, digits: 4)))",
                            method: "ζd + (1 − ζ)r, the ε → 0 limit of d_ζ: NOT an upper bound of d_ζ(ε_n) at finite ε (d_ζ is not monotone in ε, docs/METHOD.md §5), so the tail is not conservative")
    }

    /// The same value at every ε.
    public var values: DimensionValues { { [value] _ in (value, value) } }
}
