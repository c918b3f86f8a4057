import Foundation
import TwoScaleCore
import TwoScaleFormats

/// The spectra store (docs/METHOD.md §14): a folder holding the raw eigenvalues of a Monte
/// Carlo run, from which any ε grid, ζ, normalisation or Abbas ED is a cheap pass.
///
///     DIR/meta.json          settings (`StoreMeta`), written once at creation
///     DIR/own_m.npy          float64 (K, r_m): eigenvalues of F_m(θ^k), m = 1…L (1-based)
///     DIR/inner_m.npy        float64 (K, J, r_m): the inner draws of layer m ≥ 2
///     DIR/partial/path_000123.npy   while running: one file per completed path (see `PartialFile`)
///
/// Rows of different lengths (a Fisher model may return fewer eigenvalues than `d_m`: the omitted
/// ones are zeros) are padded with zeros at the end to the longest row `r_m`. Eigenvalues are stored
/// raw, before clamping. Every file is written atomically; a run killed at any moment continues from its
/// partial files (`resume`), and the final assembly (`assemble`) writes the same bytes however the run
/// was split or interrupted. A shard store holds the rows of `Shard.paths(of: K)`; `merge` interleaves
/// shards into the store the unsharded run writes, byte for byte.
public struct SpectraStore: Sendable {
    public let directory: String
    public let meta: StoreMeta

    public var metaPath: String { directory + "/meta.json" }
    public var partialDirectory: String { directory + "/partial" }
    public func ownPath(_ m: Int) -> String { directory + "/own_\(m + 1).npy" }
    public func innerPath(_ m: Int) -> String { directory + "/inner_\(m + 1).npy" }
    func partialPath(_ k: Int) -> String { partialDirectory + "/" + String(format: "path_%06d.npy", k) }

    init(directory: String, meta: StoreMeta) {
        self.directory = directory
        self.meta = meta
    }

    /// Whether the final `.npy` files are all present.
    public var isAssembled: Bool {
        (0..<meta.layers.count).allSatisfy { m in
            FileManager.default.fileExists(atPath: ownPath(m)) && (m == 0 || FileManager.default.fileExists(atPath: innerPath(m)))
        }
    }

    /// Creates a new store folder and writes its meta.json; refuses a folder that already holds a store.
    public static func create(directory: String, meta: StoreMeta, flag: String = "\(Setting.store)") throws -> SpectraStore {
        let store = SpectraStore(directory: directory, meta: meta)
        if FileManager.default.fileExists(atPath: store.metaPath) {
            throw TwoScaleError.invalid(flag, directory, allowed: "the folder already holds a spectra store; add \(Setting.resume) to continue it, or choose another folder")
        }
        try Self.checkNewFolder(directory, flag: flag)
        try AtomicFile.makeDirectory(directory)
        // meta.json first, then partial/: a run killed in between leaves a store that `Setting.resume` continues
        // (resume recreates partial/), never a folder that is neither empty nor a store.
        try AtomicFile.write(try meta.serialized(), to: store.metaPath)
        try AtomicFile.makeDirectory(store.partialDirectory)
        return store
    }

    /// A new store goes into a new or empty folder, never among other files (e.g. the store `.`).
    static func checkNewFolder(_ directory: String, flag: String) throws {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDir) else { return }
        guard isDir.boolValue else {
            throw TwoScaleError.invalid(flag, directory, allowed: "this is a file; a spectra store is a folder (new or empty)")
        }
        // A run killed while writing meta.json leaves only its temporary (`.meta.json.tmp-PID`): that
        // folder counts as empty, and the leftover goes.
        let all = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let stale = all.filter { $0.hasPrefix(".meta.json.tmp-") }
        let names = all.filter { !stale.contains($0) }
        guard names.isEmpty else {
            throw TwoScaleError.invalid(flag, directory, allowed: "the folder is not empty and holds no spectra store; choose a new or empty folder")
        }
        for name in stale { try? FileManager.default.removeItem(atPath: directory + "/" + name) }
    }

    /// Opens an existing store, checking that `meta.json` records the same settings (and shard) as
    /// `expected`; a difference is a usage error naming each differing flag.
    public static func resume(directory: String, expected: StoreMeta) throws -> SpectraStore {
        let store = try open(directory: directory)
        let diff = store.meta.differences(to: expected)
        if !diff.isEmpty {
            throw TwoScaleError.usage("\(Setting.resume): the store \(directory) was made with other settings (store vs this command): " + diff.joined(separator: "; "))
        }
        if store.meta.shard != expected.shard {
            throw TwoScaleError.usage("\(Setting.resume): the store \(directory) holds shard \(store.meta.shard?.description ?? "(none)"), this command asks for \(expected.shard?.description ?? "(none)")")
        }
        store.removeStaleTemporaries()
        if !store.isAssembled { try AtomicFile.makeDirectory(store.partialDirectory) }
        return store
    }

    /// Opens a store folder by its meta.json (format checked).
    public static func open(directory: String) throws -> SpectraStore {
        let path = directory + "/meta.json"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TwoScaleError.file(directory, FileManager.default.fileExists(atPath: directory)
                ? "is not a spectra store (no meta.json)" : "does not exist")
        }
        return SpectraStore(directory: directory, meta: try StoreMeta.parse(data, source: path))
    }

    /// Removes the temporary files (`.NAME.tmp-PID`) an atomic write leaves when the process is killed
    /// mid-write, so that a resumed store holds exactly the files of an uninterrupted one.
    func removeStaleTemporaries() {
        for d in [directory, partialDirectory] {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: d)) ?? [] where name.hasPrefix(".") && name.contains(".tmp-") {
                try? FileManager.default.removeItem(atPath: d + "/" + name)
            }
        }
    }

    // MARK: partial files

    /// Writes path k's spectra atomically to `partial/path_k.npy`.
    public func writePartial(path k: Int, _ s: PathSpectra) throws {
        try PartialFile.encode(s).write(to: partialPath(k))
    }

    /// The completed paths found in `partial/` (only this store's paths; any other file is ignored).
    public func completedPaths() throws -> [Int: PathSpectra] {
        let wanted = Set(meta.storedPaths)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: partialDirectory)) ?? []
        var out: [Int: PathSpectra] = [:]
        for name in names.sorted() where name.hasPrefix("path_") && name.hasSuffix(".npy") {
            guard let k = Int(name.dropFirst(5).dropLast(4)), wanted.contains(k) else { continue }
            let file = partialDirectory + "/" + name
            out[k] = try PartialFile.decode(try NPYArray.read(path: file), meta: meta, source: file)
        }
        return out
    }

    // MARK: final files

    /// Writes `own_m.npy` and `inner_m.npy` from the rows of `meta.storedPaths` (in that order),
    /// atomically, then removes `partial/`.
    public func assemble(_ rows: [PathSpectra]) throws {
        let arrays = try Self.arrays(rows, meta: meta)
        for (m, a) in arrays.own.enumerated() { try a.write(to: ownPath(m)) }
        for (m, a) in arrays.inner.enumerated() where m >= 1 { try a?.write(to: innerPath(m)) }
        try? FileManager.default.removeItem(atPath: partialDirectory)
    }

    /// The `.npy` arrays of `rows`, each block padded with zeros at the end to its longest row.
    static func arrays(_ rows: [PathSpectra], meta: StoreMeta) throws -> (own: [NPYArray], inner: [NPYArray?]) {
        let L = meta.layers.count, J = meta.inner
        guard rows.count == meta.storedPaths.count else {
            throw TwoScaleError.failure("store: \(rows.count) paths to write, the store holds \(meta.storedPaths.count)")
        }
        var own: [NPYArray] = []
        var inner: [NPYArray?] = [nil]
        for m in 0..<L {
            let r = rows.reduce(0) { Swift.max($0, $1.own[m].count) }
            var data = [Double](); data.reserveCapacity(rows.count * r)
            for row in rows { data += row.own[m]; data += repeatElement(0, count: r - row.own[m].count) }
            own.append(try NPYArray(shape: [rows.count, r], data: data))
            guard m >= 1 else { continue }
            let ri = rows.reduce(0) { acc, row in row.inner[m].reduce(acc) { Swift.max($0, $1.count) } }
            var di = [Double](); di.reserveCapacity(rows.count * J * ri)
            for row in rows {
                guard row.inner[m].count == J else { throw TwoScaleError.failure("store: a path has \(row.inner[m].count) inner draws, J = \(J)") }
                for draw in row.inner[m] { di += draw; di += repeatElement(0, count: ri - draw.count) }
            }
            inner.append(try NPYArray(shape: [rows.count, J, ri], data: di))
        }
        return (own, inner)
    }

    /// Reads the final files back as rows (in `meta.storedPaths` order), validating every shape against
    /// meta.json; errors name the file.
    public func loadRows() throws -> [PathSpectra] {
        guard isAssembled else {
            let done = (try? completedPaths().count) ?? 0
            throw TwoScaleError.file(directory, "is an unfinished spectra store (\(done) of \(meta.storedPaths.count) paths done); continue it with twoscale ed \(Setting.resume) \(Setting.store) \(directory) and the same settings")
        }
        let n = meta.storedPaths.count, J = meta.inner
        var rows = [PathSpectra](repeating: PathSpectra(own: [], inner: [[]]), count: n)
        for m in 0..<meta.layers.count {
            let path = ownPath(m)
            let a = try NPYArray.read(path: path)
            try Self.checkFinite(a, path: path)
            guard a.shape.count == 2, a.shape[0] == n, a.shape[1] <= meta.layers[m] else {
                throw TwoScaleError.file(path, "has shape \(a.shape); meta.json needs (\(n), r) with r ≤ \(meta.layers[m])")
            }
            let r = a.shape[1]
            for k in 0..<n { rows[k].own.append(Array(a.data[(k * r)..<((k + 1) * r)])) }
            guard m >= 1 else { continue }
            let ip = innerPath(m)
            let b = try NPYArray.read(path: ip)
            try Self.checkFinite(b, path: ip)
            guard b.shape.count == 3, b.shape[0] == n, b.shape[1] == J, b.shape[2] <= meta.layers[m] else {
                throw TwoScaleError.file(ip, "has shape \(b.shape); meta.json needs (\(n), \(J), r) with r ≤ \(meta.layers[m])")
            }
            let ri = b.shape[2]
            for k in 0..<n {
                rows[k].inner.append((0..<J).map { j in
                    let o = (k * J + j) * ri
                    return Array(b.data[o..<(o + ri)])
                })
            }
        }
        return rows
    }

    /// Eigenvalues are finite numbers: a NaN or ∞ in a store file means it was damaged or written by
    /// something else; name the file and the offending element.
    static func checkFinite(_ a: NPYArray, path: String) throws {
        if let i = a.data.firstIndex(where: { !$0.isFinite }) {
            throw TwoScaleError.file(path, "element \(i) (flat index) is \(a.data[i]); eigenvalues must be finite numbers (the file is damaged: recompute it with twoscale ed)")
        }
    }

    /// The spectra of a complete, unsharded store (as `LayeredSpectra`, round-off negatives clamped).
    public func loadSpectra() throws -> LayeredSpectra {
        if let s = meta.shard {
            throw TwoScaleError.file(directory, "holds shard \(s) of a run; merge the shards first (twoscale merge DIR1 DIR2 … \(Setting.output) DIR)")
        }
        return try MonteCarlo.layeredSpectra(try loadRows(), blockDimensions: meta.layers)
    }

    // MARK: merge

    /// Merges complete shard stores into the store the unsharded run writes, at `output` (which must not
    /// hold a store). Checks: every input is a shard of the same settings and shard count, the shards are
    /// distinct and together complete. Nothing is written unless every check passes; meta.json last.
    @discardableResult
    public static func merge(_ directories: [String], into output: String, flag: String = "\(Setting.output)") throws -> SpectraStore {
        guard !directories.isEmpty else { throw TwoScaleError.usage("merge: give the shard stores to merge") }
        let stores = try directories.map { try open(directory: $0) }
        var shards: [Int: SpectraStore] = [:]
        var count: Int?
        let first = stores[0]
        for s in stores {
            guard let sh = s.meta.shard else {
                throw TwoScaleError.file(s.directory, "is not a shard store (made without \(Setting.shard)); nothing to merge")
            }
            let diff = first.meta.differences(to: s.meta)
            guard diff.isEmpty else {
                throw TwoScaleError.file(s.directory, "was made with other settings than \(first.directory): " + diff.joined(separator: "; "))
            }
            if let c = count, c != sh.count {
                throw TwoScaleError.file(s.directory, "is shard \(sh) but \(first.directory) is shard \(first.meta.shard?.description ?? "?") — shards of different splits")
            }
            count = sh.count
            if let other = shards[sh.index] {
                throw TwoScaleError.file(s.directory, "is shard \(sh), the same as \(other.directory); shards must be disjoint")
            }
            shards[sh.index] = s
        }
        let n = count ?? 1
        let missing = (1...n).filter { shards[$0] == nil }
        guard missing.isEmpty else {
            throw TwoScaleError.usage("merge: shards \(missing.map { "\($0)/\(n)" }.joined(separator: ", ")) are missing; a merge needs all \(n)")
        }
        let meta = first.meta.unsharded
        var rows = [PathSpectra?](repeating: nil, count: meta.paths)
        for (_, s) in shards.sorted(by: { $0.key < $1.key }) {
            for (k, row) in zip(s.meta.storedPaths, try s.loadRows()) { rows[k] = row }
        }
        let all = rows.compactMap { $0 }
        guard all.count == meta.paths else { throw TwoScaleError.failure("merge: the shards do not cover all \(meta.paths) paths") }
        let out = SpectraStore(directory: output, meta: meta)
        if FileManager.default.fileExists(atPath: out.metaPath) {
            throw TwoScaleError.invalid(flag, output, allowed: "the folder already holds a spectra store; choose a new folder")
        }
        try checkNewFolder(output, flag: flag)
        // The merged store is built in a hidden sibling folder and renamed into place in one step, so a
        // merge killed or failing at any moment leaves no half-merged output (a rerun just works);
        // leftovers of killed merges go first.
        let url = URL(fileURLWithPath: output).standardizedFileURL
        let parent = url.deletingLastPathComponent().path, name = url.lastPathComponent
        try AtomicFile.makeDirectory(parent)
        for old in (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? [] where old.hasPrefix(".\(name).merge-") {
            try? FileManager.default.removeItem(atPath: parent + "/" + old)
        }
        let staging = SpectraStore(directory: parent + "/.\(name).merge-\(getpid())", meta: meta)
        do {
            try AtomicFile.makeDirectory(staging.directory)
            let arrays = try arrays(all, meta: meta)
            for (m, a) in arrays.own.enumerated() { try a.write(to: staging.ownPath(m)) }
            for (m, a) in arrays.inner.enumerated() where m >= 1 { try a?.write(to: staging.innerPath(m)) }
            try AtomicFile.write(try meta.serialized(), to: staging.metaPath)
            // rename(2) replaces an empty folder of the same name atomically.
            guard rename(staging.directory, output) == 0 else {
                throw TwoScaleError.file(output, "cannot be created (\(String(cString: strerror(errno))))")
            }
        } catch let e as TwoScaleError {
            try? FileManager.default.removeItem(atPath: staging.directory)
            // Name the folder the user asked for, not the staging one.
            throw e.renaming(staging.directory, to: output)
        }
        return out
    }
}

/// One path's spectra in a single 1-D float64 `.npy` (written atomically, so a path is either complete
/// or absent): `[B, J, then per block m: w, own_m (w values), then per block m ≥ 1 and draw j: w,
/// inner_m_j (w values)]` — every row carries its length, so nothing is assumed about the model.
enum PartialFile {
    static func encode(_ s: PathSpectra) -> NPYArray {
        let J = s.inner.count > 1 ? s.inner[1].count : 0
        var d: [Double] = [Double(s.own.count), Double(J)]
        for o in s.own { d.append(Double(o.count)); d += o }
        for m in 1..<Swift.max(1, s.own.count) {
            for draw in s.inner[m] { d.append(Double(draw.count)); d += draw }
        }
        return NPYArray(uncheckedShape: [d.count], data: d)
    }

    static func decode(_ a: NPYArray, meta: StoreMeta, source: String) throws -> PathSpectra {
        let bad = TwoScaleError.file(source, "is not a valid partial path file of this store; delete it and resume to recompute the path")
        var i = 0
        let d = a.data
        func take() throws -> Int {
            guard i < d.count, d[i] >= 0, d[i] == d[i].rounded(), d[i] <= 1e9 else { throw bad }
            i += 1
            return Int(d[i - 1])
        }
        func row() throws -> [Double] {
            let w = try take()
            guard i + w <= d.count else { throw bad }
            defer { i += w }
            return Array(d[i..<(i + w)])
        }
        let L = meta.layers.count
        guard a.shape.count == 1, try take() == L, try take() == meta.inner else { throw bad }
        var own: [[Double]] = []
        for m in 0..<L {
            let r = try row()
            guard r.count <= meta.layers[m] else { throw bad }
            own.append(r)
        }
        var inner: [[[Double]]] = [[]]
        for m in 1..<Swift.max(1, L) {
            var draws: [[Double]] = []
            for _ in 0..<meta.inner {
                let r = try row()
                guard r.count <= meta.layers[m] else { throw bad }
                draws.append(r)
            }
            inner.append(draws)
        }
        guard i == d.count else { throw bad }
        return PathSpectra(own: own, inner: inner)
    }
}
