import Foundation
@testable import Networks
import TwoScaleCore
@testable import TwoScaleFormats
import TwoScaleNumerics
import XCTest

/// `--weights` from NumPy `.npz` and `.safetensors` files: the fixtures under Fixtures/weights were written
/// by NumPy and the `safetensors` package (scripts/make-weight-fixtures.py) from the values in
/// `expected.json`; every one must load to exactly those values (float32 files: to `Float(x)` widened).
final class WeightsFormatTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/weights").path

    static func fixture(_ name: String) -> String { fixtures + "/" + name }

    let plain = try! Architecture(parsing: "3-4-2", bias: false)
    let biased = try! Architecture(parsing: "3-4-2", bias: true)

    /// W_1, W_2 (row-major) and b_1, b_2 as the script wrote them (float64).
    func expected() throws -> (w: [[Double]], b: [[Double]]) {
        let json = try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: Self.fixture("expected.json"))), source: "expected.json")
        let w = try XCTUnwrap(json["weights"]?.arrayValue).map { m in
            try XCTUnwrap(m.arrayValue).flatMap { row in try XCTUnwrap(row.arrayValue).compactMap(\.doubleValue) }
        }
        let b = try XCTUnwrap(json["biases"]?.arrayValue).map { v in try XCTUnwrap(v.arrayValue).compactMap(\.doubleValue) }
        XCTAssertEqual(w.map(\.count), [12, 8])
        XCTAssertEqual(b.map(\.count), [4, 2])
        return (w, b)
    }

    static func f32(_ xs: [Double]) -> [Double] { xs.map { Double(Float($0)) } }

    func load(_ name: String, bias: Bool) throws -> Network {
        try WeightsFile.load(path: Self.fixture(name), architecture: bias ? biased : plain, activation: .relu)
    }

    func message(_ body: () throws -> Any) -> String {
        do { _ = try body(); return "" } catch { return "\(error)" }
    }

    // MARK: - Every fixture, exact values

    func testEveryFixtureLoadsToTheValuesTheScriptWrote() throws {
        let (w, b) = try expected()
        // (file, --bias, float32 per layer, biases stored)
        let cases: [(String, Bool, [Bool], Bool)] = [
            ("positional-f64.npz", false, [false, false], false),
            ("positional-bias-f32.npz", true, [true, true], true),
            ("positional-compressed-f32.npz", false, [true, true], false),
            ("positional-compressed-bias-f64.npz", true, [false, false], true),
            ("fortran-bigendian.npz", false, [false, true], false),           // W_1 Fortran-ordered <f8, W_2 >f4
            ("zip64-f64.npz", false, [false, false], false),                  // ZIP64 central directory fields
            ("sequential-bias-f64.npz", true, [false, false], true),
            ("sequential-compressed-f32.npz", false, [true, true], false),
            ("sequential-bias-f32.safetensors", true, [true, true], true),
            ("layers-f64.safetensors", false, [false, false], false),
            ("expected.json", true, [false, false], true),
            ("expected-nobias.json", false, [false, false], false),
        ]
        for (name, bias, single, hasBias) in cases {
            let net = try load(name, bias: bias)
            for m in 0..<2 {
                XCTAssertEqual(net.weights[m].data, single[m] ? Self.f32(w[m]) : w[m], "\(name) W_\(m + 1)")
                XCTAssertEqual(net.weights[m].rows, [4, 2][m])
                XCTAssertEqual(net.weights[m].cols, [3, 4][m])
                if bias {
                    XCTAssertEqual(net.biases[m], hasBias ? (single[m] ? Self.f32(b[m]) : b[m]) : [Double](repeating: 0, count: b[m].count),
                                   "\(name) b_\(m + 1)")
                }
            }
        }
        // Weights-only files under --bias: zero biases, as a JSON file without "biases".
        for name in ["positional-f64.npz", "sequential-compressed-f32.npz", "layers-f64.safetensors"] {
            let net = try load(name, bias: true)
            XCTAssertEqual(net.biases, [[0, 0, 0, 0], [0, 0]], name)
        }
        // The float32 values really are rounded: they differ from the float64 ones.
        XCTAssertNotEqual(Self.f32(w[0]), w[0])
    }

    func testTensorsCarryTheirStoredDtypeAndShape() throws {
        let npz = try NPZ.tensors([UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.fixture("fortran-bigendian.npz")))), source: "f.npz")
        XCTAssertEqual(npz.map(\.name), ["arr_0", "arr_1"])
        XCTAssertEqual(npz.map(\.dtype), ["float64", "float32"])
        XCTAssertEqual(npz.map(\.shape), [[4, 3], [2, 4]])
        let st = try SafeTensors.tensors([UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.fixture("sequential-bias-f32.safetensors")))), source: "s.safetensors")
        XCTAssertEqual(Set(st.map(\.name)), ["0.weight", "0.bias", "2.weight", "2.bias"])
        XCTAssertTrue(st.allSatisfy { $0.dtype == "float32" })
        XCTAssertEqual(st.first { $0.name == "2.weight" }?.shape, [2, 4])
    }

    func testFortranOrderOfThreeAxesIsTransposedToCOrder() throws {
        // shape (2, 3, 4), value at (i, j, k) = 100i + 10j + k, stored first index fastest.
        var f: [Double] = []
        for k in 0..<4 { for j in 0..<3 { for i in 0..<2 { f.append(Double(100 * i + 10 * j + k)) } } }
        var c: [Double] = []
        for i in 0..<2 { for j in 0..<3 { for k in 0..<4 { c.append(Double(100 * i + 10 * j + k)) } } }
        XCTAssertEqual(NPYArray.fortranToC(f, shape: [2, 3, 4]), c)
        // Through a whole .npy: a '<f8' header with fortran_order True.
        let cArray = try NPYArray(shape: [2, 3, 4], data: f).encoded()
        var bytes = [UInt8](cArray)
        let header = String(decoding: bytes[10..<128], as: UTF8.self)
        let fortranHeader = header.replacingOccurrences(of: "'fortran_order': False", with: "'fortran_order': True ")
        bytes.replaceSubrange(10..<128, with: Array(fortranHeader.utf8))
        let t = try NPYArray.decodeTensor(bytes, name: "x", source: "x.npy")
        XCTAssertEqual(t.shape, [2, 3, 4])
        XCTAssertEqual(t.values, c)
    }

    /// A dtype whose item size overflows an Int when named in bits is refused with a message, not a trap.
    func testAbsurdDtypeIsAnError() throws {
        var bytes = [UInt8](try NPYArray(shape: [2, 3], data: [1, 2, 3, 4, 5, 6]).encoded())
        let hlen = Int(bytes[8]) | Int(bytes[9]) << 8
        let header = String(decoding: bytes[10..<(10 + hlen)], as: UTF8.self)
        let wide = "'<i2000000000000000000'"
        var changed = header.replacingOccurrences(of: "'<f8'", with: wide)
        let excess = changed.utf8.count - header.utf8.count
        XCTAssertGreaterThan(excess, 0)
        changed = String(changed.dropLast(excess + 1)) + "\n"  // the header's padding spaces give the room
        XCTAssertEqual(changed.utf8.count, hlen)
        bytes.replaceSubrange(10..<(10 + hlen), with: Array(changed.utf8))
        XCTAssertThrowsError(try NPYArray.decodeTensor(bytes, name: "x", source: "x.npy")) {
            XCTAssertTrue("\($0)".contains(wide), "\($0)")
        }
    }

    func testZIP64EndRecordIsFollowed() throws {
        // The fixture has a ZIP64 end record, but its classic end record holds the real values too; set
        // those to "see ZIP64" (0xFFFF members, 0xFFFFFFFF size and offset) so that only the ZIP64 record tells.
        var b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.fixture("zip64-f64.npz"))))
        let end = b.count - 22
        XCTAssertEqual(Array(b[end..<(end + 4)]), [0x50, 0x4B, 5, 6])
        for i in 8..<20 { b[end + i] = 0xFF }
        let (w, _) = try expected()
        let net = try WeightsFile.decode(Data(b), path: "z.npz", architecture: plain, activation: .relu)
        XCTAssertEqual(net.weights.map(\.data), w)
        // Without the locator the end record's 0xFFFF cannot be resolved.
        b[end - 20] = 0
        XCTAssertTrue(message { try NPZ.tensors(b, source: "z.npz") }.contains("no ZIP64 locator"))
    }

    // MARK: - Format detection

    func testFormatIsChosenByContentThenExtension() throws {
        func format(_ name: String, _ path: String = "w") throws -> WeightsFile.Format {
            try WeightsFile.format(of: try Data(contentsOf: URL(fileURLWithPath: Self.fixture(name))), path: path)
        }
        XCTAssertEqual(try format("positional-f64.npz"), .npz)
        XCTAssertEqual(try format("positional-compressed-f32.npz", "w.json"), .npz)      // content beats the name
        XCTAssertEqual(try format("layers-f64.safetensors", "w.bin"), .safetensors)
        XCTAssertEqual(try format("expected.json", "w.npz"), .npz)                       // JSON content, .npz name: that format's error
        XCTAssertEqual(try format("expected.json"), .json)
        XCTAssertEqual(try WeightsFile.format(of: Data("{\"weights\": []}".utf8), path: "model.safetensors"), .safetensors)
        XCTAssertEqual(try WeightsFile.format(of: Data(), path: "w"), .json)
        let npy = try NPYArray(shape: [2], data: [1, 2]).encoded()
        XCTAssertTrue(message { try WeightsFile.format(of: npy, path: "w.npy") }.contains("single .npy array"))
    }

    // MARK: - Errors

    func testDtypeErrorsNameTheTensorAndDtype() {
        XCTAssertEqual(message { try self.load("f16.safetensors", bias: false) },
                       Self.fixture("f16.safetensors") + ": tensor '0.weight' has dtype F16; only F32 and F64 (float32, float64) "
                       + "tensors are supported (convert before saving, e.g. model.float())")
        XCTAssertEqual(message { try self.load("int64.npz", bias: false) },
                       Self.fixture("int64.npz") + ": tensor 'arr_0' has dtype '<i8' (int64); only float32 and float64 tensors "
                       + "are supported (convert with .astype(np.float32))")
        // BF16, in a hand-written safetensors file.
        let st = Self.safetensors(#"{"0.weight":{"dtype":"BF16","shape":[4,3],"data_offsets":[0,24]}}"#, data: 24)
        XCTAssertTrue(message { try SafeTensors.tensors(st, source: "b.safetensors") }
            .hasPrefix("b.safetensors: tensor '0.weight' has dtype BF16; only F32 and F64"))
    }

    func testBiasRulesMirrorTheJSONFile() {
        XCTAssertEqual(message { try self.load("positional-bias-f32.npz", bias: false) },
                       Self.fixture("positional-bias-f32.npz") + ": has 4 positional arrays, read as W_1, b_1, …, W_2, b_2, "
                       + "but the network has no biases (pass \(Setting.bias))")
        XCTAssertEqual(message { try self.load("sequential-bias-f64.npz", bias: false) },
                       Self.fixture("sequential-bias-f64.npz") + ": has bias tensors ('0.bias', …) but the network has none (pass \(Setting.bias))")
        XCTAssertEqual(message { try self.load("sequential-bias-f32.safetensors", bias: false) },
                       Self.fixture("sequential-bias-f32.safetensors") + ": has bias tensors ('0.bias', …) but the network has none (pass \(Setting.bias))")
        // The JSON file says the same in its words.
        XCTAssertTrue(message { try self.load("expected.json", bias: false) }.contains("but the network has none (pass \(Setting.bias))"))
        // With --bias: every layer's bias or none.
        let partial = [T.w("0.weight", 4, 3), T.b("0.bias", 4), T.w("2.weight", 2, 4)]
        XCTAssertEqual(message { try WeightsFile.network(from: partial, path: "p.npz", architecture: self.biased, activation: .relu) },
                       "p.npz: has '0.bias' but no bias for '2.weight'; give every layer a bias, or none (zero biases)")
    }

    func testShapeAndNamingErrors() {
        func msg(_ ts: [NamedTensor], bias: Bool = false) -> String {
            message { try WeightsFile.network(from: ts, path: "m.safetensors", architecture: bias ? self.biased : self.plain, activation: .relu) }
        }
        // Wrong shape, named and positional.
        XCTAssertEqual(msg([T.w("0.weight", 4, 3), T.w("2.weight", 2, 3)]),
                       "m.safetensors: W_2 (tensor '2.weight') has shape 2×3, the architecture 3-4-2 needs 2×4")
        XCTAssertEqual(msg([T.w("arr_0", 4, 3), T.v("arr_1", [2, 4, 1])]),
                       "m.safetensors: W_2 (tensor 'arr_1') has shape 2×4×1, the architecture 3-4-2 needs 2×4")
        XCTAssertEqual(msg([T.w("arr_0", 3, 4), T.w("arr_1", 2, 4)]),
                       "m.safetensors: W_1 (tensor 'arr_0') has shape 3×4, the architecture 3-4-2 needs 4×3 (it looks transposed: "
                       + "twoscale wants (out, in), the layout of PyTorch's nn.Linear.weight; transpose (in, out) kernels such as JAX/Flax or Keras ones)")
        XCTAssertEqual(msg([T.w("0.weight", 4, 3), T.b("0.bias", 3), T.w("2.weight", 2, 4), T.b("2.bias", 2)], bias: true),
                       "m.safetensors: b_1 (tensor '0.bias') has shape 3, the architecture 3-4-2 (bias) needs 4")
        // Missing tensors and counts.
        XCTAssertEqual(msg([T.w("0.weight", 4, 3), T.b("2.bias", 2)], bias: true),
                       "m.safetensors: has '2.bias' but no '2.weight'")
        XCTAssertEqual(msg([T.w("0.weight", 4, 3)]), "m.safetensors: has 1 layer (modules 0), the architecture 3-4-2 needs 2")
        XCTAssertEqual(msg([T.w("0.weight", 4, 3), T.w("2.weight", 2, 4), T.w("4.weight", 2, 2)]),
                       "m.safetensors: has 3 layers (modules 0, 2, 4), the architecture 3-4-2 needs 2")
        XCTAssertEqual(msg([T.w("arr_0", 4, 3), T.w("arr_1", 2, 4), T.w("arr_2", 2, 4)], bias: true),
                       "m.safetensors: has 3 positional arrays (arr_0 …); the architecture 3-4-2 (bias) needs 2 (W_1, …, W_2) "
                       + "or 4 (W_1, b_1, …, W_2, b_2)")
        XCTAssertEqual(msg([T.w("arr_0", 4, 3), T.w("arr_2", 2, 4)]),
                       "m.safetensors: positional arrays must be arr_0 … arr_1; found 'arr_2' where arr_1 belongs")
        XCTAssertEqual(msg([]), "m.safetensors: holds no tensors; the architecture 3-4-2 needs 2 weight matrices")
        // Names.
        XCTAssertEqual(msg([T.w("arr_0", 4, 3), T.w("2.weight", 2, 4)]),
                       "m.safetensors: mixes positional arrays ('arr_0') with named ones ('2.weight'); use one naming or the other")
        XCTAssertTrue(msg([T.w("0.weight", 4, 3), T.w("2.weight", 2, 4), T.b("bn.running_mean", 4)])
            .hasPrefix("m.safetensors: tensor 'bn.running_mean' is not a layer's weight or bias: expected PyTorch state-dict names"))
        XCTAssertTrue(msg([T.w("0.weight", 4, 3), T.w("0..weight", 2, 4)]).hasPrefix("m.safetensors: tensor '0..weight' is not a layer's weight or bias"))
        XCTAssertTrue(msg([T.w(".weight", 4, 3), T.w("0.weight", 2, 4)]).hasPrefix("m.safetensors: tensor '.weight' is not a layer's weight or bias"))
        XCTAssertEqual(msg([T.w("1.weight", 4, 3), T.w("01.weight", 2, 4)]),
                       "m.safetensors: tensors '1.weight' and '01.weight' are both the weight of module 1")
        // Non-finite values.
        var bad = T.w("0.weight", 4, 3).values
        bad[4] = .nan
        XCTAssertEqual(msg([NamedTensor(name: "0.weight", dtype: "float64", shape: [4, 3], values: bad), T.w("2.weight", 2, 4)]),
                       "m.safetensors: W_1 (tensor '0.weight'), row 2, entry 2 is not a finite number (nan)")
    }

    func testPrefixesAndIndexOrder() throws {
        // Sorted by the integer, not the string (10 after 9), under a path ('model.net.') or a stem ('fc').
        let arch = try Architecture(parsing: "2-3-3-3-3-3-3-3-3-3-3-2", bias: false)
        var ts: [NamedTensor] = []
        for m in 0..<11 {
            let rows = arch.sizes[m + 1], cols = arch.sizes[m]
            ts.append(NamedTensor(name: "model.net.\(m).weight", dtype: "float64", shape: [rows, cols],
                                  values: (0..<(rows * cols)).map { Double(m * 100 + $0) }))
        }
        let net = try WeightsFile.network(from: ts.reversed(), path: "m", architecture: arch, activation: .tanh)
        XCTAssertEqual(net.weights.map { $0.data[0] }, (0..<11).map { Double($0 * 100) })
        let fc = try WeightsFile.network(from: [T.w("fc2.weight", 2, 4), T.w("fc1.weight", 4, 3)], path: "m",
                                         architecture: plain, activation: .relu)
        XCTAssertEqual(fc.weights.map(\.rows), [4, 2])
    }

    func testDamagedFilesGiveNamedErrorsNeverATrap() throws {
        for name in ["positional-f64.npz", "positional-compressed-bias-f64.npz", "sequential-bias-f32.safetensors",
                     "fortran-bigendian.npz", "layers-f64.safetensors", "zip64-f64.npz"] {
            let good = try Data(contentsOf: URL(fileURLWithPath: Self.fixture(name)))
            let path = "damaged-" + name
            // Every truncation, and a damaged byte at every offset.
            var variants: [Data] = (0..<good.count).map { good.prefix($0) }
            for at in 0..<good.count {
                var d = good
                d[at] ^= 0x5A
                variants.append(d)
            }
            var loaded = 0
            for d in variants {
                do {
                    let net = try WeightsFile.decode(d, path: path, architecture: name.contains("bias") ? biased : plain, activation: .relu)
                    XCTAssertTrue(net.weights.allSatisfy { $0.data.allSatisfy(\.isFinite) })
                    loaded += 1
                } catch let e as TwoScaleError {
                    XCTAssertTrue(e.message.hasPrefix(path + ": "), e.message)
                }
            }
            // A damaged byte in the data of a stored member may still load (a zip's CRC catches it; a
            // safetensors file has no checksum); truncations never do.
            XCTAssertLessThan(loaded, good.count, name)
        }
        // The messages of the common cases.
        let npz = try Data(contentsOf: URL(fileURLWithPath: Self.fixture("positional-compressed-f32.npz")))
        XCTAssertTrue(message { try NPZ.tensors([UInt8](npz.prefix(300)), source: "t.npz") }
            .hasPrefix("t.npz: is not a valid zip (.npz) archive: no end of central directory record"))
        var flipped = [UInt8](npz)
        flipped[80] ^= 0xFF
        XCTAssertTrue(message { try NPZ.tensors(flipped, source: "t.npz") }.contains("CRC-32 mismatch"))
        // The stated size of a deflated member, wrong in three ways.
        let cd = try XCTUnwrap(Data(npz).range(of: Data([0x50, 0x4B, 1, 2]))).lowerBound
        let stated = Int(npz[cd + 24]) | Int(npz[cd + 25]) << 8
        func withSize(_ n: UInt32) -> [UInt8] {
            var b = [UInt8](npz)
            for k in 0..<4 { b[cd + 24 + k] = UInt8(truncatingIfNeeded: n >> (8 * UInt32(k))) }
            return b
        }
        XCTAssertTrue(message { try NPZ.tensors(withSize(UInt32(stated - 1)), source: "t.npz") }
            .contains("inflates to \(stated) bytes, the archive says \(stated - 1)"))
        XCTAssertTrue(message { try NPZ.tensors(withSize(UInt32(stated + 1)), source: "t.npz") }
            .contains("inflates to \(stated) bytes, the archive says \(stated + 1)"))
        XCTAssertTrue(message { try NPZ.tensors(withSize(0x7FFF_FFFF), source: "t.npz") }
            .contains("its stated size (2147483647 bytes) is impossible"))
        let st = try Data(contentsOf: URL(fileURLWithPath: Self.fixture("layers-f64.safetensors")))
        XCTAssertEqual(message { try SafeTensors.tensors([UInt8](st.prefix(200)), source: "t.safetensors") },
                       "t.safetensors: is not a valid .safetensors file: tensor 'layers.0.weight': data_offsets [0, 96] lie outside "
                       + "the 16 data bytes (truncated?)")
        XCTAssertEqual(message { try SafeTensors.tensors([UInt8](st.prefix(100)), source: "t.safetensors") },
                       "t.safetensors: is not a valid .safetensors file: truncated: the header is 176 bytes long, the file has 92 after the length")
        XCTAssertTrue(message { try WeightsFile.load(path: Self.fixture("does-not-exist.npz"), architecture: self.plain, activation: .relu) }
            .contains("does-not-exist.npz: no such file; give a weights file"))
    }

    /// A safetensors file with this header and `data` zero bytes.
    static func safetensors(_ header: String, data: Int) -> [UInt8] {
        let h = Array(header.utf8)
        var n = UInt64(h.count).littleEndian
        return withUnsafeBytes(of: &n) { Array($0) } + h + [UInt8](repeating: 0, count: data)
    }

    /// In-memory tensors for the naming and shape rules.
    enum T {
        static func v(_ name: String, _ shape: [Int]) -> NamedTensor {
            NamedTensor(name: name, dtype: "float64", shape: shape, values: (0..<shape.reduce(1, *)).map { Double($0) / 10 })
        }
        static func w(_ name: String, _ rows: Int, _ cols: Int) -> NamedTensor { v(name, [rows, cols]) }
        static func b(_ name: String, _ n: Int) -> NamedTensor { v(name, [n]) }
    }

    // MARK: - Convolutional networks

    /// A PyTorch state dict of a CNN (Conv2d weights (F, C, k, k), the Linear layer after a channel-first
    /// flatten), saved by NumPy (scripts/make-cnn-fixture.py): its logits equal the script's own
    /// loop-by-loop PyTorch-semantics forward pass, so both layout permutations are right.
    func testPyTorchCNNStateDictGivesThePyTorchLogits() throws {
        let json = try JSONValue.parse(try Data(contentsOf: URL(fileURLWithPath: Self.fixture("cnn-expected.json"))), source: "cnn-expected.json")
        let arch = try Architecture(parsing: try XCTUnwrap(json["arch"]?.stringValue), bias: true)
        let inputs = try XCTUnwrap(json["inputs"]?.arrayValue).map { try XCTUnwrap($0.arrayValue).compactMap(\.doubleValue) }
        let logits = try XCTUnwrap(json["logits"]?.arrayValue).map { try XCTUnwrap($0.arrayValue).compactMap(\.doubleValue) }
        let net = try WeightsFile.load(path: Self.fixture("cnn-pytorch.npz"), architecture: arch, activation: .relu)
        let out = net.forward(Matrix(rows: inputs.count, cols: inputs[0].count, data: inputs.flatMap { $0 })).logits
        XCTAssertEqual(out.rows, 3)
        for (i, row) in logits.enumerated() {
            for (j, v) in row.enumerated() { XCTAssertEqual(out[i, j], v, accuracy: 1e-12, "input \(i), logit \(j)") }
        }
        // The same network written as twoscale's JSON (conv filters as rows of k·k·C_in) reads back exactly.
        let text = try WeightsFile.json(net).serialized()
        let again = try WeightsFile.decode(Data(text.utf8), path: "cnn.json", architecture: arch, activation: .relu)
        XCTAssertEqual(again.blocks, net.blocks)
        XCTAssertEqual(net.weights.map(\.rows), [3, 4])
        XCTAssertEqual(net.weights.map(\.cols), [8, 12])
    }

    /// A weights file for another architecture is a usage error (status 2) that names the tensor and the
    /// layer term; the kernels' permutation is a bijection onto twoscale's layout.
    func testCNNWeightsForAnotherArchitecture() throws {
        let other = try Architecture(parsing: "5x5x2-conv4k2-maxpool2-4", bias: true)
        do {
            _ = try WeightsFile.load(path: Self.fixture("cnn-pytorch.npz"), architecture: other, activation: .relu)
            XCTFail("no error")
        } catch let e as TwoScaleError {
            XCTAssertEqual(e.exitCode, 2)
            XCTAssertTrue(e.message.contains("'0.weight'") && e.message.contains("3×2×2×2") && e.message.contains("conv4k2")
                          && e.message.contains("4×2×2×2"), e.message)
        }
        let fewer = try Architecture(parsing: "5x5x2-conv3k2-maxpool2-8-4", bias: true)
        XCTAssertTrue(message { try WeightsFile.load(path: Self.fixture("cnn-pytorch.npz"), architecture: fewer, activation: .relu) }
            .contains("has 2 layers (modules 0, 4), the architecture 5x5x2-conv3k2-maxpool2-8-4 (bias) needs 3"))
        let v = (0..<(3 * 2 * 2 * 2)).map(Double.init)
        XCTAssertEqual(ConvolutionLayer.kernelsFromPyTorch(v, filters: 3, channels: 2, kernel: 2).sorted(), v)
        // (f=0, c=1, r=0, q=1) is PyTorch's flat index 5 and twoscale's (f=0, r=0, q=1, c=1) = 3.
        XCTAssertEqual(ConvolutionLayer.kernelsFromPyTorch(v, filters: 3, channels: 2, kernel: 2)[3], 5)
    }

    /// A PyTorch-layout file whose second convolution is in twoscale's own layout: that weight is read as
    /// it stands (a convolution reads an image, not a flattened one), only the dense layer's columns are
    /// permuted — the layout is each layer's own rule (it trapped when the columns were permuted for any
    /// layer after an image).
    func testMixedConvolutionLayoutsReadPerLayer() throws {
        let a = try Architecture(parsing: "8x8x1-conv2k3-conv2k3-3")
        func t(_ name: String, _ shape: [Int]) -> NamedTensor {
            NamedTensor(name: name, dtype: "float64", shape: shape, values: (0..<shape.reduce(1, *)).map { Double($0 % 7) / 7 })
        }
        let tensors = [t("arr_0", [2, 1, 3, 3]), t("arr_1", [2, 18]), t("arr_2", [3, 32])]
        let net = try WeightsFile.network(from: tensors, path: "mixed.npz", architecture: a, activation: .relu)
        XCTAssertEqual(net.blocks[1], tensors[1].values)
        XCTAssertEqual(net.blocks[2], DenseLayer.columnsFromChannelFirst(tensors[2].values, rows: 3,
                                                                          image: ImageShape(height: 4, width: 4, channels: 2)))
    }
}
