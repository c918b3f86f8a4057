import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// Non-overlapping pooling over `size × size` windows of each channel (stride = size): the mean
/// (`average`) or the largest value (`max`; ties go to the first in row-major order, and the gradient
/// flows to that one). No parameters; the activation does not follow it.
public struct PoolingLayer: ImageLayer, Equatable {
    public enum Kind: String, Sendable { case average = "avg", max }
    public let kind: Kind
    public let input: ImageShape
    public let size: Int
    public let output: ImageShape

    public init(_ kind: Kind, input: ImageShape, size: Int) throws {
        guard size >= 1, size <= input.height, size <= input.width else {
            throw LayerGeometryError("a \(size)×\(size) window does not fit the \(input) input")
        }
        guard input.height % size == 0, input.width % size == 0 else {
            throw LayerGeometryError("a \(size)×\(size) window does not divide the \(input) input")
        }
        self.kind = kind
        self.input = input
        self.size = size
        output = ImageShape(height: input.height / size, width: input.width / size, channels: input.channels)
    }

    public var inputSize: Int { input.size }
    public var outputSize: Int { output.size }
    public var notationTerm: String { "\(kind.rawValue)pool\(size)" }
    public var inputNotation: String { "\(input.height)x\(input.width)x\(input.channels)" }
    public var description: String { "\(kind.rawValue)pool \(input)→\(output)" }

    /// `corners[o]`: the input index (within one image) of window element (0, 0), channel 0, of output
    /// pixel o; `offsets[i·size + j]`: window element (i, j)'s distance from it (add c for channel c).
    func windowTables() -> (corners: [Int], offsets: [Int]) {
        let ch = input.channels
        let corners = (0..<(output.height * output.width)).map { o in
            ((o / output.width) * size * input.width + (o % output.width) * size) * ch
        }
        let offsets = (0..<(size * size)).map { t in ((t / size) * input.width + t % size) * ch }
        return (corners, offsets)
    }

    /// The window element a max pool passes on (first largest in row-major order), for the window whose
    /// element (0, 0) is `start`.
    @inline(__always)
    func argmax(_ img: UnsafePointer<Double>, _ start: Int, _ offsets: UnsafeBufferPointer<Int>) -> Int {
        var best = start
        for t in offsets { if img[start + t] > img[best] { best = start + t } }
        return best
    }

    public func forward(_ x: Matrix, parameters θ: [Double]) -> Matrix { pooled(x, kind) }

    /// A window is one path per input it reads: a max pool passes each (weight 1, so its windows are
    /// summed), an average pool weights each by 1/k² (squared: 1/k⁴).
    public func pathNormStep(_ v: Matrix, parameters θ: [Double]) -> Matrix {
        let k2 = Double(size * size)
        var out = pooled(v, .average)
        let factor = kind == .max ? k2 : 1 / k2
        for i in out.data.indices { out.data[i] *= factor }
        return out
    }

    /// `x` pooled by `kind`'s rule over every window.
    private func pooled(_ x: Matrix, _ kind: Kind) -> Matrix {
        var out = Matrix(rows: x.rows, cols: outputSize)
        let inv = 1 / Double(size * size), ch = input.channels, (corners, offsets) = windowTables()
        x.data.withUnsafeBufferPointer { px in
            out.data.withUnsafeMutableBufferPointer { po in
                offsets.withUnsafeBufferPointer { pf in
                    for s in 0..<x.rows {
                        let img = px.baseAddress! + s * inputSize, to = po.baseAddress! + s * outputSize
                        for (o, corner) in corners.enumerated() {
                            for c in 0..<ch {
                                switch kind {
                                case .max: to[o * ch + c] = img[argmax(img, corner + c, pf)]
                                case .average:
                                    var t = 0.0
                                    for f in pf { t += img[corner + c + f] }
                                    to[o * ch + c] = t * inv
                                }
                            }
                        }
                    }
                }
            }
        }
        return out
    }

    public func inputGradient(_ g: Matrix, input x: Matrix, parameters θ: [Double]) -> Matrix {
        var out = Matrix(rows: g.rows, cols: inputSize)
        let inv = 1 / Double(size * size), ch = input.channels, (corners, offsets) = windowTables()
        // The backward signals of the output FIM have q rows per input row (row r reads input row r/q):
        // a max pool's winners are found once per input row and serve its q rows.
        let perInput = Swift.max(1, g.rows / Swift.max(1, x.rows))
        var winners = [Int](repeating: 0, count: kind == .max ? outputSize : 0)
        x.data.withUnsafeBufferPointer { px in
            g.data.withUnsafeBufferPointer { pg in
                out.data.withUnsafeMutableBufferPointer { po in
                    winners.withUnsafeMutableBufferPointer { pw in
                        offsets.withUnsafeBufferPointer { pf in
                            for r in 0..<g.rows {
                                let gr = pg.baseAddress! + r * outputSize, to = po.baseAddress! + r * inputSize
                                switch kind {
                                case .max:
                                    if r % perInput == 0 || r / perInput >= x.rows {
                                        let img = px.baseAddress! + Swift.min(r / perInput, x.rows - 1) * inputSize
                                        for (o, corner) in corners.enumerated() {
                                            for c in 0..<ch { pw[o * ch + c] = argmax(img, corner + c, pf) }
                                        }
                                    }
                                    for v in 0..<outputSize { to[pw[v]] += gr[v] }
                                case .average:
                                    for (o, corner) in corners.enumerated() {
                                        for c in 0..<ch {
                                            let v = gr[o * ch + c] * inv
                                            for f in pf { to[corner + c + f] += v }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return out
    }

}

extension PoolingLayer: NotatedLayer {
    /// `maxpool<K>`, `avgpool<K>`: non-overlapping K×K windows of an image.
    init?(notation term: String, input: NotationInput, bias: Bool) throws {
        guard case let .image(image) = input, term.hasPrefix("maxpool") || term.hasPrefix("avgpool") else { return nil }
        guard let k = Int(term.dropFirst(7)), k >= 1 else { throw LayerGeometryError("pooling is maxpool<K> or avgpool<K>, e.g. maxpool2") }
        try self.init(term.hasPrefix("max") ? .max : .average, input: image, size: k)
    }
}
