import ArgumentParser
import Foundation
import SpectraStore
import Study
import TwoScaleCore

/// `twoscale study GRID`: the measure study of a pre-registered grid, resumable, then its statistics.
struct StudyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "study",
        abstract: "Rank models by the 2sED and by baselines against training loss and generalisation gap (a pre-registered grid).",
        discussion: """
        Reads the grid (a JSON file, e.g. study/zoo-grid.json; docs/STUDY.md), computes every cell that --dir does \
        not hold yet — per (data set, architecture) the smc 2sED at ε_n with its interval and certified bracket, the \
        lower 2sED, the Abbas ED and the generic rank; per (data set, architecture, learning rate, batch size, seed) \
        Adam training for the grid's epochs, the training loss, the test − training error gap and the measures of \
        the trained network — writing each cell as it finishes, so a stopped study resumes. Then ranks every \
        measure against both targets: oriented Kendall τ_b with hierarchical-bootstrap 95% intervals (architectures \
        and seeds resampled), τ(2sED) − τ(measure) with bootstrap p-values and Holm's correction, Jiang's granulated \
        τ per hyperparameter, and τ(2sED, target | generic rank). Results do not depend on --threads. With \
        --shard i/n only that share of the missing cells is computed (shards may run at once into one --dir, e.g. as \
        a SLURM array); a run without --shard then computes what is left and prints the statistics.
        """)

    @Argument(help: ArgumentHelp("The grid file (JSON).", valueName: "grid"))
    var grid: String

    @Option(help: ArgumentHelp("Folder of the study's cells (default: runs/study-NAME).", valueName: "DIR"))
    var dir: String?

    @Option(help: "Bootstrap replicates of every interval and p-value (≥ 100).")
    var bootstrap: Int = 2000

    @Flag(help: "Print the grid's cells, done and to do, and stop.")
    var plan = false

    @Option(help: ArgumentHelp("Compute only shard i of n of the missing cells (side by side or as a job array), no statistics.", valueName: "i/n"))
    var shard: String?

    @Option(help: "Parallel tasks (default: active cores); results do not depend on it.")
    var threads: Int?

    @OptionGroup var output: OutputOptions

    func validate() throws {
        try PathFlags.check(grid, flag: "study", what: "the grid file")
        try PathFlags.check(dir, flag: "--dir", what: "a folder for the study's cells")
        guard (100...1_000_000).contains(bootstrap) else {
            throw TwoScaleError.invalid("--bootstrap", "\(bootstrap)", allowed: "give from 100 to 10⁶ replicates")
        }
        if let s = shard { _ = try Shard(parsing: s) }
        if plan, shard != nil { throw TwoScaleError.usage("study: --plan and --shard exclude each other") }
        if let t = threads, !(1...1024).contains(t) {
            throw TwoScaleError.invalid("--threads", "\(t)", allowed: "give a count from 1 to 1024")
        }
    }

    func run() async throws {
        let design = try StudyGrid.read(path: grid)
        let folder = try StudyFolder(path: dir ?? "runs/study-\(design.name)", grid: design)
        let threads = self.threads ?? Swift.max(1, ProcessInfo.processInfo.activeProcessorCount)
        if plan {
            let p = try StudyPlan(folder)
            return try output.emit(p) {
                "\(p.grid): \(p.fisherDone)/\(p.fisherCells) Fisher cells and \(p.trainingDone)/\(p.trainingCells) training cells done in \(p.folder)\n"
                    + p.architectures.map { "  \($0.group)  \($0.architecture)  \($0.parameters) parameters" }.joined(separator: "\n") + "\n"
            }
        }
        if let text = shard {
            let summary = try await StudyShardSummary.run(folder, shard: try Shard(parsing: text), threads: threads) { p in
                Console.progress("study \(design.name) shard \(text): [\(p.done)/\(p.total)] \(p.label)")
            }
            return try output.emit(summary) {
                "\(summary.grid) shard \(summary.shard): computed \(summary.computed) cells; \(summary.done)/\(summary.cells) done in \(summary.folder)\n"
            }
        }
        let result = try await StudyResult.run(folder, threads: threads, replicates: bootstrap) { p in
            Console.progress("study \(design.name): [\(p.done)/\(p.total)] \(p.label)")
        }
        try output.emit(result) { Self.human(result) }
    }

    static func human(_ r: StudyResult) -> String {
        var s = "study \(r.grid): \(r.architectures) architectures, \(r.models) models × \(r.seeds) seeds on \(r.datasets.joined(separator: ", ")) (\(r.computed) of \(r.cells) cells computed now)\n"
        s += "oriented τ_b [95% interval of a bootstrap over architectures, templates and seeds, each 2sED redrawn from its interval or bracket]; Δ = τ(d_zeta) − τ(measure), Holm-corrected p\n"
        for p in r.primary.rows {
            s += "primary test (pre-registered, docs/STUDY.md): \(p.dataset): mean within-group τ(2sED, −training loss) \(String(format: "%+.3f", p.tau)) [\(String(format: "%+.3f", p.tauLow)), \(String(format: "%+.3f", p.tauHigh))] over \(p.cells) (group, template) cells: \(p.decision.rawValue)\n"
        }
        s += "primary test, every data set: \(r.primary.decision.rawValue)\n"
        s += "certified brackets read together: δ ≤ \(Fmt.num(r.bracketDeltaPerDataset)) per data set, \(Fmt.num(r.bracketDelta)) in all (union bound)\n"
        for c in r.certainPairs {
            s += "ordered with certainty (disjoint brackets), \(c.dataset): \(c.equalSize) of \(c.equalSizePairs) equal-size pairs, \(c.all) of \(c.allPairs) pairs in all\n"
        }
        for row in r.taus {
            let f = { (x: Double) in String(format: "%+.3f", x) }
            var line = "  \(row.dataset)  \(row.target)  \(row.measure.padding(toLength: 22, withPad: " ", startingAt: 0))"
            if let t = row.tau, let lo = row.tauLow, let hi = row.tauHigh { line += "  τ \(f(t)) [\(f(lo)), \(f(hi))]" } else { line += "  τ undefined: \(row.note ?? "")" }
            if let d = row.diff, let lo = row.diffLow, let hi = row.diffHigh, let p = row.pHolm { line += "  Δ \(f(d)) [\(f(lo)), \(f(hi))] p_Holm \(String(format: "%.3f", p))" }
            if let lo = row.tauBracketLow, let hi = row.tauBracketHigh { line += "  τ anywhere in the brackets: [\(f(lo)), \(f(hi))]" }
            s += line + "\n"
        }
        for p in r.partial {
            if let t = p.tau, let lo = p.tauLow, let hi = p.tauHigh {
                s += "  \(p.dataset)  \(p.target)  τ(\(p.measure), target | \(p.control)) \(String(format: "%+.3f", t)) [\(String(format: "%+.3f", lo)), \(String(format: "%+.3f", hi))]\n"
            } else {
                s += "  \(p.dataset)  \(p.target)  τ(\(p.measure), target | \(p.control)) undefined: \(p.note ?? "")\n"
            }
        }
        return s
    }
}
