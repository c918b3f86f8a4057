import Foundation
import Networks
import SpectraStore
import TwoScaleCore
import XCTest

/// meta.json is the typed run configuration (`StoreMeta`, `NetworkRunConfiguration`), Codable.
final class StoreMetaTests: XCTestCase {
    /// meta.json exactly as the plain-settings writer of earlier versions wrote it: it still reads, and
    /// writing it back gives the same bytes.
    static let written = """
    {
      "format": "twoscale-spectra/1",
      "dimension": 43,
      "layers": [28, 15],
      "paths": 8,
      "inner": 4,
      "fisher": "markov",
      "arch": "6-4-3",
      "bias": false,
      "activation": "relu",
      "box": [-1, 1],
      "seed": 1,
      "data": "synthetic:gaussian",
      "samples": 20,
      "labels": "none",
      "standardize": false,
      "sigma2": 0.1,
      "noise-samples": 1,
      "shard": {
        "index": 2,
        "count": 3
      }
    }

    """

    func testReadsAndWritesTheSameBytes() throws {
        let m = try StoreMeta.parse(Data(Self.written.utf8), source: "meta.json")
        XCTAssertEqual(m.layers, [28, 15])
        XCTAssertEqual(m.configuration.arch, "6-4-3")
        XCTAssertEqual(m.configuration.seed, 1)
        XCTAssertEqual(m.configuration.sigma2, 0.1)
        XCTAssertEqual(m.configuration.box, -1...1)
        XCTAssertEqual(m.shard, try Shard(index: 2, count: 3))
        XCTAssertEqual(try m.serialized(), Self.written)
    }

    /// A seed above 2⁶³ − 1 is written to the digit and read back; any other field that large is refused.
    func testLargestSeedRoundTrips() throws {
        let text = Self.written.replacingOccurrences(of: "\"seed\": 1,", with: "\"seed\": 18446744073709551615,")
        let m = try StoreMeta.parse(Data(text.utf8), source: "meta.json")
        XCTAssertEqual(m.configuration.seed, UInt64.max)
        XCTAssertEqual(try m.serialized(), text)
        let paths = Self.written.replacingOccurrences(of: "\"paths\": 8,", with: "\"paths\": 9223372036854775808,")
        XCTAssertThrowsError(try StoreMeta.parse(Data(paths.utf8), source: "meta.json")) { e in
            let m = (e as? TwoScaleError)?.message ?? "\(e)"
            XCTAssertTrue(m.contains("\"paths\" is 9223372036854775808, beyond"), m)
        }
    }

    /// The output FIM records σ² and R as null, and reads them back as absent.
    func testOutputFisherHasNullNoiseSettings() throws {
        let c = NetworkRunConfiguration(fisher: .output, arch: "2-2", bias: true, activation: .tanh, box: -0.5...0.5, seed: 3,
                                        data: "csv:x.csv", samples: 7, labels: "last", standardize: true, sigma2: 0.1, noiseSamples: 2)
        XCTAssertNil(c.sigma2)
        let m = try StoreMeta(layers: [6], paths: 3, inner: 0, configuration: c)
        let text = try m.serialized()
        XCTAssertTrue(text.contains("\"sigma2\": null,\n  \"noise-samples\": null\n"), text)
        XCTAssertEqual(try StoreMeta.parse(Data(text.utf8), source: "m"), m)
    }

    /// A meta.json whose layers overflow an Int (or exceed 2²⁸ parameters) is an error, not a trap.
    func testHugeLayersAreRefused() throws {
        let huge = Self.written.replacingOccurrences(of: "\"layers\": [28, 15]", with: "\"layers\": [9223372036854775807, 15]")
        XCTAssertNotEqual(huge, Self.written)
        XCTAssertThrowsError(try StoreMeta.parse(Data(huge.utf8), source: "meta.json"))
        let big = Self.written.replacingOccurrences(of: "\"layers\": [28, 15]", with: "\"layers\": [268435456, 15]")
        XCTAssertThrowsError(try StoreMeta.parse(Data(big.utf8), source: "meta.json"))
        XCTAssertNoThrow(try StoreMeta.parse(Data(Self.written.utf8), source: "meta.json"))
        // A shard count merge would list up to: at most 10⁶.
        XCTAssertNoThrow(try Shard(parsing: "1/1000000"))
        XCTAssertThrowsError(try Shard(parsing: "1/1000001"))
        XCTAssertThrowsError(try Shard(index: 1, count: Int.max))
    }

    /// --resume compares field by field and names each differing flag with both values.
    func testDifferencesNameTheFlags() throws {
        let a = try StoreMeta.parse(Data(Self.written.utf8), source: "meta.json")
        var b = a
        b.configuration.sigma2 = 0.2
        b.configuration.box = -2...2
        b.configuration.standardize = true
        b.inner = 5
        XCTAssertEqual(a.differences(to: b), ["\(Setting.inner) 4 vs 5", "\(Setting.box) -1:1 vs -2:2", "\(Setting.standardize) false vs true", "\(Setting.noiseVariance) 0.1 vs 0.2"])
        XCTAssertEqual(a.differences(to: a.unsharded), [], "the shard is not a setting")
    }

    /// A fraction or a negative where a whole number belongs is named as such.
    func testNonWholeNumbersAreNamed() {
        for (edit, replacement, expected) in [("\"paths\": 8", "\"paths\": 2.5", "\"paths\" must be a whole number"),
                                              ("\"layers\": [28, 15]", "\"layers\": [28.5, 15]", "\"layers\" must be a whole number"),
                                              ("\"seed\": 1", "\"seed\": -1", "\"seed\" must be a whole number ≥ 0"),
                                              ("\"index\": 2", "\"index\": 1.5", "\"shard.index\" must be a whole number")] {
            let text = Self.written.replacingOccurrences(of: edit, with: replacement)
            XCTAssertNotEqual(text, Self.written)
            XCTAssertThrowsError(try StoreMeta.parse(Data(text.utf8), source: "s/meta.json")) { e in
                let m = (e as? TwoScaleError)?.message ?? "\(e)"
                XCTAssertTrue(m.contains("s/meta.json") && m.contains(expected), m)
            }
        }
    }

    /// A field of the wrong type or a missing one is named in the error.
    func testBadFieldsAreNamed() {
        for (edit, expected) in [("\"samples\": 20", "\"samples\" must be a whole number"), ("\"samples\": 20", "has no \"samples\""),
                                 ("\"fisher\": \"markov\"", "\"fisher\" is not valid"), ("\"box\": [-1, 1]", "\"box\" is not valid")] {
            let replacement = expected.hasPrefix("has no") ? "\"x\": 1"
                : expected.contains("samples") ? "\"samples\": \"20\"" : expected.contains("fisher") ? "\"fisher\": \"hessian\"" : "\"box\": [1, -1]"
            let text = Self.written.replacingOccurrences(of: edit, with: replacement)
            XCTAssertThrowsError(try StoreMeta.parse(Data(text.utf8), source: "s/meta.json")) { e in
                let m = (e as? TwoScaleError)?.message ?? "\(e)"
                XCTAssertTrue(m.contains("s/meta.json") && m.contains(expected), m)
            }
        }
    }
}
