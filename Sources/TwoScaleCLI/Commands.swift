import ArgumentParser

/// Every subcommand, in the order `twoscale --help` lists them.
enum TwoScaleCommands {
    static let all: [ParsableCommand.Type] = [
        ToyCommand.self,
        FisherCommand.self,
        EdCommand.self,
        AnalyzeCommand.self,
        MergeCommand.self,
        NotebookCommand.self,
        BenchCommand.self,
    ]
}
