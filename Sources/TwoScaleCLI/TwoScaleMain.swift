import ArgumentParser
import NetworkEstimators
import Cluster
import Foundation
import TwoScaleCore
import TwoScaleNumerics

/// The `twoscale` root command.
public struct TwoScaleMain: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "twoscale",
        abstract: "The two-scale effective dimension (2sED): exact toy models, networks, bounds, reports.",
        discussion: "Every symbol the output prints: docs/GLOSSARY.md. Mathematics: docs/METHOD.md. Commands and their JSON keys: docs/COMMANDS.md; walkthrough: docs/GUIDE.md; files: docs/FORMATS.md; every flag: docs/FLAGS.md. JSON goes to stdout, progress and warnings to stderr.",
        version: TwoScaleVersion.string,
        subcommands: TwoScaleCommands.all
    )

    public init() {}

    /// How the process was started: alone, or as one rank of an MPI job (read from the launcher's
    /// environment by `runMain`; in-process callers — tests, notebooks — always run alone). Under MPI only
    /// `ed` runs (its ranks share the paths); messages about the command line come from rank 0 alone,
    /// since every rank parses the same one.
    @TaskLocal public static var launch: Launch = .single

    /// Whether this process stays silent about errors: a rank other than 0 of an MPI job.
    static var silentRank: Bool { (launch.mpi?.rank ?? 0) > 0 }

    /// Prints an error message unless this is a silent rank. Under MPI every rank then waits for the
    /// others (`MPIWorld.meetBeforeLeaving`), so that rank 0's message is out before any rank exits.
    static func report(_ message: String) {
        if !silentRank { Console.error(message) }
        if launch.mpi != nil { MPIWorld.meetBeforeLeaving() }
    }

    /// Runs `arguments` (without the program name) and returns the exit status: 0 success, 2 usage
    /// error (anything found while parsing, or a `TwoScaleError.usage`), 1 failure (a
    /// `TwoScaleError.failure` or any other error raised while running). Errors are printed as one line
    /// on stderr.
    public static func execute(_ rawArguments: [String]) async -> Int32 {
        ShippedEstimators.install()
        if let unknown = CommandLineWords.unknownCommand(rawArguments) {
            report("twoscale: " + unknown)
            return 2
        }
        let arguments = CommandLineWords.joiningNegativeValues(rawArguments)
        // Parsing (and each command's `validate()`) can only fail on what the user typed: status 2.
        var command: ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch let e as TwoScaleError {
            report("twoscale: \(e.message)")
            return e.exitCode
        } catch {
            let code = exitCode(for: error).rawValue
            let message = fullMessage(for: error)
            if code == 0 {
                if !message.isEmpty, !silentRank { Console.out(message + "\n") }
                return 0
            }
            // One prefix for every message: the parser's "Error: " becomes "twoscale: ".
            let body = message.hasPrefix("Error: ") ? String(message.dropFirst("Error: ".count)) : message
            report(body.hasPrefix("twoscale") ? body : "twoscale: \(body)")
            return 2
        }
        if launch.mpi != nil, !(command is EdCommand) {
            let name = type(of: command).configuration.commandName ?? "this command"
            report("twoscale: \(name) runs in one process: start it without mpirun (under MPI only twoscale ed runs, sharing its paths over the ranks; set TWOSCALE_MPI=off to run a command alone inside an MPI job)")
            return 2
        }
        do {
            try await Console.$showProgress.withValue(Console.showProgress && !OutputOptions.quiet(command)) {
                if var asyncCommand = command as? AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
            }
            return 0
        } catch let e as TwoScaleError {
            report("twoscale: \(e.message)")
            return e.exitCode
        } catch let e as ExitCode {
            return e.rawValue  // the command has printed its message (e.g. an interrupted run)
        } catch is CancellationError {
            report("twoscale: cancelled")
            return 1
        } catch {
            // Anything else raised while running (a system error from Foundation, say) is a failure,
            // not a usage error: status 1, unless the command asked for a specific status.
            let code = exitCode(for: error).rawValue
            let message = fullMessage(for: error)
            if code == 0 {
                if !message.isEmpty { Console.out(message + "\n") }
                return 0
            }
            if error is ValidationError {
                report("twoscale: \(message)")
                return 2
            }
            report(message.hasPrefix("twoscale") ? message : "twoscale: \(message.isEmpty ? "\(error)" : message)")
            return error is ExitCode ? code : 1
        }
    }

    /// Entry point for the executable.
    public static func runMain() async -> Never {
        Allocator.keepFreedMemory()
        let status = await $launch.withValue(Launch.current) { await execute(Array(CommandLine.arguments.dropFirst())) }
        Foundation.exit(status)
    }
}

public enum TwoScaleVersion {
    public static let string = "0.1.0"
}
