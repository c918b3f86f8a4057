import Foundation
import PropertyBased
@testable import SpectraStore
import Testing
@testable import Networks
import TwoScaleCore
@testable import TwoScaleFormats

/// Thousands of generated and mutated inputs per file reader — CSV, IDX (raw and gzip, random bytes and
/// random truncations of a valid file), weights JSON, .npz and .safetensors, .npy (meta.json and partial path files: SpectraStoreTests' StoreFileFuzzTests). Each returns a
/// well-formed value or throws a `TwoScaleError` naming the file; never traps, never yields NaN.
@Suite struct FileFormatFuzzTests {
    static let bytes = Gen.uint8(in: 0...255).array(of: 0...64)

    /// The first fraction `cut` of `b`.
    static func truncated(_ b: [UInt8], at cut: Double) -> [UInt8] { Array(b.prefix(Int(cut * Double(b.count)))) }

    /// `b` with `junk` written over it from the fraction `cut` on.
    static func overwritten(_ b: [UInt8], at cut: Double, with junk: [UInt8]) -> [UInt8] {
        var b = b
        let at = Int(cut * Double(b.count))
        b.replaceSubrange(at..<Swift.min(b.count, at + junk.count), with: junk)
        return b
    }

    /// Fails the property unless `e` is a TwoScaleError whose message starts with `source`.
    static func expectNamed(_ e: Error, _ source: String) {
        if let t = e as? TwoScaleError {
            #expect(t.message.hasPrefix(source), "\(t.message)")
        } else {
            Issue.record("unexpected error \(e)")
        }
    }

    @Test func csvReader() async {
        let alphabet = Gen.element(of: Array("0123456789.,-+eEnaif x\n\r\t\"#")).compactMap { $0 }
        await propertyCheck(count: 4000, input: alphabet.string(of: 0...40), Gen.bool, Gen.int(in: 0...4)) { text, lastLabel, limit in
            do {
                let d = try CSVReader.parse(text: text, path: "f.csv", labels: lastLabel ? .last : .none, limit: limit == 0 ? nil : limit)
                #expect(d.count >= 1 && d.features >= 1)
                #expect(d.inputs.data.allSatisfy { $0.isFinite })
                if let l = d.labels { #expect(l.count == d.count && l.allSatisfy { $0 >= 0 }) }
                if limit > 0 { #expect(d.count <= limit) }
            } catch { Self.expectNamed(error, "f.csv") }
        }
    }

    /// A valid IDX image file (and its gzip) cut at every random length, or with random bytes spliced in.
    @Test func idxReader() async throws {
        var valid: [UInt8] = [0, 0, 8, 3, 0, 0, 0, 4, 0, 0, 0, 2, 0, 0, 0, 3]
        valid += (0..<24).map { UInt8($0 * 10) }
        let gz = [UInt8](try Gzip.compress(Data(valid)))
        let dir = NSTemporaryDirectory() + "twoscale-fuzz-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/f.idx"
        await propertyCheck(count: 1500, input: Gen.int(in: 0...2), Gen.double(in: 0...1), Self.bytes, Gen.int(in: 0...3)) { kind, cut, junk, limit in
            let b: [UInt8]
            switch kind {
            case 0: b = Self.truncated(valid, at: cut)
            case 1: b = Self.truncated(gz, at: cut)
            default: b = Self.overwritten(cut < 0.5 ? valid : gz, at: cut, with: junk)
            }
            do {
                try Data(b).write(to: URL(fileURLWithPath: path))
                let (x, count, _) = try IDXReader.images(path: path, limit: limit == 0 ? nil : limit)
                #expect(x.data.allSatisfy { $0 >= 0 && $0 <= 1 })
                #expect(x.rows <= count)
            } catch { Self.expectNamed(error, path) }
            do {
                _ = try IDXReader.labels(path: path, limit: nil)
            } catch { Self.expectNamed(error, path) }
        }
        await propertyCheck(count: 1000, input: Self.bytes) { junk in
            do {
                try Data(junk).write(to: URL(fileURLWithPath: path))
                _ = try IDXReader.load(images: path, labels: path, limit: nil)
            } catch { Self.expectNamed(error, path) }
        }
    }

    @Test func weightsJSON() async {
        let arch = try! Architecture(parsing: "3-2-2", bias: false)
        let tokens = Gen.element(of: ["{", "}", "[", "]", ",", "\"weights\"", ":", "1", "-2.5", "1e308", "1e999", "null", "\"x\"", "0", " "])
            .compactMap { $0 }
        await propertyCheck(count: 3000, input: tokens.array(of: 0...30)) { parts in
            let text = parts.joined()
            do {
                let v = try JSONValue.parse(Data(text.utf8), source: "w.json")
                let net = try WeightsFile.parse(v, path: "w.json", architecture: arch, activation: .relu)
                #expect(net.weights.allSatisfy { w in w.data.allSatisfy { $0.isFinite } })
            } catch { Self.expectNamed(error, "w.json") }
        }
        // Well-formed shapes with random numbers parse exactly.
        await propertyCheck(count: 500, input: Gen.double(in: -1e6...1e6).array(of: 10)) { xs in
            let w1 = [[xs[0], xs[1], xs[2]], [xs[3], xs[4], xs[5]]], w2 = [[xs[6], xs[7]], [xs[8], xs[9]]]
            let v = JSONValue.object([("weights", .array([w1, w2].map { m in .array(m.map { .numbers($0) }) }))])
            let back = try! JSONValue.parse(Data(try! v.serialized().utf8), source: "w.json")
            let net = try! WeightsFile.parse(back, path: "w.json", architecture: arch, activation: .relu)
            #expect(net.weights[0].data == w1.flatMap { $0 } && net.weights[1].data == w2.flatMap { $0 })
        }
    }

    @Test func npyDecoder() async throws {
        let valid = [UInt8](try NPYArray(shape: [2, 3], data: [1, 2, 3, 4, 5, 6]).encoded())
        await propertyCheck(count: 3000, input: Gen.int(in: 0...2), Gen.double(in: 0...1), Self.bytes) { kind, cut, junk in
            let b: [UInt8]
            switch kind {
            case 0: b = Self.truncated(valid, at: cut)
            case 1: b = Self.overwritten(valid, at: cut, with: junk)
            default: b = Array(valid.prefix(10)) + junk
            }
            do {
                let a = try NPYArray.decode(Data(b), source: "a.npy")
                #expect(a.shape.reduce(1, *) == a.data.count)
            } catch { Self.expectNamed(error, "a.npy") }
        }
        // Round trip of random shapes and values.
        await propertyCheck(count: 500, input: Gen.int(in: 0...4).array(of: 0...3), Gen.double(in: -1e300...1e300)) { shape, x in
            let n = shape.reduce(1, *)
            let a = try! NPYArray(shape: shape, data: (0..<n).map { x / Double($0 + 1) })
            #expect(try! NPYArray.decode(a.encoded(), source: "rt.npy") == a)
        }
    }

    /// `.npz` and `.safetensors` weights files (the committed fixtures), truncated, overwritten with junk
    /// or followed by junk, and junk behind each format's magic: a network or a named error.
    @Test func weightsNPZAndSafetensors() async throws {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/weights").path
        let files = try ["positional-compressed-bias-f64.npz", "sequential-bias-f32.safetensors", "zip64-f64.npz"].map {
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: fixtures + "/" + $0)))
        }
        let arch = try Architecture(parsing: "3-4-2", bias: true)
        let magics: [[UInt8]] = [[0x50, 0x4B, 3, 4], [0x50, 0x4B, 5, 6], [16, 0, 0, 0, 0, 0, 0, 0, 0x7B]]
        await propertyCheck(count: 3000, input: Gen.int(in: 0...3), Gen.int(in: 0...2), Gen.double(in: 0...1), Self.bytes) { kind, which, cut, junk in
            let valid = files[which]
            let b: [UInt8]
            switch kind {
            case 0: b = Self.truncated(valid, at: cut)
            case 1: b = Self.overwritten(valid, at: cut, with: junk)
            case 2: b = valid + junk
            default: b = magics[which] + junk
            }
            do {
                let net = try WeightsFile.decode(Data(b), path: "w.bin", architecture: arch, activation: .relu)
                #expect(net.weights.allSatisfy { w in w.data.allSatisfy { $0.isFinite } })
            } catch { Self.expectNamed(error, "w.bin") }
        }
    }
}
