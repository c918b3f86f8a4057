import Foundation
import RandomStreams
import TwoScaleCore
import TwoScaleNumerics

/// The dense kernels that the CNN benchmark's exact spectra cannot do without, timed alone on random
/// matrices of the same shapes, with the same threads: a floor under `bench cnn-output` and
/// `bench cnn-markov` for any implementation that computes those spectra in double precision with
/// BLAS and LAPACK on this machine (twoscale's or a peer's). A workload "passes" when its target is
/// not below the floor, i.e. when the target is reachable at all by this route.
///
/// * Output route, per draw of θ (K = 100): the Gram of the N(K−1) = 900 per-sample gradient rows over
///   the two convolutions' 3 400 parameters (one `dsyrk`; the dense layer's share is a Hadamard product
///   and cheap), and the eigenvalues of that 900 × 900 Gram (`dsyevd`).
/// * Markov route, per inner draw (K · J = 10⁴): the second convolution's 16 per-filter blocks, each the
///   Gram of its ≈ 3 200 active (sample, position) rows of 201 values and its eigenvalues, and the
///   eigenvalues of the 900-sided softmax Gram. The first convolution's block is evaluated once per
///   path and left out. Timed over `markovDraws` inner draws and scaled to 10⁴.
public enum KernelFloor {
    /// Inner draws timed for the Markov floor (scaled to K · J = 10⁴).
    public static let markovDraws = 200

    public static func measure(threads: Int) async throws -> [BenchmarkResult] {
        [try await outputFloor(threads: threads), try await markovFloor(threads: threads)]
    }

    /// Row-major `rows × cols` uniform(−1, 1) values from stream `stream` of seed 1.
    static func random(_ rows: Int, _ cols: Int, stream: UInt64) -> [Double] {
        var rng = Xoshiro256(seed: 1, stream: [0x464C_4F4F, stream])  // "FLOO"
        return (0..<(rows * cols)).map { _ in rng.uniform(-1, 1) }
    }

    /// A symmetric positive semi-definite `n × n` matrix (a Gram of random rows), as the eigensolver sees it.
    static func gram(_ n: Int, over k: Int, stream: UInt64) -> Matrix {
        let y = random(n, k, stream: stream)
        return y.withUnsafeBufferPointer { BLAS.syrkUpper($0.baseAddress!, rows: n, cols: k, transpose: false) }
    }

    static func outputFloor(threads: Int) async throws -> BenchmarkResult {
        let rows = 900, cols = 3_400, draws = 100
        // One row matrix per worker slot, so two threads do not share one copy in cache.
        let width = Swift.max(1, Swift.min(threads, draws))
        let mats = (0..<width).map { random(rows, cols, stream: UInt64($0)) }
        let start = Date()
        let tops = try await Parallel.map(draws, threads: threads) { i -> Double in
            let g = mats[i % width].withUnsafeBufferPointer {
                BLAS.syrkUpper($0.baseAddress!, rows: rows, cols: cols, transpose: false, alpha: 1 / Double(draws))
            }
            return try SymmetricEigen.eigenvalues(g).last ?? 0
        }
        let wall = Date().timeIntervalSince(start)
        guard tops.allSatisfy({ $0.isFinite && $0 > 0 }) else { throw TwoScaleError.failure("bench cnn-floor: a Gram spectrum came out empty or non-finite") }
        return BenchmarkResult(
            name: "cnn-floor-output",
            description: "floor under cnn-output: K = \(draws) × (dsyrk of \(rows) × \(cols) rows + dsyevd \(rows) × \(rows)) — passes if the target is not below it",
            dimension: 5_960, paths: draws, inner: nil, seconds: wall, phases: nil, targetSeconds: 4.7, memory: nil,
            pass: wall <= 4.7, check: nil)
    }

    static func markovFloor(threads: Int) async throws -> BenchmarkResult {
        let filters = 16, active = 3_200, patch = 201, side = 900, total = 10_000
        let width = Swift.max(1, Swift.min(threads, markovDraws))
        let ys = (0..<width).map { random(active, patch, stream: 100 + UInt64($0)) }
        let softmax = gram(side, over: 256, stream: 200)
        let start = Date()
        let tops = try await Parallel.map(markovDraws, threads: threads) { i -> Double in
            var top = 0.0
            for _ in 0..<filters {
                let f = ys[i % width].withUnsafeBufferPointer {
                    BLAS.syrkUpper($0.baseAddress!, rows: active, cols: patch, transpose: true, alpha: 1 / Double(active))
                }
                top = Swift.max(top, try SymmetricEigen.eigenvalues(f).last ?? 0)
            }
            return Swift.max(top, try SymmetricEigen.eigenvalues(softmax).last ?? 0)
        }
        let measured = Date().timeIntervalSince(start)
        guard tops.allSatisfy({ $0.isFinite && $0 > 0 }) else { throw TwoScaleError.failure("bench cnn-floor: a block spectrum came out empty or non-finite") }
        let floor = measured * Double(total) / Double(markovDraws)
        return BenchmarkResult(
            name: "cnn-floor-markov",
            description: "floor under cnn-markov: K·J = 10⁴ × (\(filters) × (dsyrk of \(active) × \(patch) + dsyevd \(patch)) + dsyevd \(side)), "
                + "timed over \(markovDraws) draws (\(String(format: "%.2f", measured)) s) and scaled — passes if the target is not below it",
            dimension: 5_960, paths: nil, inner: total, seconds: floor, phases: nil, targetSeconds: 340, memory: nil,
            pass: floor <= 340, check: nil)
    }
}
