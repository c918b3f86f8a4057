import Foundation
@testable import TwoScaleCLI
import TwoScaleFormats
import XCTest

/// docs/GLOSSARY.md defines, in a sentence or two each, every symbol the outputs print: each entry is a
/// line `- **TERM** — text`, the terms the README and the text outputs use are there, and the README and
/// `help` point to it.
final class GlossaryTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    static func read(_ path: String) throws -> String { try String(contentsOfFile: root + "/" + path, encoding: .utf8) }

    /// TERM → its text, from the entry lines.
    static func entries(_ doc: String) -> [String: String] {
        var out: [String: String] = [:]
        for line in doc.split(separator: "\n") where line.hasPrefix("- **") {
            let rest = line.dropFirst(4)
            guard let end = rest.range(of: "** — ") else { continue }
            out[String(rest[..<end.lowerBound])] = String(rest[end.upperBound...])
        }
        return out
    }

    func testEveryLineIsAHeadingOrAnEntry() throws {
        let doc = try Self.read("docs/GLOSSARY.md")
        let lines = doc.split(separator: "\n", omittingEmptySubsequences: true)
        let prose = lines.filter { !$0.hasPrefix("#") && !$0.hasPrefix("- **") }
        XCTAssertEqual(prose.count, 1, "one introductory paragraph, then entries: \(prose.dropFirst().prefix(3))")
        for line in lines where line.hasPrefix("- **") {
            XCTAssertNotNil(line.range(of: "** — "), "not an entry: \(line.prefix(60))")
        }
    }

    func testTheTermsTheOutputsAndTheREADMEUseAreDefined() throws {
        let entries = Self.entries(try Self.read("docs/GLOSSARY.md"))
        let terms = Set(entries.keys)
        for term in ["2sED", "d_ζ (d_zeta)", "lower 2sED (d_zeta_lower)", "nested", "joint", "ζ (zeta)", "ε (eps)", "box (--box)",
                     "smc", "plain", "joint tempering", "tempering", "islands", "Markov FIM (markov)", "output FIM (output)",
                     "ESS (outer ESS)", "K", "J", "N", "R", "σ² (sigma2)", "ε_n (eps_n)", "γ", "log_tail", "δ", "d", "r", "ĉ",
                     "certified bracket (d_zeta_bracket)", "interval_source", "bias (--bias)", "Why the 2sED can exceed d",
                     "lower 2sED above the 2sED", "what limits the tail (tail_limit)", "schema_version, twoscale_version"] {
            XCTAssertTrue(terms.contains(term), "docs/GLOSSARY.md has no entry **\(term)**")
        }
        // K is defined in every place it appears: paths, and the theorem's constant.
        let k = entries["K"] ?? ""
        XCTAssertTrue(k.contains("--paths") && k.contains("--K") && k.contains("constant"), k)
        XCTAssertTrue((entries["bias (--bias)"] ?? "").contains("nn.Linear"))
    }

    /// Every column of the text tables that `ed`, `toy`, `fisher` and `bound` print is named in the glossary.
    func testEveryColumnTheTablesPrintIsNamed() async throws {
        let doc = try Self.read("docs/GLOSSARY.md").lowercased()
        let lines: [[String]] = [
            ["ed", "--arch", "3-2-2", "--samples", "6", "--eps", "0.001,0.1", "--lower", "--paths", "8", "--inner", "8"],
            ["ed", "--estimator", "plain", "--arch", "3-2-2", "--samples", "6", "--eps", "0.1", "--lower", "--paths", "8", "--inner", "8"],
            ["fisher", "--arch", "3-2-2", "--data", "synthetic:gaussian", "--samples", "5", "--sigma2", "0.1"],
            ["bound", "--n", "1000", "--family", "constant", "--lambdas", "4,0.01"],
        ]
        for args in lines {
            let text = await runCLI(args).out
            let rows = text.split(separator: "\n").map(String.init)
            // A table's header is the line above its dashes.
            for (i, row) in rows.enumerated() where i > 0 && row.hasPrefix("--") && row.allSatisfy({ $0 == "-" || $0 == " " }) {
                let cells = rows[i - 1].components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                for cell in cells {
                    XCTAssertTrue(doc.contains(cell.lowercased()), "\(args[0]): column '\(cell)' is not in docs/GLOSSARY.md")
                }
            }
        }
    }

    func testTheREADMEAndHelpPointToIt() throws {
        XCTAssertTrue(try Self.read("README.md").contains("docs/GLOSSARY.md"))
        XCTAssertTrue(TwoScaleMain.helpMessage().contains("docs/GLOSSARY.md"))
        XCTAssertTrue(TwoScaleMain.helpMessage(for: EdCommand.self).contains("docs/GLOSSARY.md"))
    }
}
