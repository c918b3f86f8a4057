// swift-tools-version: 6.1
// twoscale — the two-scale effective dimension (2sED) of Datres, Leonardi, Figalli & Sutter (NeurIPS 2024).
// Modules, one per concern; data flows one way: model + data + draws → spectra → measures → bounds → reports.
import PackageDescription

let package = Package(
    name: "twoscale",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "twoscale", targets: ["twoscale"]),
        .library(name: "TwoScaleCore", targets: ["TwoScaleCore", "RandomStreams", "Samplers"]),
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
        // generator. No dependencies, so the samplers and every model can draw from it.
        .target(name: "RandomStreams", exclude: ["README.md"]),
        // Spectral maths: 2sED, lower 2sED, Abbas ED, log-space helpers, the samplers' log-estimates, typed errors,
        // the bounded-concurrency helper. No file I/O.
        .target(name: "TwoScaleCore", dependencies: ["RandomStreams"], exclude: ["README.md"]),
        // The Monte Carlo samplers: annealed SMC of one factor, the staged smc estimator, joint tempering.
        .target(name: "Samplers", dependencies: ["RandomStreams", "TwoScaleCore"], exclude: ["README.md"]),
        // OpenBLAS's work buffers, kept per thread (defines the library's blas_memory_alloc/free in front of it).
        .target(name: "CBLASBuffers", exclude: ["README.md"]),
        // Bridges to C numerics: GSL (quadrature, roots, errors), BLAS, LAPACK eigensolvers.
        .target(name: "TwoScaleNumerics", dependencies: ["CGSL", "CBLASBuffers", "TwoScaleCore"], exclude: ["README.md"]),
        // File and text formats: atomic writes, gzip, CSV, IDX, NPY/NPZ, zip, safetensors, value grids.
        .target(name: "TwoScaleFormats", dependencies: ["CZlib", "TwoScaleCore", "TwoScaleNumerics"], exclude: ["README.md"]),
        // Exact toy models: diagonal Fisher matrices on boxes, exact 2sED, box-covering counts.
        .target(name: "ToyModels", dependencies: ["RandomStreams", "TwoScaleCore", "Samplers", "TwoScaleNumerics"], exclude: ["README.md"]),
        // The models: layer stacks (dense, convolution, pooling), networks, `--arch`, data sources, weights files.
        .target(name: "Networks", dependencies: ["RandomStreams", "TwoScaleCore", "TwoScaleNumerics", "TwoScaleFormats"],
                exclude: ["README.md"]),
        // The Fisher routes on a network: Markov FIM (its units, stages, ceilings, generic rank) and output FIM.
        .target(name: "Fisher", dependencies: ["RandomStreams", "TwoScaleCore", "Samplers", "TwoScaleNumerics", "Networks"],
                exclude: ["README.md"]),
        // The plain Monte Carlo design's spectra: computed path by path, kept in a spectra store, read back.
        .target(name: "SpectraStore", dependencies: ["RandomStreams", "TwoScaleCore", "TwoScaleNumerics", "TwoScaleFormats", "Networks",
                                                     "Fisher"], exclude: ["README.md"]),
        // The estimator seam: the protocol, its settings and result, the one registry of estimators (networks and
        // toys). No concrete estimator: they plug in from NetworkEstimators (or a test target).
        .target(name: "Estimation", dependencies: ["TwoScaleCore", "ToyModels", "Fisher", "SpectraStore"], exclude: ["README.md"]),
        // The shipped estimators of a network's 2sED (plain, smc, joint), their results and certified bracket.
        .target(name: "NetworkEstimators", dependencies: ["RandomStreams", "TwoScaleCore", "Samplers", "TwoScaleNumerics", "TwoScaleFormats",
                                                          "ToyModels", "Networks", "Fisher", "SpectraStore", "Estimation"], exclude: ["README.md"]),
        // Generalisation bound: ε_n, deviation, log tail, smallest n.
        .target(name: "Bounds", dependencies: ["TwoScaleCore"], exclude: ["README.md"]),
        // Beyond one process: MPI runs of ed (Open MPI loaded at run time, so builds without it) and SLURM job arrays.
        .target(name: "Cluster", dependencies: ["TwoScaleCore", "Samplers", "SpectraStore"], exclude: ["README.md"]),
        // Rank statistics, standing alone: Kendall τ_b and its partial and granulated forms, the study's
        // bootstraps (clustered, with redraws), Holm's correction, τ over values inside brackets.
        .target(name: "Statistics", dependencies: ["RandomStreams", "TwoScaleCore"], exclude: ["README.md"]),
        // Trainer (SGD/Adam), teacher tasks with exact risk, empirical gaps and the network measures: models only.
        .target(name: "Training", dependencies: ["RandomStreams", "TwoScaleCore", "TwoScaleNumerics", "TwoScaleFormats", "Networks"],
                exclude: ["README.md"]),
        // The experiments above the estimators: the architecture comparison and the gap study with its tail.
        .target(name: "Experiments", dependencies: ["RandomStreams", "TwoScaleCore", "TwoScaleNumerics", "TwoScaleFormats", "Networks", "Fisher",
                                                    "Estimation", "Bounds", "Statistics", "Training"],
                exclude: ["README.md"]),
        // The measure study: a pre-registered grid of models, resumable cells, rank statistics against the targets.
        .target(name: "Study", dependencies: ["RandomStreams", "TwoScaleCore", "TwoScaleNumerics", "TwoScaleFormats", "Networks", "Fisher",
                                              "SpectraStore", "Estimation", "Bounds", "Training", "Experiments", "Statistics"], exclude: ["README.md"]),
        // The reference workloads of `twoscale bench` and the trainer's throughput, timed.
        .target(name: "Benchmarks", dependencies: ["RandomStreams", "TwoScaleCore", "Samplers", "TwoScaleNumerics", "TwoScaleFormats", "ToyModels",
                                                   "Networks", "Fisher", "SpectraStore", "Estimation", "NetworkEstimators", "Training", "Experiments"], exclude: ["README.md"]),
        // Markdown tables and SVG plots, notebook format.
        .target(name: "Reporting", dependencies: ["TwoScaleCore", "TwoScaleFormats"], exclude: ["README.md"]),
        // The command-line interface: one file per subcommand.
        .target(name: "TwoScaleCLI", dependencies: [
            "RandomStreams", "TwoScaleCore", "Samplers", "TwoScaleNumerics", "TwoScaleFormats", "ToyModels", "Networks", "Fisher", "SpectraStore",
            "Estimation", "NetworkEstimators", "Bounds", "Training", "Experiments", "Study", "Reporting", "Cluster", "Benchmarks",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], exclude: ["README.md"]),
        // Exports CBLASBuffers' two functions, so that OpenBLAS's calls reach them before its own.
        .executableTarget(name: "twoscale", dependencies: ["TwoScaleCLI"], exclude: ["README.md"],
                          linkerSettings: [.unsafeFlags(["-Xlinker", "--export-dynamic-symbol=blas_memory_alloc",
                                                         "-Xlinker", "--export-dynamic-symbol=blas_memory_free"])]),

        // Dense finite-difference references and quadratures shared by the Networks, Fisher and estimator tests.
        .target(name: "TestSupport", dependencies: ["Networks", "Fisher", "RandomStreams", "Samplers", "TwoScaleCore", "TwoScaleNumerics"],
                path: "Tests/TestSupport"),
        .testTarget(name: "CoreTests", dependencies: ["Samplers", "RandomStreams", "TwoScaleCore", "TwoScaleNumerics", "TwoScaleFormats",
            .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "ToyModelTests", dependencies: ["Samplers", "ToyModels", "RandomStreams", "TwoScaleCore", "TwoScaleNumerics", "TestSupport",
            .product(name: "PropertyBased", package: "swift-property-based")]),
        // Fixtures/ (weights files written by scripts/make-weight-fixtures.py) is read from the source tree
        // through #filePath, by NetworksTests and CLITests alike.
        .testTarget(name: "NetworksTests", dependencies: ["Networks", "Fisher", "SpectraStore", "RandomStreams", "TwoScaleCore", "TwoScaleNumerics",
                                                    "TwoScaleFormats", "CZlib", "TestSupport",
            .product(name: "PropertyBased", package: "swift-property-based")], exclude: ["Fixtures"]),
        .testTarget(name: "FisherTests", dependencies: ["Estimation", "Fisher", "NetworkEstimators", "Networks", "RandomStreams", "TwoScaleCore", "TwoScaleNumerics",
                                                  "TwoScaleFormats", "TestSupport"]),
        .testTarget(name: "EstimationTests", dependencies: ["Estimation", "ToyModels", "TwoScaleCore"]),
        .testTarget(name: "NetworkEstimatorsTests", dependencies: ["Estimation", "NetworkEstimators", "Fisher", "Networks", "RandomStreams", "Samplers", "TwoScaleCore",
                                                             "TwoScaleNumerics", "TestSupport"]),
        .testTarget(name: "SamplersTests", dependencies: ["Samplers", "RandomStreams", "TwoScaleCore"]),
        .testTarget(name: "NumericsTests", dependencies: ["TwoScaleNumerics", "CBLASBuffers", "RandomStreams"]),
        .testTarget(name: "SpectraStoreTests", dependencies: ["SpectraStore", "Fisher", "Networks", "RandomStreams", "TwoScaleCore",
                                                           "TwoScaleNumerics", "TwoScaleFormats",
            .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "FormatsTests", dependencies: ["TwoScaleFormats", "TwoScaleCore", "TwoScaleNumerics",
            .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "RandomStreamsTests", dependencies: ["RandomStreams"]),
        .testTarget(name: "ClusterTests", dependencies: ["Cluster", "TwoScaleCore"]),
        .testTarget(name: "BoundsTests", dependencies: ["Bounds", "ToyModels", "TwoScaleCore", "TwoScaleFormats"]),
        .testTarget(name: "ExperimentsTests", dependencies: ["Estimation", "NetworkEstimators", "Experiments", "Training", "Statistics", "Networks", "RandomStreams", "TwoScaleCore",
                                                            "TwoScaleNumerics"]),
        .testTarget(name: "TrainingTests", dependencies: ["Samplers", "Training", "Experiments", "Networks", "RandomStreams", "TwoScaleCore", "TwoScaleNumerics",
                                                         "TwoScaleFormats"]),
        .testTarget(name: "StatisticsTests", dependencies: ["Statistics", "RandomStreams", "TwoScaleCore"]),
        .testTarget(name: "StudyTests", dependencies: ["Estimation", "NetworkEstimators", "Study", "Training", "Experiments", "Statistics", "Networks", "SpectraStore", "RandomStreams", "TwoScaleCore",
                                                      "TwoScaleFormats", "TwoScaleNumerics"]),
        .testTarget(name: "ReportingTests", dependencies: ["Reporting", "TwoScaleCore", "TwoScaleFormats",
            .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "CLITests", dependencies: ["Estimation", "Samplers", "TwoScaleCLI", "RandomStreams", "TwoScaleCore", "TwoScaleFormats", "TwoScaleNumerics",
                                                 "ToyModels", "Networks", "Fisher", "SpectraStore", "NetworkEstimators", "Bounds", "Training", "Experiments",
                                                 "Benchmarks",
            .product(name: "PropertyBased", package: "swift-property-based")]),
    ]
)
