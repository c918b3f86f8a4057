import Foundation
import PropertyBased
import Testing
@testable import TwoScaleCLI
import TwoScaleCore

/// The command line's grid syntax (`--eps`, `--n`, `--box`, lists): values, lists, log grids and intervals,
/// with errors that name the flag; thousands of generated inputs never trap.
@Suite struct GridTests {
    /// The usage error a parse throws, as its message (empty when it does not throw one).
    static func message(_ body: () throws -> Void) -> String {
        do { try body(); return "" } catch let e as TwoScaleError { return e.kind == .usage ? e.message : "" } catch { return "" }
    }

    static let gridAlphabet = Gen.oneOf(Gen.character(in: "0"..."9"), Gen.element(of: Array(":,.-+eE x")).compactMap { $0 })

    @Test func parsesValuesListsAndLogGrids() throws {
        #expect(try Grid.parse("0.1", flag: "--eps") == [0.1])
        #expect(try Grid.parse("0.01, 0.05,0.1", flag: "--eps") == [0.01, 0.05, 0.1])
        let g = try Grid.parse("1e-4:0.5:40", flag: "--eps")
        #expect(g.count == 40 && g.first == 1e-4 && g.last == 0.5)
        for (a, b) in zip(g, g.dropFirst()) { #expect(abs(log(b / a) - log(0.5 / 1e-4) / 39) < 1e-12) }
        #expect(try Grid.parse("1e3:1e6:4", flag: "--n").map { $0.rounded() } == [1e3, 1e4, 1e5, 1e6])
    }

    @Test func rejectsMalformedGrids() throws {
        for bad in ["", "a", "0.1,,0.2", "1:2", "2:1:5", "0:1:5", "1e-3:0.5:1", "1e-3:0.5:x", "nan", "1,inf",
                    "1e-3:0.5:-inf", "1e-3:0.5:inf", "1e-3:0.5:nan", "1e-3:0.5:-1e300", "1e-3:0.5:1e300", "1e-3:0.5:-3"] {
            #expect(throws: TwoScaleError.self, "\(bad)") { try Grid.parse(bad, flag: "--eps") }
        }
        #expect(throws: TwoScaleError.self) { try Grid.parseInterval("1:0", flag: "--box") }
        #expect(throws: TwoScaleError.self) { try Grid.parseInterval("1", flag: "--box") }
        #expect(try Grid.parseInterval("-1:1", flag: "--box") == (-1, 1))
    }

    @Test func errorsNameTheFlag() {
        do {
            _ = try Grid.parse("1e-3:oops:3", flag: "--eps")
            Issue.record("no error")
        } catch let e as TwoScaleError {
            #expect(e.message.hasPrefix("--eps:"))
            #expect(e.kind == .usage)
        } catch { Issue.record("wrong error \(error)") }
    }

    @Test func sampleSizeGrids() throws {
        let g = try SampleSizeGrid.parse("1e3:1e6:20")
        #expect(g.count == 20)
        #expect(g.first == 1000)
        #expect(g.last == 1_000_000)
        #expect(g == g.sorted())
        #expect(try SampleSizeGrid.parse("2:4:30") == [2, 3, 4])  // rounded, duplicates removed
        #expect(try SampleSizeGrid.parse("100,10,100") == [100, 10])
        #expect(Self.message { _ = try SampleSizeGrid.parse("1") }.hasPrefix("--n: "))
        #expect(Self.message { _ = try SampleSizeGrid.parse("1000.5") }.contains("whole number"))
        #expect(Self.message { _ = try SampleSizeGrid.parse("abc") }.hasPrefix("--n: "))
    }

    @Test func gridParserNeverTraps() async {
        await propertyCheck(count: 3000, input: Self.gridAlphabet.string(of: 0...16)) { text in
            do {
                let g = try Grid.parse(text, flag: "--eps")
                #expect(!g.isEmpty && g.allSatisfy(\.isFinite))
            } catch let e as TwoScaleError {
                #expect(e.message.hasPrefix("--eps"))
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
    }
}
