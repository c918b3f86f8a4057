import Foundation
import PropertyBased
@testable import SpectraStore
import Testing
import TwoScaleCore
@testable import TwoScaleFormats

/// Thousands of mutated meta.json files and partial path files: each reads to a well-formed value or throws
/// a `TwoScaleError` naming the file; never traps, never yields NaN.
@Suite struct StoreFileFuzzTests {
    /// Fails the property unless `e` is a TwoScaleError whose message starts with `source`.
    static func expectNamed(_ e: Error, _ source: String) {
        if let t = e as? TwoScaleError {
            #expect(t.message.hasPrefix(source), "\(t.message)")
        } else {
            Issue.record("unexpected error \(e)")
        }
    }

    @Test func storeMetaAndPartialFiles() async throws {
        let meta = try StoreMeta(layers: [4, 3], paths: 5, inner: 2, configuration: testConfiguration())
        let text = try meta.serialized()
        let keys = ["format", "dimension", "layers", "paths", "inner", "seed", "shard", "index", "count"]
        await propertyCheck(count: 3000, input: Gen.int(in: 0...3), Gen.double(in: 0...1), Gen.element(of: keys).compactMap { $0 },
                            Gen.element(of: ["-1", "0", "1e99", "\"x\"", "null", "[]", "[0]", "[1, -2]", "2.5", "{}", "99999999999999999999"]).compactMap { $0 }) { kind, cut, key, value in
            var t = text
            switch kind {
            case 0: t = String(text.prefix(Int(cut * Double(text.count))))
            case 1:
                // Replace the value of one key.
                if let r = t.range(of: "\"\(key)\": ") {
                    let end = t[r.upperBound...].firstIndex(where: { $0 == "," || $0 == "\n" }) ?? t.endIndex
                    t.replaceSubrange(r.upperBound..<end, with: value)
                }
            case 2: t = t.replacingOccurrences(of: "}", with: ", \"\(key)\": \(value)}")
            default: t = String(t.shuffled().prefix(Int(cut * 40)))
            }
            do {
                let m = try StoreMeta.parse(Data(t.utf8), source: "meta.json")
                #expect(m.paths >= 1 && m.layers.allSatisfy { $0 >= 1 } && m.dimension == m.layers.reduce(0, +))
                #expect(m.storedPaths.allSatisfy { $0 >= 0 && $0 < m.paths })
            } catch { StoreFileFuzzTests.expectNamed(error, "meta.json") }
        }
        // Partial path files: a valid encoding decodes back; any mutation decodes or is refused.
        let row = PathSpectra(own: [[1, 2, 0.5], [3]], inner: [[], [[0.25, 1], [2]]])
        let enc = PartialFile.encode(row)
        #expect(try PartialFile.decode(enc, meta: meta, source: "p.npy") == row)
        await propertyCheck(count: 2000, input: Gen.int(in: 0..<enc.data.count), Gen.double(in: -3...12)) { i, v in
            var d = enc.data
            d[i] = v.rounded(v > 5 ? .toNearestOrEven : .towardZero)
            do {
                let back = try PartialFile.decode(NPYArray(uncheckedShape: [d.count], data: d), meta: meta, source: "p.npy")
                #expect(back.own.count == 2 && back.inner[1].count == 2)
            } catch { StoreFileFuzzTests.expectNamed(error, "p.npy") }
        }
    }
}
