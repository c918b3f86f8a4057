import Foundation

/// The eigenvalues of one Fisher matrix (or one diagonal block of it), reduced to what every measure
/// needs: the square roots of the positive eigenvalues and the trace.
///
/// Round-off can leave eigenvalues of a PSD matrix slightly below zero. Values in
/// `[-tol·λ_max, 0)` with `tol = 1e-8` are clamped to 0 and counted in `clamped`; anything more
/// negative means the matrix was not a Fisher matrix and is an error (docs/METHOD.md §2).
public struct Spectrum: Sendable, Equatable {
    /// √λ for every eigenvalue λ > 0 (order as given).
    public let roots: [Double]
    /// `Tr F = Σ λ` (after clamping).
    public let trace: Double
    /// How many slightly negative eigenvalues were clamped to zero.
    public let clamped: Int

    /// Relative tolerance below which negative eigenvalues count as round-off.
    public static let negativeTolerance = 1e-8

    /// - Parameters:
    ///   - eigenvalues: the eigenvalues of `F(θ)` or of one diagonal block of it.
    ///   - scale: the largest eigenvalue magnitude of the whole matrix `F(θ)` when `eigenvalues` are one
    ///     block of it (round-off in a block is relative to the whole matrix, docs/METHOD.md §2); 0 for a whole matrix.
    @inlinable  // specialised where it is called: the samplers build one per eigenproblem
    public init(eigenvalues: some Collection<Double>, scale: Double = 0) throws {
        let clamped = try Spectrum.checkRoundOff(eigenvalues, scale: scale)
        var roots: [Double] = []
        roots.reserveCapacity(eigenvalues.count)
        var trace = 0.0
        for l in eigenvalues where l > 0 {
            roots.append(l.squareRoot())
            trace += l
        }
        self.roots = roots
        self.trace = trace
        self.clamped = clamped
    }

    /// The clamp rule of docs/METHOD.md §2: every eigenvalue finite, none below `−1e-8·λ_max` with
    /// `λ_max = max(max|λ_i|, scale)`. Returns how many negatives are round-off (to be clamped to 0).
    @inlinable
    public static func checkRoundOff(_ eigenvalues: some Collection<Double>, scale: Double = 0) throws -> Int {
        var lmax = scale.isFinite ? Swift.abs(scale) : 0
        for l in eigenvalues {
            guard l.isFinite else {
                throw TwoScaleError.failure("Fisher spectrum has a non-finite eigenvalue (\(l)); the computation broke down (check the weights' scale)")
            }
            lmax = Swift.max(lmax, Swift.abs(l))
        }
        var clamped = 0
        for l in eigenvalues where l < 0 {
            if l < -Spectrum.negativeTolerance * lmax {
                throw TwoScaleError.failure(
                    "Fisher spectrum has a clearly negative eigenvalue \(l) (largest magnitude \(lmax)); a Fisher matrix is positive semidefinite")
            }
            clamped += 1
        }
        return clamped
    }

    /// The largest eigenvalue magnitude over several blocks (the `scale` argument for each of them).
    public static func largestMagnitude(_ blocks: [[Double]]) -> Double {
        blocks.reduce(0) { acc, b in b.reduce(acc) { Swift.max($0, $1.isFinite ? Swift.abs($1) : $0) } }
    }

    /// A spectrum from square roots directly (used by exact models); roots must be ≥ 0.
    public init(roots: [Double]) {
        self.roots = roots.filter { $0 > 0 }
        self.trace = self.roots.reduce(0) { $0 + $1 * $1 }
        self.clamped = 0
    }

    /// The positive eigenvalues.
    public var eigenvalues: [Double] { roots.map { $0 * $0 } }

    /// `log det(I + s·F^{1/2}) = Σ log1p(s √λ_i)`.
    @inlinable
    public func logDetSqrt(scale s: Double) -> Double { LogSpace.logDetSqrt(roots: roots, scale: s) }

    /// `log det(I + κ F) = Σ log1p(κ λ_i)`.
    public func logDet(scale kappa: Double) -> Double {
        var acc = 0.0
        for r in roots { acc += LogSpace.log1pProduct(kappa, r * r) }
        return acc
    }
}
