import Foundation
import TwoScaleCore
import TwoScaleFormats
import XCTest

final class JSONTreeEncoderTests: XCTestCase {
    enum Kind: String, Encodable { case markov, output }

    struct Inner: Encodable, Equatable {
        var layer: Int
        var rankMean: Double
    }

    struct Result: Encodable {
        var zeta = 0.6667
        var dZetaJoint = 921.25
        var ci95Lower: ClosedRange<Double>? = 1.5...2.5
        var missing: Double? = nil
        @NullIfNil var coveringConstant: Double? = nil
        @NullIfNil var present: Double? = 3
        var kind = Kind.output
        var seed: UInt64 = 7
        var flag = true
        var name = "a \"b\"\n"
        var blocks = [Inner(layer: 1, rankMean: 2.5), Inner(layer: 2, rankMean: 0)]
        var values: [Double] = [1e-300, 0.1, 100]
        var nested: [[Int]] = [[1, 2], []]
        var explicit: [String: Int] = ["noise-samples": 1]
    }

    /// Keys in declaration order, snake case, nil optionals left out, @NullIfNil as null.
    func testTreeMatchesHandBuiltValue() throws {
        let v = try JSONValue(encoding: Result())
        let expected = JSONValue.object([
            ("zeta", .double(0.6667)), ("d_zeta_joint", .double(921.25)), ("ci95_lower", .numbers([1.5, 2.5])),
            ("covering_constant", .null), ("present", .double(3)), ("kind", .string("output")), ("seed", .int(7)),
            ("flag", .bool(true)), ("name", .string("a \"b\"\n")),
            ("blocks", .array([.object([("layer", .int(1)), ("rank_mean", .double(2.5))]),
                               .object([("layer", .int(2)), ("rank_mean", .double(0))])])),
            ("values", .numbers([1e-300, 0.1, 100])),
            ("nested", .array([.array([.int(1), .int(2)]), .array([])])),
            ("explicit", .object([("noise-samples", .int(1))])),
        ])
        XCTAssertEqual(v, expected)
        let keys = try XCTUnwrap({ if case let .object(kv) = v { return kv.map(\.0) } else { return nil } }())
        XCTAssertEqual(keys, ["zeta", "d_zeta_joint", "ci95_lower", "covering_constant", "present", "kind", "seed", "flag",
                              "name", "blocks", "values", "nested", "explicit"])
    }

    /// The same content as Foundation's JSONEncoder with .convertToSnakeCase (which orders keys its own
    /// way and writes no null for an absent optional): an independent check of the tree encoder.
    func testSameContentAsFoundationEncoder() throws {
        let ours = try JSONValue(encoding: Result()).serialized()
        let e = JSONEncoder()
        e.keyEncodingStrategy = .convertToSnakeCase
        let theirs = try e.encode(Result())
        let a = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(ours.utf8)) as? NSDictionary)
        let b = try XCTUnwrap(JSONSerialization.jsonObject(with: theirs) as? NSDictionary)
        XCTAssertEqual(a, b)
    }

    func testSnakeCase() {
        XCTAssertEqual(JSONValue.snakeCase("dZetaJoint"), "d_zeta_joint")
        XCTAssertEqual(JSONValue.snakeCase("ci95Lower"), "ci95_lower")
        XCTAssertEqual(JSONValue.snakeCase("logEpsPowMinusDZeta"), "log_eps_pow_minus_d_zeta")
        XCTAssertEqual(JSONValue.snakeCase("URLPath"), "url_path")
        XCTAssertEqual(JSONValue.snakeCase("essMin"), "ess_min")
        XCTAssertEqual(JSONValue.snakeCase("noise-samples"), "noise-samples")
        XCTAssertEqual(JSONValue.snakeCase("d_zeta"), "d_zeta")
        XCTAssertEqual(JSONValue.snakeCase("eps"), "eps")
        XCTAssertEqual(JSONValue.snakeCase("C"), "C", "a constant's name stays")
        XCTAssertEqual(JSONValue.snakeCase("log10Tail"), "log10_tail")
    }

    /// Small integer types are scalars, a dictionary's keys are data (sorted, not case-converted), and a
    /// whole number beyond Int (a seed of 2⁶³ or more) is written to the digit, not rounded, and read back.
    func testIntegerTypesDictionariesAndOverflow() throws {
        struct Small: Encodable {
            var a: Int8 = -3
            var b: UInt16 = 7
            var byName: [String: Int] = ["ResNet": 2, "MLP": 1, "cnnSmall": 3]
            var values = (0..<100_000).map(Double.init)
        }
        let v = try JSONValue(encoding: Small())
        XCTAssertEqual(v["a"], .int(-3))
        XCTAssertEqual(v["b"], .int(7))
        XCTAssertEqual(v["by_name"], .object([("MLP", .int(1)), ("ResNet", .int(2)), ("cnnSmall", .int(3))]))
        XCTAssertEqual(v["values"]?.arrayValue?.count, 100_000)
        XCTAssertEqual(v["values"]?.arrayValue?.last, .double(99_999))
        struct Big: Encodable { var seed = UInt64.max; var just = UInt64(Int.max) + 1; var fits = UInt64(Int.max) }
        let big = try JSONValue(encoding: Big())
        XCTAssertEqual(big["seed"], .uint(18_446_744_073_709_551_615))
        XCTAssertEqual(big["just"], .uint(9_223_372_036_854_775_808))
        XCTAssertEqual(big["fits"], .int(Int.max), "a whole number that fits Int stays .int")
        let text = try big.serialized()
        XCTAssertTrue(text.contains("\"seed\": 18446744073709551615,"), text)
        XCTAssertTrue(text.contains("\"just\": 9223372036854775808,"), text)
        XCTAssertEqual(try JSONValue.parse(Data(text.utf8), source: "t"), big)
        XCTAssertEqual(try JSONValue.parse(Data("18446744073709551616".utf8), source: "t"), .double(18446744073709551616),
                       "beyond UInt64 a whole number is a double")
    }

    /// A NaN reaching the output is an error, never a printed "nan".
    func testNonFiniteIsRefusedWhenSerialised() throws {
        struct Bad: Encodable { var x = Double.nan }
        XCTAssertThrowsError(try JSONValue(encoding: Bad()).serialized())
    }

    /// Encoding the same value twice gives the same bytes.
    func testDeterministicBytes() throws {
        XCTAssertEqual(try JSONValue(encoding: Result()).serialized(), try JSONValue(encoding: Result()).serialized())
    }
}
