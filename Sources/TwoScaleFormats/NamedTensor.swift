import Foundation

/// One tensor of a weights file (`.npz` member or `.safetensors` entry): its name as the file spells it
/// (an `.npz` member without `.npy`), its stored dtype (`float32` or `float64`), its shape and its values
/// widened exactly to `Double`, in C (row-major) order.
public struct NamedTensor: Sendable, Equatable {
    public let name: String
    public let dtype: String
    public let shape: [Int]
    public let values: [Double]

    public init(name: String, dtype: String, shape: [Int], values: [Double]) {
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.values = values
    }

    /// The shape as the errors write it: `7×16`, `7`, or `a scalar`.
    public var shapeText: String { shape.isEmpty ? "a scalar" : shape.map(String.init).joined(separator: "×") }
}

/// IEEE floats stored as bytes (binary32 or binary64, either byte order), widened to `Double`.
enum FloatBytes {
    /// `count` values of `width` bytes (4 or 8) from `b[at...]`; the caller has checked the range.
    static func decode(_ b: [UInt8], at: Int, count: Int, width: Int, bigEndian: Bool) -> [Double] {
        precondition(width == 4 || width == 8)
        precondition(at >= 0 && count >= 0 && at + count * width <= b.count)
        var out = [Double](repeating: 0, count: count)
        b.withUnsafeBytes { raw in
            if width == 4 {
                for i in 0..<count {
                    let bits = raw.loadUnaligned(fromByteOffset: at + 4 * i, as: UInt32.self)
                    out[i] = Double(Float(bitPattern: bigEndian ? UInt32(bigEndian: bits) : UInt32(littleEndian: bits)))
                }
            } else {
                for i in 0..<count {
                    let bits = raw.loadUnaligned(fromByteOffset: at + 8 * i, as: UInt64.self)
                    out[i] = Double(bitPattern: bigEndian ? UInt64(bigEndian: bits) : UInt64(littleEndian: bits))
                }
            }
        }
        return out
    }
}
