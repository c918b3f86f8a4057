import Fisher
import Foundation
import Networks
import TwoScaleCore
import TwoScaleNumerics

/// The midpoint-quadrature parts of a network θ = (w; v₁, v₂) of one first-layer weight and a 2-weight
/// softmax layer (d = 3) at scale s (c = 1): on `nw` midpoints w, `g1 = log g₁(w)` and `logZ2 = log Z₂(w)`,
/// `Z₂(w) = E_v g₂(w, v)` over `nv`² points v.
public func tinyNetworkQuadratureParts(_ m: MarkovFisher, scale s: Double, nw: Int, nv: Int) throws -> (g1: [Double], logZ2: [Double]) {
    let x0 = m.unitInputs(m.firstBlockInputs, block: 0)
    var g1 = [Double](), logZ2 = [Double]()
    for a in 0..<nw {
        let w = -1 + (Double(a) + 0.5) * 2 / Double(nw)
        g1.append(LogSpace.logDetSqrt(roots: try m.unitRoots([w], inputs: x0), scale: s))
        var net = m.zeroNetwork()
        m.setUnit(&net, block: 0, unit: 0, parameters: [w])
        let xa = m.unitInputs(try m.blockInputs(net, block: 1), block: 1)
        var l2 = [Double]()
        for b in 0..<nv { for c in 0..<nv {
            let v = [-1 + (Double(b) + 0.5) * 2 / Double(nv), -1 + (Double(c) + 0.5) * 2 / Double(nv)]
            l2.append(LogSpace.logDetSqrt(roots: try m.unitRoots(v, inputs: xa), scale: s))
        } }
        logZ2.append(LogSpace.logMeanExp(l2))
    }
    return (g1, logZ2)
}

/// `log Z = log ∫ g₁(w) Z₂(w)` and the lower 2sED's `log Z₁ + ∫ π₁(w) log Z₂(w)` of that network
/// (`tinyNetworkQuadratureParts`).
public func tinyNetworkQuadrature(_ m: MarkovFisher, scale s: Double, nw: Int = 100, nv: Int = 30) throws -> (logZ: Double, lower: Double) {
    let q = try tinyNetworkQuadratureParts(m, scale: s, nw: nw, nv: nv)
    let pi = LogSpace.normalizedWeights(logWeights: q.g1)
    return (LogSpace.logMeanExp(zip(q.g1, q.logZ2).map { $0 + $1 }),
            LogSpace.logMeanExp(q.g1) + zip(pi, q.logZ2).reduce(0) { $0 + $1.0 * $1.1 })
}

/// The 1-1-2 relu network of four scalar inputs that the bracket and joint tempering tests integrate.
public func tinyReluNetwork() throws -> (MarkovFisher, Matrix) {
    let data = Matrix(rows: 4, cols: 1, data: [0.9, -1.7, 0.4, 2.2])
    return (try MarkovFisher(architecture: try Architecture(parsing: "1-1-2"), activation: .relu, data: data, sigma2: 0.5,
                             noiseSamples: 1, noiseSeed: 3), data)
}
