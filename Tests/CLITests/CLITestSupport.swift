import Foundation
import TwoScaleCLI
import TwoScaleCore

/// Runs `twoscale ARGS` in-process; returns the exit status and captured stdout.
func runCLI(_ args: [String]) async -> (status: Int32, out: String) {
    let cap = OutputCapture()
    let status = await Console.$capture.withValue(cap) {
        await Console.$quiet.withValue(true) { await TwoScaleMain.execute(args) }
    }
    return (status, cap.text)
}

/// Runs with `--json` expected in `args` and parses the output.
func runJSON(_ args: [String]) async throws -> JSONValue {
    let (status, out) = await runCLI(args)
    guard status == 0 else { throw TwoScaleError.failure("exit \(status) for \(args)") }
    return try JSONValue.parse(Data(out.utf8), source: "stdout")
}
