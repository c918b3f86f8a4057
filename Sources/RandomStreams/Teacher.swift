/// The one teacher generator of twoscale: the random teacher behind every teacher task — the data
/// source `synthetic:teacher:ARCH` (Networks' `DataSource.teacher`) and `gap`'s teacher (`Setting.teacher`)
/// (Training's `TeacherTask.random`) — so that one seed gives one teacher on both paths.
///
/// A teacher with d parameters is `θ = (θ_1, …, θ_d)`, each U(−1, 1), drawn in order from the stream
/// `Xoshiro256(seed:, stream: [TEAW])`. The order is the model's own parameter order (for an MLP:
/// per layer `vec(W_m)` row-major, then `b_m`), so the generator needs no model type.
public enum Teacher {
    /// The box every teacher parameter is drawn from.
    public static let box: ClosedRange<Double> = -1...1
    /// Stream tag of the teacher's parameters ("TEAW"; fixed, so teachers are reproducible across versions).
    public static let parameterStream: UInt64 = 0x5445_4157
    /// Stream tag of the labels of `synthetic:teacher` (sample n draws from `[TEAL, n]`).
    public static let labelStream: UInt64 = 0x5445_414C

    /// The generator of the teacher's parameters for `seed`.
    public static func parameterGenerator(seed: UInt64) -> Xoshiro256 {
        Xoshiro256(seed: seed, stream: [parameterStream])
    }

    /// The teacher's `count` parameters for `seed`, each U(−1, 1), in the model's parameter order.
    public static func parameters(count: Int, seed: UInt64) -> [Double] {
        precondition(count >= 0, "a teacher has a non-negative number of parameters")
        var rng = parameterGenerator(seed: seed)
        return (0..<count).map { _ in rng.uniform(box.lowerBound, box.upperBound) }
    }

    /// The generator of sample n's label in `synthetic:teacher` data.
    public static func labelGenerator(seed: UInt64, sample n: Int) -> Xoshiro256 {
        Xoshiro256(seed: seed, stream: [labelStream, UInt64(n)])
    }
}
