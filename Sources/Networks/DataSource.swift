import Foundation
import RandomStreams
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// Data sources named on the command line (`Setting.data`; docs/FORMATS.md, "Data sources"):
///
/// * `csv:PATH` — numeric CSV, one input per row (optional header line); with `labels: .last` the last
///   column is an integer class label ≥ 0.
/// * `idx:IMAGES[,LABELS]` — IDX files (optionally gzip-compressed), images scaled to [0, 1].
/// * `fashion-mnist` (= `fashion-mnist:train`) and `fashion-mnist:test` — the Debian package
///   `dataset-fashion-mnist` (files in `/usr/share/datasets/fashion-mnist/`).
/// * `synthetic:gaussian` — inputs `x ~ N(0, I)` of the architecture's input size (needs `inputSize`).
/// * `synthetic:teacher:ARCH[:ACTIVATION]` — Gaussian inputs, labels `y ~ softmax(teacher(x))` from a
///   random teacher MLP with weights U(−1, 1) (activation relu unless given), see `teacher(…)`.
///
/// `samples` N keeps the first N inputs (required for synthetic sources); asking for more than a file
/// has is an error that says how many it has. Synthetic inputs are drawn per sample from
/// `Xoshiro256(seed:, stream: [source, n])`, so N = 10 gives the first 10 inputs of N = 100.
/// `standardize` z-scores each feature over the loaded inputs, `x ← (x − mean)/sd` (population sd);
/// constant features become 0. `labels` only matters for CSV (other sources carry their own labels).
public enum DataSource {
    /// Where the Debian package puts Fashion-MNIST.
    public static let fashionMNISTDirectory = "/usr/share/datasets/fashion-mnist"

    static let allowed = "give csv:PATH, idx:IMAGES[,LABELS], fashion-mnist[:train|:test], synthetic:gaussian or synthetic:teacher:ARCH[:ACTIVATION]"

    public static func load(_ spec: String, samples: Int?, labels: LabelColumn = .none, standardize: Bool = false,
                            seed: UInt64 = 1, inputSize: Int? = nil, inputShape: ImageShape? = nil, declaredShape: ImageShape? = nil,
                            flag: String = "\(Setting.data)", samplesAtMost: Bool = false) throws -> Dataset {
        if let n = samples, n < 1 {
            throw TwoScaleError.invalid("\(Setting.samples)", "\(n)", allowed: "the number of samples must be ≥ 1")
        }
        let (kind, rest) = split(spec)
        var data: Dataset
        switch kind {
        case "csv":
            guard !rest.isEmpty else { throw TwoScaleError.invalid(flag, spec, allowed: "csv: needs a path, e.g. csv:data.csv") }
            data = try CSVReader.read(path: rest, labels: labels, limit: samples)
        case "idx":
            let parts = rest.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard (1...2).contains(parts.count), !parts[0].isEmpty, parts.count == 1 || !parts[1].isEmpty else {
                throw TwoScaleError.invalid(flag, spec, allowed: "idx: needs IMAGES or IMAGES,LABELS, e.g. idx:train-images-idx3-ubyte.gz,train-labels-idx1-ubyte.gz")
            }
            data = try IDXReader.load(images: parts[0], labels: parts.count == 2 ? parts[1] : nil, limit: samples)
        case "fashion-mnist":
            guard rest.isEmpty || rest == "train" || rest == "test" else {
                throw TwoScaleError.invalid(flag, spec, allowed: "fashion-mnist, fashion-mnist:train or fashion-mnist:test")
            }
            let prefix = rest == "test" ? "t10k" : "train"
            let images = "\(fashionMNISTDirectory)/\(prefix)-images-idx3-ubyte.gz"
            let labelFile = "\(fashionMNISTDirectory)/\(prefix)-labels-idx1-ubyte.gz"
            for f in [images, labelFile] where !FileManager.default.fileExists(atPath: f) {
                throw TwoScaleError.failure("\(flag) \(spec): \(f) is missing; install the data set with `apt-get install dataset-fashion-mnist`")
            }
            data = try IDXReader.load(images: images, labels: labelFile, limit: samples)
            data.classes = 10
            data.source = spec
            data.shape = [28, 28, 1]
        case "synthetic":
            guard let n = samples else {
                throw TwoScaleError.missing("\(Setting.samples)", "synthetic data needs \(Setting.samples) N (N ≥ 1)")
            }
            data = try synthetic(rest, spec: spec, samples: n, seed: seed, inputSize: inputSize, inputShape: inputShape, flag: flag)
        default:
            throw TwoScaleError.invalid(flag, spec, allowed: allowed)
        }
        if let n = samples, data.count < n, !samplesAtMost {
            throw TwoScaleError.invalid("\(Setting.samples)", "\(n)", allowed: "\(spec) has only \(data.count) inputs")
        }
        if let declared = declaredShape {
            guard declared.size == data.features else {
                throw TwoScaleError.invalid("\(Setting.shape)", "\(declared.height)x\(declared.width)x\(declared.channels)",
                                            allowed: "\(spec) has \(data.features) values per input, the shape holds \(declared.size)")
            }
            if let known = data.shape, known != declared.dimensions {
                throw TwoScaleError.invalid("\(Setting.shape)", "\(declared.height)x\(declared.width)x\(declared.channels)",
                                            allowed: "\(spec) stores its images as \(known.map(String.init).joined(separator: "x"))")
            }
            data.shape = declared.dimensions
        }
        if let d = inputSize, data.features != d {
            throw TwoScaleError.invalid(flag, spec, allowed: "its inputs have \(data.features) features but the architecture's input size is \(d)")
        }
        try checkShape(data, spec: spec, model: inputShape, flag: flag)
        if standardize { data.inputs = standardized(data.inputs) }
        return data
    }

    /// An image model (`model` non-nil) takes only inputs whose shape is known and equal to its input:
    /// images keep their shape, so a 28×28×1 network never reads a 784-column CSV without `Setting.shape` or a
    /// 14×56×1 file as if it were 28×28. A flat model (an MLP) takes any input with the right number of
    /// values (images flattened in height, width, channel order).
    static func checkShape(_ data: Dataset, spec: String, model: ImageShape?, flag: String) throws {
        guard let model else { return }
        let want = "\(model.height)x\(model.width)x\(model.channels)"
        guard let shape = data.shape else {
            throw TwoScaleError.invalid(flag, spec, allowed: "the architecture takes \(want) images but these inputs are flat vectors of \(data.features) values; give their shape with \(Setting.shape) \(want) (height x width x channels, values in that order, channels fastest)")
        }
        guard shape == model.dimensions else {
            throw TwoScaleError.invalid(flag, spec, allowed: "its images are \(shape.map(String.init).joined(separator: "x")) but the architecture takes \(want)")
        }
    }

    /// `HxWxC` (e.g. `28x28x1`) as an image shape (`Setting.shape`).
    public static func parseShape(_ text: String, flag: String = "\(Setting.shape)") throws -> ImageShape {
        guard let shape = ImageShape(parsing: text) else {
            throw TwoScaleError.invalid(flag, text, allowed: "an image shape is HxWxC with sides and channels from 1 to 10⁵, e.g. 28x28x1 or 32x32x3")
        }
        return shape
    }

    /// `kind:rest` (rest may contain further colons).
    static func split(_ spec: String) -> (String, String) {
        guard let i = spec.firstIndex(of: ":") else { return (spec, "") }
        return (String(spec[..<i]), String(spec[spec.index(after: i)...]))
    }

    /// The most input values (N × n_0) a synthetic data set may hold: 2²⁸ doubles = 2 GiB.
    public static let maxSyntheticValues = 1 << 28

    /// Refuses N × n_0 beyond `maxSyntheticValues` (a clear error instead of a failed allocation).
    public static func checkSyntheticSize(samples n: Int, features d: Int, spec: String) throws {
        let (product, overflow) = n.multipliedReportingOverflow(by: Swift.max(1, d))
        guard !overflow, product <= maxSyntheticValues else {
            throw TwoScaleError.invalid("\(Setting.samples)", "\(n)", allowed: "\(spec) with \(d) features allows N ≤ \(maxSyntheticValues / Swift.max(1, d)) (N × n_0 ≤ 2²⁸ values)")
        }
    }

    static func synthetic(_ rest: String, spec: String, samples n: Int, seed: UInt64, inputSize: Int?, inputShape: ImageShape?,
                          flag: String) throws -> Dataset {
        let (what, arg) = split(rest)
        switch what {
        case "gaussian":
            guard arg.isEmpty else { throw TwoScaleError.invalid(flag, spec, allowed: "synthetic:gaussian takes no arguments") }
            guard let d = inputSize else {
                throw TwoScaleError.invalid(flag, spec, allowed: "synthetic:gaussian needs the input size (from \(Setting.architecture))")
            }
            try checkSyntheticSize(samples: n, features: d, spec: spec)
            return Dataset(inputs: gaussianInputs(samples: n, features: d, seed: seed), source: "synthetic:gaussian",
                           shape: inputShape?.dimensions)
        case "teacher":
            let (archText, actText) = split(arg)
            guard !archText.isEmpty else {
                throw TwoScaleError.invalid(flag, spec, allowed: "synthetic:teacher needs an architecture, e.g. synthetic:teacher:10-8-3")
            }
            let arch = try Architecture(parsing: archText, flag: flag)
            try checkSyntheticSize(samples: n, features: Swift.max(arch.inputSize, arch.classes), spec: spec)
            var act = Activation.relu
            if !actText.isEmpty {
                guard let a = Activation(rawValue: actText) else {
                    throw TwoScaleError.invalid(flag, spec, allowed: "the teacher's activation is one of relu, tanh, sigmoid, linear")
                }
                act = a
            }
            var (data, _) = teacher(architecture: arch, activation: act, samples: n, seed: seed)
            data.source = spec
            return data
        default:
            throw TwoScaleError.invalid(flag, spec, allowed: "synthetic:gaussian or synthetic:teacher:ARCH[:ACTIVATION]")
        }
    }

    /// Random-stream tags (fixed, so data sets are reproducible across versions).
    static let gaussianStream: UInt64 = 0x4741_5553      // "GAUS"

    /// `N × d` standard normal inputs; row n comes from `Xoshiro256(seed:, stream: [GAUS, n])`.
    public static func gaussianInputs(samples n: Int, features d: Int, seed: UInt64) -> Matrix {
        var x = Matrix(rows: n, cols: d)
        for i in 0..<n {
            var rng = Xoshiro256(seed: seed, stream: [gaussianStream, UInt64(i)])
            for j in 0..<d { x.data[i * d + j] = rng.normal() }
        }
        return x
    }

    /// A teacher task: inputs `x ~ N(0, I)` (as `gaussianInputs`), the teacher MLP of `seed` (`Network.teacher`:
    /// Sampling's one teacher generator, every weight and bias U(−1, 1) from the stream `(seed, TEAW)`), and
    /// labels `y_n ~ softmax(logits(x_n) / temperature)` drawn from `Xoshiro256(seed:, stream: [TEAL, n])`.
    /// The exact label distribution `p*(y|x)` is the teacher's softmax, so population risks can be
    /// computed exactly. Preconditions: `samples ≥ 1`, `temperature > 0` (finite).
    public static func teacher(architecture: Architecture, activation: Activation, samples: Int, seed: UInt64,
                               temperature: Double = 1) -> (Dataset, Network) {
        precondition(samples >= 1 && temperature > 0 && temperature.isFinite, "teacher: samples ≥ 1 and temperature > 0")
        let net = Network.teacher(architecture: architecture, activation: activation, seed: seed)
        let x = gaussianInputs(samples: samples, features: architecture.inputSize, seed: seed)
        var logits = net.forward(x).logits
        if temperature != 1 { for i in logits.data.indices { logits.data[i] /= temperature } }
        let p = Softmax.probabilities(logits)
        let k = architecture.classes
        var labels = [Int](repeating: 0, count: samples)
        for i in 0..<samples {
            var rng = Teacher.labelGenerator(seed: seed, sample: i)
            labels[i] = Softmax.sampleClass(p, row: i, u: rng.uniform())
        }
        return (Dataset(inputs: x, labels: labels, classes: k, source: "synthetic:teacher:\(architecture.notation)",
                        shape: architecture.inputShape?.dimensions), net)
    }

    /// Each column z-scored: `(x − mean)/sd` with the population sd; constant columns become 0.
    public static func standardized(_ x: Matrix) -> Matrix {
        var out = x
        let n = x.rows, d = x.cols
        guard n > 0 else { return out }
        for j in 0..<d {
            var mean = 0.0
            for i in 0..<n { mean += x.data[i * d + j] }
            mean /= Double(n)
            var ss = 0.0
            for i in 0..<n { let t = x.data[i * d + j] - mean; ss += t * t }
            let sd = (ss / Double(n)).squareRoot()
            let constant = !(sd > 1e-12 * Swift.max(1, Swift.abs(mean)))
            for i in 0..<n { out.data[i * d + j] = constant ? 0 : (x.data[i * d + j] - mean) / sd }
        }
        return out
    }
}
