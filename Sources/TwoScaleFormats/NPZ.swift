import Foundation
import TwoScaleCore

/// NumPy's `.npz` files: a zip archive (`ZipArchive`) of `.npy` members, one per array, as
/// `np.savez(f, *arrays, **named)` (stored) and `np.savez_compressed` (deflated) write them. Positional
/// arrays are named `arr_0`, `arr_1`, …; keyword arrays by their key (`0.weight` → member
/// `0.weight.npy`). Each member is decoded by `NPYArray.decodeTensor` (float32/float64, either byte
/// order, C or Fortran order).
public enum NPZ {
    /// The zip magic `PK\x03\x04` that starts an `.npz` file (`PK\x05\x06` starts an empty one).
    public static func looksLike(_ b: [UInt8]) -> Bool {
        b.count >= 4 && b[0] == 0x50 && b[1] == 0x4B && ((b[2] == 3 && b[3] == 4) || (b[2] == 5 && b[3] == 6))
    }

    /// Every array of the archive, in archive order, named without `.npy`. Members that are not
    /// `.npy` files, and repeated names, are errors; folders (names ending in `/`) are skipped.
    public static func tensors(_ bytes: [UInt8], source: String) throws -> [NamedTensor] {
        let zip = try ZipArchive(bytes: bytes, source: source)
        var out: [NamedTensor] = []
        var seen: Set<String> = []
        for entry in zip.entries where !entry.name.hasSuffix("/") {
            guard entry.name.hasSuffix(".npy") else {
                throw TwoScaleError.file(source, "member '\(entry.name)' of the .npz archive is not a .npy array")
            }
            let name = String(entry.name.dropLast(4))
            guard seen.insert(name).inserted else {
                throw TwoScaleError.file(source, "the .npz archive holds two arrays named '\(name)'")
            }
            out.append(try NPYArray.decodeTensor(try zip.contents(of: entry), name: name, source: source))
        }
        return out
    }
}
