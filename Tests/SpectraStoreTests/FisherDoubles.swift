import Fisher
import Foundation
import Networks
import SpectraStore
import TwoScaleCore
import TwoScaleNumerics

/// A test double of the Fisher-model contract with block spectra that are known functions of the
/// weights, so that every estimator can be recomputed by hand:
///
///     s_m = Σ_{j<m} ‖W_j‖²_F                       (the block input: a 1×1 matrix)
///     λ_i(F_m) = w_i² · (1 + coupling·s_m)   for every weight w_i of layer m with |w_i| ≥ cutoff
///
/// Only the nonzero eigenvalues are returned (the rest are zeros, as the output FIM does), plus one
/// round-off negative `-1e-13·λ_max` that the spectrum must clamp when fewer than d_m are nonzero. With `constantLater`, blocks m ≥ 1
/// return a fixed spectrum whatever θ is.
struct WeightFisher: FisherModel {
    let architecture: Architecture
    var coupling = 1.0
    var cutoff = 0.1
    var constantLater = false
    var kind: FisherKind { .markov }
    var blockDimensions: [Int] { architecture.layerParameterCounts }

    init(_ sizes: [Int], coupling: Double = 1, cutoff: Double = 0.1, constantLater: Bool = false) {
        architecture = try! Architecture(sizes: sizes)
        self.coupling = coupling
        self.cutoff = cutoff
        self.constantLater = constantLater
    }

    func blockInputs(_ net: Network, block m: Int) throws -> Matrix {
        var s = 0.0
        for j in 0..<m { for w in net.weights[j].data { s += w * w } }
        return Matrix(rows: 1, cols: 1, data: [s])
    }

    /// The exact nonzero eigenvalues (no round-off term), for direct computations.
    func exactEigenvalues(_ net: Network, block m: Int) -> [Double] {
        if constantLater && m >= 1 { return (1...blockDimensions[m]).map { 0.05 * Double($0) } }
        var s = 0.0
        for j in 0..<m { for w in net.weights[j].data { s += w * w } }
        return net.weights[m].data.filter { abs($0) >= cutoff }.map { $0 * $0 * (1 + coupling * s) }.sorted()
    }

    func blockEigenvalues(_ net: Network, block m: Int, inputs: Matrix) throws -> [Double] {
        let exact = exactEigenvalues(net, block: m)
        precondition(inputs.rows == 1 && inputs.cols == 1)
        // A round-off negative where there is room for one (at most d_m values).
        return exact.count < blockDimensions[m] ? [-1e-13 * (exact.max() ?? 0)] + exact : exact
    }
}

/// A one-block double (like the output FIM): λ_i = w_i² over all weights with |w_i| ≥ cutoff.
struct WholeFisher: FisherModel {
    let architecture: Architecture
    var kind: FisherKind { .output }
    var blockDimensions: [Int] { [architecture.parameterCount] }

    init(_ sizes: [Int]) { architecture = try! Architecture(sizes: sizes) }

    func blockInputs(_ net: Network, block m: Int) throws -> Matrix { Matrix(rows: 1, cols: 1) }

    func blockEigenvalues(_ net: Network, block m: Int, inputs: Matrix) throws -> [Double] {
        net.parameters.filter { abs($0) >= 0.2 }.map { $0 * $0 }.sorted()
    }
}

/// Store settings for tests.
func testMeta(_ model: any FisherModel, _ design: MonteCarloDesign, shard: Shard? = nil, sigma2: Double = 0.1) throws -> StoreMeta {
    try StoreMeta(layers: model.blockDimensions, paths: design.paths,
                  inner: model.blockDimensions.count > 1 ? design.inner : 0,
                  configuration: testConfiguration(fisher: model.kind, arch: model.architecture.notation, seed: design.seed,
                                                   sigma2: sigma2),
                  shard: shard)
}

/// A run configuration for test stores (synthetic data, N = 10).
func testConfiguration(fisher: FisherKind = .markov, arch: String = "2-2-1", seed: UInt64 = 1, sigma2: Double = 0.1) -> NetworkRunConfiguration {
    NetworkRunConfiguration(fisher: fisher, arch: arch, bias: false, activation: .relu, box: -1...1, seed: seed,
                            data: "synthetic:gaussian", samples: 10, labels: "none", standardize: false, sigma2: sigma2, noiseSamples: 1)
}

/// A fresh temporary folder (removed by the caller).
func temporaryDirectory(_ tag: String) -> String {
    let dir = NSTemporaryDirectory() + "twoscale-\(tag)-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

/// Every file under `dir` (relative path → bytes).
func filesUnder(_ dir: String) -> [String: Data] {
    var out: [String: Data] = [:]
    guard let e = FileManager.default.enumerator(atPath: dir) else { return out }
    for case let rel as String in e {
        var isDir: ObjCBool = false
        let p = dir + "/" + rel
        if FileManager.default.fileExists(atPath: p, isDirectory: &isDir), !isDir.boolValue {
            out[rel] = FileManager.default.contents(atPath: p)
        }
    }
    return out
}
