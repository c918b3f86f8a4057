@testable import Fisher
import Foundation
@testable import Networks
import RandomStreams
import Samplers
import TestSupport
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// A later block's majorant given the earlier layers (`MarkovFisher.stageMajorant`, what the majorant tilt
/// tempers in, docs/METHOD.md §22): against the block's eigenvalues by a dense eigensolver, above `log G_m` at
/// every draw of the block's own weights, and equal to it where the bound is attained (the softmax block at
/// zero weights, whose probabilities are uniform).
final class StageMajorantTests: XCTestCase {
    typealias R = FisherReference

    func testMajorantAgainstDenseEigenvaluesAndTheBlock() throws {
        var (dense, draws, attained) = (0, 0, 0)
        for (arch, act) in [("5-4-3-3", Activation.relu), ("5-3-4-3", .sigmoid), ("4-3-2", .tanh)] {
            let m = try MarkovFisher(architecture: try Architecture(parsing: arch, bias: true), activation: act,
                                     data: R.gaussianData(6, Int(arch.prefix(1))!, seed: 3), sigma2: 0.3, noiseSamples: 2, noiseSeed: 7)
            var rng = Xoshiro256(seed: 5, stream: [1])
            let box = -1.0...1.0
            let last = m.blockDimensions.count - 1
            XCTAssertNil(try m.stageMajorant(m.zeroNetwork(), stage: 0, scale: 1, box: box), "stage 1 has no earlier layers")
            for block in 1...last {
                for s in [0.5, 20, 3e3] {
                    var net = Network.uniform(architecture: m.architecture, activation: m.activation, box: box, rng: &rng)
                    let majorant = try XCTUnwrap(try m.stageMajorant(net, stage: block, scale: s, box: box))
                    // Dense: the eigenvalues of f·Π_m, Π_m the block's input patches' second moments.
                    let x = try m.blockInputs(net, block: block)
                    let xa = m.architecture.parametric(layer: m.architecture.parametricLayers[block]).patches(x)
                    let eig = try SymmetricEigen.eigenvalues(BLAS.gram(xa, transpose: true, alpha: 1 / Double(x.rows)))
                    let a2 = act == .sigmoid ? 1.0 / 16 : 1
                    let (f, copies) = block == last ? (1 / Double(m.architecture.classes), m.architecture.classes - 1)
                                                    : (a2 / m.sigma2, m.units(block: block).count)
                    dense += 1
                    let expected = Double(copies) * eig.reduce(0) { $0 + Foundation.log1p(s * (f * Swift.max(0, $1)).squareRoot()) }
                    XCTAssertEqual(majorant, expected, accuracy: 1e-9 * Swift.max(1, abs(expected)), "\(arch) block \(block) s = \(s)")
                    // Above log G_m at draws of the block's own weights.
                    let layer = m.architecture.parametricLayers[block]
                    for _ in 0..<20 {
                        for i in net.blocks[layer].indices { net.blocks[layer][i] = rng.uniform(box.lowerBound, box.upperBound) }
                        let unit = try m.stage(net, block, box: box).unit
                        let logG = try (0..<m.stageUnits[block].count).reduce(0.0) { acc, u in
                            acc + LogSpace.logDetSqrt(roots: try unit.roots(m.unitParameters(net, stage: block, unit: u)), scale: s)
                        }
                        XCTAssertLessThanOrEqual(logG, majorant + 1e-9 * abs(majorant), "\(arch) block \(block) s = \(s)")
                        draws += 1
                    }
                    if block == last {
                        // Zero softmax weights (no bias): uniform probabilities, where the bound is attained.
                        for i in net.blocks[layer].indices { net.blocks[layer][i] = 0 }
                        let unit = try m.stage(net, block, box: box).unit
                        let logG = LogSpace.logDetSqrt(roots: try unit.roots(m.unitParameters(net, stage: block, unit: 0)), scale: s)
                        XCTAssertEqual(logG, majorant, accuracy: 1e-8 * Swift.max(1, abs(majorant)), "\(arch) softmax at zero weights, s = \(s)")
                        attained += 1
                    }
                }
            }
        }
        // Five later blocks over the three networks, at three scales each.
        XCTAssertEqual([dense, draws, attained], [15, 300, 9])
    }
}
