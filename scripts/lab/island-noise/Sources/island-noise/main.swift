import Foundation
import Samplers
import Sampling
import TwoScaleCore

// The unit: p coordinates v on [0, 1], square-root eigenvalues a·v_j, so g_s(v) = Π_j (1 + s a v_j) and,
// at s = 1, Z = E_U g = (1 + a/2)^p exactly. The layered toy's stage-2 unit at ε = 10⁻³ has a ≈ 17.
let args = CommandLine.arguments.dropFirst().map { Double($0) }
guard args.count == 5, args.allSatisfy({ $0 != nil }) else {
    FileHandle.standardError.write("usage: island-noise P_DIM A PARTICLES SWEEPS RUNS (two replicates per run)\n".data(using: .utf8)!)
    exit(2)
}
let p = Int(args[0]!), a = args[1]!, particles = Int(args[2]!), sweeps = Int(args[3]!), runs = Int(args[4]!)
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
