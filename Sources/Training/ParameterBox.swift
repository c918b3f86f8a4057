import Foundation
import Networks
import RandomStreams
import TwoScaleCore

/// The parameter box Θ = [lo, hi]^d of docs/METHOD.md §2, the set over which the generalisation bound
/// controls `sup_θ |R(θ) − R_n(θ)|`: every weight and every bias in `[lo, hi]`.
///
/// `project` is the Euclidean projection onto Θ (the box is a product of intervals, so the nearest point
/// clamps every coordinate on its own: `θ_i ← min(hi, max(lo, θ_i))`); it leaves a θ inside Θ bit for bit
/// unchanged.
public struct ParameterBox: Sendable, Equatable {
    public let lo: Double
    public let hi: Double

    /// A box with finite `lo < hi`; `name` is the option the error names.
    public init(lo: Double, hi: Double, name: String = "\(Setting.box)") throws {
        guard lo.isFinite, hi.isFinite, lo < hi else {
            throw TwoScaleError.invalid(name, "\(lo):\(hi)", allowed: "the box lo:hi needs finite lo < hi")
        }
        self.lo = lo
        self.hi = hi
    }

    public init(_ range: ClosedRange<Double>, name: String = "\(Setting.box)") throws {
        try self.init(lo: range.lowerBound, hi: range.upperBound, name: name)
    }

    public var range: ClosedRange<Double> { lo...hi }
    /// `hi − lo`.
    public var width: Double { hi - lo }

    /// Whether every parameter of `net` lies in `[lo, hi]`.
    public func contains(_ net: Network) -> Bool {
        net.blocks.allSatisfy { b in b.allSatisfy { $0 >= lo && $0 <= hi } }
    }

    /// Clamps every weight and bias of `net` into `[lo, hi]` in place.
    public func project(_ net: inout Network) {
        let lo = self.lo, hi = self.hi
        for m in net.blocks.indices where !net.blocks[m].isEmpty {
            net.blocks[m].withUnsafeMutableBufferPointer { p in
                for i in p.indices { p[i] = Swift.min(hi, Swift.max(lo, p[i])) }
            }
        }
    }

    /// θ ~ U(Θ), block by block in layout order (`Network.uniform`).
    public func uniform(architecture: Architecture, activation: Activation, rng: inout Xoshiro256) -> Network {
        Network.uniform(architecture: architecture, activation: activation, box: range, rng: &rng)
    }
}
