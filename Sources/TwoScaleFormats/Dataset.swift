import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// Inputs (one per row) and, where known, integer class labels.
public struct Dataset: Sendable {
    public var inputs: Matrix
    public var labels: [Int]?
    /// Number of classes when labels are present (max label + 1, or as declared by the source).
    public var classes: Int?
    /// A short description of where the data came from (for reports).
    public var source: String
    /// The shape of one input, height × width × channels, when the source knows it (IDX images, a CSV
    /// read with `Setting.shape`, synthetic inputs of an image model); `nil` for flat feature vectors. Each row
    /// of `inputs` holds one input in (row, column, channel) order, channels fastest.
    public var shape: [Int]?

    public init(inputs: Matrix, labels: [Int]? = nil, classes: Int? = nil, source: String, shape: [Int]? = nil) {
        self.inputs = inputs
        self.labels = labels
        self.classes = classes
        self.source = source
        self.shape = shape
    }

    public var count: Int { inputs.rows }
    public var features: Int { inputs.cols }

    /// The first `n` samples.
    public func prefix(_ n: Int) -> Dataset {
        let k = Swift.min(n, count)
        return Dataset(inputs: Matrix(rows: k, cols: features, data: Array(inputs.data[0..<(k * features)])),
                       labels: labels.map { Array($0[0..<k]) }, classes: classes, source: source, shape: shape)
    }

    /// The samples at `indices`, in that order.
    public func subset(_ indices: [Int]) -> Dataset {
        var x = Matrix(rows: indices.count, cols: features)
        for (r, i) in indices.enumerated() {
            for j in 0..<features { x.data[r * features + j] = inputs.data[i * features + j] }
        }
        return Dataset(inputs: x, labels: labels.map { l in indices.map { l[$0] } }, classes: classes, source: source, shape: shape)
    }
}
