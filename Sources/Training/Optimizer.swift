import Foundation
import Networks
import TwoScaleCore

/// The update rule.
public enum OptimizerKind: String, Sendable, CaseIterable {
    /// Heavy-ball SGD: `v ← μ v + g`, `θ ← θ − η v` (plain SGD for μ = 0).
    case sgd
    /// Adam (Kingma & Ba 2015) with bias correction:
    /// `m ← β₁m + (1−β₁)g`, `v ← β₂v + (1−β₂)g²`, `θ ← θ − η·m̂/(√v̂ + ϵ)`,
    /// `m̂ = m/(1−β₁ᵗ)`, `v̂ = v/(1−β₂ᵗ)`.
    case adam
}

/// Hyper-parameters of an optimizer, validated.
public struct OptimizerSettings: Sendable, Equatable {
    public var kind: OptimizerKind
    /// η > 0.
    public var learningRate: Double
    /// μ ∈ [0, 1) for SGD.
    public var momentum: Double
    public var beta1: Double
    public var beta2: Double
    public var epsilon: Double

    public init(kind: OptimizerKind, learningRate: Double, momentum: Double = 0,
                beta1: Double = 0.9, beta2: Double = 0.999, epsilon: Double = 1e-8) throws {
        guard learningRate.isFinite, learningRate > 0 else {
            throw TwoScaleError.invalid("\(Setting.learningRate)", "\(learningRate)", allowed: "the learning rate must be a finite number > 0")
        }
        guard momentum.isFinite, momentum >= 0, momentum < 1 else {
            throw TwoScaleError.invalid("\(Setting.momentum)", "\(momentum)", allowed: "the momentum must lie in [0, 1)")
        }
        guard beta1 >= 0, beta1 < 1, beta2 >= 0, beta2 < 1, epsilon > 0 else {
            throw TwoScaleError.invalid("adam", "β₁=\(beta1), β₂=\(beta2), ϵ=\(epsilon)", allowed: "β₁, β₂ ∈ [0, 1) and ϵ > 0")
        }
        self.kind = kind
        self.learningRate = learningRate
        self.momentum = momentum
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
    }
}

/// Optimizer state over a flat parameter vector laid out as `Network.parameters`.
public struct Optimizer: Sendable {
    public let settings: OptimizerSettings
    /// Steps taken (t).
    public private(set) var steps = 0
    var first: [Double]
    var second: [Double]

    public init(settings: OptimizerSettings, parameterCount: Int) {
        self.settings = settings
        first = [Double](repeating: 0, count: parameterCount)
        second = settings.kind == .adam ? [Double](repeating: 0, count: parameterCount) : []
    }

    /// One update of the network's parameter blocks in place from the gradient `g`.
    public mutating func step(_ net: inout Network, gradient g: [Double]) {
        precondition(g.count == first.count, "gradient size mismatch")
        steps += 1
        let s = settings
        let lr = s.learningRate
        // Adam's bias-correction denominators 1 − β₁ᵗ and 1 − β₂ᵗ.
        let c1 = 1 - Foundation.pow(s.beta1, Double(steps))
        let c2 = 1 - Foundation.pow(s.beta2, Double(steps))
        var o = 0
        for m in net.blocks.indices where !net.blocks[m].isEmpty {
            update(&net.blocks[m], offset: o, g, lr: lr, c1: c1, c2: c2)
            o += net.blocks[m].count
        }
    }

    private mutating func update(_ p: inout [Double], offset o: Int, _ g: [Double], lr: Double, c1: Double, c2: Double) {
        let n = p.count
        let s = settings
        switch s.kind {
        case .sgd:
            let mu = s.momentum
            p.withUnsafeMutableBufferPointer { pp in
                first.withUnsafeMutableBufferPointer { vp in
                    g.withUnsafeBufferPointer { gp in
                        for i in 0..<n {
                            let v = mu * vp[o + i] + gp[o + i]
                            vp[o + i] = v
                            pp[i] -= lr * v
                        }
                    }
                }
            }
        case .adam:
            p.withUnsafeMutableBufferPointer { pp in
                first.withUnsafeMutableBufferPointer { mp in
                    second.withUnsafeMutableBufferPointer { vp in
                        g.withUnsafeBufferPointer { gp in
                            Self.adamKernel(p: pp.baseAddress!, m: mp.baseAddress! + o, v: vp.baseAddress! + o,
                                            g: gp.baseAddress! + o, count: n, lr: lr, beta1: s.beta1, beta2: s.beta2,
                                            epsilon: s.epsilon, c1: c1, c2: c2)
                        }
                    }
                }
            }
        }
    }

    /// The Adam update on `count` coordinates, eight at a time with SIMD (then a scalar tail):
    /// `m ← β₁m + (1−β₁)g`, `v ← β₂v + (1−β₂)g²`, `p ← p − η·(m/c₁)/(√(v/c₂) + ϵ)`.
    @inline(__always)
    static func adamKernel(p: UnsafeMutablePointer<Double>, m: UnsafeMutablePointer<Double>, v: UnsafeMutablePointer<Double>,
                           g: UnsafePointer<Double>, count: Int, lr: Double, beta1: Double, beta2: Double,
                           epsilon: Double, c1: Double, c2: Double) {
        typealias V = SIMD8<Double>
        let ic1 = 1 / c1, ic2 = 1 / c2
        let b1 = V(repeating: beta1), a1 = V(repeating: 1 - beta1)
        let b2 = V(repeating: beta2), a2 = V(repeating: 1 - beta2)
        let vic1 = V(repeating: ic1), vic2 = V(repeating: ic2), veps = V(repeating: epsilon), vlr = V(repeating: lr)
        var i = 0
        let w = V.scalarCount
        while i + w <= count {
            let gi = UnsafeRawPointer(g + i).loadUnaligned(as: V.self)
            let mi = b1 * UnsafeRawPointer(m + i).loadUnaligned(as: V.self) + a1 * gi
            let vi = b2 * UnsafeRawPointer(v + i).loadUnaligned(as: V.self) + a2 * (gi * gi)
            UnsafeMutableRawPointer(m + i).storeBytes(of: mi, as: V.self)
            UnsafeMutableRawPointer(v + i).storeBytes(of: vi, as: V.self)
            let pi = UnsafeRawPointer(p + i).loadUnaligned(as: V.self) - vlr * (mi * vic1) / ((vi * vic2).squareRoot() + veps)
            UnsafeMutableRawPointer(p + i).storeBytes(of: pi, as: V.self)
            i += w
        }
        while i < count {
            let gi = g[i]
            let mi = beta1 * m[i] + (1 - beta1) * gi
            let vi = beta2 * v[i] + (1 - beta2) * (gi * gi)
            m[i] = mi
            v[i] = vi
            p[i] -= lr * (mi * ic1) / ((vi * ic2).squareRoot() + epsilon)
            i += 1
        }
    }
}
