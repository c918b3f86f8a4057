import Fisher
import Foundation
import Networks
import TwoScaleCore
import TwoScaleFormats

/// A shard of the paths: shard `i/n` (1 ≤ i ≤ n) holds the paths `k` (0-based) with `k mod n = i − 1`,
/// in increasing order. Interleaving keeps shards balanced whatever K is.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    public let index: Int
    public let count: Int
    /// The most shards a run is split into (merge lists the missing ones).
    public static let maxCount = 1_000_000
    static func allows(index i: Int, count n: Int) -> Bool { n >= 1 && n <= maxCount && i >= 1 && i <= n }

    public init(index: Int, count: Int) throws {
        guard Self.allows(index: index, count: count) else {
            throw TwoScaleError.invalid("\(Setting.shard)", "\(index)/\(count)", allowed: "a shard is i/n with 1 ≤ i ≤ n ≤ 10⁶, e.g. 2/4")
        }
        self.index = index
        self.count = count
    }

    /// Parses `i/n`.
    public init(parsing text: String, flag: String = "\(Setting.shard)") throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0].trimmingCharacters(in: .whitespaces)),
              let n = Int(parts[1].trimmingCharacters(in: .whitespaces)) else {
            throw TwoScaleError.invalid(flag, text, allowed: "a shard is i/n with whole numbers 1 ≤ i ≤ n, e.g. 2/4")
        }
        guard Self.allows(index: i, count: n) else {
            throw TwoScaleError.invalid(flag, text, allowed: "a shard is i/n with 1 ≤ i ≤ n ≤ 10⁶, e.g. 2/4")
        }
        index = i
        count = n
    }

    /// The paths of this shard among `0..<total`.
    public func paths(of total: Int) -> [Int] { Array(stride(from: index - 1, to: total, by: count)) }

    public var description: String { "\(index)/\(count)" }
}

/// What a spectra store measured and how: the run's model, data and draws, as `meta.json` records them
/// (each key is the `ed` flag that sets it, without its dashes, so a mismatch is reported as the flag the
/// user typed). σ² and R are null for the output FIM, which does not use them.
public struct NetworkRunConfiguration: Codable, Sendable, Equatable {
    public var fisher: FisherKind
    /// The architecture in its canonical notation (`Architecture.notation`).
    public var arch: String
    public var bias: Bool
    public var activation: Activation
    /// The box of θ.
    public var box: ClosedRange<Double>
    /// The seed of every draw.
    public var seed: UInt64
    /// The `Setting.data` source as given.
    public var data: String
    /// N, the inputs the Fisher expectation averages over.
    public var samples: Int
    /// The CSV label column: `none` or `last`.
    public var labels: String
    public var standardize: Bool
    /// σ² of the hidden-layer noise (Markov FIM only).
    @NullIfNil public var sigma2: Double?
    /// R, noise draws per input (Markov FIM only).
    @NullIfNil public var noiseSamples: Int?

    enum CodingKeys: String, CodingKey {
        case fisher, arch, bias, activation, box, seed, data, samples, labels, standardize, sigma2
        case noiseSamples = "noise-samples"
    }

    public init(fisher: FisherKind, arch: String, bias: Bool, activation: Activation, box: ClosedRange<Double>, seed: UInt64,
                data: String, samples: Int, labels: String, standardize: Bool, sigma2: Double?, noiseSamples: Int?) {
        self.fisher = fisher
        self.arch = arch
        self.bias = bias
        self.activation = activation
        self.box = box
        self.seed = seed
        self.data = data
        self.samples = samples
        self.labels = labels
        self.standardize = standardize
        self.sigma2 = fisher == .markov ? sigma2 : nil
        self.noiseSamples = fisher == .markov ? noiseSamples : nil
    }

    /// Each field as its setting and its value as the user would type it, in the order of `meta.json`.
    public var fields: [(setting: Setting, value: String)] {
        func num(_ x: Double) -> String { x == x.rounded() && Swift.abs(x) < 1e15 ? String(Int64(x)) : "\(x)" }
        return [
            (.fisherRoute, fisher.rawValue), (.architecture, arch), (.bias, "\(bias)"), (.activation, activation.rawValue),
            (.box, "\(num(box.lowerBound)):\(num(box.upperBound))"), (.seed, "\(seed)"), (.data, data),
            (.samples, "\(samples)"), (.labels, labels), (.standardize, "\(standardize)"),
            (.noiseVariance, sigma2.map(num) ?? "(not used)"), (.noiseSamples, noiseSamples.map { "\($0)" } ?? "(not used)"),
        ]
    }

    /// The fields that differ, as "SETTING A vs B" phrases (self first; the setting a `Setting` marker); empty
    /// when they agree.
    public func differences(to other: NetworkRunConfiguration) -> [String] {
        zip(fields, other.fields).compactMap { a, b in a.value == b.value ? nil : "\(a.setting) \(a.value) vs \(b.value)" }
    }
}

/// `DIR/meta.json` of a spectra store (docs/METHOD.md §14):
///
///     {"format": "twoscale-spectra/1", "dimension": d, "layers": [d_1, …], "paths": K, "inner": J,
///      …the run configuration's fields…, "shard": {"index": i, "count": n}  (shard stores only)}
///
/// `paths` is K of the whole design (a shard holds `Shard.paths(of: K)` of them); `inner` is J, or 0
/// for a one-block model (no inner draws). Written once when the store is created and never changed, so
/// an interrupted-and-resumed run, a merged one and an uninterrupted one have the same bytes.
public struct StoreMeta: Codable, Sendable, Equatable {
    public static let format = "twoscale-spectra/1"

    public var dimension: Int
    public var layers: [Int]
    public var paths: Int
    public var inner: Int
    public var configuration: NetworkRunConfiguration
    public var shard: Shard?

    public init(layers: [Int], paths: Int, inner: Int, configuration: NetworkRunConfiguration, shard: Shard? = nil) throws {
        guard !layers.isEmpty, layers.allSatisfy({ $0 >= 1 && $0 <= Architecture.maxParameters }),
              layers.reduce(0, +) <= Architecture.maxParameters else {
            throw TwoScaleError.failure("store: every layer needs from 1 to 2²⁸ parameters, and the network at most 2²⁸ (\(layers))")
        }
        guard paths >= 1, paths <= 100_000_000, inner >= 0, inner <= 100_000_000, (layers.count == 1) == (inner == 0) else {
            throw TwoScaleError.failure("store: K = \(paths), J = \(inner) do not fit \(layers.count) layer(s)")
        }
        dimension = layers.reduce(0, +)
        self.layers = layers
        self.paths = paths
        self.inner = inner
        self.configuration = configuration
        self.shard = shard
    }

    /// meta.json's text: keys in the order above, the same bytes for the same store.
    public func serialized() throws -> String { try JSONValue(encoding: self).serialized() }

    /// The paths (0-based) whose rows this store's files hold, in row order.
    public var storedPaths: [Int] { shard?.paths(of: paths) ?? Array(0..<paths) }

    enum HeaderKeys: String, CodingKey { case format, dimension, layers, paths, inner }
    enum ShardKeys: String, CodingKey { case shard }
    enum ShardFields: String, CodingKey { case index, count }

    /// The header, then the configuration's fields at the top level, then the shard.
    public func encode(to encoder: any Encoder) throws {
        var h = encoder.container(keyedBy: HeaderKeys.self)
        try h.encode(Self.format, forKey: .format)
        try h.encode(dimension, forKey: .dimension)
        try h.encode(layers, forKey: .layers)
        try h.encode(paths, forKey: .paths)
        try h.encode(inner, forKey: .inner)
        try configuration.encode(to: encoder)
        if let s = shard {
            var c = encoder.container(keyedBy: ShardKeys.self)
            var f = c.nestedContainer(keyedBy: ShardFields.self, forKey: .shard)
            try f.encode(s.index, forKey: .index)
            try f.encode(s.count, forKey: .count)
        }
    }

    public init(from decoder: any Decoder) throws {
        let h = try decoder.container(keyedBy: HeaderKeys.self)
        let f = try h.decode(String.self, forKey: .format)
        guard f == Self.format else {
            throw TwoScaleError.failure("has format '\(f)'; this twoscale reads '\(Self.format)' stores only")
        }
        let layers = try h.decode([Int].self, forKey: .layers)
        let d = try h.decode(Int.self, forKey: .dimension)
        let configuration = try NetworkRunConfiguration(from: decoder)
        var shard: Shard?
        let s = try decoder.container(keyedBy: ShardKeys.self)
        if s.contains(.shard) {
            let sf = try s.nestedContainer(keyedBy: ShardFields.self, forKey: .shard)
            let i = try sf.decode(Int.self, forKey: .index), n = try sf.decode(Int.self, forKey: .count)
            do { shard = try Shard(index: i, count: n) } catch { throw TwoScaleError.failure("\"shard\" \(i)/\(n) is not valid (need 1 ≤ i ≤ n)") }
        }
        try self.init(layers: layers, paths: try h.decode(Int.self, forKey: .paths), inner: try h.decode(Int.self, forKey: .inner),
                      configuration: configuration, shard: shard)
        guard dimension == d else {
            throw TwoScaleError.failure("\"dimension\" \(d) is not the sum of \"layers\" (\(dimension))")
        }
    }

    /// The same store settings without the shard: what the unsharded run records.
    public var unsharded: StoreMeta {
        var m = self
        m.shard = nil
        return m
    }

    /// Parses meta.json text; `source` (the file) names every error. Another format version is refused.
    public static func parse(_ data: Data, source: String) throws -> StoreMeta {
        let v = try JSONValue.parse(data, source: source)  // syntax errors with their line
        guard case .object = v else { throw TwoScaleError.file(source, "is not a spectra-store description (expected a JSON object)") }
        guard v["format"]?.stringValue != nil else {
            throw TwoScaleError.file(source, "has no \"format\"; it is not a twoscale spectra store")
        }
        // Whole-number fields are checked on the parsed tree first: JSONDecoder reports a 2.5 where a
        // whole number belongs as corrupt data without naming the key.
        func whole(_ v: JSONValue?, _ key: String, nullable: Bool = false) throws {
            let ok: Bool
            switch v {
            case .int(let i)?: ok = key != "seed" || i >= 0
            case .uint(let u)? where key != "seed":
                throw TwoScaleError.file(source, "\"\(key)\" is \(u), beyond the largest count a store can hold (2⁶³ − 1)")
            case .uint?: ok = true  // a seed above Int.max
            case .null?: ok = nullable
            case nil: ok = true  // missing: the decoder names it
            default: ok = false
            }
            guard ok else { throw TwoScaleError.file(source, "\"\(key)\" must be a whole number\(key == "seed" ? " ≥ 0" : "")") }
        }
        for key in ["dimension", "paths", "inner", "samples", "seed"] { try whole(v[key], key) }
        try whole(v["noise-samples"], "noise-samples", nullable: true)
        if let layers = v["layers"]?.arrayValue {
            for x in layers { try whole(x, "layers") }
        }
        if let shard = v["shard"] {
            try whole(shard["index"], "shard.index")
            try whole(shard["count"], "shard.count")
        }
        do {
            return try JSONDecoder().decode(StoreMeta.self, from: data)
        } catch let e as TwoScaleError {
            throw TwoScaleError.file(source, e.message)
        } catch let e as DecodingError {
            throw TwoScaleError.file(source, Self.describe(e))
        }
    }

    /// A decoding error as the key it concerns and what that key must hold.
    static func describe(_ e: DecodingError) -> String {
        func path(_ p: [any CodingKey]) -> String {
            p.reduce("") { s, k in k.intValue.map { s + "[\($0)]" } ?? (s.isEmpty ? k.stringValue : s + "." + k.stringValue) }
        }
        switch e {
        case let .keyNotFound(k, c): return "has no \"\(path(c.codingPath + [k]))\" (a store made by another twoscale, or edited)"
        case let .typeMismatch(t, c): return "\"\(path(c.codingPath))\" must be \(Self.expected(t))"
        case let .valueNotFound(t, c): return "\"\(path(c.codingPath))\" must be \(Self.expected(t)), not null"
        case let .dataCorrupted(c): return "\"\(path(c.codingPath))\" is not valid: \(c.debugDescription)"
        @unknown default: return "is not a valid spectra-store description"
        }
    }

    private static func expected(_ t: Any.Type) -> String {
        switch t {
        case is Int.Type, is UInt64.Type: return "a whole number"
        case is Double.Type: return "a number"
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is [Int].Type: return "a list of whole numbers"
        case is [Double].Type, is ClosedRange<Double>.Type: return "a list of two numbers"
        default: return "a JSON value of another kind (a store made by another twoscale, or edited)"
        }
    }

    /// The differences to `other`, as "SETTING A (store) vs B (command)" phrases; empty when they agree.
    /// The shard is not compared.
    public func differences(to other: StoreMeta) -> [String] {
        var out: [String] = []
        if paths != other.paths { out.append("\(Setting.paths) \(paths) vs \(other.paths)") }
        if inner != other.inner { out.append("\(Setting.inner) \(inner) vs \(other.inner)") }
        if layers != other.layers { out.append("layer sizes \(layers) vs \(other.layers)") }
        return out + configuration.differences(to: other.configuration)
    }
}
