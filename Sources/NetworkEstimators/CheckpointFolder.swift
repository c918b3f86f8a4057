import Foundation
import Samplers
import TwoScaleCore
import TwoScaleFormats

/// The folder a long run keeps its samplers' progress in (`Setting.checkpoint`): `meta.json`, what the run is
/// (the network, its data, the estimator's settings), and one `NAME.snapshot` per sampler, each written
/// atomically, so a run killed at any moment continues from its last snapshots. A sampler's snapshot is
/// written after a step at most once every `interval` seconds, and always when the sampler is done.
/// A folder made by another run is refused, as are snapshots made with other settings (`JointSMC.Snapshot`).
public final class CheckpointFolder: SamplerCheckpoints, @unchecked Sendable {
    public let path: String
    public let interval: Double
    private let lock = NSLock()
    private var saved: [String: Date] = [:]

    /// Opens `path` (created where absent) for the run `meta` describes; a folder whose meta.json differs is refused.
    public init(path: String, meta: Data, interval: Double = 30) throws {
        (self.path, self.interval) = (path, interval)
        try AtomicFile.makeDirectory(path)
        let file = path + "/meta.json"
        if FileManager.default.fileExists(atPath: file) {
            guard let old = FileManager.default.contents(atPath: file) else { throw TwoScaleError.file(file, "cannot be read") }
            guard old == meta else {
                throw TwoScaleError.usage("\(Setting.checkpoint): the folder \(path) holds the checkpoints of another run (its meta.json "
                                          + "differs from this command's); continue that run with its own command, or give another folder")
            }
        } else {
            try AtomicFile.write(meta, to: file)
        }
    }

    func file(_ name: String) -> String { path + "/" + name + ".snapshot" }

    public func load(_ name: String) throws -> Data? {
        let f = file(name)
        guard FileManager.default.fileExists(atPath: f) else { return nil }
        guard let data = FileManager.default.contents(atPath: f) else { throw TwoScaleError.file(f, "cannot be read") }
        return data
    }

    public func save(_ name: String, final: Bool, _ make: () throws -> Data) throws {
        let now = Date()
        let due = lock.withLock {
            final || saved[name].map { now.timeIntervalSince($0) >= interval } ?? true
        }
        guard due else { return }
        try AtomicFile.write(try make(), to: file(name))
        lock.withLock { saved[name] = now }
    }
}
