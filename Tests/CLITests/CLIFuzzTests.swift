import Foundation
import PropertyBased
import Testing
import TwoScaleCLI
import TwoScaleCore
import TwoScaleFormats

/// Random values for the numeric flags of the cheap commands (toy, bound), run in-process: every run
/// either succeeds with parseable JSON (finite numbers — the writer refuses others) or fails with status
/// 1 or 2 and one `twoscale: …` message; stdout stays empty on failure. Never a trap.
@Suite struct CLIFuzzTests {
    /// Number-like text: digits, signs, exponents, separators, special words.
    static let numberText = Gen.oneOf(
        Gen.element(of: ["0", "1", "-1", "0.5", "1e-300", "1e300", "nan", "inf", "-inf", "", " ", "1e-3:0.5:4", "0:1", "1:0",
                         "2,3", "0.1,,0.2", "1e3:1e6:5", "1e-320", "0.999999999999", "4,0.01", "1e999", "abc", "-0"]).compactMap { $0 },
        Gen.element(of: Array("0123456789.,:-+eE ")).compactMap { $0 }.string(of: 1...10),
        Gen.double(in: -2...2).map { "\($0)" },
        Gen.double(in: -320 ... 320).map { "1e\(Int($0))" })

    static func check(_ args: [String]) async {
        let r = await runCLICapturingErrors(args)
        switch r.status {
        case 0:
            do { _ = try JSONValue.parse(Data(r.out.utf8), source: "stdout") } catch { Issue.record("\(args): invalid JSON \(error)") }
        case 1, 2:
            #expect(r.out.isEmpty, "\(args): stdout on failure")
            #expect(r.err.hasPrefix("twoscale: "), "\(args): \(r.err)")
        default:
            Issue.record("\(args): status \(r.status): \(r.err)")
        }
    }

    @Test func toyFlags() async {
        await propertyCheck(count: 400, input: Self.numberText, Self.numberText, Self.numberText, Self.numberText) { lambdas, eps, zeta, box in
            await Self.check(["toy", "--family", "constant", "--lambdas=\(lambdas)", "--eps=\(eps)", "--zeta=\(zeta)", "--box=\(box)", "--json"])
        }
        await propertyCheck(count: 100, input: Gen.element(of: ["bernoulli", "poisson", "exponential"]).compactMap { $0 },
                            Self.numberText, Self.numberText, Self.numberText) { family, dim, eps, box in
            await Self.check(["toy", "--family", family, "--dim=\(dim)", "--eps=\(eps)", "--box=\(box)", "--greedy-max", "200", "--json"])
        }
    }

    /// A case the random search found (a trap converting −10³⁰⁰ to Int): large negative sample sizes.
    @Test func hugeNegativeSampleSize() async {
        for n in ["-1e300", "-9e15", "-1e16:10", "-1e300,100"] {
            let r = await runCLICapturingErrors(["bound", "--n=\(n)", "--family", "constant", "--lambdas", "4,0.01", "--json"])
            #expect(r.status == 2, "\(n): \(r.err)")
            #expect(r.out.isEmpty && r.err.hasPrefix("twoscale: "), "\(n): \(r.err)")
        }
    }

    /// Cases a review found (traps converting −∞ and −10¹⁹ to Int): a log grid's count, and the layered
    /// toy's unit counts and sizes, beyond Int's range or below 1.
    @Test func countsOutOfRange() async {
        for eps in ["0.01:0.5:-inf", "0.01:0.5:-1e300", "0.01:0.5:1e300", "0.01:0.5:nan"] {
            let r = await runCLICapturingErrors(["toy", "--family", "constant", "--lambdas", "4,0.01", "--eps=\(eps)", "--json"])
            #expect(r.status == 2, "\(eps): \(r.err)")
            #expect(r.out.isEmpty && r.err.hasPrefix("twoscale: "), "\(eps): \(r.err)")
        }
        for (units, size) in [("-1e19,10", "10,10"), ("10,10", "-1e19,10"), ("0,10", "10,10"), ("10,10", "10,-3"), ("1e300,1", "1,1")] {
            let r = await runCLICapturingErrors(["toy", "--family", "layered", "--units=\(units)", "--unit-size=\(size)", "--eps", "0.1", "--json"])
            #expect(r.status == 2, "\(units) \(size): \(r.err)")
            #expect(r.out.isEmpty && r.err.hasPrefix("twoscale: "), "\(units) \(size): \(r.err)")
        }
    }

    /// More cases a review found (overflows and allocations that trapped): a repeated λ's dimension, an
    /// axis family's dimension with --mc, a convolution whose sizes overflow, bench-train's N, the toy's
    /// bootstrap count. Each is a usage error now; the largest seed with several trials runs (seeds wrap).
    @Test func sizesOutOfRange() async {
        let bad: [[String]] = [
            ["toy", "--family", "constant", "--lambdas", "4", "--dim", "9223372036854775807", "--eps", "0.1"],
            ["toy", "--family", "constant", "--lambdas", "4", "--dim", "100000000000000", "--eps", "0.1"],
            ["bound", "--n", "100", "--family", "constant", "--lambdas", "4", "--dim", "9223372036854775807"],
            ["toy", "--family", "bernoulli", "--box", "0.1:0.9", "--dim", "9223372036854775807", "--eps", "0.1", "--mc", "--paths", "2"],
            ["fisher", "--arch", "1x1x1-conv999999k999999p999998-10", "--sigma2", "0.1", "--data", "synthetic:gaussian", "--samples", "1"],
            ["fisher", "--arch", "1x1x1-conv1k4096p4095-maxpool4096-2", "--sigma2", "0.1", "--data", "synthetic:gaussian", "--samples", "1"],
            ["bench-train", "--arch", "2-2", "--samples", "9223372036854775807"],
            ["bench-train", "--arch", "2-2", "--samples", "100000000000000"],
            ["toy", "--family", "constant", "--lambdas", "4,0.01", "--eps", "0.1", "--mc", "--estimator", "plain", "--paths", "2",
             "--bootstrap", "9223372036854775807"],
            ["bound", "--n", "100", "--family", "constant", "--lambdas", "4,0.01", "--K", "1e308", "--delta", "0.5"],
        ]
        for args in bad {
            let r = await runCLICapturingErrors(args + ["--json"])
            #expect(r.status == 2 || r.status == 1, "\(args): status \(r.status): \(r.err)")
            #expect(r.out.isEmpty && r.err.hasPrefix("twoscale: "), "\(args): \(r.err)")
        }
        let wrap = await runCLICapturingErrors(["toy", "--family", "constant", "--lambdas", "4,0.01", "--eps", "0.1", "--mc",
                                                "--seed", "18446744073709551615", "--trials", "3"])
        #expect(wrap.status == 0, "\(wrap.err)")
        // The largest seed is printed to the digit with --json (it was refused by the writer).
        let big = await runCLICapturingErrors(["toy", "--family", "constant", "--lambdas", "4,0.01", "--eps", "0.1", "--mc",
                                               "--seed", "18446744073709551615", "--json"])
        #expect(big.status == 0, "\(big.err)")
        #expect(big.out.contains("\"seed\": 18446744073709551615"), "\(big.out.prefix(400))")
    }

    @Test func boundFlags() async {
        await propertyCheck(count: 400, input: Self.numberText, Self.numberText, Self.numberText, Self.numberText) { n, gamma, zeta, delta in
            await Self.check(["bound", "--n=\(n)", "--gamma=\(gamma)", "--zeta=\(zeta)", "--delta=\(delta)",
                              "--family", "constant", "--lambdas", "4,0.01", "--json"])
        }
    }
}
