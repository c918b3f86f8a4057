import Foundation
import TwoScaleCore
import TwoScaleFormats

/// A shard of the paths: shard `i/n` (1 ≤ i ≤ n) holds the paths `k` (0-based) with `k mod n = i − 1`,
/// in increasing order. Interleaving keeps shards balanced whatever K is.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    public init(index: Int, count: Int) throws {
        guard count >= 1, index >= 1, index <= count else {
            throw TwoScaleError.invalid("--shard", "\(index)/\(count)", allowed: "a shard is i/n with 1 ≤ i ≤ n, e.g. 2/4")
        }
        self.index = index
        self.count = count
    }

    /// Parses `i/n`.
    public init(parsing text: String, flag: String = "--shard") throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0].trimmingCharacters(in: .whitespaces)),
              let n = Int(parts[1].trimmingCharacters(in: .whitespaces)) else {
            throw TwoScaleError.invalid(flag, text, allowed: "a shard is i/n with whole numbers 1 ≤ i ≤ n, e.g. 2/4")
        }
        guard n >= 1, i >= 1, i <= n else {
            throw TwoScaleError.invalid(flag, text, allowed: "a shard is i/n with 1 ≤ i ≤ n, e.g. 2/4")
        }
        index = i
        count = n
    }

    /// The paths of this shard among `0..<total`.
    public func paths(of total: Int) -> [Int] { Array(stride(from: index - 1, to: total, by: count)) }

    public var description: String { "\(index)/\(count)" }
}

/// One recorded setting of a run (`arch`, `sigma2`, `seed`, …): the key is the command-line flag
/// without its dashes, so a mismatch can be reported as the flag the user typed.
public struct StoreSetting: Sendable, Equatable {
    public let key: String
    public let value: JSONValue

    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}

/// `DIR/meta.json` of a spectra store (docs/METHOD.md §14):
///
///     {"format": "twoscale-spectra/1", "dimension": d, "layers": [d_1, …], "paths": K, "inner": J,
///      …settings…, "shard": {"index": i, "count": n}  (shard stores only)}
///
/// `paths` is K of the whole design (a shard holds `Shard.paths(of: K)` of them); `inner` is J, or 0
/// for a one-block model (no inner draws). Written once when the store is created and never changed, so
/// an interrupted-and-resumed run, a merged one and an uninterrupted one have the same bytes.
public struct StoreMeta: Sendable, Equatable {
    public static let format = "twoscale-spectra/1"
    static let reserved: Set<String> = ["format", "dimension", "layers", "paths", "inner", "shard"]

    public var dimension: Int
    public var layers: [Int]
    public var paths: Int
    public var inner: Int
    public var settings: [StoreSetting]
    public var shard: Shard?

    public init(layers: [Int], paths: Int, inner: Int, settings: [StoreSetting], shard: Shard? = nil) throws {
        guard !layers.isEmpty, layers.allSatisfy({ $0 >= 1 }) else {
            throw TwoScaleError.failure("store: every layer needs ≥ 1 parameter (\(layers))")
        }
        guard paths >= 1, paths <= 100_000_000, inner >= 0, inner <= 100_000_000, (layers.count == 1) == (inner == 0) else {
            throw TwoScaleError.failure("store: K = \(paths), J = \(inner) do not fit \(layers.count) layer(s)")
        }
        for s in settings where Self.reserved.contains(s.key) {
            throw TwoScaleError.failure("store: '\(s.key)' is not a setting name")
        }
        dimension = layers.reduce(0, +)
        self.layers = layers
        self.paths = paths
        self.inner = inner
        self.settings = settings
        self.shard = shard
    }

    /// The paths (0-based) whose rows this store's files hold, in row order.
    public var storedPaths: [Int] { shard?.paths(of: paths) ?? Array(0..<paths) }

    /// The value of a setting, if recorded.
    public func setting(_ key: String) -> JSONValue? { settings.first { $0.key == key }?.value }

    public var json: JSONValue {
        var kv: [(String, JSONValue)] = [
            ("format", .string(Self.format)),
            ("dimension", .int(dimension)),
            ("layers", .array(layers.map { .int($0) })),
            ("paths", .int(paths)),
            ("inner", .int(inner)),
        ]
        kv += settings.map { ($0.key, $0.value) }
        if let s = shard { kv.append(("shard", .object([("index", .int(s.index)), ("count", .int(s.count))]))) }
        return .object(kv)
    }

    /// The same store settings without the shard: what the unsharded run records.
    public var unsharded: StoreMeta {
        var m = self
        m.shard = nil
        return m
    }

    /// Parses meta.json text; `source` (the file) names every error. Another format version is refused.
    public static func parse(_ data: Data, source: String) throws -> StoreMeta {
        let v = try JSONValue.parse(data, source: source)
        guard case let .object(kv) = v else { throw TwoScaleError.file(source, "is not a spectra-store description (expected a JSON object)") }
        guard let f = v["format"]?.stringValue else {
            throw TwoScaleError.file(source, "has no \"format\"; it is not a twoscale spectra store")
        }
        guard f == format else {
            throw TwoScaleError.file(source, "has format '\(f)'; this twoscale reads '\(format)' stores only")
        }
        func int(_ key: String) throws -> Int {
            guard case let .int(i)? = v[key] else { throw TwoScaleError.file(source, "\"\(key)\" must be a whole number") }
            return i
        }
        guard let la = v["layers"]?.arrayValue else { throw TwoScaleError.file(source, "\"layers\" must be a list of whole numbers") }
        var layers: [Int] = []
        for x in la {
            guard case let .int(i) = x, i >= 1 else { throw TwoScaleError.file(source, "\"layers\" must be a list of whole numbers ≥ 1") }
            layers.append(i)
        }
        let d = try int("dimension"), k = try int("paths"), j = try int("inner")
        var shard: Shard?
        if let s = v["shard"] {
            guard case let .int(i)? = s["index"], case let .int(n)? = s["count"] else {
                throw TwoScaleError.file(source, "\"shard\" must be {\"index\": i, \"count\": n}")
            }
            do { shard = try Shard(index: i, count: n) } catch { throw TwoScaleError.file(source, "\"shard\" \(i)/\(n) is not valid (need 1 ≤ i ≤ n)") }
        }
        let settings = kv.filter { !reserved.contains($0.0) }.map { StoreSetting($0.0, $0.1) }
        let meta: StoreMeta
        do { meta = try StoreMeta(layers: layers, paths: k, inner: j, settings: settings, shard: shard) } catch let e as TwoScaleError {
            throw TwoScaleError.file(source, e.message)
        }
        guard meta.dimension == d else {
            throw TwoScaleError.file(source, "\"dimension\" \(d) is not the sum of \"layers\" (\(meta.dimension))")
        }
        return meta
    }

    /// The differences to `other`, as "--flag A (store) vs B (command)" phrases; empty when they agree.
    /// The shard is not compared.
    public func differences(to other: StoreMeta) -> [String] {
        func show(_ v: JSONValue?) -> String {
            guard let v else { return "(not set)" }
            return ((try? v.serialized()) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
        }
        var out: [String] = []
        if paths != other.paths { out.append("--paths \(paths) vs \(other.paths)") }
        if inner != other.inner { out.append("--inner \(inner) vs \(other.inner)") }
        if layers != other.layers { out.append("layer sizes \(layers) vs \(other.layers)") }
        var keys = settings.map(\.key)
        for k in other.settings.map(\.key) where !keys.contains(k) { keys.append(k) }
        // Compared as written (a parsed 1 and a computed 1.0 are the same setting).
        for k in keys where show(setting(k)) != show(other.setting(k)) {
            out.append("--\(k) \(show(setting(k))) vs \(show(other.setting(k)))")
        }
        return out
    }
}
