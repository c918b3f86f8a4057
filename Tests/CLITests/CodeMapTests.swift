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
}
