import Foundation
import TwoScaleCore
#if canImport(Glibc)
import Glibc
#endif

/// Files are written atomically: to a temporary file in the same folder, flushed to disk, then renamed
/// over the target, so a reader (or a crash) sees the old file or the new one, never a part.
public enum AtomicFile {
    public static func write(_ data: Data, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let dir = url.deletingLastPathComponent().path
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
            throw TwoScaleError.file(path, "cannot be written: the folder \(dir) does not exist")
        }
        let tmp = dir + "/." + url.lastPathComponent + ".tmp-\(getpid())"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else {
            throw TwoScaleError.file(path, "cannot be written (\(String(cString: strerror(errno))))")
        }
        var ok = true
        var err: Int32 = 0
        data.withUnsafeBytes { (buf: UnsafeRawBufferPointer) in
            var off = 0
            while off < buf.count {
                let n = Glibc.write(fd, buf.baseAddress! + off, buf.count - off)
                if n <= 0 { ok = false; err = errno; break }
                off += n
            }
        }
        if ok && fsync(fd) != 0 { ok = false; err = errno }
        close(fd)
        guard ok else {
            unlink(tmp)
            throw TwoScaleError.file(path, "cannot be written (\(String(cString: strerror(err))))")
        }
        guard rename(tmp, path) == 0 else {
            let e = errno
            unlink(tmp)
            throw TwoScaleError.file(path, "cannot be written (\(String(cString: strerror(e))))")
        }
    }

    public static func write(_ text: String, to path: String) throws {
        try write(Data(text.utf8), to: path)
    }

    /// Creates a folder (and parents) or fails with a clear message naming the part that failed and
    /// the system's reason (read-only file system, permission denied, a file in the way, …).
    public static func makeDirectory(_ path: String) throws {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir) {
            guard isDir.boolValue else { throw TwoScaleError.file(path, "cannot create the folder: a file of that name exists") }
        } else {
            let parent = (path as NSString).deletingLastPathComponent
            if !parent.isEmpty, parent != path { try makeDirectory(parent) }
            if mkdir(path, 0o755) != 0 && errno != EEXIST {
                throw TwoScaleError.file(path, "cannot create the folder (\(String(cString: strerror(errno))))")
            }
        }
        guard access(path, W_OK) == 0 else { throw TwoScaleError.file(path, "the folder is not writable") }
    }
}
