import Foundation
@testable import TwoScaleCLI
import TwoScaleCore
@testable import TwoScaleFormats
import XCTest

/// What a researcher meets in their first hour with their own model: the errors they trigger, the
/// defaults that must fit their data, the output that must show what was computed, and the contract
/// a script relies on (docs/COMMANDS.md, "For scripts"). Each case failed on the main before this file.
final class FirstHourTests: ScratchDirectoryTestCase {
    override class var scratchTag: String { "first-hour" }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    func write(_ name: String, _ text: String) throws -> String {
        let path = dir + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func write(_ name: String, bytes: [UInt8]) throws -> String {
        let path = dir + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A command that must fail with `status` and one message containing every part of `expected`.
    func assertFails(_ args: [String], status: Int32, _ expected: [String], file: StaticString = #filePath, line: UInt = #line) async {
        let r = await runCLICapturingErrors(args)
        XCTAssertEqual(r.status, status, "\(args): \(r.err)", file: file, line: line)
        XCTAssertEqual(r.out, "", file: file, line: line)
        XCTAssertTrue(r.err.hasPrefix("twoscale: "), r.err, file: file, line: line)
        for part in expected { XCTAssertTrue(r.err.contains(part), "'\(r.err)' lacks '\(part)'", file: file, line: line) }
    }

    /// A CSV of `rows` inputs with three numeric features.
    func csv(rows: Int, separator: String = ",", header: Bool = false) throws -> String {
        var text = header ? ["a", "b", "c"].joined(separator: separator) + "\n" : ""
        for i in 0..<rows { text += ["\(Double(i) / 10)", "\(sin(Double(i)))", "\(cos(Double(3 * i)))"].joined(separator: separator) + "\n" }
        return try write("x\(rows)\(separator == "\t" ? "tab" : separator).csv", text)
    }

    // MARK: - Errors that say what is wrong

    func testANegativeNumberIsTheFlagsValue() async throws {
        XCTAssertEqual(CommandLineWords.joiningNegativeValues(["ed", "--eps", "-0.1", "--box", "-2:1", "--lower", "--zeta", "0.5"]),
                       ["ed", "--eps=-0.1", "--box=-2:1", "--lower", "--zeta", "0.5"])
        XCTAssertEqual(CommandLineWords.joiningNegativeValues(["x", "--", "--eps", "-1"]), ["x", "--", "--eps", "-1"])
        XCTAssertEqual(CommandLineWords.joiningNegativeValues(["toy", "--eps", "-x"]), ["toy", "--eps", "-x"])
        await assertFails(["ed", "--arch", "3-2-2", "--eps", "-0.1"], status: 2, ["--eps: '-0.1' is not allowed", "(0, 1)"])
        await assertFails(["toy", "--family", "constant", "--lambdas", "4,0.01", "--eps", "0.1", "--zeta", "-0.5"], status: 2,
                          ["--zeta: '-0.5' is not allowed"])
        await assertFails(["bound", "--n", "1000", "--family", "constant", "--lambdas", "1", "--gamma", "-1"], status: 2, ["--gamma"])
        await assertFails(["ed", "--arch", "3-2-2", "--samples", "-5"], status: 2, ["--samples: '-5' is not allowed"])
    }

    func testAnUnknownCommandGetsTheNearestNames() async throws {
        await assertFails(["edd", "--arch", "8-4-3"], status: 2, ["unknown command 'edd'; did you mean 'ed'?", "toy, fisher, ed"])
        await assertFails(["bnd"], status: 2, ["did you mean 'bound'?"])
        await assertFails(["xyzzy"], status: 2, ["unknown command 'xyzzy'. The commands are toy"])
        await assertFails(["tyo"], status: 2, ["did you mean 'toy'?"])
        XCTAssertEqual(CommandLineWords.distance("kitten", "sitting"), 3)
        XCTAssertEqual(CommandLineWords.distance("tyo", "toy"), 1, "a transposition counts once")
        XCTAssertEqual(CommandLineWords.distance("", "ed"), 2)
        XCTAssertEqual(CommandLineWords.distance("ed", "ed"), 0)
        XCTAssertNil(CommandLineWords.unknownCommand(["help", "ed"]))
        XCTAssertNil(CommandLineWords.unknownCommand(["--version"]))
    }

    func testAFolderGivenAsAFileIsNamed() async throws {
        await assertFails(["fisher", "--arch", "3-2-2", "--weights", dir, "--data", "synthetic:gaussian", "--samples", "4", "--sigma2", "0.1"],
                          status: 1, [dir + ": is a folder; give a weights file"])
        await assertFails(["ed", "--arch", "3-2-2", "--data", "csv:" + dir], status: 1, [dir + ": is a folder; give a CSV file"])
        await assertFails(["study", dir], status: 1, [dir + ": is a folder; give a study grid file"])
        for bad in ["NSCocoaErrorDomain", "error 256"] {
            let r = await runCLICapturingErrors(["ed", "--arch", "3-2-2", "--data", "csv:" + dir])
            XCTAssertFalse(r.err.contains(bad), r.err)
        }
    }

    func testAnotherDelimiterIsNamed() async throws {
        for (sep, name) in [(";", "semicolons ';'"), ("\t", "tabs"), ("|", "bars '|'")] {
            for header in [false, true] {
                let path = try csv(rows: 5, separator: sep, header: header)
                await assertFails(["ed", "--arch", "3-2-2", "--data", "csv:" + path], status: 1,
                                  ["fields are separated by \(name), not commas", "tr '"])
            }
        }
        // A comma-separated file with one bad field still names the field.
        let bad = try write("bad.csv", "1,2,3\n4,x,6\n")
        await assertFails(["ed", "--arch", "3-2-2", "--data", "csv:" + bad], status: 1, ["bad.csv:2: 'x' is not a number"])
    }

    func testTorchSaveFilesSayHowToExport() async throws {
        // A torch.save archive: a zip whose members sit under `archive/` with the pickle `data.pkl`.
        let zip = try ZipWriterForTests.stored([("archive/data.pkl", [0x80, 0x02, 0x7D, 0x71, 0x00, 0x2E]),
                                                ("archive/version", Array("3\n".utf8))])
        let archive = try write("model.pt", bytes: zip)
        let pickle = try write("legacy.bin", bytes: [0x80, 0x02, 0x8A, 0x0A, 0x6C, 0xFC, 0x9C, 0x46, 0xF9, 0x20, 0x6A, 0xA8])
        let renamed = try write("model.pth", "{\"weights\": []}")
        for (path, what) in [(archive, "torch.save archive"), (pickle, "torch.save or pickle"), (renamed, "torch.save or pickle")] {
            await assertFails(["fisher", "--arch", "3-2-2", "--weights", path, "--data", "synthetic:gaussian", "--samples", "4",
                               "--sigma2", "0.1"], status: 1, [path, what, "twoscale.save_weights(model.state_dict()", "docs/FORMATS.md"])
        }
    }

    func testEdRefusesWeightsWithTheReason() async throws {
        await assertFails(["ed", "--arch", "3-2-2", "--weights", "model.safetensors"], status: 2,
                          ["--weights", "ed does not take weights", "twoscale fisher --weights FILE"])
    }

    // MARK: - Defaults that fit the data

    func testSamplesDefaultToTheRowsAvailable() async throws {
        let path = try csv(rows: 50)
        let common = ["ed", "--estimator", "plain", "--arch", "3-2-2", "--data", "csv:" + path, "--paths", "4", "--inner", "4", "--eps", "0.1"]
        let out = OutputCapture(), err = OutputCapture()
        let status = await Console.$capture.withValue(out) {
            await Console.$errorCapture.withValue(err) { await TwoScaleMain.execute(common + ["--json"]) }
        }
        XCTAssertEqual(status, 0, err.text)
        XCTAssertTrue(err.text.contains("note: --samples not given: using all 50 inputs of csv:" + path), err.text)
        let json = try JSONValue.parse(Data(out.text.utf8), source: "ed")
        XCTAssertEqual(json["settings"]?["samples"]?.doubleValue, 50)
        // Asked for explicitly, more inputs than the file has is still an error, and at most 100 are taken by default.
        await assertFails(common + ["--samples", "100"], status: 2, ["--samples: '100' is not allowed", "only 50 inputs"])
        let big = try csv(rows: 130)
        let many = try await runJSON(["ed", "--estimator", "plain", "--arch", "3-2-2", "--data", "csv:" + big, "--paths", "4",
                                      "--inner", "4", "--eps", "0.1", "--json"])
        XCTAssertEqual(many["settings"]?["samples"]?.doubleValue, 100)
    }

    // MARK: - Output that shows what it computed

    func testEveryJSONStartsWithTheSchemaAndTheVersion() async throws {
        let lines: [[String]] = [
            ["toy", "--family", "constant", "--lambdas", "4,0.01", "--eps", "0.1"],
            ["fisher", "--arch", "3-2-2", "--data", "synthetic:gaussian", "--samples", "5", "--sigma2", "0.1"],
            ["ed", "--arch", "3-2-2", "--samples", "5", "--eps", "0.1", "--paths", "8", "--inner", "8"],
            ["bound", "--n", "1000", "--family", "constant", "--lambdas", "4,0.01"],
        ]
        for args in lines {
            let json = try await runJSON(args + ["--json"])
            guard case let .object(pairs) = json, pairs.count > 2 else { return XCTFail("\(args): not an object") }
            XCTAssertEqual(pairs[0].0, "schema_version", "\(args)")
            XCTAssertEqual(pairs[0].1, .int(JSONContract.schemaVersion))
            XCTAssertEqual(pairs[1].0, "twoscale_version", "\(args)")
            XCTAssertEqual(pairs[1].1, .string(TwoScaleVersion.string))
        }
        // The contract is stated where scripts look for it.
        let doc = try String(contentsOfFile: Self.root + "/docs/COMMANDS.md", encoding: .utf8)
        XCTAssertTrue(doc.contains("## For scripts"))
        for code in ["`0`", "`1`", "`2`", "`130`", "`schema_version`", "`twoscale_version`"] {
            XCTAssertTrue(doc.contains(code), "docs/COMMANDS.md, For scripts, lacks \(code)")
        }
    }

    func testFisherJSONNamesItsInputs() async throws {
        let weights = try write("w.json", "{\"weights\": [[[0.5, -0.25, 1.0], [0.1, 0.2, -0.3]], [[1.0, -1.0], [0.5, 0.5]]]}")
        let data = try csv(rows: 6)
        let json = try await runJSON(["fisher", "--arch", "3-2-2", "--activation", "tanh", "--weights", weights, "--data", "csv:" + data,
                                      "--sigma2", "0.1", "--json"])
        XCTAssertEqual(json["weights"]?.stringValue, weights)
        XCTAssertEqual(json["data"]?.stringValue, "csv:" + data)
        XCTAssertEqual(json["activation"]?.stringValue, "tanh")
        XCTAssertEqual(json["samples"]?.doubleValue, 6)
        XCTAssertNil(json["box"], "θ came from the file, not from a box")
        let drawn = try await runJSON(["fisher", "--arch", "3-2-2", "--box", "-2:0.5", "--seed", "9", "--data", "csv:" + data,
                                       "--sigma2", "0.1", "--json"])
        XCTAssertEqual(drawn["box"]?.arrayValue?.compactMap(\.doubleValue), [-2, 0.5])
        XCTAssertEqual(drawn["seed"]?.doubleValue, 9)
        XCTAssertNil(drawn["weights"])
    }

    /// The certified bracket of each ε, as the JSON has it, appears in the text output of smc and plain.
    func testTheTextShowsTheBracket() async throws {
        for estimator in ["smc", "plain"] {
            let args = ["ed", "--estimator", estimator, "--arch", "3-2-2", "--samples", "6", "--eps", "0.001,0.1", "--lower",
                        "--paths", "8", "--inner", "8"]
            let text = await runCLI(args).out
            let json = try await runJSON(args + ["--json"])
            XCTAssertTrue(text.contains("certified bracket") && text.contains("bracket lower"), "\(estimator): \(text)")
            // What every interval and bracket is conditional on, said where they are printed.
            XCTAssertTrue(text.contains("conditional on: the N = 6 inputs of synthetic:gaussian (seed 1), 1 noise draw per input"), text)
            XCTAssertTrue(text.contains(estimator == "smc" ? "the estimate's c from 1000 uniform draws" : "the estimate's c from the paths"), text)
            XCTAssertTrue(text.contains("(the bracket holds for the true c: c ∈ ["), text)
            for p in json["points"]?.arrayValue ?? [] {
                guard let b = p["d_zeta_bracket"]?.arrayValue?.compactMap(\.doubleValue), b.count == 2 else {
                    return XCTFail("\(estimator): no bracket in the JSON")
                }
                let cell = NetworkReport.interval(b[0]...b[1])
                XCTAssertTrue(text.contains(cell), "\(estimator): \(cell) not in \(text)")
            }
        }
    }

    func testToyTextShowsJointTemperingAndExplainsALowerAbove() async throws {
        let base = ["toy", "--family", "layered", "--units", "2,2", "--unit-size", "5,5", "--coupling", "0.4", "--eps", "0.001,0.1",
                    "--mc", "--paths", "16", "--inner", "8"]
        let joint = base + ["--joint", "--seed", "1"]
        let text = await runCLI(joint).out
        let json = try await runJSON(joint + ["--json"])
        XCTAssertTrue(text.contains("joint tempering"), text)
        for p in json["points"]?.arrayValue ?? [] {
            guard let j = p["d_zeta_joint_mc"]?.doubleValue else { return XCTFail("no joint value in the JSON") }
            XCTAssertTrue(text.contains(Fmt.num(j)), "\(Fmt.num(j)) not in \(text)")
        }
        let withoutJoint = await runCLI(base + ["--seed", "1"]).out
        XCTAssertFalse(withoutJoint.contains("joint tempering"))
        // Seed 3 puts the estimated lower 2sED above the estimated 2sED at some ε: the text says why that can be.
        for seed in ["1", "3"] {
            let args = base + ["--seed", seed]
            let json = try await runJSON(args + ["--json"])
            let above = (json["points"]?.arrayValue ?? []).contains { p in
                (p["d_zeta_lower_mc"]?.doubleValue ?? -.infinity) > (p["d_zeta_mc"]?.doubleValue ?? .infinity)
            }
            let said = await runCLI(args).out.contains("MC lower is above MC d_zeta")
            XCTAssertEqual(said, above, "seed \(seed)")
            if seed == "3" { XCTAssertTrue(above, "seed 3 was chosen for a lower estimate above the 2sED's") }
        }
    }

    // MARK: - Progress

    func testQuietIsReadFromTheCommand() throws {
        XCTAssertTrue(OutputOptions.quiet(try TwoScaleMain.parseAsRoot(["ed", "--arch", "3-2-2", "--quiet"])))
        XCTAssertFalse(OutputOptions.quiet(try TwoScaleMain.parseAsRoot(["ed", "--arch", "3-2-2"])))
        XCTAssertTrue(OutputOptions.quiet(try TwoScaleMain.parseAsRoot(["bound", "--n", "100", "--quiet"])))
    }

    /// Off a terminal: a plain line (a phase's name, or its loop's progress) at most every `plainEvery` seconds,
    /// the projection of a long loop once, nothing under --quiet.
    func testPhaseProgressOffATerminal() throws {
        func lines(showProgress: Bool, plainEvery: Double, announceAfter: Double) -> [String] {
            let err = OutputCapture()
            Console.$errorCapture.withValue(err) {
                Console.$showProgress.withValue(showProgress) {
                    let p = PhaseProgress(label: "ed", threads: 1, plainEvery: plainEvery, announceAfter: announceAfter)
                    p.phase("stage 1")
                    for i in 1...4 { p.tick(done: i, total: 4) }
                    p.finish()
                }
            }
            return err.text.split(separator: "\n").map(String.init)
        }
        let every = lines(showProgress: true, plainEvery: 0, announceAfter: 1e9)
        XCTAssertEqual(every.count, 5, "\(every)")
        XCTAssertEqual(every[0], "ed: stage 1")
        XCTAssertTrue(every[1].hasPrefix("ed: stage 1: 25% (1/4), ETA"), every[1])
        XCTAssertEqual(every[4], "ed: stage 1: 100% (4/4)")
        let rare = lines(showProgress: true, plainEvery: 1000, announceAfter: 1e9)
        XCTAssertEqual(rare, [])
        let projected = lines(showProgress: true, plainEvery: 1000, announceAfter: -1)
        XCTAssertEqual(projected.count, 1, "\(projected)")
        XCTAssertTrue(projected[0].hasPrefix("ed: stage 1: about ") && projected[0].contains("from its first 1 of 4 items"), projected[0])
        let quiet = lines(showProgress: false, plainEvery: 0, announceAfter: -1)
        XCTAssertEqual(quiet, [])
    }

    /// A loop's projection counts from its start (its `(0, total)` report), not from the work before it in the
    /// phase: 0.3 s of other work and a fast first item of 1 000 project far less than a minute.
    func testProjectionCountsFromTheLoopsStart() throws {
        let err = OutputCapture()
        Console.$errorCapture.withValue(err) {
            Console.$showProgress.withValue(true) {
                let p = PhaseProgress(label: "ed", threads: 1, plainEvery: 1000, announceAfter: 60)
                p.phase("bracket")
                Thread.sleep(forTimeInterval: 0.3)
                p.tick(done: 0, total: 1000)
                p.tick(done: 1, total: 1000)
                p.finish()
            }
        }
        XCTAssertEqual(err.text, "", "no projection of a minute or more")
    }

    /// `PhaseProgress.observing` sees the outermost parallel loop of a real run, item by item.
    func testPhaseProgressSeesTheParallelLoops() async throws {
        let err = OutputCapture()
        let squares = try await Console.$errorCapture.withValue(err) {
            let p = PhaseProgress(label: "t", threads: 2, plainEvery: 0, announceAfter: 1e9)
            return try await p.observing {
                p.phase("squares")
                return try await Parallel.map(6, threads: 2) { i in i * i }
            }
        }
        XCTAssertEqual(squares, [0, 1, 4, 9, 16, 25])
        let got = err.text.split(separator: "\n").map(String.init)
        XCTAssertEqual(got.count, 7, "\(got)")
        XCTAssertEqual(got.first, "t: squares")
        XCTAssertEqual(got.last, "t: squares: 100% (6/6)")
    }

    /// A budget far above the default's says so before anything runs (smc's stage 1 alone grows with K, so
    /// the progress projection would come only after its first items).
    func testABudgetFarAboveTheDefaultIsAnnounced() {
        let d = (paths: 64, inner: 32)
        XCTAssertNil(EdCommand.costNote(paths: 64, inner: 32, defaults: d))
        XCTAssertNil(EdCommand.costNote(paths: 640, inner: 32, defaults: d), "10× is not announced")
        let note = EdCommand.costNote(paths: 1_000_000, inner: 32, defaults: d)
        XCTAssertTrue(note?.hasPrefix("K = 1000000, J = 32 is about 15625× the default budget's particles") ?? false, note ?? "nil")
        XCTAssertTrue(EdCommand.costNote(paths: 64, inner: 3200, defaults: d)?.contains("100×") ?? false, "K·J counts")
    }

    // MARK: - The bound says what limits it

    func testBoundSaysWhatLimitsTheTail() async throws {
        let toy = ["bound", "--family", "constant", "--lambdas", Array(repeating: "1", count: 40).joined(separator: ","),
                   "--n", "1e3,1e6", "--delta", "0.05", "--zeta", "0.7"]
        let r = await runCLICapturingErrors(toy)
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("not reached") && r.out.contains("the tail grows with n") && r.out.contains("needs K >"), r.out)
        XCTAssertFalse(r.out.contains("widen --delta-range"), r.out)
        let json = try await runJSON(toy + ["--json"])
        let needed = try XCTUnwrap(json["tail_limit"]?["needed_k"]?.doubleValue)
        XCTAssertEqual(json["tail_limit"]?["growing"], .bool(true))
        // With K above what the tail needs it falls, and δ is reached.
        let enough = try await runJSON(toy + ["--K", "\(needed * 1.2)", "--json"])
        XCTAssertEqual(enough["tail_limit"]?["growing"], .bool(false))
        XCTAssertNotEqual(enough["n_for_delta"], .null)
    }
}

/// A zip archive of stored (uncompressed) members, for the tests' torch.save stand-ins.
enum ZipWriterForTests {
    static func stored(_ members: [(String, [UInt8])]) throws -> [UInt8] {
        func le(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8((v >> (8 * $0)) & 0xFF) } }
        var out: [UInt8] = [], central: [UInt8] = []
        for (name, data) in members {
            let crc = Int(ZipArchive.crc32(data))
            let offset = out.count
            let nameBytes = Array(name.utf8)
            out += [0x50, 0x4B, 0x03, 0x04] + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(crc, 4) + le(data.count, 4)
                + le(data.count, 4) + le(nameBytes.count, 2) + le(0, 2) + nameBytes + data
            central += [0x50, 0x4B, 0x01, 0x02] + le(20, 2) + le(20, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(crc, 4)
                + le(data.count, 4) + le(data.count, 4) + le(nameBytes.count, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 2)
                + le(0, 4) + le(offset, 4) + nameBytes
        }
        let start = out.count
        out += central
        out += [0x50, 0x4B, 0x05, 0x06] + le(0, 2) + le(0, 2) + le(members.count, 2) + le(members.count, 2)
            + le(central.count, 4) + le(start, 4) + le(0, 2)
        return out
    }
}
