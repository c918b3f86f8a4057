import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// A fully connected layer `z = W x (+ b)`, `W ∈ R^(n_out × n_in)`: one position, whose patch is the
/// whole input, and `n_out` units (neurons). Parameter block: `vec(W)` row by row, then `b`.
/// Every batch operation is one BLAS `gemm`.
public struct DenseLayer: ParametricLayer, Equatable {
    public let inputSize: Int
    public let outputSize: Int
    public let bias: Bool

    public init(inputs: Int, outputs: Int, bias: Bool) {
        precondition(inputs >= 1 && outputs >= 1)
        inputSize = inputs
        outputSize = outputs
        self.bias = bias
    }

    public var parameterStructure: LayerStructure {
        LayerStructure(units: outputSize, positions: 1, patchSize: inputSize, bias: bias)
    }
    public var fans: (fanIn: Int, fanOut: Int) { (inputSize, outputSize) }
    public var notationTerm: String { "\(outputSize)" }
    public var description: String { "dense \(inputSize)→\(outputSize)" + (bias ? " (bias)" : "") }

    /// W as a matrix, read from the block θ (no copy when the layer has no bias).
    func weightMatrix(_ θ: [Double]) -> Matrix {
        let n = inputSize * outputSize
        return Matrix(rows: outputSize, cols: inputSize, data: θ.count == n ? θ : Array(θ[0..<n]))
    }

    public func forward(_ x: Matrix, parameters θ: [Double]) -> Matrix {
        var z = BLAS.product(x, weightMatrix(θ), transB: true)
        if bias {
            let off = inputSize * outputSize
            let n = z.cols
            θ.withUnsafeBufferPointer { pb in
                z.data.withUnsafeMutableBufferPointer { p in
                    for i in 0..<z.rows { for j in 0..<n { p[i * n + j] += pb[off + j] } }
                }
            }
        }
        return z
    }

    public func inputGradient(_ g: Matrix, input x: Matrix, parameters θ: [Double]) -> Matrix {
        BLAS.product(g, weightMatrix(θ))
    }

    public func parameterGradient(_ g: Matrix, input x: Matrix, into grad: UnsafeMutableBufferPointer<Double>) {
        let rows = outputSize, cols = inputSize, bsz = g.rows
        var dw = Matrix(rows: rows, cols: cols)
        BLAS.gemm(g, transA: true, x, into: &dw)
        dw.data.withUnsafeBufferPointer { wp in
            for i in 0..<(rows * cols) { grad[i] = wp[i] }
        }
        if bias {
            let bb = rows * cols
            for j in 0..<rows { grad[bb + j] = 0 }
            g.data.withUnsafeBufferPointer { gd in
                for i in 0..<bsz { for j in 0..<rows { grad[bb + j] += gd[i * rows + j] } }
            }
        }
    }

    public func patches(_ x: Matrix) -> Matrix { FisherKernels.augmented(x, bias: bias) }

    public func inputGram(_ x: Matrix) -> Matrix {
        var g = BLAS.gram(x)
        if bias { for i in g.data.indices { g.data[i] += 1 } }
        return g
    }

    /// `g_{n,a} · g_{n',b} = (β_{n,a} · β_{n',b}) (x̃_n · x̃_{n'})`: the Hadamard product of the backward
    /// Gram and the input Gram (docs/METHOD.md §12).
    public func addGradientGram(into g: inout Matrix, backward b: Matrix, inputGram: Matrix, q: Int, alpha: Double) {
        FisherKernels.addHadamardGram(into: &g, backward: b, activationGram: inputGram, q: q, alpha: alpha)
    }

    /// `g_{n,a} = β_{n,a} ⊗ x̃_n`: row i of W's part is `β_i x_n`, then the bias part `β`.
    public func writeGradientRows(backward b: Matrix, patches xp: Matrix, first: Int, q: Int,
                                  into out: UnsafeMutablePointer<Double>, stride: Int, offset: Int) {
        let nin = inputSize, nout = outputSize, width = xp.cols
        b.data.withUnsafeBufferPointer { pb in
            xp.data.withUnsafeBufferPointer { px in
                for src in 0..<b.rows {
                    let row = out + src * stride + offset
                    let ar = (first + src / q) * width
                    for i in 0..<nout {
                        let beta = pb[src * nout + i]
                        for j in 0..<nin { row[i * nin + j] = beta * px[ar + j] }
                    }
                    if bias { for i in 0..<nout { row[nout * nin + i] = pb[src * nout + i] } }
                }
            }
        }
    }
}

extension DenseLayer {
    /// nn.Linear's weight is (out, in): twoscale's layout.
    public var pytorchWeight: PyTorchWeightLayout? { nil }

    /// A dense layer reads an image flattened: PyTorch's columns follow (C, H, W), twoscale's (H, W, C).
    public func weightFromChannelFirst(_ values: [Double], input image: ImageShape) -> [Double] {
        Self.columnsFromChannelFirst(values, rows: outputSize, image: image)
    }

    /// A dense weight whose columns follow PyTorch's channel-first flattening (C, H, W) of `image`,
    /// with its columns moved to twoscale's (H, W, C) order.
    static func columnsFromChannelFirst(_ v: [Double], rows: Int, image s: ImageShape) -> [Double] {
        let cols = s.size
        var out = [Double](repeating: 0, count: v.count)
        for i in 0..<rows { for ci in 0..<s.channels { for h in 0..<s.height { for x in 0..<s.width {
            out[i * cols + (h * s.width + x) * s.channels + ci] = v[i * cols + (ci * s.height + h) * s.width + x]
        } } } }
        return out
    }
}

extension DenseLayer: NotatedLayer {
    /// A number n: n units on the input (an image flattened).
    init?(notation term: String, input: NotationInput, bias: Bool) throws {
        guard let n = Int(term) else { return nil }
        guard (1...1_000_000).contains(n) else { throw LayerGeometryError("a dense layer has 1 to 10⁶ units") }
        self.init(inputs: input.size, outputs: n, bias: bias)
    }
}
