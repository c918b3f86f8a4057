import Foundation
import RandomStreams
import TwoScaleCore

/// Where a long sampler saves its progress, so that a run stopped at any moment continues where it was and
/// ends with the same bytes as one never stopped (`JointSMC.checkpoints`). A snapshot is opaque to the store:
/// the sampler writes it, checks on reading that it was made with the same settings, and refuses it otherwise.
public protocol SamplerCheckpoints: Sendable {
    /// The snapshot last saved under `name`, or nil where there is none.
    func load(_ name: String) throws -> Data?
    /// Saves the snapshot `make()` under `name` in place of the last, whole or not at all; a store may skip a
    /// snapshot that is not `final` where it saved one for `name` a short while ago.
    func save(_ name: String, final: Bool, _ make: () throws -> Data) throws
}

/// A snapshot's contents as little-endian 64-bit words; every `Double` by its bits, so it reads back exactly.
struct SnapshotWriter {
    private(set) var words: [UInt64] = []

    mutating func word(_ w: UInt64) { words.append(w) }
    mutating func int(_ i: Int) { words.append(UInt64(bitPattern: Int64(i))) }
    mutating func double(_ x: Double) { words.append(x.bitPattern) }
    mutating func doubles(_ xs: [Double]) {
        int(xs.count)
        words.append(contentsOf: xs.lazy.map(\.bitPattern))
    }
    mutating func ints(_ xs: [Int]) {
        int(xs.count)
        for x in xs { int(x) }
    }
    mutating func bool(_ b: Bool) { int(b ? 1 : 0) }
    /// The generator's state (`Xoshiro256.savedState`), so it continues its sequence.
    mutating func generator(_ g: Xoshiro256) {
        for x in g.savedState { word(x) }
    }

    var data: Data {
        var out = Data(capacity: 8 * words.count)
        for w in words { withUnsafeBytes(of: w.littleEndian) { out.append(contentsOf: $0) } }
        return out
    }
}

/// Reads what `SnapshotWriter` wrote; a short or malformed snapshot is an error naming it.
struct SnapshotReader {
    private let words: [UInt64]
    private var at = 0
    let name: String

    init(_ data: Data, name: String) throws {
        self.name = name
        guard data.count % 8 == 0 else { throw Self.damaged(name) }
        words = stride(from: 0, to: data.count, by: 8).map { i in
            data[data.startIndex + i ..< data.startIndex + i + 8].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        }
    }

    static func otherSettings(_ name: String) -> TwoScaleError {
        .usage("the checkpoint \(name) was made with other settings (seed, particles, sweeps, scales or model); "
               + "continue it with the same command, or give another checkpoint folder")
    }

    static func damaged(_ name: String) -> TwoScaleError {
        .failure("the checkpoint \(name) is damaged or was written by another version; delete it to start that part again")
    }

    var atEnd: Bool { at == words.count }

    /// Reads a snapshot's fingerprint: one made with other settings is refused.
    mutating func expect(_ fingerprint: [UInt64]) throws {
        for x in fingerprint {
            guard try word() == x else { throw Self.otherSettings(name) }
        }
    }

    mutating func word() throws -> UInt64 {
        guard at < words.count else { throw Self.damaged(name) }
        defer { at += 1 }
        return words[at]
    }
    mutating func int() throws -> Int { Int(Int64(bitPattern: try word())) }
    mutating func double() throws -> Double { Double(bitPattern: try word()) }
    /// A count of items, each of at least one word still unread.
    mutating func count() throws -> Int {
        let n = try int()
        guard n >= 0, n <= words.count - at else { throw Self.damaged(name) }
        return n
    }
    mutating func doubles() throws -> [Double] {
        let n = try count()
        defer { at += n }
        return words[at ..< at + n].map(Double.init(bitPattern:))
    }
    mutating func ints() throws -> [Int] {
        try (0..<count()).map { _ in try int() }
    }
    mutating func bool() throws -> Bool {
        switch try int() {
        case 0: return false
        case 1: return true
        default: throw Self.damaged(name)
        }
    }
    mutating func generator() throws -> Xoshiro256 {
        let words = try (0..<Xoshiro256.savedStateWords).map { _ in try word() }
        guard let g = Xoshiro256(savedState: words) else { throw Self.damaged(name) }
        return g
    }
}
