import Foundation
import Testing
import TwoScaleCore
@testable import TwoScaleFormats

@Suite struct JSONTests {
    @Test func deterministicOrderedOutput() throws {
        let v = JSONValue.object([("b", .int(1)), ("a", .numbers([0.1, 2, 1e-7])), ("s", .string("x\"y\n"))])
        let text = try v.serialized()
        #expect(text == "{\n  \"b\": 1,\n  \"a\": [0.1, 2, 1e-07],\n  \"s\": \"x\\\"y\\n\"\n}\n")
        #expect(try JSONValue.parse(Data(text.utf8), source: "t") == v)
    }

    @Test func refusesNonFinite() {
        #expect(throws: TwoScaleError.self) { try JSONValue.double(.nan).serialized() }
        #expect(throws: TwoScaleError.self) { try JSONValue.array([.double(.infinity)]).serialized() }
    }

    @Test func parserReportsLine() {
        do {
            _ = try JSONValue.parse(Data("{\n\"a\": [1,\n 2,,]\n}".utf8), source: "w.json")
            Issue.record("no error")
        } catch let e as TwoScaleError {
            #expect(e.message.hasPrefix("w.json:3"))
        } catch { Issue.record("\(error)") }
    }
}
