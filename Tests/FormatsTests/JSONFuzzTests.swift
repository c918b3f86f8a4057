import Foundation
import PropertyBased
import Testing
@testable import TwoScaleCore
@testable import TwoScaleFormats

/// Thousands of generated inputs for the JSON parser: each returns finite values or throws a `TwoScaleError`
/// (never traps, never returns NaN).
@Suite struct JSONFuzzTests {
    @Test func jsonParserNeverTraps() async {
        let alphabet = Gen.element(of: Array("{}[]\",:0123456789.eE-truefalsn \n\\u")).compactMap { $0 }
        await propertyCheck(count: 3000, input: alphabet.string(of: 0...24)) { text in
            do {
                let v = try JSONValue.parse(Data(text.utf8), source: "fuzz.json")
                _ = try v.serialized()  // whatever parsed must serialise
            } catch let e as TwoScaleError {
                #expect(e.message.hasPrefix("fuzz.json"))
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
    }

    @Test func jsonRoundTripOfGeneratedValues() async {
        await propertyCheck(count: 1000, input: Gen.double(in: -1e300...1e300).array(of: 0...8), Gen.int(in: -1_000_000...1_000_000)) { xs, i in
            let v = JSONValue.object([("xs", .numbers(xs)), ("i", .int(i)), ("nested", .array([.object([("k", .string("v\u{1}"))])]))])
            let back = try! JSONValue.parse(Data(try! v.serialized().utf8), source: "rt")
            #expect(back == v)
        }
    }
}
