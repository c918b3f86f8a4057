import ArgumentParser
import Foundation
import Reporting
import TwoScaleCore
import TwoScaleFormats

/// `twoscale notebook`: runs the `twoscale` blocks of a notebook in-process and writes a Markdown
/// report with tables and SVG plots (format: docs/NOTEBOOKS.md).
struct NotebookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notebook",
        abstract: "Run a notebook's twoscale blocks and write a Markdown report with tables and SVG plots.",
        discussion: """
        A notebook (notebooks-txt/NAME.txt) is Markdown prose with fenced blocks whose info string starts \
        with twoscale; each block holds commands starting with the word twoscale ('\\' continues a line, \
        '#' starts a comment) and optional plot specs ('```twoscale plot x=eps y=d_zeta logx' or '#plot …' \
        lines). Every command runs in this process with --json added, in order; its JSON becomes tables and \
        plots. The report goes to OUT-DIR/NAME.md, its figures to OUT-DIR/NAME/. Nothing is replaced \
        unless every block succeeds: a failing command stops the run with an error naming the notebook, \
        block and line, and the previous report stays as it was. Paths inside commands are relative to \
        the current folder, not to the notebook. With --json, prints {"notebook", "report", "figures", \
        "seeds", "blocks": [{"block", "line", "commands", "seconds"}]}.
        """)

    @Argument(help: ArgumentHelp("The notebook file (Markdown with ```twoscale blocks), e.g. notebooks-txt/quick.txt.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("Folder for the report NAME.md and its figure folder NAME/ (created if missing).", valueName: "dir"))
    var outDir: String = "Reports"

    @Option(help: ArgumentHelp("Keep finished blocks here; a rerun reuses those this binary made (docs/NOTEBOOKS.md).",
                               valueName: "dir"))
    var resume: String?

    @OptionGroup var output: OutputOptions

    /// Set while a notebook runs, so a nested `twoscale notebook` is refused.
    @TaskLocal static var running = false

    func validate() throws {
        try PathFlags.check(file, flag: "notebook", what: "a notebook file such as notebooks-txt/NAME.txt")
        try PathFlags.check(outDir, flag: "--out-dir", what: "a folder for the report")
        if let r = resume { try PathFlags.check(r, flag: "--resume", what: "a folder for the finished blocks") }
    }

    func run() async throws {
        let (summary, human) = try await Self.produce(file: file, outDir: outDir, resume: resume)
        try output.emit(summary) { human }
    }

    /// Runs the notebook at `file` and writes its report under `outDir`; returns the JSON summary and
    /// a one-line readable summary. Throws (writing nothing) when parsing, a command or a plot fails.
    /// With `resume`, every finished block is kept there (`BlockCache`) and a block kept by this same
    /// binary with the same commands is reused instead of run again.
    static func produce(file: String, outDir: String, resume: String? = nil) async throws -> (NotebookSummary, String) {
        guard !running else {
            throw TwoScaleError.usage("twoscale notebook cannot run inside a notebook (nested notebooks are not allowed)")
        }
        let notebook = try Notebook.load(path: file)
        guard !notebook.name.isEmpty, !notebook.name.hasPrefix(".") else {
            throw TwoScaleError.invalid("file", file, allowed: "the notebook's name (file name without extension) must not be empty or start with '.'")
        }
        let cache = try resume.map { try BlockCache(folder: $0) }
        var outcomes: [BlockOutcome] = []
        for block in notebook.blocks {
            if let cache, let kept = cache.outcome(of: block) {
                Console.progress("notebook: block \(block.number) (line \(block.line)) reused from \(cache.folder)")
                outcomes.append(kept)
                continue
            }
            let outcome = try await run(block, of: notebook)
            try cache?.keep(outcome)
            outcomes.append(outcome)
        }
        let info = RunInfo(version: TwoScaleVersion.string, commit: MachineInfo.gitCommit(), date: MachineInfo.utcDate(),
                           host: MachineInfo.hostName(), architecture: MachineInfo.architecture(), cores: MachineInfo.cores(),
                           seeds: notebook.seeds(flag: FlagSpelling.flag(for: .seed)))
        var report = try NotebookReport.render(notebook: notebook, outcomes: outcomes, info: info)
        report.markdown = FlagSpelling.render(report.markdown)
        let paths = try ReportWriter.write(report, name: notebook.name, outDir: outDir)

        let summary = NotebookSummary(notebook: file, paths: paths, report: report, seeds: info.seeds, outcomes: outcomes)
        let n = outcomes.count, f = report.figures.count
        let human = "wrote \(paths.markdown) (\(n) block\(n == 1 ? "" : "s"), \(f) figure\(f == 1 ? "" : "s")"
            + (f == 0 ? ")\n" : " in \(paths.figureDir))\n")
        return (summary, human)
    }

    /// Runs every command of `block` with `--json`, taking its typed result as a JSON tree.
    static func run(_ block: NotebookBlock, of notebook: Notebook) async throws -> BlockOutcome {
        let clock = ContinuousClock()
        let start = clock.now
        var results: [JSONValue] = []
        for (i, command) in block.commands.enumerated() {
            let where_ = "\(notebook.source):\(command.line): block \(block.number), command \(i + 1) (twoscale \(command.arguments.joined(separator: " ")))"
            // The command runs as from the shell (same parsing, validation and library call), but its
            // typed result comes back as a JSON tree instead of being printed and read back.
            let capture = OutputCapture(), sink = ResultSink()
            let status = await Console.$capture.withValue(capture) {
                await Console.$results.withValue(sink) {
                    await Console.$quiet.withValue(true) {
                        await NotebookCommand.$running.withValue(true) {
                            await TwoScaleMain.execute(command.jsonArguments(flag: FlagSpelling.flag(for: .json)))
                        }
                    }
                }
            }
            guard status == 0 else {
                throw TwoScaleError.failure("\(where_) failed with exit status \(status) (its message is above); no report was written")
            }
            guard sink.results.count == 1, let result = sink.results.first else {
                let printed = capture.text.trimmingCharacters(in: .whitespacesAndNewlines)
                throw TwoScaleError.failure("\(where_) gave no JSON result\(printed.isEmpty ? "" : " (it printed: \(printed.prefix(200)))") — a notebook runs commands that report results (--json); no report was written")
            }
            results.append(result)
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        return BlockOutcome(block: block, results: results, seconds: seconds)
    }
}

/// `notebook --resume DIR`: one file per finished block, `DIR/block-N.json`, written atomically, holding
/// the binary that ran it, its commands, its wall time and its results. A block is reused only when this
/// very binary (its version and the size and modification time of its executable) ran the same commands;
/// anything else, or a file that does not read, is run again and overwritten.
struct BlockCache {
    let folder: String
    let binary: String

    init(folder: String) throws {
        self.folder = folder
        binary = BlockCache.identity()
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw TwoScaleError.invalid("--resume", folder, allowed: "a folder that can be created and written (\(error.localizedDescription))")
        }
    }

    /// This binary: its version, and its executable's size and modification time.
    static func identity() -> String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let attributes = try? FileManager.default.attributesOfItem(atPath: exe)
        let size = (attributes?[.size] as? NSNumber)?.int64Value ?? -1
        let date = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        return "\(TwoScaleVersion.string) \(exe) \(size) \(date)"
    }

    /// A block's commands as its record holds them.
    static func commands(_ block: NotebookBlock) -> JSONValue {
        .array(block.commands.map { .array($0.arguments.map { .string($0) }) })
    }

    func path(_ block: NotebookBlock) -> String { (folder as NSString).appendingPathComponent("block-\(block.number).json") }

    func outcome(of block: NotebookBlock) -> BlockOutcome? {
        guard let data = FileManager.default.contents(atPath: path(block)),
              let record = try? JSONValue.parse(data, source: path(block)),
              record["binary"]?.stringValue == binary,
              record["commands"] == Self.commands(block),
              let seconds = record["seconds"]?.doubleValue,
              let results = record["results"]?.arrayValue, results.count == block.commands.count
        else { return nil }
        return BlockOutcome(block: block, results: results, seconds: seconds)
    }

    func keep(_ outcome: BlockOutcome) throws {
        let record = JSONValue.object([
            ("binary", .string(binary)),
            ("commands", Self.commands(outcome.block)),
            ("seconds", .double(outcome.seconds)),
            ("results", .array(outcome.results)),
        ])
        try AtomicFile.write(Data(try record.serialized().utf8), to: path(outcome.block))
    }
}
