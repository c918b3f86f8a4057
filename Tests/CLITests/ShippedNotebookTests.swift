import Foundation
import NetworkEstimators
import Reporting
@testable import TwoScaleCLI
import XCTest

/// The notebooks in notebooks-txt/ (the quick main job of scripts/setup.sh and those scripts/reproduce.sh
/// renders) parse, and every command in them is accepted by the command line, so a renamed or removed
/// flag fails here instead of half an hour into a reproduction.
final class ShippedNotebookTests: XCTestCase {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let folder = root.appendingPathComponent("notebooks-txt")

    /// The estimators `--estimator` names (the executable installs them at start), so the test holds alone.
    override func setUp() {
        super.setUp()
        ShippedEstimators.install()
    }

    func testDefaultListNamesShippedNotebooks() throws {
        let list = try String(contentsOf: Self.folder.appendingPathComponent("DEFAULT"), encoding: .utf8)
        let names = list.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        XCTAssertFalse(names.isEmpty)
        for n in names + ["brackets.txt", "intervals.txt", "quick.txt"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: Self.folder.appendingPathComponent(n).path),
                          "notebooks-txt/\(n) is missing")
        }
    }

    func testEveryShippedNotebookParsesAndItsCommandsAreAccepted() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.hasSuffix(".txt") }.sorted()
        XCTAssertTrue(files.contains("quick.txt"))
        for f in files {
            let notebook = try Notebook.load(path: Self.folder.appendingPathComponent(f).path)
            XCTAssertFalse(notebook.blocks.isEmpty, "\(f): no twoscale blocks")
            for block in notebook.blocks {
                for command in block.commands {
                    XCTAssertNoThrow(try TwoScaleMain.parseAsRoot(command.jsonArguments(flag: "--json")),
                                     "notebooks-txt/\(f):\(command.line): twoscale \(command.arguments.joined(separator: " "))")
                }
            }
        }
    }
}
