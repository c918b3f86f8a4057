import ArgumentParser
import Fisher
import Foundation
import Networks
import RandomStreams
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// `twoscale fisher`: the spectrum of a network's Fisher information at one θ (docs/METHOD.md §11–12).
struct FisherCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fisher",
        abstract: "Eigenvalues of a network's Fisher information matrix at one parameter point θ.",
        discussion: """
        markov: the joint FIM of the stochastic network (Gaussian hidden layers x_m = act(W_m x_{m-1}) + v_m, \
        v_m ~ N(0, σ²I), softmax output), one block per parametric layer: F_m = σ⁻² E[diag(act'(W_m x)²) ⊗ x xᵀ] for hidden \
        layers, F_L = E[(diag p − p pᵀ) ⊗ x xᵀ] for the output; E averages over the data and R noise draws. \
        output: the FIM of the deterministic network, F = (1/N) Σ_n J_nᵀ(diag p_n − p_n p_nᵀ)J_n, one block \
        (layer 0), computed from its N(K−1) Gram matrix. θ comes from --weights FILE (JSON, NumPy .npz or \
        .safetensors, one entry per dense or convolution layer; layouts and PyTorch exports: docs/FORMATS.md) \
        — or, without it, is drawn from U(--box) with --seed. With convolutions, one Markov block per \
        parametric layer, numbered by its place in the stack. \
        Round-off negatives are clamped to 0 (and counted); the rank counts eigenvalues above d_m·2⁻⁵²·λ_max.
        """)

    /// fisher's defaults for the shared option groups: --data and (for the Markov FIM) --sigma2 are required.
    enum Defaults: DataDefaults, NoiseDefaults {
        static var labels: LabelColumn { .none }
        static var sigma2: Double? { nil }
    }

    @OptionGroup var model: ModelOptions

    @Option(help: ArgumentHelp("Parameters θ: JSON, NumPy .npz or .safetensors, PyTorch state dicts too (docs/FORMATS.md).", valueName: "FILE"))
    var weights: String?

    @Option(parsing: .unconditional, help: ArgumentHelp("Without --weights: draw θ uniformly from this box.", valueName: "lo:hi"))
    var box: String = "-1:1"

    @OptionGroup var data: DataOptions<Defaults>
    @OptionGroup var fisherModel: FisherModelOptions<Defaults>

    @Option(help: "Seed of the noise draws, synthetic data and random θ.")
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp("Timing: also evaluate every block K more times with fresh draws of its own layer's θ_m (as the Monte Carlo inner loop does) and print the seconds per evaluation on stderr.", valueName: "K", visibility: .hidden))
    var timeDraws: Int = 0

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if timeDraws < 0 { throw TwoScaleError.invalid("--time-draws", "\(timeDraws)", allowed: "give a count ≥ 0") }
    }

    func run() async throws {
        let act = model.activation
        let architecture = try model.architecture()
        let net: Network
        var drawnBox: [Double]?
        if let weights {
            net = try WeightsFile.load(path: weights, architecture: architecture, activation: act)
        } else {
            let (lo, hi) = try Grid.parseInterval(box, flag: "--box")
            drawnBox = [lo, hi]
            var rng = Xoshiro256(seed: seed, stream: [0x5745_4947])  // "WEIG"
            net = Network.uniform(architecture: architecture, activation: act, box: lo...hi, rng: &rng)
        }
        let dataset = try data.load(architecture: architecture, seed: seed)
        let fim = try fisherModel.model(architecture: architecture, activation: act, inputs: dataset.inputs, seed: seed)
        let noise = fisherModel.noise
        var result = try await FisherMeasurement.measure(fim, at: net, samples: dataset.count, sigma2: noise.sigma2,
                                                         noiseSamples: noise.noiseSamples)
        result.activation = act
        result.data = data.data
        result.weights = weights
        result.box = drawnBox
        result.seed = seed
        if timeDraws > 0 { try Self.time(fim, net, draws: timeDraws, seed: seed) }
        try output.emit(result) { Self.text(result, architecture: architecture, source: dataset.source) }
    }

    /// Seconds per `blockEigenvalues` call, per block, over `draws` fresh U(−1,1) draws of θ_m (one thread).
    static func time(_ model: any FisherModel, _ net: Network, draws: Int, seed: UInt64) throws {
        var rng = Xoshiro256(seed: seed, stream: [0x5449_4D45])  // "TIME"
        for m in model.blockDimensions.indices {
            let layer = model.kind == .markov ? net.architecture.parametricLayers[m] : net.architecture.layers - 1
            let x = try model.blockInputs(net, block: m)
            var trial = net
            let clock = ContinuousClock()
            var checksum = 0.0
            let elapsed = try clock.measure {
                for _ in 0..<draws {
                    for i in 0..<net.architecture.structure(layer: layer).weightCount { trial.blocks[layer][i] = rng.uniform(-1, 1) }
                    checksum += try model.blockEigenvalues(trial, block: m, inputs: x).last ?? 0
                }
            }
            let s = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            Console.error("timing: block \(m) (\(model.blockDimensions[m]) parameters, \(x.rows) samples): \(Fmt.num(s / Double(draws) * 1e3, 4)) ms per evaluation over \(draws) draws (checksum \(Fmt.num(checksum)))")
        }
    }

    /// The readable summary: trace, and per block its rank and largest eigenvalues.
    static func text(_ r: FisherMeasurement, architecture: Architecture, source: String) -> String {
        var text = "\(r.fisher.rawValue) Fisher information of \(architecture), d = \(r.dimension), "
            + "\(r.samples) inputs from \(source)"
            + (r.sigma2.map { ", σ² = \(Fmt.num($0)), R = \(r.noiseSamples ?? 1)" } ?? "") + "\n"
        text += "trace Tr F = \(Fmt.num(r.trace))\n\n"
        let rows = r.blocks.map { b -> [String] in
            let largest = b.eigenvalues.suffix(3).reversed().map { Fmt.num($0, 4) }.joined(separator: ", ")
            return [b.layer == 0 ? "all" : "\(b.layer)", "\(b.parameters)", Fmt.num(b.trace), "\(b.rank)", largest]
        }
        text += Fmt.table(["layer", "parameters", "trace", "rank", "largest eigenvalues"], rows)
        if r.blocks.contains(where: { $0.clamped > 0 }) {
            text += "\n(\(r.blocks.map(\.clamped).reduce(0, +)) round-off negative eigenvalues clamped to 0)\n"
        }
        return text
    }
}
