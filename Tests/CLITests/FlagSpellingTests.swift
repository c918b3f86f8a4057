import Foundation
@testable import TwoScaleCLI
import TwoScaleCore
import XCTest

/// Flag spellings live in the command line: the libraries name `Setting`s, whose markers the console spells
/// as flags (`FlagSpelling`). No library file spells a flag of twoscale's, comments and READMEs included;
/// every setting has a flag that a command takes; what a command prints holds no marker.
final class FlagSpellingTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Other programs' flags that library code must spell to talk to them: sbatch's `--array`, srun's
    /// `--mpi=`, mpirun's `--oversubscribe`, git's `--short`.
    static let otherPrograms = ["--array", "--mpi", "--oversubscribe", "--short"]

    func testNoLibraryFileSpellsAFlag() throws {
        let fm = FileManager.default
        let sources = Self.root + "/Sources"
        var found: [String] = []
        var files = 0
        for module in try fm.contentsOfDirectory(atPath: sources).sorted() where module != "TwoScaleCLI" && module != "twoscale" {
            guard let e = fm.enumerator(atPath: sources + "/" + module) else { continue }
            for case let file as String in e where file.hasSuffix(".swift") || file.hasSuffix(".md") {
                files += 1
                let text = try String(contentsOfFile: "\(sources)/\(module)/\(file)", encoding: .utf8)
                for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    var rest = Substring(line)
                    while let r = rest.range(of: #"--([A-Za-z][A-Za-z0-9-]*|\\\()"#, options: .regularExpression) {
                        let flag = String(rest[r])
                        if !Self.otherPrograms.contains(where: { flag == $0 }) { found.append("\(module)/\(file):\(n + 1): \(flag)") }
                        rest = rest[r.upperBound...]
                    }
                }
            }
        }
        XCTAssertGreaterThan(files, 150)
        XCTAssertEqual(found, [], "flag spellings outside the command line (name a Setting instead)")
    }

    /// Every setting is in `Setting.all` once, has a flag, and that flag is one a command takes
    /// (docs/FLAGS.md lists them all; FlagReferenceTests keeps it current).
    func testEverySettingHasACommandsFlag() throws {
        let declared = try String(contentsOfFile: Self.root + "/Sources/TwoScaleCore/Setting.swift", encoding: .utf8)
            .components(separatedBy: "public static let ").dropFirst().filter { $0.contains("= Setting(\"") }.count
        XCTAssertEqual(declared, Setting.all.count, "a Setting declared but not in Setting.all")
        XCTAssertEqual(Set(Setting.all).count, Setting.all.count)
        let flagsDoc = try String(contentsOfFile: Self.root + "/docs/FLAGS.md", encoding: .utf8)
        for s in Setting.all {
            let flag = try XCTUnwrap(FlagSpelling.flags[s], "\(s.name) has no flag")
            XCTAssertTrue(flagsDoc.contains("`\(flag)`"), "\(s.name) → \(flag), which no command takes")
        }
    }

    func testMarkersRenderAsFlagsOrNames() {
        let text = "use a smaller \(Setting.box), or raise \(Setting.islandSweeps) (\(Setting.learningRate))"
        XCTAssertFalse(text.contains("--"))
        XCTAssertEqual(FlagSpelling.render(text), "use a smaller --box, or raise --island-sweeps (--lr)")
        XCTAssertEqual(Setting.plain(text), "use a smaller box, or raise islandSweeps (learningRate)")
        XCTAssertEqual(FlagSpelling.render("no markers"), "no markers")
        // An unknown or unclosed marker is kept as it is.
        XCTAssertEqual(Setting.plain("a \u{27EA}nothing\u{27EB} b \u{27EA}box"), "a \u{27EA}nothing\u{27EB} b \u{27EA}box")
        let e = TwoScaleError.invalid("\(Setting.paths)", "3", allowed: "K from 4")
        XCTAssertEqual(FlagSpelling.render(e.message), "--paths: '3' is not allowed; K from 4")
        XCTAssertEqual(e.renaming("\(Setting.paths)", to: "--archs").message, "--archs: '3' is not allowed; K from 4")
    }

    /// Library errors and notes reach the user with flags, in text and JSON, and never with a marker.
    func testCommandsPrintFlagsNotMarkers() async throws {
        let lines: [([String], String)] = [
            (["toy", "--family", "layered", "--coupling", "1e9"], "--coupling: '1000000000.0' is not allowed"),
            (["ed", "--arch", "8-4-3", "--samples", "5", "--paths", "1"], "--paths: '1' is not allowed"),
            (["train", "--arch", "8-4-3", "--data", "synthetic:teacher:8-4-3", "--samples", "10", "--lr", "0"], "--lr: '0.0' is not allowed"),
            (["gap", "--teacher", "8-4-3", "--student", "8-4-3", "--n", "50", "--adversarial", "2", "--adversarial-step", "2"],
             "--adversarial-step: '2.0' is not allowed"),
            (["gap", "--teacher", "8-4-3", "--student", "8-4-3", "--n", "50", "--trials", "1", "--epochs", "1", "--json"],
             "within its noise (raise --population)"),
        ]
        for (line, expected) in lines {
            let r = await runCLICapturingErrors(line)
            let all = r.out + r.err
            XCTAssertTrue(all.contains(expected), "\(line.joined(separator: " ")): \(all)")
            XCTAssertFalse(all.contains("\u{27EA}") || all.contains("\u{27EB}"), "a marker printed: \(all)")
        }
    }
}
