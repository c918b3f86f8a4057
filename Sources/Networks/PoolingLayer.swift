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
    public var structure: LayerStructure? { nil }
    public var fans: (fanIn: Int, fanOut: Int) { (0, 0) }
    public var notationTerm: String { "\(kind.rawValue)pool\(size)" }
    public var inputNotation: String { "\(input.height)x\(input.width)x\(input.channels)" }
    public var description: String { "\(kind.rawValue)pool \(input)→\(output)" }

    /// The input index (within one image) of window element (i, j) of output pixel `o`, channel c.
    @inline(__always)
    func source(_ o: Int, _ i: Int, _ j: Int, _ c: Int) -> Int {
        let r = (o / output.width) * size + i, col = (o % output.width) * size + j
        return (r * input.width + col) * input.channels + c
    }

    /// The window element a max pool passes on (first largest).
    func argmax(_ img: UnsafePointer<Double>, _ o: Int, _ c: Int) -> Int {
        var best = source(o, 0, 0, c)
        for i in 0..<size { for j in 0..<size { let s = source(o, i, j, c); if img[s] > img[best] { best = s } } }
        return best
    }

    public func forward(_ x: Matrix, parameters θ: [Double]) -> Matrix {
        var out = Matrix(rows: x.rows, cols: outputSize)
        let inv = 1 / Double(size * size), ch = input.channels
        x.data.withUnsafeBufferPointer { px in
            for s in 0..<x.rows {
                let img = px.baseAddress! + s * inputSize
                for o in 0..<(output.height * output.width) {
                    for c in 0..<ch {
                        let v: Double
                        switch kind {
                        case .max: v = img[argmax(img, o, c)]
                        case .average:
                            var t = 0.0
                            for i in 0..<size { for j in 0..<size { t += img[source(o, i, j, c)] } }
                            v = t * inv
                        }
                        out.data[s * outputSize + o * ch + c] = v
                    }
                }
            }
        }
        return out
    }

    public func inputGradient(_ g: Matrix, input x: Matrix, parameters θ: [Double]) -> Matrix {
        var out = Matrix(rows: g.rows, cols: inputSize)
        let inv = 1 / Double(size * size), ch = input.channels
        // The backward signals of the output FIM have q rows per input row (row r reads input row r/q).
        let perInput = g.rows / Swift.max(1, x.rows)
        x.data.withUnsafeBufferPointer { px in
            for r in 0..<g.rows {
                let img = px.baseAddress! + (r / perInput) * inputSize
                for o in 0..<(output.height * output.width) {
                    for c in 0..<ch {
                        let v = g.data[r * outputSize + o * ch + c]
                        switch kind {
                        case .max: out.data[r * inputSize + argmax(img, o, c)] += v
                        case .average:
                            for i in 0..<size { for j in 0..<size { out.data[r * inputSize + source(o, i, j, c)] += v * inv } }
                        }
                    }
                }
            }
        }
        return out
    }

    public func parameterGradient(_ g: Matrix, input x: Matrix, into grad: UnsafeMutableBufferPointer<Double>) {}
    public func patches(_ x: Matrix) -> Matrix { preconditionFailure("pooling has no parameters") }
    public func inputGram(_ x: Matrix) -> Matrix { preconditionFailure("pooling has no parameters") }
    public func addGradientGram(into g: inout Matrix, backward b: Matrix, inputGram: Matrix, q: Int, alpha: Double) {}
    public func writeGradientRows(backward b: Matrix, input x: Matrix, rows: Range<Int>, q: Int,
                                  into out: UnsafeMutablePointer<Double>, stride: Int, offset: Int) {}
}
