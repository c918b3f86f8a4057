import Foundation
import Networks
import TwoScaleCore
import TwoScaleFormats

/// The pre-registered design of a measure study (issue 41; Jiang et al., "Fantastic generalization
/// measures", ICLR 2020): data sets, architectures in groups of equal parameter count, the training
/// hyperparameters crossed with them, seeds, and how the Fisher-side measures are computed. It is a JSON
/// file committed before any result (`study/zoo-grid.json`); `twoscale study` reads it, checks it and
/// refuses a grid whose groups break the equal-size rule.
///
/// A *model* is an architecture with one value of every training hyperparameter; it is trained once per
/// seed. The Fisher-side measures (2sED, bracket, lower 2sED, Abbas ED, generic rank) depend on the
/// architecture and the data, not on the training, so they are computed once per (data set, architecture).
public struct StudyGrid: Codable, Sendable, Equatable {
    public var name: String
    /// Root of every random stream of the study.
    public var seed: UInt64
    /// Training seeds per model.
    public var seeds: Int
    public var datasets: [StudyDataset]
    public var groups: [StudyGroup]
    /// Adam learning rates and mini-batch sizes, crossed with every architecture.
    public var learningRates: [Double]
    public var batchSizes: [Int]
    /// The fixed training budget.
    public var epochs: Int
    public var fisher: StudyFisherSettings
    /// The largest relative distance of a parameter count from its group's median.
    public var sizeTolerance: Double

    enum CodingKeys: String, CodingKey {
        case name, seed, seeds, datasets, groups, epochs, fisher
        case learningRates = "learning_rates", batchSizes = "batch_sizes", sizeTolerance = "size_tolerance"
    }

    /// Reads and checks a grid file.
    public static func read(path: String) throws -> StudyGrid {
        let data = try InputFile.read(path, expecting: "a study grid file (JSON)")
        let grid: StudyGrid
        do { grid = try JSONDecoder().decode(StudyGrid.self, from: data) } catch {
            throw TwoScaleError.failure("study: \(path) is not a valid grid: \(StudyGrid.describe(error))")
        }
        try grid.check()
        return grid
    }

    static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let k, let c): return "missing key '\(k.stringValue)' at \(path(c.codingPath))"
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c), DecodingError.dataCorrupted(let c):
            return "\(c.debugDescription) at \(path(c.codingPath))"
        default: return "\(error)"
        }
    }

    static func path(_ keys: [CodingKey]) -> String { keys.isEmpty ? "the top level" : keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".") }

    /// Every architecture, in grid order, with its group.
    public var architectures: [(group: String, architecture: Architecture)] {
        get throws {
            try groups.flatMap { g in try g.architectures.map { (g.name, try Architecture(parsing: $0, flag: "study grid")) } }
        }
    }

    /// The rules a design must follow; an error names what breaks them.
    public func check() throws {
        func bad(_ what: String) -> TwoScaleError { TwoScaleError.failure("study grid \(name): \(what)") }
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw bad("the name must be non-empty letters, digits, '-' or '_'")
        }
        guard (2...100).contains(seeds) else { throw bad("seeds must be from 2 to 100 (got \(seeds))") }
        guard !datasets.isEmpty else { throw bad("give at least one data set") }
        guard Set(datasets.map(\.name)).count == datasets.count else { throw bad("data set names must differ") }
        for d in datasets { try d.check(grid: name) }
        guard !learningRates.isEmpty, learningRates.allSatisfy({ $0.isFinite && $0 > 0 }), Set(learningRates).count == learningRates.count else {
            throw bad("learning_rates must be distinct finite numbers > 0")
        }
        guard !batchSizes.isEmpty, batchSizes.allSatisfy({ $0 >= 1 }), Set(batchSizes).count == batchSizes.count else {
            throw bad("batch_sizes must be distinct counts ≥ 1")
        }
        for d in datasets where batchSizes.contains(where: { $0 > d.trainSamples }) {
            throw bad("a batch size exceeds data set \(d.name)'s \(d.trainSamples) training samples")
        }
        guard (1...10_000).contains(epochs) else { throw bad("epochs must be from 1 to 10 000") }
        guard sizeTolerance > 0, sizeTolerance < 1 else { throw bad("size_tolerance must lie in (0, 1)") }
        try fisher.check(grid: name, datasets: datasets)
        guard !groups.isEmpty, Set(groups.map(\.name)).count == groups.count else { throw bad("give groups with distinct names") }
        let all: [(group: String, architecture: Architecture)]
        do { all = try architectures } catch let e as TwoScaleError { throw bad("\(e)") }
        guard Set(all.map(\.architecture.notation)).count == all.count else { throw bad("an architecture is listed twice") }
        guard Set(all.map(\.architecture.inputSize)).count == 1, Set(all.map(\.architecture.classes)).count == 1 else {
            throw bad("every architecture needs the same input and number of classes")
        }
        for g in groups {
            guard g.architectures.count >= 3 else { throw bad("group \(g.name) needs at least 3 architectures") }
            let members = all.filter { $0.group == g.name }.map(\.architecture)
            let median = StudyGrid.median(members.map { Double($0.parameterCount) })
            for a in members where Swift.abs(Double(a.parameterCount) - median) > sizeTolerance * median {
                throw bad("\(a.notation) has \(a.parameterCount) parameters, more than \(sizeTolerance * 100)% from group \(g.name)'s median \(Int(median))")
            }
        }
    }

    static func median(_ v: [Double]) -> Double {
        let s = v.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// The models of one architecture: every (learning rate, batch size), learning rate slowest.
    public var trainingSettings: [(learningRate: Double, batchSize: Int)] {
        learningRates.flatMap { lr in batchSizes.map { (lr, $0) } }
    }
}

/// One data set of a study: where its training and test samples come from and how images are reduced
/// to the architectures' input (zero padding, then non-overlapping average pooling).
public struct StudyDataset: Codable, Sendable, Equatable {
    public var name: String
    /// A `Setting.data` source for training (its first `trainSamples`) and one for testing.
    public var train: String
    public var test: String
    public var trainSamples: Int
    public var testSamples: Int
    /// Zero padding on each side of an image and the pooling factor (1: none).
    public var pad: Int
    public var pool: Int

    enum CodingKeys: String, CodingKey {
        case name, train, test, pad, pool
        case trainSamples = "train_samples", testSamples = "test_samples"
    }

    func check(grid: String) throws {
        func bad(_ what: String) -> TwoScaleError { TwoScaleError.failure("study grid \(grid), data set \(name): \(what)") }
        guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else { throw bad("the name must be letters, digits or '-'") }
        guard trainSamples >= 10, testSamples >= 10 else { throw bad("give at least 10 training and 10 test samples") }
        guard trainSamples <= 100_000_000, testSamples <= 100_000_000 else { throw bad("give at most 10⁸ training and 10⁸ test samples") }
        guard pad >= 0, pad <= 64, pool >= 1, pool <= 64 else { throw bad("pad must be 0–64 and pool 1–64") }
    }
}

/// Architectures of (about) one parameter count.
public struct StudyGroup: Codable, Sendable, Equatable {
    public var name: String
    public var architectures: [String]
}

/// How the Fisher-side measures are computed: N Fisher inputs (the first N training inputs), the
/// stochastic network's noise, the parameter box, ζ and γ of ε_n (n: the training-set size), the smc
/// estimator's budget (nil: its defaults) and the plain paths of the Abbas ED.
public struct StudyFisherSettings: Codable, Sendable, Equatable {
    public var samples: Int
    public var sigma2: Double
    public var noiseSamples: Int
    public var box: [Double]
    public var zeta: Double
    public var gamma: Double
    public var paths: Int?
    public var inner: Int?
    public var abbasPaths: Int

    enum CodingKeys: String, CodingKey {
        case samples, sigma2, box, zeta, gamma, paths, inner
        case noiseSamples = "noise_samples", abbasPaths = "abbas_paths"
    }

    public var boxRange: ClosedRange<Double> { box[0]...box[1] }

    func check(grid: String, datasets: [StudyDataset]) throws {
        func bad(_ what: String) -> TwoScaleError { TwoScaleError.failure("study grid \(grid), fisher: \(what)") }
        guard samples >= 1, datasets.allSatisfy({ samples <= $0.trainSamples }) else { throw bad("samples must be from 1 to every training-set size") }
        guard sigma2.isFinite, sigma2 > 0 else { throw bad("sigma2 must be > 0") }
        guard noiseSamples >= 1 else { throw bad("noise_samples must be ≥ 1") }
        guard box.count == 2, box[0].isFinite, box[1].isFinite, box[0] < box[1] else { throw bad("box must be [lo, hi] with lo < hi") }
        try ScaleParameters.checkZeta(zeta)
        guard gamma > 0, gamma <= 1 else { throw bad("gamma must lie in (0, 1]") }
        if let p = paths, p < 2 { throw bad("paths must be ≥ 2") }
        if let j = inner, j < 2 { throw bad("inner must be ≥ 2") }
        guard abbasPaths >= 2 else { throw bad("abbas_paths must be ≥ 2") }
    }
}
