@testable import Fisher
import Foundation
@testable import Networks
import TestSupport
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics
import XCTest

/// PyTorch state dicts under the names models give them (issue 40): class attributes (`conv1`, `fc1`),
/// torchvision's `features.N` / `classifier.N`, nested Sequentials, names only the shapes can order. The
/// fixtures (scripts/make-weight-fixtures.py) hold the values of a positional twin; each must load to
/// that network bit for bit, with the same Fisher spectra.
final class WeightsFormatStateDictTests: XCTestCase {
    typealias T = WeightsFormatTests.T

    static func fixture(_ name: String) -> String { WeightsFormatTests.fixture(name) }

    static let cnn = "6x6x2-conv3k2-conv2k2-maxpool2-3-2"

    func load(_ name: String, _ arch: String, bias: Bool = true) throws -> Network {
        try WeightsFile.load(path: Self.fixture(name), architecture: try Architecture(parsing: arch, bias: bias), activation: .tanh)
    }

    func message(_ body: () throws -> Any) -> String {
        do { _ = try body(); return "" } catch { return "\(error)" }
    }

    /// The output FIM's spectrum and every Markov block's, on fixed Gaussian inputs.
    func spectra(_ net: Network) throws -> [[Double]] {
        let x = FisherReference.gaussianData(5, net.architecture.inputSize, seed: 40)
        let output = try OutputFisher(architecture: net.architecture, activation: net.activation, data: x)
        let markov = try MarkovFisher(architecture: net.architecture, activation: net.activation, data: x, sigma2: 0.2,
                                      noiseSamples: 2, noiseSeed: 3)
        let blocks = try (0..<markov.blockDimensions.count).map { b in
            try markov.blockEigenvalues(net, block: b, inputs: try markov.blockInputs(net, block: b))
        }
        return [try output.blockEigenvalues(net, block: 0, inputs: x)] + blocks
    }

    func assertSame(_ net: Network, as reference: Network, _ name: String) throws {
        XCTAssertEqual(net.blocks, reference.blocks, "\(name): parameters")
        XCTAssertEqual(try spectra(net), try spectra(reference), "\(name): spectra")
    }

    func testMLPNamingsLoadAsThePositionalNetwork() throws {
        let reference = try load("positional-compressed-bias-f64.npz", "3-4-2")
        // Sorted, 'decoder' comes first: only the shapes (4×3, then 2×4) give the order.
        try assertSame(try load("encoder-decoder-bias-f64.safetensors", "3-4-2"), as: reference, "encoder-decoder")
        try assertSame(try load("nested-bias-f64.npz", "3-4-2"), as: reference, "nested Sequential")
    }

    func testCNNNamingsLoadAsThePositionalNetwork() throws {
        let reference = try load("cnn-positional-bias-f64.npz", Self.cnn)
        XCTAssertEqual(reference.weights.map(\.rows), [3, 2, 3, 2])
        XCTAssertEqual(reference.weights.map(\.cols), [8, 12, 8, 3])
        for name in ["cnn-class-bias-f64.safetensors",       // conv1, conv2, fc1, fc2: sorted by safetensors
                     "cnn-class-bias-f64.npz",               // the same in module order
                     "cnn-features-bias-f64.safetensors",    // classifier.1, classifier.4 sorted before features.0, features.2
                     "cnn-nested-bias-f64.safetensors"] {    // 0.0, 0.2, 1, 3
            try assertSame(try load(name, Self.cnn), as: reference, name)
        }
        // The same files under another CNN: a usage error naming the order's trouble or the shape.
        let other = "6x6x2-conv3k2-conv3k2-maxpool2-3-2"
        XCTAssertTrue(message { try self.load("cnn-class-bias-f64.safetensors", other) }
            .contains("cannot tell the order of its layers from their names, and no order fits the architecture \(other) (bias), whose weights are "
                      + "3×8 or 3×2×2×2, 3×12 or 3×3×2×2, 3×12, 2×3; the file has 'conv1.weight' 3×2×2×2, 'conv2.weight' 2×3×2×2, 'fc1.weight' 3×8, 'fc2.weight' 2×3"))
        XCTAssertTrue(message { try self.load("cnn-nested-bias-f64.safetensors", other) }
            .contains("W_2 (tensor '0.2.weight') has shape 2×3×2×2; layer 2 (conv3k2) needs 3×3×2×2"))
    }

    func testNamesNoOrderFitsTellsTheWorkaround() throws {
        let path = Self.fixture("ambiguous-4-4-4.safetensors")
        do {
            _ = try load("ambiguous-4-4-4.safetensors", "4-4-4", bias: false)
            XCTFail("no error")
        } catch let e as TwoScaleError {
            XCTAssertEqual(e.exitCode, 2)
            XCTAssertEqual(e.message, path + ": cannot tell the order of its layers from their names, and more than one order "
                           + "fits the architecture 4-4-4 (W_1, W_2 = 'decoder.weight', 'encoder.weight' or 'encoder.weight', 'decoder.weight'); "
                           + "save the tensors in the network's order, np.savez(f, *[t.numpy() for t in model.state_dict().values()]), "
                           + "or name them 0.weight, 0.bias, 1.weight, … in layer order")
        }
    }

    /// A tensor name tens of thousands of modules deep (the order is found recursively) is an error that
    /// says so, not a stack overflow; 64 levels still read.
    func testDeepModuleNamesAreRefused() throws {
        let a = try Architecture(parsing: "3-3-3", bias: false)
        func t(_ name: String) -> NamedTensor { NamedTensor(name: name, dtype: "float64", shape: [3, 3], values: [Double](repeating: 0.5, count: 9)) }
        let deep = String(repeating: "a.", count: 40_000)
        XCTAssertThrowsError(try WeightsFile.network(from: [t(deep + "0.weight"), t(deep + "1.weight")], path: "m", architecture: a, activation: .relu)) {
            XCTAssertTrue("\($0)".contains("levels deep"), "\($0)")
        }
        let ok = String(repeating: "a.", count: 63)
        XCTAssertNoThrow(try WeightsFile.network(from: [t(ok + "0.weight"), t(ok + "1.weight")], path: "m", architecture: a, activation: .relu))
    }

    /// In-memory state dicts: the rule itself.
    func testOrderRule() throws {
        func net(_ ts: [NamedTensor], _ arch: String, bias: Bool = false) throws -> Network {
            try WeightsFile.network(from: ts, path: "m", architecture: try Architecture(parsing: arch, bias: bias), activation: .relu)
        }
        /// A weight whose first entry tells which it is.
        func w(_ name: String, _ rows: Int, _ cols: Int, tag: Double) -> NamedTensor {
            NamedTensor(name: name, dtype: "float64", shape: [rows, cols], values: [tag] + [Double](repeating: 0.5, count: rows * cols - 1))
        }
        func tags(_ n: Network) -> [Double] { n.weights.map { $0.data[0] } }
        // Equal shapes, so only the names order: indices numerically at every level (10 after 2, 0.10 before 1).
        let nested = [w("1.weight", 3, 3, tag: 4), w("0.10.weight", 3, 3, tag: 3), w("0.2.weight", 3, 3, tag: 2), w("0.0.weight", 3, 3, tag: 1)]
        XCTAssertEqual(tags(try net(nested, "3-3-3-3-3")), [1, 2, 3, 4])
        let stems = [w("layer10.weight", 3, 3, tag: 3), w("layer2.weight", 3, 3, tag: 2), w("layer1.weight", 3, 3, tag: 1)]
        XCTAssertEqual(tags(try net(stems, "3-3-3-3")), [1, 2, 3])
        // A module's children stay together: enc.0, enc.2 before dec.0, dec.2 is the one order that fits
        // (interleaved, enc.0, dec.0, enc.2, dec.2 would fit the shapes too).
        let encDec = [w("dec.0.weight", 4, 4, tag: 3), w("dec.2.weight", 2, 4, tag: 4), w("enc.0.weight", 4, 3, tag: 1), w("enc.2.weight", 4, 4, tag: 2)]
        XCTAssertEqual(tags(try net(encDec, "3-4-4-4-2")), [1, 2, 3, 4])
        // Shapes with biases: fc.* (4×3) and out.* (2×4), sorted the other way round.
        let biased = try net([T.w("out.weight", 2, 4), T.b("out.bias", 2), T.w("fc.weight", 4, 3), T.b("fc.bias", 4)], "3-4-2", bias: true)
        XCTAssertEqual(biased.weights.map(\.rows), [4, 2])
        XCTAssertEqual(biased.biases.map(\.count), [4, 2])
        // A single nn.Linear's own state dict: bare 'weight' and 'bias'.
        let single = try net([T.b("bias", 2), T.w("weight", 2, 3)], "3-2", bias: true)
        XCTAssertEqual(single.weights[0].data, T.w("weight", 2, 3).values)
        // The old PREFIX<K> names still load as before.
        XCTAssertEqual(try net([T.w("layers.1.weight", 2, 4), T.w("layers.0.weight", 4, 3)], "3-4-2").weights.map(\.rows), [4, 2])
        XCTAssertEqual(try net([T.w("layers.0.weight", 4, 3), T.w("head.1.weight", 2, 4)], "3-4-2").weights.map(\.rows), [4, 2])

        // No order fits: the tensors and the needed shapes are named.
        XCTAssertEqual(message { try net([T.w("a.weight", 3, 3), T.w("b.weight", 2, 4)], "3-4-2") },
                       "m: cannot tell the order of its layers from their names, and no order fits the "
                       + "architecture 3-4-2, whose weights are 4×3, 2×4; the file has 'a.weight' 3×3, 'b.weight' 2×4")
        // Names that fix the order keep the per-layer shape message.
        XCTAssertEqual(message { try net([T.w("fc1.weight", 4, 3), T.w("fc2.weight", 2, 3)], "3-4-2") },
                       "m: W_2 (tensor 'fc2.weight') has shape 2×3, the architecture 3-4-2 needs 2×4")
        // Several orders fit (the encoder's pair and the decoder's pair, all 3×3): only the undecided layers are listed.
        let twins = [w("encoder.0.weight", 3, 3, tag: 1), w("encoder.1.weight", 3, 3, tag: 2),
                     w("decoder.0.weight", 3, 3, tag: 3), w("decoder.1.weight", 3, 3, tag: 4), w("head.weight", 2, 3, tag: 5)]
        XCTAssertTrue(message { try net(twins, "3-3-3-3-3-2") }
            .hasPrefix("m: cannot tell the order of its layers from their names, and more than one order fits the architecture "
                       + "3-3-3-3-3-2 (W_1, W_2, W_3, W_4 = 'decoder.0.weight', 'decoder.1.weight', 'encoder.0.weight', 'encoder.1.weight' "
                       + "or 'encoder.0.weight', 'encoder.1.weight', 'decoder.0.weight', 'decoder.1.weight'); save the tensors"))
        // A BatchNorm's running statistics are no layer's weight.
        XCTAssertTrue(message { try net([T.w("fc1.weight", 4, 3), T.b("bn.running_var", 4), T.w("fc2.weight", 2, 4)], "3-4-2") }
            .hasPrefix("m: tensor 'bn.running_var' is not a layer's weight or bias"))
        // Too many unindexed siblings to search: refused, not searched.
        let many = (0..<17).map { k in T.w("m\(UnicodeScalar(UInt8(97 + k))).weight", 2, 2) }
        XCTAssertTrue(message { try net(many, Array(repeating: "2", count: 18).joined(separator: "-")) }
            .hasPrefix("m: cannot tell the order of its layers: too many modules without an index side by side (ma, mb, mc, md, me, mf, …); save the tensors"))
    }
}
