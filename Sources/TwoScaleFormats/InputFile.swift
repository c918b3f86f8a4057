import Foundation
import TwoScaleCore

/// Reading a file the user named. Every reader goes through `read`, so that a missing file, a folder
/// given where a file belongs and an unreadable file each get one message that names the path and what
/// was expected, never the operating system's error number.
public enum InputFile {
    /// The bytes of `path`, which should be `what` (e.g. "a CSV file").
    public static func read(_ path: String, expecting what: String, mapped: Bool = false) throws -> Data {
        try check(path, expecting: what)
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path), options: mapped ? .mappedIfSafe : [])
        } catch {
            let reason = FileManager.default.isReadableFile(atPath: path) ? "an input/output error" : "permission denied"
            throw TwoScaleError.file(path, "cannot be read (\(reason)); give \(what)")
        }
    }

    /// Refuses a missing path or a folder, for readers that open the file themselves.
    public static func check(_ path: String, expecting what: String) throws {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw TwoScaleError.file(path, "no such file; give \(what)")
        }
        if isDir.boolValue { throw TwoScaleError.file(path, "is a folder; give \(what)") }
    }
}
