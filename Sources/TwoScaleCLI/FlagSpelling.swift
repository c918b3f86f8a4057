import TwoScaleCore
import TwoScaleFormats

/// The flag that sets each library `Setting`: the one place that spells them for the libraries' messages.
/// `Console` renders every marker it prints through `flag(for:)`; a command that exposes a setting under
/// another flag (`--teacher` for an architecture) renames the error's subject itself.
enum FlagSpelling {
    static let flags: [Setting: String] = [
        .abbasSampleSize: "--abbas-n",
        .adversarial: "--adversarial",
        .architecture: "--arch",
        .batch: "--batch",
        .bias: "--bias",
        .bootstrap: "--bootstrap",
        .box: "--box",
        .checkpoint: "--checkpoint",
        .checkpointEvery: "--checkpoint-every",
        .coupling: "--coupling",
        .data: "--data",
        .delta: "--delta",
        .deltaRange: "--delta-range",
        .dimension: "--dim",
        .studyFolder: "--dir",
        .epochs: "--epochs",
        .epsilon: "--eps",
        .estimator: "--estimator",
        .family: "--family",
        .fisherRoute: "--fisher",
        .gamma: "--gamma",
        .greedyMax: "--greedy-max",
        .holdout: "--holdout",
        .independenceMoves: "--independence-moves",
        .inner: "--inner",
        .islandSweeps: "--island-sweeps",
        .stageOneSweeps: "--stage1-sweeps",
        .adversarialIterations: "--adversarial-iterations",
        .joint: "--joint",
        .json: "--json",
        .labels: "--labels",
        .lambdas: "--lambdas",
        .loss: "--loss",
        .lower: "--lower",
        .learningRate: "--lr",
        .maxPaths: "--max-paths",
        .monteCarlo: "--mc",
        .momentum: "--momentum",
        .sampleSize: "--n",
        .noiseSamples: "--noise-samples",
        .normalize: "--normalize",
        .output: "--out",
        .outputFolder: "--out-dir",
        .outerMoves: "--outer-moves",
        .paths: "--paths",
        .tiltMoves: "--tilt-moves",
        .chains: "--chains",
        .plan: "--plan",
        .population: "--population",
        .populationFisher: "--population-fisher",
        .randomDraws: "--random-draws",
        .rankSamples: "--rank-samples",
        .resume: "--resume",
        .samples: "--samples",
        .seed: "--seed",
        .shape: "--shape",
        .shard: "--shard",
        .noiseVariance: "--sigma2",
        .adversarialStarts: "--adversarial",
        .adversarialStep: "--adversarial-step",
        .store: "--store",
        .student: "--student",
        .sweeps: "--sweeps",
        .targetWidth: "--target-width",
        .teacher: "--teacher",
        .temperature: "--temperature",
        .threshold: "--threshold",
        .traceDraws: "--trace-draws",
        .trials: "--trials",
        .unitSize: "--unit-size",
        .units: "--units",
        .weights: "--weights",
        .zeta: "--zeta",
        .activation: "--activation",
        .standardize: "--standardize",
        .constantC: "--C",
        .constantH: "--H",
        .constantK: "--K",
    ]

    /// The flag of a setting (its name after `--` if the table lacks it, which FlagSpellingTests forbids).
    static func flag(for setting: Setting) -> String { flags[setting] ?? "--" + setting.name }

    /// The plug-in settings in the words a command's hidden catch-all collected (`--flag value` or
    /// `--flag=value`), each with its value as given and the flag it was given as; a word that is none of
    /// `settings`' flags is an error, as the parser's own.
    static func pluginValues(_ words: [String], settings: [Setting]) throws -> [(setting: Setting, flag: String, value: String)] {
        let declared = Dictionary(settings.map { (flag(for: $0), $0) }, uniquingKeysWith: { a, _ in a })
        var out: [(setting: Setting, flag: String, value: String)] = []
        var i = 0
        while i < words.count {
            let word = words[i]
            let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
            guard word.hasPrefix("--"), let setting = declared[parts[0]] else {
                throw TwoScaleError.usage(word.hasPrefix("-") ? "unknown option '\(parts[0])'" : "unexpected argument '\(word)'")
            }
            if parts.count == 2 {
                out.append((setting, parts[0], parts[1]))
            } else {
                guard i + 1 < words.count else { throw TwoScaleError.usage("missing value for '\(word)'") }
                i += 1
                out.append((setting, parts[0], words[i]))
            }
            i += 1
        }
        return out
    }

    /// `text` with every setting marker spelled as its flag.
    static func render(_ text: String) -> String { Setting.render(text, flag(for:)) }

    /// A result's JSON tree with every string's markers spelled as flags.
    static func render(_ v: JSONValue) -> JSONValue {
        switch v {
        case .string(let s): return .string(render(s))
        case .array(let a): return .array(a.map(render))
        case .object(let pairs): return .object(pairs.map { ($0.0, render($0.1)) })
        default: return v
        }
    }
}
