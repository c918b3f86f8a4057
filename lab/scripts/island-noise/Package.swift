// swift-tools-version: 6.1
// A lab harness, not part of the product: one annealed SMC sampler (the islands' `AnnealedSMC`) on a
// product unit whose exact log Z is known, to measure its log Ẑ's error and spread against the unit's
// dimension p, the particles P and the sweeps W (lab/ESTIMATORS-LOG.md, "The islands' noise").
//   cd lab/scripts/island-noise && swift build -c release
//   .build/release/island-noise P_DIM A PARTICLES SWEEPS RUNS
import Foundation
import PackageDescription
// A path dependency's identity is its folder's name: the repository's, whatever the clone is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../..").standardized
let package = Package(name: "island-noise", platforms: [.macOS(.v13)],
  dependencies: [.package(path: "../../..")],
  targets: [.executableTarget(name: "island-noise", dependencies: [.product(name: "TwoScaleCore", package: root.lastPathComponent)])])
