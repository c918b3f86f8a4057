import ArgumentParser
import Foundation
import TwoScaleCore

/// The `twoscale` root command.
public struct TwoScaleMain: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "twoscale",
        abstract: "The two-scale effective dimension (2sED): exact toy models, networks, bounds, reports.",
        discussion: "Mathematics: shared/SPEC.md. Command-line contract: shared/INTERFACE.md. JSON goes to stdout, progress and warnings to stderr.",
        version: TwoScaleVersion.string,
        subcommands: TwoScaleCommands.all
    )

    public init() {}

    /// Runs `arguments` (without the program name) and returns the exit status: 0 success, 2 usage
    /// error (anything found while parsing, or a `TwoScaleError.usage`), 1 failure (a
    /// `TwoScaleError.failure` or any other error raised while running). Errors are printed as one line
    /// on stderr.
    public static func execute(_ arguments: [String]) async -> Int32 {
        // Parsing (and each command's `validate()`) can only fail on what the user typed: status 2.
        var command: ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch let e as TwoScaleError {
            Console.error("twoscale: \(e.message)")
            return e.exitCode
        } catch {
            let code = exitCode(for: error).rawValue
            let message = fullMessage(for: error)
            if code == 0 {
                if !message.isEmpty { Console.out(message + "\n") }
                return 0
            }
            // One prefix for every message: the parser's "Error: " becomes "twoscale: ".
            let body = message.hasPrefix("Error: ") ? String(message.dropFirst("Error: ".count)) : message
            Console.error(body.hasPrefix("twoscale") ? body : "twoscale: \(body)")
            return 2
        }
        do {
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return 0
        } catch let e as TwoScaleError {
            Console.error("twoscale: \(e.message)")
            return e.exitCode
        } catch let e as ExitCode {
            return e.rawValue  // the command has printed its message (e.g. an interrupted run)
        } catch is CancellationError {
            Console.error("twoscale: cancelled")
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
                Console.error("twoscale: \(message)")
                return 2
            }
            Console.error(message.hasPrefix("twoscale") ? message : "twoscale: \(message.isEmpty ? "\(error)" : message)")
            return error is ExitCode ? code : 1
        }
    }

    /// Entry point for the executable.
    public static func runMain() async -> Never {
        let status = await execute(Array(CommandLine.arguments.dropFirst()))
        Foundation.exit(status)
    }
}

public enum TwoScaleVersion {
    public static let string = "0.1.0"
}
