import Foundation
import TwoScaleCLI
import TwoScaleCore
import TwoScaleFormats
import XCTest

/// `fisher --weights` with NumPy `.npz` and `.safetensors` files (the fixtures of NetworksTests, written by
/// scripts/make-weight-fixtures.py): the same θ in float64 gives the same JSON, byte for byte, as the
/// equivalent JSON weights file.
final class WeightsFileCommandTests: XCTestCase {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("NetworksTests/Fixtures/weights").path

    func fisher(_ weights: String, bias: Bool, kind: String, arch: String = "3-4-2") async -> (status: Int32, out: String, err: String) {
        var args = ["fisher", "--arch", arch, "--weights", Self.fixtures + "/" + weights, "--data", "synthetic:gaussian",
                    "--samples", "6", "--seed", "3", "--activation", "tanh", "--fisher", kind, "--json"]
        if bias { args.append("--bias") }
        if kind == "markov" { args += ["--sigma2", "0.1", "--noise-samples", "2"] }
        return await runCLICapturingErrors(args)
    }

    func testNPZAndSafetensorsGiveTheSameJSONAsTheJSONFile() async throws {
        let cases: [(String, String, Bool)] = [
            ("positional-f64.npz", "expected-nobias.json", false),
            ("layers-f64.safetensors", "expected-nobias.json", false),
            ("sequential-bias-f64.npz", "expected.json", true),
            ("positional-compressed-bias-f64.npz", "expected.json", true),
        ]
        for kind in ["output", "markov"] {
            for (file, json, bias) in cases {
                let a = await fisher(file, bias: bias, kind: kind)
                let b = await fisher(json, bias: bias, kind: kind)
                XCTAssertEqual(a.status, 0, "\(file): \(a.err)")
                XCTAssertEqual(b.status, 0, "\(json): \(b.err)")
                XCTAssertFalse(a.out.isEmpty)
                let ja = try JSONValue.parse(Data(a.out.utf8), source: file)
                let jb = try JSONValue.parse(Data(b.out.utf8), source: json)
                XCTAssertEqual(try withoutWeightsKey(ja).serialized(), try withoutWeightsKey(jb).serialized(), "\(kind) \(file)")
            }
        }
        // A float32 file is a different θ (rounded): the spectra differ.
        let f32 = await fisher("positional-compressed-f32.npz", bias: false, kind: "output")
        let f64 = await fisher("positional-f64.npz", bias: false, kind: "output")
        XCTAssertEqual(f32.status, 0)
        XCTAssertNotEqual(f32.out, f64.out)
    }

    /// PyTorch state dicts under the names models give them (class attributes, torchvision's features /
    /// classifier, a nested Sequential, names only the shapes order) give the same JSON, byte for byte, as
    /// their positional twin; names nothing orders are a usage error that says what to do.
    func testStateDictNamingsGiveTheSameJSONAsPositionalFiles() async throws {
        let cnn = "6x6x2-conv3k2-conv2k2-maxpool2-3-2"
        let cases: [(String, String, String)] = [
            ("encoder-decoder-bias-f64.safetensors", "positional-compressed-bias-f64.npz", "3-4-2"),
            ("nested-bias-f64.npz", "positional-compressed-bias-f64.npz", "3-4-2"),
            ("cnn-class-bias-f64.safetensors", "cnn-positional-bias-f64.npz", cnn),
            ("cnn-class-bias-f64.npz", "cnn-positional-bias-f64.npz", cnn),
            ("cnn-features-bias-f64.safetensors", "cnn-positional-bias-f64.npz", cnn),
            ("cnn-nested-bias-f64.safetensors", "cnn-positional-bias-f64.npz", cnn),
        ]
        for kind in ["output", "markov"] {
            for (file, reference, arch) in cases {
                let a = await fisher(file, bias: true, kind: kind, arch: arch)
                let b = await fisher(reference, bias: true, kind: kind, arch: arch)
                XCTAssertEqual(a.status, 0, "\(file): \(a.err)")
                XCTAssertEqual(b.status, 0, "\(reference): \(b.err)")
                let ja = try JSONValue.parse(Data(a.out.utf8), source: file)
                let jb = try JSONValue.parse(Data(b.out.utf8), source: reference)
                XCTAssertEqual(try withoutWeightsKey(ja).serialized(), try withoutWeightsKey(jb).serialized(), "\(kind) \(file)")
            }
        }
        let r = await fisher("ambiguous-4-4-4.safetensors", bias: false, kind: "output", arch: "4-4-4")
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.out, "")
        XCTAssertTrue(r.err.contains("ambiguous-4-4-4.safetensors: cannot tell the order of its layers from their names, and more than one "
                                     + "order fits the architecture 4-4-4"), r.err)
        XCTAssertTrue(r.err.contains("np.savez(f, *[t.numpy() for t in model.state_dict().values()])"), r.err)
    }

    /// A file twoscale cannot read exits with status 1; a readable file for another architecture (or
    /// other --bias) is a usage error, status 2.
    func testErrorsNameTheFileWithTheirStatus() async {
        let cases: [(String, Bool, String, Int32)] = [
            ("f16.safetensors", false, "f16.safetensors: tensor '0.weight' has dtype F16; only F32 and F64", 1),
            ("int64.npz", false, "int64.npz: tensor 'arr_0' has dtype '<i8' (int64)", 1),
            ("sequential-bias-f64.npz", false, "sequential-bias-f64.npz: has bias tensors ('0.bias', …) but the network has none (pass --bias)", 2),
        ]
        for (file, bias, needle, status) in cases {
            let r = await fisher(file, bias: bias, kind: "output")
            XCTAssertEqual(r.status, status, file)
            XCTAssertEqual(r.out, "")
            XCTAssertTrue(r.err.contains(needle), r.err)
        }
        let r = await runCLICapturingErrors(["fisher", "--arch", "3-5-2", "--weights", Self.fixtures + "/layers-f64.safetensors",
                                             "--data", "synthetic:gaussian", "--samples", "4", "--fisher", "output", "--json"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains("W_1 (tensor 'layers.0.weight') has shape 4×3, the architecture 3-5-2 needs 5×3"), r.err)
    }
}

/// A fisher result without its timing keys and without `weights`, the file's name, which differs between
/// the files compared; everything computed from them must agree.
func withoutWeightsKey(_ v: JSONValue) -> JSONValue {
    guard case let .object(kv) = withoutTimingKeys(v) else { return v }
    return .object(kv.filter { $0.0 != "weights" })
}
