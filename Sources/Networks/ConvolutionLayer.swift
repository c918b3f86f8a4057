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
    /// one parser of image shapes, for the architecture notation's input term and `Setting.shape`.
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
public struct ConvolutionLayer: ImageLayer, ParametricLayer, Equatable {
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
        // Every size the layer tabulates, overflow-checked: outputs, parameters, and the patch table (positions·k²).
        let positions = ((h - kernel) / stride + 1).multipliedReportingOverflow(by: (w - kernel) / stride + 1)
        let k2 = kernel.multipliedReportingOverflow(by: kernel)
        let patch = k2.partialValue.multipliedReportingOverflow(by: input.channels)
        let outputs = positions.partialValue.multipliedReportingOverflow(by: filters)
        let weights = patch.partialValue.multipliedReportingOverflow(by: filters)
        let table = positions.partialValue.multipliedReportingOverflow(by: k2.partialValue)
        guard ![positions, k2, patch, outputs, weights, table].contains(where: { $0.overflow }),
              outputs.partialValue <= Self.maxTabulated, weights.partialValue <= Self.maxTabulated, table.partialValue <= Self.maxTabulated else {
            throw LayerGeometryError("a \(kernel)×\(kernel) convolution with \(filters) filters on the \(input) input (padded to \(h)×\(w)) is too large: its outputs, weights and patch table must each stay within 2²⁸")
        }
        self.input = input
        self.filters = filters
        self.kernel = kernel
        self.stride = stride
        self.padding = padding
        self.bias = bias
        output = ImageShape(height: (h - kernel) / stride + 1, width: (w - kernel) / stride + 1, channels: filters)
    }

    /// The most outputs per image, weights, or patch-table entries (positions·k²) a convolution may have.
    static let maxTabulated = 1 << 28

    public var inputSize: Int { input.size }
    public var outputSize: Int { output.size }
    var positions: Int { output.height * output.width }
    var patchSize: Int { kernel * kernel * input.channels }
    public var parameterStructure: LayerStructure {
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

    /// `sources[p·k² + i·k + j]`: the first value (`pixel · C_in`) within one image of kernel offset (i, j)
    /// of output pixel p, or −1 in the padding — `source` tabulated once per batch operation.
    func sourceTable() -> [Int] {
        let k2 = kernel * kernel, cin = input.channels
        var table = [Int](repeating: -1, count: positions * k2)
        for q in 0..<positions {
            for i in 0..<kernel { for j in 0..<kernel { if let src = source(q, i, j) { table[q * k2 + i * kernel + j] = src * cin } } }
        }
        return table
    }

    /// im2col: `(rows·P) × (k²C_in (+1))`, with a trailing 1 per row when `augmented`.
    func im2col(_ x: Matrix, augmented: Bool) -> Matrix {
        let p = positions, ps = patchSize, width = ps + (augmented ? 1 : 0), cin = input.channels, k2 = kernel * kernel
        let table = sourceTable()
        var out = Matrix(rows: x.rows * p, cols: width)
        x.data.withUnsafeBufferPointer { px in
            out.data.withUnsafeMutableBufferPointer { po in
                table.withUnsafeBufferPointer { pt in
                    for s in 0..<x.rows {
                        let img = px.baseAddress! + s * input.size
                        for q in 0..<p {
                            let row = po.baseAddress! + (s * p + q) * width
                            for t in 0..<k2 {
                                let src = pt[q * k2 + t]
                                guard src >= 0 else { continue }  // zeros: padding
                                let dst = row + t * cin
                                for c in 0..<cin { dst[c] = img[src + c] }
                            }
                            if augmented { row[ps] = 1 }
                        }
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

    /// col2im of `G W`: each patch gradient is added back to the pixels it was read from. The patch
    /// gradients `G W` are formed a few rows at a time (≤ 2¹⁶ values), so the `(rows·P) × k²C_in` matrix
    /// is never held whole.
    public func inputGradient(_ g: Matrix, input x: Matrix, parameters θ: [Double]) -> Matrix {
        let rows = g.rows, p = positions, cin = input.channels, ps = patchSize, k2 = kernel * kernel
        let w = weightMatrix(θ), table = sourceTable()
        var out = Matrix(rows: rows, cols: input.size)
        guard rows > 0 else { return out }
        let chunk = Swift.max(1, (1 << 16) / Swift.max(1, p * ps))
        var dp = [Double](repeating: 0, count: Swift.min(rows, chunk) * p * ps)
        g.data.withUnsafeBufferPointer { pg in
            w.data.withUnsafeBufferPointer { pw in
                table.withUnsafeBufferPointer { pt in
                    dp.withUnsafeMutableBufferPointer { pd in
                        out.data.withUnsafeMutableBufferPointer { po in
                            var first = 0
                            while first < rows {
                                let count = Swift.min(chunk, rows - first)
                                BLAS.gemm(m: count * p, n: ps, k: filters, a: pg.baseAddress! + first * p * filters, lda: filters,
                                          b: pw.baseAddress!, ldb: ps, c: pd.baseAddress!, ldc: ps)
                                for s in 0..<count {
                                    let img = po.baseAddress! + (first + s) * input.size
                                    for q in 0..<p {
                                        let row = pd.baseAddress! + (s * p + q) * ps
                                        for t in 0..<k2 {
                                            let src = pt[q * k2 + t]
                                            guard src >= 0 else { continue }
                                            let from = row + t * cin, to = img + src
                                            for c in 0..<cin { to[c] += from[c] }
                                        }
                                    }
                                }
                                first += count
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
            gradientRows(backward: b, patches: xp, first: 0, q: q, into: pm.baseAddress!, stride: d, offset: 0)
        }
        let bb = m.withUnsafeBufferPointer { BLAS.syrkUpper($0.baseAddress!, rows: rows, cols: d, transpose: false, alpha: alpha) }
        for r in 0..<rows { for c in r..<rows { g.data[r * rows + c] += bb.data[r * rows + c] } }
    }

    public func writeGradientRows(backward b: Matrix, patches xp: Matrix, first: Int, q: Int,
                                  into out: UnsafeMutablePointer<Double>, stride: Int, offset: Int) {
        gradientRows(backward: b, patches: xp, first: first, q: q, into: out, stride: stride, offset: offset)
    }

    /// Row r of the per-sample gradients: `vec(B_rᵀ X̃_{first + r/q})` with `B_r` the `P × C_out` signals of
    /// row r; the bias part is the column sums of `B_r` (the last column of X̃ is ones). The q rows of a
    /// sample share its patches, so they are formed by one gemm, `B̂ᵀ X̃` with `B̂` the `P × q·C_out`
    /// signals of the sample side by side.
    func gradientRows(backward b: Matrix, patches xp: Matrix, first: Int, q: Int,
                      into out: UnsafeMutablePointer<Double>, stride: Int, offset: Int) {
        let p = positions, ps = patchSize, width = xp.cols, samples = (b.rows + q - 1) / q
        var side = [Double](repeating: 0, count: p * q * filters)
        var prod = [Double](repeating: 0, count: q * filters * width)
        b.data.withUnsafeBufferPointer { pb in
            xp.data.withUnsafeBufferPointer { px in
                side.withUnsafeMutableBufferPointer { ps2 in
                    prod.withUnsafeMutableBufferPointer { pr in
                        for s in 0..<samples {
                            let r0 = s * q, count = Swift.min(q, b.rows - r0), cols = count * filters
                            // B̂[p, a·C_out + c] = B_{r0+a}[p, c]
                            for a in 0..<count {
                                let from = pb.baseAddress! + (r0 + a) * p * filters
                                for pos in 0..<p {
                                    (ps2.baseAddress! + pos * cols + a * filters).update(from: from + pos * filters, count: filters)
                                }
                            }
                            BLAS.gemm(m: cols, n: width, k: p, a: ps2.baseAddress!, lda: cols, transA: true,
                                      b: px.baseAddress! + (first + s) * p * width, ldb: width, c: pr.baseAddress!, ldc: width)
                            for a in 0..<count {
                                let row = out + (r0 + a) * stride + offset, block = pr.baseAddress! + a * filters * width
                                for c in 0..<filters { (row + c * ps).update(from: block + c * width, count: ps) }
                                if bias { for c in 0..<filters { row[filters * ps + c] = block[c * width + ps] } }
                            }
                        }
                    }
                }
            }
        }
    }
}

extension ConvolutionLayer {
    /// nn.Conv2d's weight: filters × C_in × k × k (each filter's kernel channel by channel), where
    /// twoscale's rows hold a filter's kernel in (row, column, channel) order.
    public var pytorchWeight: PyTorchWeightLayout? {
        let (f, c, k) = (filters, input.channels, kernel)
        return PyTorchWeightLayout(shape: [f, c, k, k], name: "PyTorch's Conv2d layout: filters × channels × kernel × kernel",
                                   choices: "(filters × k·k·C_in) or PyTorch's filters × C_in × k × k",
                                   reorder: { Self.kernelsFromPyTorch($0, filters: f, channels: c, kernel: k) })
    }

    /// A convolution reads its input as an image, never flattened: its weight's columns stay.
    public func weightFromChannelFirst(_ values: [Double], input image: ImageShape) -> [Double] { values }

    /// PyTorch's (F, C, k, k) kernels in twoscale's (F, k, k, C) order.
    static func kernelsFromPyTorch(_ v: [Double], filters f: Int, channels c: Int, kernel k: Int) -> [Double] {
        var out = [Double](repeating: 0, count: v.count)
        for fi in 0..<f { for ci in 0..<c { for r in 0..<k { for q in 0..<k {
            out[((fi * k + r) * k + q) * c + ci] = v[((fi * c + ci) * k + r) * k + q]
        } } } }
        return out
    }
}

extension ConvolutionLayer: NotatedLayer {
    /// `conv<F>k<K>[s<S>][p<P>]`: F filters of size K×K, stride S (default 1), zero padding P (default 0)
    /// on each side, on an image.
    init?(notation term: String, input: NotationInput, bias: Bool) throws {
        guard case let .image(image) = input, term.hasPrefix("conv") else { return nil }
        guard let spec = Self.spec(term.dropFirst(4)) else {
            throw LayerGeometryError("a convolution is conv<F>k<K>[s<S>][p<P>], e.g. conv8k3 or conv16k5s1p2")
        }
        try self.init(input: image, filters: spec.f, kernel: spec.k, stride: spec.s, padding: spec.p, bias: bias)
    }

    /// `8k3`, `8k3s2`, `8k3p1`, `8k3s2p1` → (filters, kernel, stride, padding).
    static func spec(_ s: Substring) -> (f: Int, k: Int, s: Int, p: Int)? {
        var rest = s
        func number() -> Int? {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 6 else { return nil }
            rest = rest.dropFirst(digits.count)
            return Int(digits)
        }
        guard let f = number(), rest.first == "k" else { return nil }
        rest = rest.dropFirst()
        guard let k = number() else { return nil }
        var stride = 1, padding = 0
        if rest.first == "s" { rest = rest.dropFirst(); guard let v = number() else { return nil }; stride = v }
        if rest.first == "p" { rest = rest.dropFirst(); guard let v = number() else { return nil }; padding = v }
        guard rest.isEmpty, f >= 1, k >= 1, stride >= 1 else { return nil }
        return (f, k, stride, padding)
    }
}
