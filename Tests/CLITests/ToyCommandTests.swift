import Foundation
import Testing
import TwoScaleCore

@Suite struct ToyCommandTests {
    @Test func workedExampleThroughTheCLI() async throws {
        let j = try await runJSON(["toy", "--family", "constant", "--lambdas", "4,0.01", "--eps", "0.1", "--zeta", "0", "--json"])
        #expect(j["dimension"] == .int(2))
        #expect(j["zeta"]?.doubleValue == 0)
        #expect(j["normalization"] == .string("trace"))
        let p = try #require(j["points"]?.arrayValue?.first)
        #expect(p["eps"]?.doubleValue == 0.1)
        #expect(p["box_count"]?.doubleValue == 20)
        #expect(abs(try #require(p["log_box_count"]?.doubleValue) - log(20)) < 1e-12)
        #expect(abs(exp(try #require(p["log_det_bound"]?.doubleValue)) - 42) < 1e-9)
        // ζ = 0, trace normalisation: c = 2/4.01, d_0 = log((1+√(4c)/ε)(1+√(0.01c)/ε))/|log ε|
        let c = 2 / 4.01
        let expected = (log1p((4 * c).squareRoot() / 0.1) + log1p((0.01 * c).squareRoot() / 0.1)) / log(10)
        #expect(abs(try #require(p["d_zeta"]?.doubleValue) - expected) < 1e-12)
        // One metric for the covering comparison: with ζ = 0 and c = 1, ε^(−d_ζ) is the determinant
        // bound (1 + 20)(1 + 1) = 42, so N·ε^(d_ζ) = 20/42 whatever --normalize says for d_zeta.
        #expect(abs(exp(try #require(p["log_eps_pow_minus_d_zeta"]?.doubleValue)) - 42) < 1e-9)
        #expect(abs(exp(try #require(p["log_cover_ratio"]?.doubleValue)) - 20.0 / 42) < 1e-12)
        #expect(abs(try #require(j["covering_constant"]?.doubleValue) - 20.0 / 42) < 1e-12)
        #expect(j["metric_note"]?.stringValue?.contains("raw Fisher metric") == true)
    }

    /// The covering constant is the largest N·ε^(d_ζ(c = 1)) over the grid.
    @Test func coveringConstantIsTheLargestRatio() async throws {
        let j = try await runJSON(["toy", "--family", "bernoulli", "--dim", "2", "--box", "0.05:0.95",
                                   "--eps", "1e-4:0.5:16", "--zeta", "0.6667", "--json"])
        let pts = try #require(j["points"]?.arrayValue)
        var best = -Double.infinity
        for p in pts {
            let e = try #require(p["eps"]?.doubleValue), raw = try #require(p["d_zeta_raw"]?.doubleValue)
            let r = try #require(p["log_box_count"]?.doubleValue) + raw * log(e)
            #expect(abs(try #require(p["log_cover_ratio"]?.doubleValue) - r) < 1e-12)
            best = max(best, r)
        }
        #expect(abs(try #require(j["log_covering_constant"]?.doubleValue) - best) < 1e-12)
        #expect(j["greedy_note"]?.stringValue != nil)
    }

    @Test func bernoulliGridHasEveryKey() async throws {
        let j = try await runJSON(["toy", "--family", "bernoulli", "--dim", "3", "--box", "0.1:0.9",
                                   "--eps", "1e-3:0.5:20", "--zeta", "0.6667", "--json"])
        let pts = try #require(j["points"]?.arrayValue)
        #expect(pts.count == 20)
        for p in pts {
            for k in ["eps", "d_zeta", "log_box_count", "box_count", "log_det_bound"] { #expect(p[k] != nil, "\(k)") }
            #expect(try #require(p["d_zeta"]?.doubleValue) >= 0.6667 * 3)
        }
    }

    @Test func hugeDimensionReportsLogCounts() async throws {
        let j = try await runJSON(["toy", "--family", "constant", "--lambdas", "2", "--dim", "10000",
                                   "--eps", "1e-4:0.5:100", "--json"])
        let pts = try #require(j["points"]?.arrayValue)
        #expect(pts.count == 100)
        #expect(pts[0]["box_count"] == .null)
        #expect(pts[0]["log_box_count"]?.doubleValue != nil)
    }

    @Test(arguments: [
        ["--family", "constant", "--lambdas", "1", "--eps", "0"],
        ["--family", "constant", "--lambdas", "1", "--eps", "1"],
        ["--family", "constant", "--lambdas", "1", "--eps", "1.5"],
        ["--family", "constant", "--lambdas", "1", "--zeta", "1"],
        ["--family", "constant", "--lambdas", "1", "--zeta", "-0.1"],
        ["--family", "constant", "--lambdas", ""],
        ["--family", "constant"],
        ["--family", "constant", "--lambdas", "1,-2"],
        ["--family", "constant", "--lambdas", "1,x"],
        ["--family", "bernoulli", "--dim", "2", "--box", "0.9:0.1"],
        ["--family", "bernoulli", "--dim", "2", "--box", "0.5:1.5"],
        ["--family", "poisson", "--dim", "2", "--box", "-1:1"],
        ["--family", "bernoulli", "--dim", "0", "--box", "0.1:0.9"],
        ["--family", "bernoulli", "--box", "0.1:0.9"],
        ["--family", "bernoulli", "--dim", "2"],
        ["--family", "constant", "--lambdas", "1", "--eps", "1e-3:0.5"],
        ["--family", "constant", "--lambdas", "1", "--eps", "a,b"],
        ["--family", "gaussian", "--dim", "2"],
        ["--family", "constant", "--lambdas", "1", "--normalize", "max"],
    ])
    func badInputIsAUsageError(_ args: [String]) async {
        let (status, out) = await runCLI(["toy"] + args + ["--json"])
        #expect(status == 2, "\(args)")
        #expect(out.isEmpty, "no partial output for \(args)")
    }
}
