import Foundation
import Networks
import SpectraStore
import TwoScaleCore
import TwoScaleFormats
import XCTest

final class SpectraStoreTests: XCTestCase {
    var cleanup: [String] = []
    override func tearDown() { for d in cleanup { try? FileManager.default.removeItem(atPath: d) } }
    func tmp(_ tag: String) -> String { let d = temporaryDirectory(tag); cleanup.append(d); return d }

    let model = WeightFisher([2, 3, 2, 2], coupling: 0.5)

    func design(_ k: Int = 7, _ j: Int = 3) throws -> MonteCarloDesign { try MonteCarloDesign(paths: k, inner: j, seed: 9) }

    /// An uninterrupted run into a fresh store; returns the store folder.
    func fullRun(threads: Int = 2) async throws -> (String, [PathSpectra]) {
        let dir = tmp("full") + "/store"
        let d = try design()
        let run = try SpectraRun(model: model, design: d, meta: try testMeta(model, d), threads: threads)
        let out = try await run.execute(store: dir, resume: false)
        return (dir, out.rows)
    }

    func testStoreLayoutAndNumPyShapes() async throws {
        let (dir, rows) = try await fullRun()
        let files = filesUnder(dir)
        XCTAssertEqual(Set(files.keys), ["meta.json", "own_1.npy", "own_2.npy", "own_3.npy", "inner_2.npy", "inner_3.npy"],
                       "partial files are removed after assembly")
        let own1 = try NPYArray.read(path: dir + "/own_1.npy")
        XCTAssertEqual(own1.shape[0], 7)
        XCTAssertLessThanOrEqual(own1.shape[1], 6)
        let inner3 = try NPYArray.read(path: dir + "/inner_3.npy")
        XCTAssertEqual(Array(inner3.shape[0...1]), [7, 3])
        // Row k of inner_3 is path k's draws, zero-padded at the end.
        let r = inner3.shape[2]
        let draw = rows[4].inner[2][1]
        XCTAssertEqual(Array(inner3.data[((4 * 3 + 1) * r)..<((4 * 3 + 1) * r + draw.count)]), draw)
        XCTAssertTrue(inner3.data[((4 * 3 + 1) * r + draw.count)..<((4 * 3 + 2) * r)].allSatisfy { $0 == 0 })
        let meta = try JSONValue.parse(files["meta.json"]!, source: "meta.json")
        XCTAssertEqual(meta["format"]?.stringValue, "twoscale-spectra/1")
        XCTAssertEqual(meta["dimension"], .int(16))
        XCTAssertEqual(meta["layers"], .array([.int(6), .int(6), .int(4)]))
        XCTAssertEqual(meta["paths"], .int(7))
        XCTAssertEqual(meta["inner"], .int(3))
        XCTAssertEqual(meta["sigma2"], .double(0.1))
        // The loaded store gives the same spectra as the run in memory.
        let store = try SpectraStore.open(directory: dir)
        let loaded = try store.loadSpectra()
        let direct = try MonteCarlo.layeredSpectra(rows, blockDimensions: model.blockDimensions)
        XCTAssertEqual(loaded.own, direct.own)
        XCTAssertEqual(loaded.inner, direct.inner)
    }

    func testThreadCountGivesIdenticalStores() async throws {
        let (a, _) = try await fullRun(threads: 1)
        let (b, _) = try await fullRun(threads: 3)
        XCTAssertEqual(filesUnder(a), filesUnder(b))
    }

    func testShardsMergeToTheUnshardedStoreByteForByte() async throws {
        let (full, _) = try await fullRun()
        let base = tmp("shards")
        let d = try design()
        var dirs: [String] = []
        for i in [2, 1, 3] {  // any order
            let dir = base + "/s\(i)"
            let meta = try testMeta(model, d, shard: try Shard(index: i, count: 3))
            let out = try await SpectraRun(model: model, design: d, meta: meta, threads: 2).execute(store: dir, resume: false)
            XCTAssertEqual(out.rows.count, [3, 2, 2][i - 1])
            dirs.append(dir)
        }
        XCTAssertThrowsError(try SpectraStore.open(directory: dirs[0]).loadSpectra()) { e in
            XCTAssertTrue("\(e)".contains("merge"), "\(e)")
        }
        // Incomplete set → refused, nothing written.
        XCTAssertThrowsError(try SpectraStore.merge(Array(dirs[0...1]), into: base + "/partialmerge")) { e in
            XCTAssertTrue("\(e)".contains("shards 3/3 are missing"), "\(e)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: base + "/partialmerge"))
        // Duplicate shard → refused.
        XCTAssertThrowsError(try SpectraStore.merge([dirs[0], dirs[0], dirs[1]], into: base + "/dup")) { e in
            XCTAssertTrue("\(e)".contains("disjoint"), "\(e)")
        }
        try SpectraStore.merge(dirs, into: base + "/merged")
        XCTAssertEqual(filesUnder(base + "/merged"), filesUnder(full))
        // The output must not already hold a store.
        XCTAssertThrowsError(try SpectraStore.merge(dirs, into: base + "/merged"))
    }

    func testMergeRefusesShardsOfDifferentSettings() async throws {
        let base = tmp("mix")
        let d = try design()
        let a = base + "/a", b = base + "/b"
        _ = try await SpectraRun(model: model, design: d, meta: try testMeta(model, d, shard: try Shard(index: 1, count: 2)), threads: 1)
            .execute(store: a, resume: false)
        _ = try await SpectraRun(model: model, design: d, meta: try testMeta(model, d, shard: try Shard(index: 2, count: 2), sigma2: 0.2), threads: 1)
            .execute(store: b, resume: false)
        XCTAssertThrowsError(try SpectraStore.merge([a, b], into: base + "/m")) { e in
            XCTAssertTrue("\(e)".contains("\(Setting.noiseVariance) 0.1 vs 0.2"), "\(e)")
        }
    }

    struct Stop: Error {}

    func testInterruptedRunResumesToIdenticalBytes() async throws {
        let (full, _) = try await fullRun()
        let dir = tmp("resume") + "/store"
        let d = try design()
        let meta = try testMeta(model, d)
        let run = try SpectraRun(model: model, design: d, meta: meta, threads: 2)
        var seen = 0
        do {
            _ = try await run.execute(store: dir, resume: false, afterPath: { _ in
                seen += 1
                if seen == 3 { throw Stop() }
            })
            XCTFail("the hook should have stopped the run")
        } catch is Stop {}
        let partial = try FileManager.default.contentsOfDirectory(atPath: dir + "/partial").filter { $0.hasPrefix("path_") }
        XCTAssertEqual(partial.count, 3)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/own_1.npy"))
        XCTAssertThrowsError(try SpectraStore.open(directory: dir).loadSpectra()) { e in
            XCTAssertTrue("\(e)".contains("3 of 7 paths done"), "\(e)")
        }
        // Delete one completed path as well: it is recomputed.
        try FileManager.default.removeItem(atPath: dir + "/partial/" + partial.sorted()[1])
        // Without --resume the existing store is refused; with other settings too.
        do {
            _ = try await run.execute(store: dir, resume: false)
            XCTFail("an existing store must be refused without resume")
        } catch let e as TwoScaleError { XCTAssertTrue(e.message.contains("\(Setting.resume)"), e.message) }
        do {
            let other = try SpectraRun(model: model, design: d, meta: try testMeta(model, d, sigma2: 0.3), threads: 2)
            _ = try await other.execute(store: dir, resume: true)
            XCTFail("other settings must be refused")
        } catch let e as TwoScaleError {
            XCTAssertEqual(e.kind, .usage)
            XCTAssertTrue(e.message.contains("\(Setting.noiseVariance) 0.1 vs 0.3"), e.message)
        }
        // A process killed mid-write leaves an atomic write's temporary file: resuming removes it.
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: dir + "/.own_1.npy.tmp-99999"))
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: dir + "/partial/.path_000005.npy.tmp-99999"))
        let resumed = try await run.execute(store: dir, resume: true)
        XCTAssertEqual(resumed.computed, 5)
        XCTAssertEqual(filesUnder(dir), filesUnder(full))
        // Resuming a finished store reads it back.
        let again = try await run.execute(store: dir, resume: true)
        XCTAssertEqual(again.computed, 0)
        XCTAssertEqual(filesUnder(dir), filesUnder(full))
    }

    /// Killed after every path was saved but before (or during) the final assembly: resuming computes
    /// nothing and writes the same final files.
    func testResumeAfterAllPathsOnlyAssembles() async throws {
        let (full, rows) = try await fullRun()
        let dir = tmp("assemble") + "/store"
        let d = try design()
        let meta = try testMeta(model, d)
        let store = try SpectraStore.create(directory: dir, meta: meta)
        for (k, r) in rows.enumerated() { try store.writePartial(path: k, r) }
        try NPYArray(shape: [1], data: [0]).write(to: store.ownPath(0))  // a stale final file is overwritten
        let out = try await SpectraRun(model: model, design: d, meta: meta, threads: 2).execute(store: dir, resume: true)
        XCTAssertEqual(out.computed, 0)
        XCTAssertEqual(filesUnder(dir), filesUnder(full))
        // Killed after writing every final file but before removing partial/: resuming tidies up.
        try AtomicFile.makeDirectory(dir + "/partial")
        try store.writePartial(path: 3, rows[3])
        let again = try await SpectraRun(model: model, design: d, meta: meta, threads: 2).execute(store: dir, resume: true)
        XCTAssertEqual(again.computed, 0)
        XCTAssertEqual(filesUnder(dir), filesUnder(full))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/partial"))
    }

    func testOtherFormatVersionAndTruncatedFilesAreClearErrors() async throws {
        let (dir, _) = try await fullRun()
        let metaPath = dir + "/meta.json"
        let text = String(decoding: FileManager.default.contents(atPath: metaPath)!, as: UTF8.self)
        try text.replacingOccurrences(of: "twoscale-spectra/1", with: "twoscale-spectra/2").write(toFile: metaPath, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try SpectraStore.open(directory: dir)) { e in
            let m = "\(e)"
            XCTAssertTrue(m.contains("meta.json") && m.contains("twoscale-spectra/2") && m.contains("twoscale-spectra/1"), m)
        }
        try text.write(toFile: metaPath, atomically: true, encoding: .utf8)
        let npy = dir + "/inner_2.npy"
        let bytes = FileManager.default.contents(atPath: npy)!
        try bytes.prefix(bytes.count - 8).write(to: URL(fileURLWithPath: npy))
        XCTAssertThrowsError(try SpectraStore.open(directory: dir).loadSpectra()) { e in
            let m = "\(e)"
            XCTAssertTrue(m.contains("inner_2.npy") && m.contains("truncated"), m)
        }
        XCTAssertThrowsError(try SpectraStore.open(directory: dir + "/nowhere")) { e in
            XCTAssertTrue("\(e)".contains("does not exist"), "\(e)")
        }
    }

    func testStoreRefusesANonEmptyForeignFolder() async throws {
        let dir = tmp("foreign")
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir + "/notes.txt"))
        let d = try design()
        do {
            _ = try await SpectraRun(model: model, design: d, meta: try testMeta(model, d), threads: 1).execute(store: dir, resume: false)
            XCTFail("a non-empty folder must be refused")
        } catch let e as TwoScaleError {
            XCTAssertEqual(e.kind, .usage)
            XCTAssertTrue(e.message.contains("not empty"), e.message)
        }
        XCTAssertEqual(Set(filesUnder(dir).keys), ["notes.txt"])
    }

    func testOneBlockStoreRoundTrip() async throws {
        let m = WholeFisher([3, 2, 2])
        let d = try MonteCarloDesign(paths: 4, inner: 5, seed: 1)
        let dir = tmp("one") + "/s"
        let out = try await SpectraRun(model: m, design: d, meta: try testMeta(m, d), threads: 2).execute(store: dir, resume: false)
        XCTAssertEqual(Set(filesUnder(dir).keys), ["meta.json", "own_1.npy"])
        let meta = try SpectraStore.open(directory: dir).meta
        XCTAssertEqual(meta.inner, 0)
        XCTAssertEqual(try SpectraStore.open(directory: dir).loadSpectra().own,
                       try MonteCarlo.layeredSpectra(out.rows, blockDimensions: m.blockDimensions).own)
    }
}
