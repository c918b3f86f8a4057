import Foundation
import TwoScaleCore

/// `WorkSharing` over the ranks of an MPI job (smc under `mpirun`): rank r computes the items
/// r, r + P, … of every `map` (on its own threads), sends their results to rank 0, and rank 0 broadcasts
/// all of them, so every rank goes on with the same values, in the same order, as one process would.
/// Results travel as JSON, whose numbers read back to the same doubles. A failure on any rank is
/// broadcast instead, and every rank throws it.
public struct MPISharing: WorkSharing {
    public let world: MPIWorld

    public init(world: MPIWorld) { self.world = world }

    public var isLead: Bool { world.rank == 0 }

    static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return e
    }

    static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return d
    }

    /// Bytes as whole numbers: the byte count, then the bytes eight to a number.
    static func pack(_ data: Data) -> [Int64] {
        var out = [Int64(data.count)]
        var padded = [UInt8](data)
        padded += [UInt8](repeating: 0, count: (8 - padded.count % 8) % 8)
        out += padded.withUnsafeBytes { Array($0.bindMemory(to: Int64.self)) }
        return out
    }

    /// `pack`'s bytes from `values[at...]`; advances `at` past them.
    static func unpack(_ values: [Int64], at: inout Int) throws -> Data {
        guard at < values.count, values[at] >= 0 else { throw TwoScaleError.failure("MPI: a malformed share message (internal error)") }
        let n = Int(values[at])
        let words = (n + 7) / 8
        guard at + 1 + words <= values.count else { throw TwoScaleError.failure("MPI: a truncated share message (internal error)") }
        let bytes = Array(values[(at + 1)..<(at + 1 + words)]).withUnsafeBytes { Array($0.prefix(n)) }
        at += 1 + words
        return Data(bytes)
    }

    public func map<T: Codable & Sendable>(_ count: Int, threads: Int, _ body: @escaping @Sendable (Int) throws -> T) async throws -> [T] {
        let P = world.size, r = world.rank
        let mine = Array(stride(from: r, to: count, by: P))
        // This rank's message: [0, its results] or [1, the error's text].
        var message: [Int64]
        do {
            let results = try await Parallel.map(mine.count, threads: threads) { j in try body(mine[j]) }
            message = [0] + Self.pack(try Self.encoder().encode(results))
        } catch {
            let text = (error as? TwoScaleError)?.message ?? "\(error)"
            message = [1] + Self.pack(Data("MPI rank \(r) of \(P): \(text)".utf8))
        }
        var all: [Int64] = []
        if r == 0 {
            var parts = [message]
            for source in 1..<Swift.max(1, P) {
                var pause: UInt32 = 50
                while true {
                    if let m = try world.probe(tag: .share, from: source) {
                        parts.append(try world.receiveInts(count: m.count, from: source, tag: .share))
                        break
                    }
                    usleep(pause)
                    pause = Swift.min(pause * 2, 2000)
                }
            }
            if let failed = parts.first(where: { $0.first != 0 }) {
                all = failed
            } else {
                all = [0] + parts.flatMap { $0.dropFirst() }
            }
        } else {
            try world.send(message, to: 0, tag: .share)
        }
        let shared = try world.broadcast(all)
        guard let status = shared.first else { throw TwoScaleError.failure("MPI: an empty share broadcast (internal error)") }
        var at = 1
        if status != 0 {
            throw TwoScaleError.failure(String(decoding: try Self.unpack(shared, at: &at), as: UTF8.self))
        }
        var out = [T?](repeating: nil, count: count)
        for source in 0..<P {
            let part = try Self.decoder().decode([T].self, from: try Self.unpack(shared, at: &at))
            for (j, v) in part.enumerated() { out[source + j * P] = v }
        }
        guard out.allSatisfy({ $0 != nil }) else { throw TwoScaleError.failure("MPI: a share is missing items (internal error)") }
        return out.map { $0! }
    }
}
