import Fisher
import Foundation
import Networks
import RandomStreams
import TwoScaleCore
import TwoScaleNumerics

/// The Monte Carlo sampling design of docs/METHOD.md §13.
///
/// * `K` paths `θ^k ~ U(box^d)`: every weight (and bias) uniform on `[lo, hi]`.
/// * For each block `m ≥ 2` (1-based; `m ≥ 1` 0-based) and path `k`, `J` inner draws: fresh uniform
///   weights for layer m only, `θ_{<m} = θ^k_{<m}` kept (layers after m do not enter `F_m`).
///
/// Randomness: path k draws its network from `Xoshiro256(seed:, stream: [1, k])`, inner draw j of block
/// m at path k from `Xoshiro256(seed:, stream: [2, k, m, j])` (0-based indices), so every spectrum is a
/// function of (seed, k, m, j) alone — the same for any thread count, sharding or resumption.
public struct MonteCarloDesign: Sendable, Equatable {
    /// `K`, the number of paths.
    public var paths: Int
    /// `J`, the inner draws per (path, block m ≥ 2).
    public var inner: Int
    /// The parameter box `[lo, hi]` (the same on every axis).
    public var box: ClosedRange<Double>
    public var seed: UInt64
    public var activation: Activation

    public init(paths: Int, inner: Int, box: ClosedRange<Double> = -1...1, seed: UInt64 = 1,
                activation: Activation = .relu) throws {
        guard paths >= 1, paths <= 100_000_000 else {
            throw TwoScaleError.invalid("\(Setting.paths)", "\(paths)", allowed: "the number of paths K must be from 1 to 10⁸")
        }
        guard inner >= 1, inner <= 100_000_000 else {
            throw TwoScaleError.invalid("\(Setting.inner)", "\(inner)", allowed: "the number of inner draws J must be from 1 to 10⁸")
        }
        try Network.checkBox(box)
        self.paths = paths
        self.inner = inner
        self.box = box
        self.seed = seed
        self.activation = activation
    }

    /// Stream kinds of `Xoshiro256(seed:, stream: [kind, …])`.
    public enum Stream: UInt64 { case path = 1, inner = 2 }

    /// The network `θ^k` of path k.
    public func network(_ a: Architecture, path k: Int) -> Network {
        var rng = Xoshiro256(seed: seed, stream: [Stream.path.rawValue, UInt64(k)])
        return Network.uniform(architecture: a, activation: activation, box: box, rng: &rng)
    }

    /// `base` with Fisher block m (0-based; the parametric layer `parametricLayers[m]`) redrawn for
    /// inner draw j of path k: the layer's flat parameter block, in its layout order.
    public func innerNetwork(_ base: Network, block m: Int, path k: Int, draw j: Int) -> Network {
        var rng = Xoshiro256(seed: seed, stream: [Stream.inner.rawValue, UInt64(k), UInt64(m), UInt64(j)])
        var net = base
        let lo = box.lowerBound, hi = box.upperBound
        let layer = base.architecture.parametricLayers[m]
        net.blocks[layer] = net.blocks[layer].map { _ in rng.uniform(lo, hi) }
        return net
    }
}

/// The raw eigenvalues (before clamping) of one path: `own[m]` of `F_m(θ^k)` for every block, and
/// `inner[m][j]` for the inner draws of blocks `m ≥ 1` (0-based; `inner[0]` is empty).
public struct PathSpectra: Sendable, Equatable {
    public var own: [[Double]]
    public var inner: [[[Double]]]

    public init(own: [[Double]], inner: [[[Double]]]) {
        self.own = own
        self.inner = inner
    }
}

/// Runs the design on a Fisher model: one unit of work per path, in parallel.
public enum MonteCarlo {
    /// Checks that the model's blocks fit the design: one block (the whole network, no inner draws) or
    /// one block per layer.
    static func checkBlocks(_ model: any FisherModel) throws -> Int {
        let b = model.blockDimensions.count
        let parametric = model.architecture.parametricLayers.count
        guard b == 1 || b == parametric else {
            throw TwoScaleError.failure("Fisher model has \(b) blocks; the Monte Carlo design needs 1 or one per parametric layer (\(parametric))")
        }
        return b
    }

    /// The spectra of path k: `blockInputs` once per block (reused by the J inner draws, where only
    /// `θ_m` changes), `blockEigenvalues` per draw.
    public static func path(_ k: Int, model: any FisherModel, design: MonteCarloDesign) throws -> PathSpectra {
        let blocks = try checkBlocks(model)
        let net = design.network(model.architecture, path: k)
        var own: [[Double]] = []
        var inner: [[[Double]]] = [[]]
        let dims = model.blockDimensions
        func checked(_ l: [Double], _ m: Int) throws -> [Double] {
            guard l.count <= dims[m] else {
                throw TwoScaleError.failure("Fisher model returned \(l.count) eigenvalues for block \(m + 1), which has \(dims[m]) parameters")
            }
            return l
        }
        for m in 0..<blocks {
            let x = try model.blockInputs(net, block: m)
            own.append(try checked(model.blockEigenvalues(net, block: m, inputs: x), m))
            guard m >= 1 else { continue }
            var draws: [[Double]] = []
            draws.reserveCapacity(design.inner)
            for j in 0..<design.inner {
                if Task.isCancelled { throw CancellationError() }
                let net2 = design.innerNetwork(net, block: m, path: k, draw: j)
                draws.append(try checked(model.blockEigenvalues(net2, block: m, inputs: x), m))
            }
            inner.append(draws)
        }
        return PathSpectra(own: own, inner: inner)
    }

    /// Computes the paths `indices` with at most `threads` running at once (structured concurrency),
    /// calling `completed` for each in completion order (serially, on the caller's task — it may write
    /// files or report progress; if it throws, the run stops, unfinished paths are cancelled).
    /// Returns the spectra in the order of `indices`; with `keepResults: false` it returns `[]` and keeps
    /// nothing (the caller consumes each path in `completed`, e.g. sends it to another MPI rank).
    public static func run(model: any FisherModel, design: MonteCarloDesign, paths indices: [Int], threads: Int,
                           keepResults: Bool = true,
                           completed: (Int, PathSpectra) throws -> Void = { _, _ in }) async throws -> [PathSpectra] {
        _ = try checkBlocks(model)
        GSL.prepare()
        var results = [PathSpectra?](repeating: nil, count: indices.count)
        try await Parallel.forEach(indices.count, threads: threads, { slot in
            try MonteCarlo.path(indices[slot], model: model, design: design)
        }, completed: { slot, spectra in
            try completed(indices[slot], spectra)
            if keepResults { results[slot] = spectra }
        })
        if !keepResults { return [] }
        let done = results.compactMap { $0 }
        guard done.count == indices.count else { throw CancellationError() }
        return done
    }

    /// `LayeredSpectra` from raw path spectra (in path order), clamping round-off negatives (docs/METHOD.md §2).
    /// Round-off is judged against the largest eigenvalue of the path's whole Fisher matrix (all its
    /// blocks; for an inner draw, the path's blocks and the drawn block), not of the block alone.
    public static func layeredSpectra(_ paths: [PathSpectra], blockDimensions: [Int]) throws -> LayeredSpectra {
        let blocks = blockDimensions.count
        var own = [[Spectrum]](repeating: [], count: blocks)
        var inner = [[[Spectrum]]](repeating: [], count: blocks)
        for p in paths {
            guard p.own.count == blocks, p.inner.count == blocks else {
                throw TwoScaleError.failure("spectra: a path has \(p.own.count) blocks, expected \(blocks)")
            }
            let scale = Spectrum.largestMagnitude(p.own)
            for m in 0..<blocks {
                own[m].append(try Spectrum(eigenvalues: p.own[m], scale: scale))
                if m >= 1 { inner[m].append(try p.inner[m].map { try Spectrum(eigenvalues: $0, scale: scale) }) }
            }
        }
        return try LayeredSpectra(dimension: blockDimensions.reduce(0, +), layerDimensions: blockDimensions,
                                  own: own, inner: inner)
    }
}
