import Foundation
import XCTest

/// docs/METHOD.md's map from sections to code and tests names files that exist: a file moved to another
/// module, or a test moved to another target, fails here until the map says where it went.
final class CodeMapTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The backticked names of a cell: `Module/File.swift` sets the module that later bare `File.swift`
    /// names are in (and `Target/TestName` the test target of later bare test names).
    static func names(_ cell: Substring) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    func testEveryFileAndTestTheMapNamesExists() throws {
        let doc = try String(contentsOfFile: Self.root + "/docs/METHOD.md", encoding: .utf8)
        guard let start = doc.range(of: "| § | code | tests |") else { return XCTFail("METHOD.md has no code map") }
        let rows = doc[start.upperBound...].split(separator: "\n").dropFirst().prefix { $0.hasPrefix("|") }
        XCTAssertGreaterThan(rows.count, 10)
        let fm = FileManager.default
        var checked = 0
        for row in rows {
            let cells = row.split(separator: "|", omittingEmptySubsequences: false)
            guard cells.count >= 4 else { continue }
            var module: String?
            for name in Self.names(cells[2]) where name.hasSuffix(".swift") {
                let parts = name.split(separator: "/")
                if parts.count == 2 { module = String(parts[0]) }
                guard let m = module else { XCTFail("\(name): no module before it in \(row)"); continue }
                let path = "\(Self.root)/Sources/\(m)/\(parts.last!)"
                XCTAssertTrue(fm.fileExists(atPath: path), "METHOD.md's code map: Sources/\(m)/\(parts.last!) does not exist")
                checked += 1
            }
            var target: String?
            for name in Self.names(cells[3]) where name.hasSuffix("Tests") || name.contains("Tests/") {
                let parts = name.split(separator: "/")
                if parts.count == 2 { target = String(parts[0]) }
                guard let t = target, parts.last!.hasSuffix("Tests") else { continue }
                let path = "\(Self.root)/Tests/\(t)/\(parts.last!).swift"
                XCTAssertTrue(fm.fileExists(atPath: path), "METHOD.md's code map: Tests/\(t)/\(parts.last!).swift does not exist")
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 40)
    }

    /// Every module README and docs/ARCHITECTURE.md name, in backticks, only things that exist: a
    /// capitalised name is a module, a test, a Foundation or Swift type, or declared in Sources (a
    /// type, a case, a member). A file's extensions are named as the file (MarkovUnits.swift), not as a type.
    func testReadmesNameDeclaredThings() throws {
        let fm = FileManager.default
        let sources = Self.root + "/Sources"
        let modules = try fm.contentsOfDirectory(atPath: sources).filter { !$0.hasPrefix(".") }
        var code = ""
        var docs: [(String, String)] = [("docs/ARCHITECTURE.md", try String(contentsOfFile: Self.root + "/docs/ARCHITECTURE.md", encoding: .utf8))]
        for m in modules {
            let dir = sources + "/" + m
            for f in (fm.enumerator(atPath: dir)?.allObjects as? [String]) ?? [] {
                if f.hasSuffix(".swift") || f.hasSuffix(".h") || f.hasSuffix(".c") {
                    code += try String(contentsOfFile: dir + "/" + f, encoding: .utf8) + "\n"
                } else if f == "README.md" {
                    docs.append(("Sources/\(m)/README.md", try String(contentsOfFile: dir + "/" + f, encoding: .utf8)))
                }
            }
        }
        let external: Set<String> = ["Codable", "Encodable", "Decodable", "JSONEncoder", "JSONDecoder", "Sendable", "Double", "Int",
                                     "UInt64", "String", "Data", "URL", "FileManager", "Equatable", "Hashable", "Error", "XCTest",
                                     "AsyncParsableCommand", "ParsableCommand"]
        let testFiles = fm.enumerator(atPath: Self.root + "/Tests")?.allObjects as? [String] ?? []
        let tests = Set(testFiles.filter { $0.hasSuffix(".swift") }.map { String($0.split(separator: "/").last!.dropLast(6)) })
            .union(testFiles.filter { !$0.contains("/") })  // the test targets
        let declared = try NSRegularExpression(pattern: "(?:struct|enum|class|protocol|actor|typealias|case|func|var|let|extension)\\s+([A-Za-z_][A-Za-z0-9_]*)")
        var names = Set<String>()
        for m in declared.matches(in: code, range: NSRange(code.startIndex..., in: code)) {
            names.insert(String(code[Range(m.range(at: 1), in: code)!]))
        }
        // `case a, b, c` declares several names.
        let cases = try NSRegularExpression(pattern: "case\\s+([A-Za-z_][A-Za-z0-9_]*(?:\\s*,\\s*[A-Za-z_][A-Za-z0-9_]*)+)")
        for m in cases.matches(in: code, range: NSRange(code.startIndex..., in: code)) {
            for n in code[Range(m.range(at: 1), in: code)!].split(separator: ",") { names.insert(n.trimmingCharacters(in: .whitespaces)) }
        }
        let identifier = try NSRegularExpression(pattern: "^[A-Z][A-Za-z0-9]*$")
        var checked = 0
        for (file, text) in docs {
            for name in Self.names(Substring(text)) {
                guard identifier.firstMatch(in: name, range: NSRange(name.startIndex..., in: name)) != nil else { continue }
                checked += 1
                XCTAssertTrue(modules.contains(name) || tests.contains(name) || external.contains(name) || names.contains(name),
                              "\(file) names `\(name)`, which is neither a module, a test nor declared in Sources")
            }
        }
        XCTAssertGreaterThan(checked, 100)
    }
}
