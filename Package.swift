// swift-tools-version: 6.1
// twoscale — the two-scale effective dimension (2sED) of Datres, Leonardi, Figalli & Sutter (NeurIPS 2024).
// Modules, one per concern; data flows one way: model + data + draws → spectra → measures → bounds → reports.
import PackageDescription

let package = Package(
    name: "twoscale",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "twoscale", targets: ["twoscale"]),
        .library(name: "TwoScaleCore", targets: ["TwoScaleCore", "Sampling", "Samplers"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),
    ],
    targets: [
        // C libraries: GSL (linked against OpenBLAS's CBLAS, not gslcblas) + LAPACK from OpenBLAS; zlib.
        .systemLibrary(name: "CGSL", path: "Sources/CGSL",
                       providers: [.apt(["libgsl-dev", "libopenblas-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", providers: [.apt(["zlib1g-dev"])]),
        // Randomness: the seeded counter-based RNG streams (SplitMix64, xoshiro256**) and the one teacher
        // generator. No dependencies, so the maths (Core's SMC sampler) and every model can draw from it.
        .target(name: "Sampling", exclude: ["README.md"]),
        // Spectral maths: 2sED, lower 2sED, Abbas ED, log-space helpers, SMC for one factor, typed errors,
        // the bounded-concurrency helper. No file I/O.
        .target(name: "TwoScaleCore", dependencies: ["Sampling"], exclude: ["README.md"]),
        .target(name: "Samplers", dependencies: ["Sampling", "TwoScaleCore"], exclude: ["README.md"]),
        // Bridges to C numerics: GSL (quadrature, roots, errors), BLAS, LAPACK eigensolvers.
        .target(name: "TwoScaleNumerics", dependencies: ["CGSL", "TwoScaleCore"], exclude: ["README.md"]),
        // File and text formats: atomic writes, gzip, CSV, IDX, NPY/NPZ, zip, safetensors, value grids.
        .target(name: "TwoScaleFormats", dependencies: ["CZlib", "TwoScaleCore", "TwoScaleNumerics"], exclude: ["README.md"]),
        // Exact toy models: diagonal Fisher matrices on boxes, exact 2sED, box-covering counts.
        .target(name: "ToyModels", dependencies: ["Sampling", "TwoScaleCore", "Samplers", "TwoScaleNumerics"], exclude: ["README.md"]),
        // The models: layer stacks (dense, convolution, pooling), networks, `--arch`, data sources, weights files.
        .target(name: "Networks", dependencies: ["Sampling", "TwoScaleCore", "TwoScaleNumerics", "TwoScaleFormats"],
                exclude: ["README.md"]),
        // The Fisher routes on a network: Markov FIM (its units, stages, ceilings, generic rank) and output FIM.
        .target(name: "Fisher", dependencies: ["Sampling", "TwoScaleCore", "Samplers", "TwoScaleNumerics", "Networks"],
                exclude: ["README.md"]),
        // The plain Monte Carlo design's spectra: computed path by path, kept in a spectra store, read back.
        .target(name: "SpectraStore", dependencies: ["Sampling", "TwoScaleCore", "TwoScaleNumerics", "TwoScaleFormats", "Networks",
                                                     "Fisher"], exclude: ["README.md"]),
        // The estimators of a network's 2sED behind one seam (plain, smc), their results and certified bracket.
        .target(name: "NetworkEstimators", dependencies: ["Sampling", "TwoScaleCore", "Samplers", "TwoScaleNumerics", "TwoScaleFormats",
                                                          "Networks", "Fisher", "SpectraStore"], exclude: ["README.md"]),
        // Generalisation bound: ε_n, deviation, log tail, smallest n.
        .target(name: "Bounds", dependencies: ["TwoScaleCore"], exclude: ["README.md"]),
        // Beyond one process: MPI runs of ed (Open MPI loaded at run time, so builds without it) and SLURM job arrays.
        .target(name: "Cluster", dependencies: ["TwoScaleCore", "Samplers", "SpectraStore"], exclude: ["README.md"]),
        // Rank statistics, standing alone: Kendall τ_b and its partial and granulated forms, the study's
        // bootstraps (clustered, with redraws), Holm's correction, τ over values inside brackets.
        .target(name: "Statistics", dependencies: ["Sampling", "TwoScaleCore"], exclude: ["README.md"]),
        // Trainer (SGD/Adam), teacher tasks with exact risk, empirical gaps and the network measures: models only.
        .target(name: "Training", dependencies: ["Sampling", "TwoScaleCore", "TwoScaleNumerics", "TwoScaleFormats", "Networks"],
                exclude: ["README.md"]),
        // The experiments above the estimators: the architecture comparison and the gap study with its tail.
        .target(name: "Experiments", dependencies: ["Sampling", "TwoScaleCore", "TwoScaleNumerics", "TwoScaleFormats", "Networks", "Fisher",
                                                    "NetworkEstimators", "Bounds", "Statistics", "Training"],
                exclude: ["README.md"]),
        // The measure study: a pre-registered grid of models, resumable cells, rank statistics against the targets.
        .target(name: "Study", dependencies: ["Sampling", "TwoScaleCore", "TwoScaleNumerics", "TwoScaleFormats", "Networks", "Fisher",
                                              "SpectraStore", "NetworkEstimators", "Bounds", "Training", "Experiments", "Statistics"], exclude: ["README.md"]),
        // The reference workloads of `twoscale bench` and the trainer's throughput, timed.
        .target(name: "Benchmarks", dependencies: ["Sampling", "TwoScaleCore", "Samplers", "TwoScaleNumerics", "TwoScaleFormats", "ToyModels",
                                                   "Networks", "Fisher", "SpectraStore", "NetworkEstimators", "Training", "Experiments"], exclude: ["README.md"]),
        // Markdown tables and SVG plots, notebook format.
        .target(name: "Reporting", dependencies: ["TwoScaleCore", "TwoScaleFormats"], exclude: ["README.md"]),
        // The command-line interface: one file per subcommand.
        .target(name: "TwoScaleCLI", dependencies: [
            "Sampling", "TwoScaleCore", "Samplers", "TwoScaleNumerics", "TwoScaleFormats", "ToyModels", "Networks", "Fisher", "SpectraStore",
            "NetworkEstimators", "Bounds", "Training", "Experiments", "Study", "Reporting", "Cluster", "Benchmarks",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], exclude: ["README.md"]),
        .executableTarget(name: "twoscale", dependencies: ["TwoScaleCLI"]),

        // Dense finite-difference references and quadratures shared by the Networks, Fisher and estimator tests.
        .target(name: "TestSupport", dependencies: ["Networks", "Fisher", "Sampling", "TwoScaleCore", "TwoScaleNumerics"],
                path: "Tests/TestSupport"),
        .testTarget(name: "CoreTests", dependencies: ["Samplers", "Sampling", "TwoScaleCore", "TwoScaleNumerics", "TwoScaleFormats",
            .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "ToyModelTests", dependencies: ["Samplers", "ToyModels", "Sampling", "TwoScaleCore", "TwoScaleNumerics",
            .product(name: "PropertyBased", package: "swift-property-based")]),
        // Fixtures/ (weights files written by scripts/make-weight-fixtures.py) is read from the source tree
        // through #filePath, by NetworksTests and CLITests alike.
        .testTarget(name: "NetworksTests", dependencies: ["Networks", "Fisher", "SpectraStore", "Sampling", "TwoScaleCore", "TwoScaleNumerics",
                                                    "TwoScaleFormats", "CZlib", "TestSupport",
            .product(name: "PropertyBased", package: "swift-property-based")], exclude: ["Fixtures"]),
        .testTarget(name: "FisherTests", dependencies: ["Fisher", "NetworkEstimators", "Networks", "Sampling", "TwoScaleCore", "TwoScaleNumerics",
                                                  "TwoScaleFormats", "TestSupport"]),
        .testTarget(name: "NetworkEstimatorsTests", dependencies: ["NetworkEstimators", "Fisher", "Networks", "Sampling", "Samplers", "TwoScaleCore",
                                                             "TwoScaleNumerics", "TestSupport"]),
        .testTarget(name: "SamplersTests", dependencies: ["Samplers", "Sampling", "TwoScaleCore"]),
        .testTarget(name: "NumericsTests", dependencies: ["TwoScaleNumerics", "Sampling"]),
        .testTarget(name: "SpectraStoreTests", dependencies: ["SpectraStore", "Fisher", "Networks", "Sampling", "TwoScaleCore",
                                                           "TwoScaleNumerics", "TwoScaleFormats",
            .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "FormatsTests", dependencies: ["TwoScaleFormats", "TwoScaleCore", "TwoScaleNumerics",
            .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "SamplingTests", dependencies: ["Sampling"]),
        .testTarget(name: "ClusterTests", dependencies: ["Cluster", "TwoScaleCore"]),
        .testTarget(name: "BoundsTests", dependencies: ["Bounds", "ToyModels", "TwoScaleCore", "TwoScaleFormats"]),
        .testTarget(name: "ExperimentsTests", dependencies: ["Experiments", "Training", "Statistics", "Networks", "Sampling", "TwoScaleCore",
                                                            "TwoScaleNumerics"]),
        .testTarget(name: "TrainingTests", dependencies: ["Samplers", "Training", "Experiments", "Networks", "Sampling", "TwoScaleCore", "TwoScaleNumerics",
                                                         "TwoScaleFormats"]),
        .testTarget(name: "StatisticsTests", dependencies: ["Statistics", "Sampling", "TwoScaleCore"]),
        .testTarget(name: "StudyTests", dependencies: ["Study", "Training", "Experiments", "Statistics", "Networks", "SpectraStore", "Sampling", "TwoScaleCore",
                                                      "TwoScaleFormats", "TwoScaleNumerics"]),
        .testTarget(name: "ReportingTests", dependencies: ["Reporting", "TwoScaleCore", "TwoScaleFormats",
            .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "CLITests", dependencies: ["Samplers", "TwoScaleCLI", "Sampling", "TwoScaleCore", "TwoScaleFormats", "TwoScaleNumerics",
                                                 "ToyModels", "Networks", "Fisher", "SpectraStore", "NetworkEstimators", "Bounds", "Training", "Experiments",
                                                 "Benchmarks",
            .product(name: "PropertyBased", package: "swift-property-based")]),
    ]
)
