import Testing
import TwoScaleCore

/// Errors carry their subject (a setting's flag, a file) apart from the message, so a caller renames it
/// structurally instead of patching text.
@Suite struct TwoScaleErrorTests {
    @Test func invalidAndMissingKeepTheirSubject() {
        let e = TwoScaleError.invalid("--arch", "5-x", allowed: "layer sizes joined by '-'")
        #expect(e.subject == "--arch")
        #expect(e.message == "--arch: '5-x' is not allowed; layer sizes joined by '-'")
        #expect(e.exitCode == 2)
        let r = e.renaming("--arch", to: "--teacher")
        #expect(r.message == "--teacher: '5-x' is not allowed; layer sizes joined by '-'")
        #expect(r.kind == .usage)
        // Another subject is left alone, and so is a message that only mentions the name.
        #expect(e.renaming("--student", to: "--x") == e)
        let plain = TwoScaleError.usage("give --arch with --resume")
        #expect(plain.renaming("--arch", to: "--teacher").message == "give --arch with --resume")
        #expect(TwoScaleError.missing("--sigma2", "markov needs it").renaming("--sigma2", to: "--noise").message
                == "--noise is missing; markov needs it")
    }

    @Test func fileErrorsRenameTheirFolder() {
        let e = TwoScaleError.file("/runs/.staging-1/own-2.npy", line: 3, "is truncated")
        #expect(e.message == "/runs/.staging-1/own-2.npy:3: is truncated")
        #expect(e.exitCode == 1)
        #expect(e.renaming("/runs/.staging-1", to: "/runs/all").message == "/runs/all/own-2.npy:3: is truncated")
        #expect(e.renaming("/runs/.staging", to: "/x") == e, "a folder is a whole path component")
        #expect(TwoScaleError.mismatch("w.npz", "has 3 tensors").renaming("w.npz", to: "v.npz").message == "v.npz: has 3 tensors")
    }

    @Test func prefixedKeepsKind() {
        let e = TwoScaleError.failure("round-off too large").prefixed("the Fisher block 2: ")
        #expect(e.message == "the Fisher block 2: round-off too large")
        #expect(e.kind == .failure)
    }
}
