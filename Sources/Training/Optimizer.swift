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
            throw TwoScaleError.invalid("--lr", "\(learningRate)", allowed: "the learning rate must be a finite number > 0")
        }
        guard momentum.isFinite, momentum >= 0, momentum < 1 else {
            throw TwoScaleError.invalid("--momentum", "\(momentum)", allowed: "the momentum must lie in [0, 1)")
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

/// Optimizer state over a flat parameter vector laid out as `MLP.parameters`.
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

    /// One update of the network's weights and biases in place from the gradient `g`.
    public mutating func step(_ net: inout MLP, gradient g: [Double]) {
        precondition(g.count == first.count, "gradient size mismatch")
        steps += 1
        let s = settings
        let lr = s.learningRate
        // Adam's bias-correction denominators 1 − β₁ᵗ and 1 − β₂ᵗ.
        let c1 = 1 - Foundation.pow(s.beta1, Double(steps))
        let c2 = 1 - Foundation.pow(s.beta2, Double(steps))
        var o = 0
        for m in 0..<net.architecture.layers {
            update(&net.weights[m].data, offset: o, g, lr: lr, c1: c1, c2: c2)
            o += net.weights[m].data.count
            if !net.biases[m].isEmpty {
                update(&net.biases[m], offset: o, g, lr: lr, c1: c1, c2: c2)
                o += net.biases[m].count
            }
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
            let b1 = s.beta1, b2 = s.beta2, eps = s.epsilon
            p.withUnsafeMutableBufferPointer { pp in
                first.withUnsafeMutableBufferPointer { mp in
                    second.withUnsafeMutableBufferPointer { vp in
                        g.withUnsafeBufferPointer { gp in
                            for i in 0..<n {
                                let gi = gp[o + i]
                                let m = b1 * mp[o + i] + (1 - b1) * gi
                                let v = b2 * vp[o + i] + (1 - b2) * gi * gi
                                mp[o + i] = m
                                vp[o + i] = v
                                pp[i] -= lr * (m / c1) / ((v / c2).squareRoot() + eps)
                            }
                        }
                    }
                }
            }
        }
    }
}
