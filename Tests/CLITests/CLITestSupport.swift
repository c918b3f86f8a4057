import Foundation
import TwoScaleCLI
import TwoScaleCore
import TwoScaleFormats
import XCTest

/// Runs `twoscale ARGS` in-process; returns the exit status and captured stdout.
func runCLI(_ args: [String]) async -> (status: Int32, out: String) {
    let cap = OutputCapture()
    let status = await Console.$capture.withValue(cap) {
        await Console.$quiet.withValue(true) { await TwoScaleMain.execute(args) }
    }
    return (status, cap.text)
}

/// Runs with `--json` expected in `args` and parses the output.
func runJSON(_ args: [String]) async throws -> JSONValue {
    let (status, out) = await runCLI(args)
    guard status == 0 else { throw TwoScaleError.failure("exit \(status) for \(args)") }
    return try JSONValue.parse(Data(out.utf8), source: "stdout")
}

/// Runs `twoscale ARGS` in-process with stdout and stderr both captured.
func runCLICapturingErrors(_ args: [String]) async -> (status: Int32, out: String, err: String) {
    let out = OutputCapture(), err = OutputCapture()
    let status = await Console.$capture.withValue(out) {
        await Console.$errorCapture.withValue(err) {
            await Console.$quiet.withValue(true) { await TwoScaleMain.execute(args) }
        }
    }
    return (status, out.text, err.text)
}

/// The JSON of a command without its timing keys (`seconds`, `samples_per_second`, …): the bytes that
/// must be identical between runs with the same seed.
/// The ε → 0 limit's keys that depend on the generic Fisher rank, which `ed` computes from its Markov
/// model and `analyze` (spectra only) cannot: `analyze` reports the draws' rank as a lower bound.
let genericRankKeys: Set<String> = ["d_zeta_limit", "d_zeta_limit_kind", "rank_generic", "rank_witness", "rank_proved",
                                    "rank_generic_blocks"]

/// A result's JSON without the generic-rank keys (top level), for comparing `ed` with `analyze`.
func withoutGenericRank(_ v: JSONValue) -> JSONValue {
    guard case let .object(kv) = v else { return v }
    return .object(kv.filter { !genericRankKeys.contains($0.0) })
}

func withoutTimingKeys(_ v: JSONValue) -> JSONValue {
    let timing: Set<String> = ["seconds", "training_seconds", "setup_seconds", "spectra_seconds", "estimator_seconds", "samples_per_second"]
    switch v {
    case let .object(kv): return .object(kv.filter { !timing.contains($0.0) }.map { ($0.0, withoutTimingKeys($0.1)) })
    case let .array(a): return .array(a.map(withoutTimingKeys))
    default: return v
    }
}

/// An XCTest case with a fresh scratch folder `dir` for each test, removed after it.
class ScratchDirectoryTestCase: XCTestCase {
    var dir = ""

    /// The tag in the folder's name (`twoscale-TAG-UUID`), so a leftover folder names its test class.
    class var scratchTag: String { "cli" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        dir = NSTemporaryDirectory() + "twoscale-\(Self.scratchTag)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: dir)
        try super.tearDownWithError()
    }

    /// Every file under `d` (relative path → bytes).
    func files(_ d: String) -> [String: Data] {
        var out: [String: Data] = [:]
        for rel in (FileManager.default.enumerator(atPath: d)?.allObjects as? [String]) ?? [] {
            var isDir: ObjCBool = false
            if FileManager.default.fileExists(atPath: d + "/" + rel, isDirectory: &isDir), !isDir.boolValue {
                out[rel] = FileManager.default.contents(atPath: d + "/" + rel)
            }
        }
        return out
    }
}

/// A child process's stdout and stderr, captured in two files of a scratch folder (files, not pipes, so a
/// chatty child never blocks on a full pipe). `attach` before `run()`; `collect` after the exit.
struct CapturedOutput {
    let outURL: URL, errURL: URL
    let outH: FileHandle, errH: FileHandle

    init(attachingTo p: Process, in dir: String) throws {
        outURL = URL(fileURLWithPath: dir + "/.stdout-\(UUID().uuidString)")
        errURL = URL(fileURLWithPath: dir + "/.stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        outH = try FileHandle(forWritingTo: outURL)
        errH = try FileHandle(forWritingTo: errURL)
        p.standardOutput = outH
        p.standardError = errH
    }

    /// Closes the files, reads them and removes them.
    func collect() throws -> (out: String, err: String) {
        try outH.close(); try errH.close()
        let out = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: outURL)
        try? FileManager.default.removeItem(at: errURL)
        return (out, err)
    }
}
