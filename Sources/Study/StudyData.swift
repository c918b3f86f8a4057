import Foundation
import Networks
import Training
import TwoScaleCore
import TwoScaleFormats
import TwoScaleNumerics

/// A study data set as the architectures read it: training and test samples, padded and pooled.
public struct StudyData: Sendable {
    public var train: Dataset
    public var test: Dataset
    /// For a teacher task: the test inputs with the teacher's exact label probabilities, so that the
    /// test loss and error are the population risk in the labels' expectation (Monte Carlo in x only).
    public var population: PopulationSample?

    public init(train: Dataset, test: Dataset, population: PopulationSample? = nil) {
        self.train = train
        self.test = test
        self.population = population
    }

    /// Loads `d`'s sources (a CSV's last column is its label) and reduces every image: `pad` zeros on
    /// each side, then the mean of each non-overlapping `pool × pool` window (channels kept apart). Where
    /// `test` names the same source as `train` (a synthetic teacher task), the test samples are the
    /// `testSamples` that follow the training samples in it: the same teacher, fresh draws.
    public static func load(_ d: StudyDataset) throws -> StudyData {
        let flag = "study data set \(d.name)"
        if d.test == d.train {
            if d.train.hasPrefix("synthetic:teacher:"), d.pad > 0 || d.pool > 1 {
                throw TwoScaleError.failure("\(flag): a teacher task is not padded or pooled (its teacher reads the inputs as drawn)")
            }
            let all = try reduce(DataSource.load(d.train, samples: d.trainSamples + d.testSamples, labels: .last, flag: flag), d)
            guard all.labels != nil else { throw TwoScaleError.failure("\(flag): training and test data need labels") }
            let test = all.subset(Array(d.trainSamples..<(d.trainSamples + d.testSamples)))
            return StudyData(train: all.prefix(d.trainSamples), test: test, population: try teacherPopulation(d.train, test: test))
        }
        let train = try reduce(DataSource.load(d.train, samples: d.trainSamples, labels: .last, flag: flag + " (train)"), d)
        let test = try reduce(DataSource.load(d.test, samples: d.testSamples, labels: .last, flag: flag + " (test)"), d)
        guard train.labels != nil, test.labels != nil else {
            throw TwoScaleError.failure("\(flag): training and test data need labels")
        }
        return StudyData(train: train.prefix(d.trainSamples), test: test.prefix(d.testSamples))
    }

    /// For `synthetic:teacher:ARCH[:ACTIVATION]` (whose teacher `DataSource.load` draws from seed 1):
    /// the test inputs with that teacher's label probabilities; nil for any other source.
    static func teacherPopulation(_ spec: String, test: Dataset) throws -> PopulationSample? {
        let parts = spec.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0] == "synthetic", parts[1] == "teacher" else { return nil }
        let arch = try Architecture(parsing: parts[2], flag: "study data set")
        let activation = parts.count > 3 ? (Activation(rawValue: parts[3]) ?? .relu) : .relu
        let task = try TeacherTask(teacher: Network.teacher(architecture: arch, activation: activation, seed: 1))
        return PopulationSample(inputs: test.inputs, labelProbabilities: task.labelProbabilities(test.inputs))
    }

    static func reduce(_ data: Dataset, _ d: StudyDataset) throws -> Dataset {
        guard d.pad > 0 || d.pool > 1 else { return data }
        guard let shape = data.shape, shape.count == 3 else {
            throw TwoScaleError.failure("study data set \(d.name): pad and pool need images, and \(data.source) has no image shape")
        }
        return try padPool(data, pad: d.pad, pool: d.pool, shape: (shape[0], shape[1], shape[2]))
    }

    /// `pad` zero rows and columns on each side, then non-overlapping `pool × pool` means:
    /// an H×W×C image becomes `(H + 2p)/k × (W + 2p)/k × C`, which must divide exactly.
    public static func padPool(_ data: Dataset, pad p: Int, pool k: Int, shape: (h: Int, w: Int, c: Int)) throws -> Dataset {
        let (h, w, c) = shape
        let ph = h + 2 * p, pw = w + 2 * p
        guard ph % k == 0, pw % k == 0 else {
            throw TwoScaleError.failure("study: a \(ph)×\(pw) padded image does not split into \(k)×\(k) windows")
        }
        let oh = ph / k, ow = pw / k
        let n = data.count
        var out = [Double](repeating: 0, count: n * oh * ow * c)
        let scale = 1 / Double(k * k)
        for s in 0..<n {
            let base = s * h * w * c, obase = s * oh * ow * c
            for y in 0..<h {
                let oy = (y + p) / k
                for x in 0..<w {
                    let ox = (x + p) / k
                    for ch in 0..<c {
                        out[obase + (oy * ow + ox) * c + ch] += scale * data.inputs.data[base + (y * w + x) * c + ch]
                    }
                }
            }
        }
        return Dataset(inputs: Matrix(rows: n, cols: oh * ow * c, data: out), labels: data.labels, classes: data.classes,
                       source: "\(data.source) padded by \(p), pooled by \(k)", shape: [oh, ow, c])
    }
}
