import Foundation
import PropertyBased
import Testing
@testable import Reporting
import TwoScaleCore

/// Random notebooks assembled from the parser's building blocks (fences, directives, commands, quotes,
/// prose): each parses or fails with a message naming the file and a line inside it; never traps.
@Suite struct NotebookFuzzTests {
    static let lines = [
        "# Title", "prose line", "", "```twoscale", "```", "````", "~~~", "```twoscale plot x=eps y=d_zeta", "```twoscale plot",
        "```twoscale plot x=eps y=d_zeta logx logy title=\"a b\" file=f", "```twoscale bogus=1", "```python",
        "twoscale toy --family constant --lambdas 4 --eps 0.1", "twoscale toy --lambdas \"4", "twoscale notebook x.txt",
        "ls -la", "# comment in a block", "twoscale ed --arch 3-4-3 \\", "  --paths 2", "twoscale 'quoted arg'",
        "   ```", "    ```twoscale", "twoscale toy --eps 'a b' \"c\\\" d\"",
    ]

    @Test func parserNeverTraps() async {
        await propertyCheck(count: 4000, input: Gen.element(of: Self.lines).compactMap { $0 }.array(of: 0...14)) { ls in
            let text = ls.joined(separator: "\n")
            do {
                let nb = try Notebook.parse(text, source: "nb.txt", name: "nb")
                #expect(nb.name == "nb")
            } catch let e as TwoScaleError {
                #expect(e.message.hasPrefix("nb.txt"), "\(e.message)")
                // A line number, when given, is inside the file.
                let rest = e.message.dropFirst("nb.txt".count)
                if rest.hasPrefix(":"), let n = Int(rest.dropFirst().prefix { $0.isNumber }) {
                    #expect(n >= 1 && n <= Swift.max(1, ls.count), "line \(n) of \(ls.count): \(e.message)")
                }
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    @Test func shellWordsNeverTrap() async {
        let alphabet = Gen.element(of: Array("ab -\"'\\ \t=|;$")).compactMap { $0 }
        await propertyCheck(count: 3000, input: alphabet.string(of: 0...24), Gen.bool) { text, forbid in
            do {
                let words = try ShellWords.split(text, forbidOperators: forbid)
                // Unquoted words never contain whitespace.
                #expect(words.count <= text.count)
            } catch let p as ShellWords.Problem {
                #expect(p.offset >= 0 && p.offset <= text.count, "offset \(p.offset) in \(text.count) chars")
                #expect(!p.message.isEmpty)
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }
}
