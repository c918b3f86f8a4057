import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// The shape of an image batch row: height × width × channels, stored channels fastest (HWC).
public struct ImageShape: Sendable, Equatable, CustomStringConvertible {
    public let height: Int
    public let width: Int
    public let channels: Int

    public init(height: Int, width: Int, channels: Int) {
        self.height = height
        self.width = width
        self.channels = channels
    }

    /// Values per image.
    public var size: Int { height * width * channels }
    /// `[height, width, channels]`.
    public var dimensions: [Int] { [height, width, channels] }
    public var description: String { "\(height)×\(width)×\(channels)" }

    /// `HxWxC` (e.g. `28x28x1`, case-insensitive) with sides and channels from 1 to 10⁵; nil otherwise. The
    /// one parser of image shapes, for `--arch`'s input term and `--shape`.
    public init?(parsing text: String) {
        let dims = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
            .map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard dims.count == 3, let h = dims[0], let w = dims[1], let c = dims[2],
              [h, w, c].allSatisfy({ (1...100_000).contains($0) }) else { return nil }
        self.init(height: h, width: w, channels: c)
    }
}

/// A layer that reads and writes images (a convolution or a pooling): what the model's input shape, the
/// data check and the PyTorch weight layout need to know of it.
public protocol ImageLayer: Layer {
    var input: ImageShape { get }
    var output: ImageShape { get }
}

/// A 2-D convolution `z_{p,c} = w_c · x̃_p (+ b_c)`: `filters` units shared over the output pixels p,
/// each reading the `kernel × kernel × C_in` receptive field `x_p` (zero outside the padded image).
/// Patches and weight rows are laid out (row, column, channel), channels fastest — the HWC order of
/// the input, so a convolution whose kernel covers the whole unpadded image is exactly a dense layer
/// with the same parameter block. (PyTorch stores a filter as (C_in, kh, kw): a weight importer must
/// permute.)
///
/// Batch operations go through im2col: the `(N·P) × k²C_in` patch matrix, one BLAS `gemm` for the
/// forward pass and one for each vector–Jacobian product.
public struct ConvolutionLayer: ImageLayer, Equatable {
    public let input: ImageShape
    public let filters: Int
    public let kernel: Int
    public let stride: Int
    public let padding: Int
    public let bias: Bool
    public let output: ImageShape

    /// Checks the geometry: a kernel no larger than the padded image, a stride that tiles it exactly.
    public init(input: ImageShape, filters: Int, kernel: Int, stride: Int = 1, padding: Int = 0, bias: Bool) throws {
        guard filters >= 1, kernel >= 1, stride >= 1, padding >= 0, padding < kernel else {
            throw LayerGeometryError("filters, kernel and stride must be ≥ 1 and the padding between 0 and kernel − 1 (got \(filters) filters, kernel \(kernel), stride \(stride), padding \(padding))")
        }
        let h = input.height + 2 * padding, w = input.width + 2 * padding
        guard kernel <= h, kernel <= w else {
            throw LayerGeometryError("a \(kernel)×\(kernel) kernel is larger than the \(input) input (padded to \(h)×\(w))")
        }
        guard (h - kernel) % stride == 0, (w - kernel) % stride == 0 else {
            throw LayerGeometryError("stride \(stride) does not tile the \(h)×\(w) padded input with a \(kernel)×\(kernel) kernel ((size − kernel) must be a multiple of the stride)")
        }
        self.input = input
        self.filters = filters
        self.kernel = kernel
        self.stride = stride
        self.padding = padding
        self.bias = bias
        output = ImageShape(height: (h - kernel) / stride + 1, width: (w - kernel) / stride + 1, channels: filters)
    }

    public var inputSize: Int { input.size }
    public var outputSize: Int { output.size }
    var positions: Int { output.height * output.width }
    var patchSize: Int { kernel * kernel * input.channels }
    public var structure: LayerStructure? {
        LayerStructure(units: filters, positions: positions, patchSize: patchSize, bias: bias)
    }
    /// PyTorch's convention: fan-in `k²C_in`, fan-out `k²C_out`.
    public var fans: (fanIn: Int, fanOut: Int) { (patchSize, kernel * kernel * filters) }
    public var notationTerm: String { "conv\(filters)k\(kernel)" + (stride > 1 ? "s\(stride)" : "") + (padding > 0 ? "p\(padding)" : "") }
    public var inputNotation: String { "\(input.height)x\(input.width)x\(input.channels)" }
    public var description: String {
        "conv \(input)→\(output) k\(kernel)" + (stride > 1 ? " s\(stride)" : "") + (padding > 0 ? " p\(padding)" : "") + (bias ? " (bias)" : "")
    }

    /// For output pixel p and kernel offset (i, j): the input pixel index, or nil in the padding.
    @inline(__always)
    func source(_ p: Int, _ i: Int, _ j: Int) -> Int? {
        let r = (p / output.width) * stride + i - padding, c = (p % output.width) * stride + j - padding
        guard r >= 0, r < input.height, c >= 0, c < input.width else { return nil }
        return r * input.width + c
    }

    /// im2col: `(rows·P) × (k²C_in (+1))`, with a trailing 1 per row when `augmented`.
    func im2col(_ x: Matrix, augmented: Bool) -> Matrix {
        let p = positions, ps = patchSize, width = ps + (augmented ? 1 : 0), cin = input.channels
        var out = Matrix(rows: x.rows * p, cols: width)
        x.data.withUnsafeBufferPointer { px in
            out.data.withUnsafeMutableBufferPointer { po in
                for s in 0..<x.rows {
                    let img = px.baseAddress! + s * input.size
                    for q in 0..<p {
                        let row = po.baseAddress! + (s * p + q) * width
                        for i in 0..<kernel {
                            for j in 0..<kernel {
                                guard let src = source(q, i, j) else { continue }  // zeros: padding
                                let dst = row + (i * kernel + j) * cin
                                for c in 0..<cin { dst[c] = img[src * cin + c] }
                            }
                        }
                        if augmented { row[ps] = 1 }
                    }
                }
            }
        }
        return out
    }

    /// The filters as a `C_out × k²C_in` matrix read from the block.
    func weightMatrix(_ θ: [Double]) -> Matrix {
        let n = filters * patchSize
        return Matrix(rows: filters, cols: patchSize, data: θ.count == n ? θ : Array(θ[0..<n]))
    }

    public func forward(_ x: Matrix, parameters θ: [Double]) -> Matrix {
        var z = BLAS.product(im2col(x, augmented: false), weightMatrix(θ), transB: true)  // (N·P) × C_out
        if bias {
            let off = filters * patchSize
            for r in 0..<z.rows { for c in 0..<filters { z.data[r * filters + c] += θ[off + c] } }
        }
        return Matrix(rows: x.rows, cols: outputSize, data: z.data)
    }

    /// col2im of `G W`: each patch gradient is added back to the pixels it was read from.
    public func inputGradient(_ g: Matrix, input x: Matrix, parameters θ: [Double]) -> Matrix {
        let rows = g.rows, p = positions, cin = input.channels
        let dp = BLAS.product(Matrix(rows: rows * p, cols: filters, data: g.data), weightMatrix(θ))  // (N·P) × k²C_in
        var out = Matrix(rows: rows, cols: input.size)
        dp.data.withUnsafeBufferPointer { pd in
            out.data.withUnsafeMutableBufferPointer { po in
                for s in 0..<rows {
                    let img = po.baseAddress! + s * input.size
                    for q in 0..<p {
                        let row = pd.baseAddress! + (s * p + q) * patchSize
                        for i in 0..<kernel {
                            for j in 0..<kernel {
                                guard let src = source(q, i, j) else { continue }
                                let from = row + (i * kernel + j) * cin
                                for c in 0..<cin { img[src * cin + c] += from[c] }
                            }
                        }
                    }
                }
            }
        }
        return out
    }

    /// `∂/∂W = Gᵀ·patches` summed over every (sample, position); `∂/∂b` the column sums of G.
    public func parameterGradient(_ g: Matrix, input x: Matrix, into grad: UnsafeMutableBufferPointer<Double>) {
        let gp = Matrix(rows: g.rows * positions, cols: filters, data: g.data)
        var dw = Matrix(rows: filters, cols: patchSize)
        BLAS.gemm(gp, transA: true, im2col(x, augmented: false), into: &dw)
        for i in 0..<(filters * patchSize) { grad[i] = dw.data[i] }
        if bias {
            let off = filters * patchSize
            for c in 0..<filters { grad[off + c] = 0 }
            for r in 0..<gp.rows { for c in 0..<filters { grad[off + c] += gp.data[r * filters + c] } }
        }
    }

    public func patches(_ x: Matrix) -> Matrix { im2col(x, augmented: bias) }

    /// The augmented patches: the output-FIM terms need them, and the first layer's are the same for every θ.
    public func inputGram(_ x: Matrix) -> Matrix { patches(x) }

    /// Weight sharing breaks the dense layer's Hadamard shortcut (`g_{n,a}` is a sum of P outer products,
    /// not one), so the per-sample gradients are formed — `N(K−1)` small gemms `B_{n,a}ᵀ X̃_n`
    /// (`C_out × P` by `P × (k²C_in + 1)`) — and their Gram taken with one `syrk`: cost
    /// `N(K−1)·P·C_out·k²C_in + (N(K−1))²·d_layer`, cheap because a convolution has few parameters.
    public func addGradientGram(into g: inout Matrix, backward b: Matrix, inputGram xp: Matrix, q: Int, alpha: Double) {
        let rows = b.rows, d = parameterCount
        var m = [Double](repeating: 0, count: rows * d)
        m.withUnsafeMutableBufferPointer { pm in
            gradientRows(backward: b, patches: xp, rows: 0..<rows, q: q, into: pm.baseAddress!, stride: d, offset: 0)
        }
        let bb = m.withUnsafeBufferPointer { BLAS.syrkUpper($0.baseAddress!, rows: rows, cols: d, transpose: false, alpha: alpha) }
        for r in 0..<rows { for c in r..<rows { g.data[r * rows + c] += bb.data[r * rows + c] } }
    }

    public func writeGradientRows(backward b: Matrix, input x: Matrix, rows: Range<Int>, q: Int,
                                  into out: UnsafeMutablePointer<Double>, stride: Int, offset: Int) {
        gradientRows(backward: b, patches: patches(x), rows: rows, q: q, into: out, stride: stride, offset: offset)
    }

    /// Row r of the per-sample gradients: `vec(B_rᵀ X̃_{r/q})` with `B_r` the `P × C_out` signals of row r;
    /// the bias part is the column sums of `B_r` (the last column of X̃ is ones).
    func gradientRows(backward b: Matrix, patches xp: Matrix, rows: Range<Int>, q: Int,
                      into out: UnsafeMutablePointer<Double>, stride: Int, offset: Int) {
        let p = positions, ps = patchSize, width = xp.cols
        var prod = [Double](repeating: 0, count: filters * width)
        b.data.withUnsafeBufferPointer { pb in
            xp.data.withUnsafeBufferPointer { px in
                prod.withUnsafeMutableBufferPointer { pr in
                    for r in rows {
                        BLAS.gemm(m: filters, n: width, k: p, a: pb.baseAddress! + r * p * filters, lda: filters, transA: true,
                                  b: px.baseAddress! + (r / q) * p * width, ldb: width, c: pr.baseAddress!, ldc: width)
                        let row = out + (r - rows.lowerBound) * stride + offset
                        for c in 0..<filters { for j in 0..<ps { row[c * ps + j] = pr[c * width + j] } }
                        if bias { for c in 0..<filters { row[filters * ps + c] = pr[c * width + ps] } }
                    }
                }
            }
        }
    }
}
