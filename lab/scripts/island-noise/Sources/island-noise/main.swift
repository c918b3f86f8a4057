import Foundation
import Samplers
import Sampling
import TwoScaleCore

// The unit: p coordinates v on [0, 1], square-root eigenvalues a·v_j, so g_s(v) = Π_j (1 + s a v_j) and,
// at s = 1, Z = E_U g = (1 + a/2)^p exactly. The layered toy's stage-2 unit at ε = 10⁻³ has a ≈ 17.
let args = Array(CommandLine.arguments.dropFirst())
guard args.count == 5, let p = Int(args[0]), let a = Double(args[1]), a.isFinite, a >= 0, let particles = Int(args[2]),
      let sweeps = Int(args[3]), let runs = Int(args[4]), p >= 1, particles >= 4, sweeps >= 1, runs >= 1 else {
    FileHandle.standardError.write(Data("usage: island-noise P_DIM A PARTICLES SWEEPS RUNS (integers ≥ 1, A ≥ 0, PARTICLES ≥ 4)\n".utf8))
    exit(2)
}
let unit = SMCUnit(dimension: p, box: 0...1, roots: { v in v.map { a * $0 } })
let exact = Double(p) * log1p(a / 2)
var errors: [Double] = [], steps = 0.0
let start = Date()
for r in 0..<runs {
    let settings = try SMCSettings(particles: particles, replicates: 2, essFraction: 0.8, moves: sweeps)
    let est = try AnnealedSMC.run(unit, stops: [1.0], settings: settings, seed: 7, stream: [UInt64(r)])
    errors += est.logZ[0].map { $0 - exact }
    steps += est.diagnostics.meanSteps
}
let m = errors.reduce(0, +) / Double(errors.count)
let sd = (errors.map { ($0 - m) * ($0 - m) }.reduce(0, +) / Double(errors.count - 1)).squareRoot()
print(String(format: "p = %d, a = %g, P = %d, W = %d: replicate log Ẑ error mean %.3f, sd %.3f; %.1f steps; %.1f s",
             p, a, particles, sweeps, m, sd, steps / Double(runs), Date().timeIntervalSince(start)))
