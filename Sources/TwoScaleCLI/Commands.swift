import ArgumentParser

/// Every subcommand, in the order `twoscale --help` lists them.
enum TwoScaleCommands {
    static let all: [ParsableCommand.Type] = [
        ToyCommand.self,
        FisherCommand.self,
        EdCommand.self,
        AnalyzeCommand.self,
        MergeCommand.self,
        BoundCommand.self,
        TrainCommand.self,
        GapCommand.self,
        CompareCommand.self,
        StudyCommand.self,
        NotebookCommand.self,
        BenchCommand.self,
        TrainBenchCommand.self,
    ]
}
