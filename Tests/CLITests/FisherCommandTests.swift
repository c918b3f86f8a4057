import Foundation
import TwoScaleCLI
import TwoScaleCore
import TwoScaleFormats
import XCTest

final class FisherCommandTests: ScratchDirectoryTestCase {
    override class var scratchTag: String { "fisher" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try "x1,x2\n1,0\n0,1\n1,1\n".write(toFile: dir + "/X.csv", atomically: true, encoding: .utf8)
    }

    func run(_ args: [String]) async -> (Int32, String) {
        let capture = OutputCapture()
        let status = await Console.$capture.withValue(capture) { await TwoScaleMain.execute(args) }
        return (status, capture.text)
    }

    func weights(_ text: String) throws -> String {
        let p = dir + "/W.json"
        try text.write(toFile: p, atomically: true, encoding: .utf8)
        return p
    }

    /// 2-1-2 linear network, no bias: W_1 = [a, b], W_2 = [[c], [e]]. Closed forms for both FIMs.
    func testClosedFormsOnATinyNetwork() async throws {
        let w = try weights(#"{"weights": [[[0.5, -1]], [[1], [-1]]]}"#)
        // Markov layer 1 (linear, act' = 1): F_1 = σ⁻² E[x xᵀ] = σ⁻²/3 [[2,1],[1,2]] → eigenvalues σ⁻²/3·{1, 3}.
        let (s1, out1) = await run(["fisher", "--arch", "2-1-2", "--weights", w, "--data", "csv:\(dir)/X.csv",
                                    "--fisher", "markov", "--activation", "linear", "--sigma2", "0.5", "--json"])
        XCTAssertEqual(s1, 0)
        let j1 = try JSONValue.parse(Data(out1.utf8), source: "stdout")
        XCTAssertEqual(j1["dimension"]?.doubleValue, 4)
        XCTAssertEqual(j1["fisher"]?.stringValue, "markov")
        let blocks = try XCTUnwrap(j1["blocks"]?.arrayValue)
        XCTAssertEqual(blocks.count, 2)
        let e1 = try XCTUnwrap(blocks[0]["eigenvalues"]?.arrayValue).compactMap(\.doubleValue)
        XCTAssertEqual(e1.count, 2)
        XCTAssertEqual(e1[0], 2.0 / 3, accuracy: 1e-12)
        XCTAssertEqual(e1[1], 2.0, accuracy: 1e-12)
        XCTAssertEqual(blocks[0]["layer"]?.doubleValue, 1)
        XCTAssertEqual(blocks[1]["parameters"]?.doubleValue, 2)
        XCTAssertEqual(try XCTUnwrap(blocks[1]["eigenvalues"]?.arrayValue).count, 2)
        // Output FIM: logits = (c, e)·h, h = a x1 + b x2, θ = (a, b, c, e); p = softmax(h, −h), v = p1 p2.
        // J_n = [[c x1, c x2, h, 0], [e x1, e x2, 0, h]]; u = (1, −1)/√2 spans 1^⊥, so
        // F = (1/N) Σ_n 2 v_n g_n g_nᵀ with g_n = Jᵀu/… → check Tr F = (1/N) Σ v_n |J_nᵀ(1,−1)|².
        let (s2, out2) = await run(["fisher", "--arch", "2-1-2", "--weights", w, "--data", "csv:\(dir)/X.csv",
                                    "--fisher", "output", "--activation", "linear", "--json"])
        XCTAssertEqual(s2, 0)
        let j2 = try JSONValue.parse(Data(out2.utf8), source: "stdout")
        let b2 = try XCTUnwrap(j2["blocks"]?.arrayValue)
        XCTAssertEqual(b2.count, 1)
        XCTAssertEqual(b2[0]["layer"]?.doubleValue, 0)
        let e2 = try XCTUnwrap(b2[0]["eigenvalues"]?.arrayValue).compactMap(\.doubleValue)
        XCTAssertEqual(e2.count, 4)
        var trace = 0.0
        for (x1, x2) in [(1.0, 0.0), (0, 1), (1, 1)] {
            let h = 0.5 * x1 - x2
            let p1 = 1 / (1 + exp(-2 * h)), v = p1 * (1 - p1)
            // J_nᵀ(1, −1) = ((c − e)x1, (c − e)x2, h, −h) with c − e = 2.
            trace += v * (4 * x1 * x1 + 4 * x2 * x2 + 2 * h * h) / 3
        }
        XCTAssertEqual(try XCTUnwrap(j2["trace"]?.doubleValue), trace, accuracy: 1e-12)
        XCTAssertEqual(e2.reduce(0, +), trace, accuracy: 1e-12)
        XCTAssertEqual(e2, e2.sorted())
    }

    func testHumanOutputAndRandomWeights() async throws {
        let (s, out) = await run(["fisher", "--arch", "3-4-3", "--data", "synthetic:gaussian", "--samples", "6",
                                  "--sigma2", "0.1", "--activation", "tanh", "--bias"])
        XCTAssertEqual(s, 0)
        XCTAssertTrue(out.contains("markov Fisher information"))
        XCTAssertTrue(out.contains("largest eigenvalues"))
        // Same seed → same bytes.
        let args = ["fisher", "--arch", "3-4-3", "--data", "synthetic:teacher:3-4-3", "--samples", "6", "--fisher", "output", "--json", "--seed", "4"]
        let (_, a) = await run(args)
        let (_, b) = await run(args)
        XCTAssertEqual(a, b)
        XCTAssertFalse(a.isEmpty)
    }

    /// A CNN with pooling: one Markov block per parametric layer (the pooling layer has none), numbered by
    /// its place in the stack, with the sizes and spectra of the library's blocks; the output FIM is one block.
    func testConvolutionalNetworkBlocks() async throws {
        let args = ["fisher", "--arch", "6x6x1-conv2k3-maxpool2-3", "--data", "synthetic:gaussian", "--samples", "3", "--seed", "2", "--json"]
        let (s, out) = await run(args + ["--fisher", "markov", "--sigma2", "0.1"])
        XCTAssertEqual(s, 0)
        let json = try JSONValue.parse(Data(out.utf8), source: "fisher")
        let blocks = try XCTUnwrap(json["blocks"]?.arrayValue)
        XCTAssertEqual(blocks.compactMap { $0["layer"]?.doubleValue }, [1, 3])
        XCTAssertEqual(blocks.compactMap { $0["parameters"]?.doubleValue }, [18, 24])
        let traces = blocks.compactMap { $0["trace"]?.doubleValue }
        XCTAssertEqual(try XCTUnwrap(json["trace"]?.doubleValue), traces.reduce(0, +), accuracy: 1e-9 * traces.reduce(0, +))
        let (s2, out2) = await run(args + ["--fisher", "output"])
        XCTAssertEqual(s2, 0)
        let json2 = try JSONValue.parse(Data(out2.utf8), source: "fisher")
        XCTAssertEqual(json2["blocks"]?.arrayValue?.count, 1)
        XCTAssertEqual(json2["blocks"]?.arrayValue?.first?["parameters"]?.doubleValue, 42)
        let (s3, _) = await run(args + ["--fisher", "markov", "--sigma2", "0.1", "--time-draws", "2"])
        XCTAssertEqual(s3, 0)
    }

    func testBadInput() async throws {
        let good = try weights(#"{"weights": [[[0.5, -1]], [[1], [-1]]]}"#)
        let base = ["fisher", "--arch", "2-1-2", "--data", "csv:\(dir)/X.csv", "--json"]
        var (s, _) = await run(base + ["--weights", good, "--fisher", "markov"])   // no --sigma2
        XCTAssertEqual(s, 2)
        (s, _) = await run(base + ["--weights", good, "--fisher", "markov", "--sigma2", "-1"])
        XCTAssertEqual(s, 2)
        (s, _) = await run(base + ["--weights", good, "--fisher", "fancy"])
        XCTAssertEqual(s, 2)
        (s, _) = await run(base + ["--weights", good, "--fisher", "output", "--activation", "swish"])
        XCTAssertEqual(s, 2)
        (s, _) = await run(base + ["--weights", good, "--fisher", "output", "--noise-samples", "0"])
        XCTAssertEqual(s, 2)
        // A readable weights file for another architecture is a usage error (status 2); an unreadable one, 1.
        let bad = try weights(#"{"weights": [[[0.5, -1, 2]], [[1], [-1]]]}"#)
        (s, _) = await run(base + ["--weights", bad, "--fisher", "output"])
        XCTAssertEqual(s, 2)
        let unreadable = dir + "/unreadable.json"
        try "not json".write(toFile: unreadable, atomically: true, encoding: .utf8)
        (s, _) = await run(base + ["--weights", unreadable, "--fisher", "output"])
        XCTAssertEqual(s, 1)
        _ = try weights(#"{"weights": [[[0.5, -1]], [[1], [-1]]]}"#)  // W.json is `good` again
        let (s2, out) = await run(["fisher", "--arch", "3-1-2", "--weights", good, "--data", "csv:\(dir)/X.csv", "--fisher", "output", "--json"])
        XCTAssertNotEqual(s2, 0)
        XCTAssertEqual(out, "")
    }
}
