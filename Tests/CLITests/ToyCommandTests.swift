import Foundation
import Testing
import ToyModels
import TwoScaleCore
import TwoScaleFormats

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
    /// A constant λ gives every draw the same spectrum: the interval has no width, and the estimate equals
    /// the exact value up to rounding, which counts as held (it read 0 of 3 before).
    @Test func aZeroWidthIntervalAtTheExactValueHolds() async throws {
        let j = try await runJSON(["toy", "--family", "constant", "--lambdas", "4,0.01", "--eps", "0.1", "--mc", "--trials", "3", "--json"])
        let p = try #require(j["points"]?.arrayValue?.first)
        let exact = try #require(p["d_zeta"]?.doubleValue)
        let ci = (p["ci95_mc"]?.arrayValue ?? []).compactMap { $0.doubleValue }
        #expect(ci.count == 2 && ci[1] - ci[0] < 1e-12 && Swift.abs(ci[0] - exact) < 1e-12)
        #expect(p["covered"] == .int(3))
    }

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

/// `toy --family layered`: the exact values through the CLI, the library's numbers, and every flag that
/// does not apply refused by name.
@Suite struct LayeredToyCommandTests {
    @Test func exactValuesMatchTheLibrary() async throws {
        let j = try await runJSON(["toy", "--family", "layered", "--units", "2,3", "--unit-size", "4,2", "--box", "0.2:1.5",
                                   "--threshold", "0.7", "--coupling", "1.3", "--eps", "1e-3,0.1", "--json"])
        #expect(j["family"] == .string("layered"))
        #expect(j["dimension"] == .int(14))
        let m = try LayeredToy(units: [2, 3], unitSize: [4, 2], box: (0.2, 1.5), threshold: 0.7, coupling: 1.3)
        let pts = try #require(j["points"]?.arrayValue)
        for (p, e) in zip(pts, [1e-3, 0.1]) {
            let x = try m.exact(eps: e, zeta: 2.0 / 3, normalization: .trace)
            #expect(p["d_zeta"]?.doubleValue == x.dZeta)
            #expect(p["d_zeta_lower"]?.doubleValue == x.dZetaLower)
            #expect(p["outer_ess_fraction"]?.doubleValue == x.stageOuterESSFraction[0])
            #expect(p["d_zeta_mc"] == nil)
        }
    }

    /// Three stages: `--unit-size` alone sets the count (10 units per stage by default), the exact values are
    /// the library's, each later stage has its limit ESS and `outer_ess_fraction` is their product; with
    /// `--mc` every stage has its term and the reported interval is the bracket.
    @Test func threeStagesThroughTheCLI() async throws {
        let j = try await runJSON(["toy", "--family", "layered", "--unit-size", "1,2,1", "--coupling", "2", "--eps", "1e-3,0.1",
                                   "--mc", "--paths", "16", "--inner", "8", "--json"])
        #expect(j["dimension"] == .int(40))
        let m = try LayeredToy(units: [10, 10, 10], unitSize: [1, 2, 1], coupling: 2)
        let points = try #require(j["points"]?.arrayValue)
        for (p, e) in zip(points, [1e-3, 0.1]) {
            let x = try m.exact(eps: e, zeta: 2.0 / 3, normalization: .trace)
            #expect(p["d_zeta"]?.doubleValue == x.dZeta)
            #expect(p["d_zeta_lower"]?.doubleValue == x.dZetaLower)
            let list = try #require(p["stage_outer_ess_fraction"]?.arrayValue)
            let stages = list.compactMap { $0.doubleValue }
            #expect(stages == x.stageOuterESSFraction && stages.count == 2)
            #expect(abs((p["outer_ess_fraction"]?.doubleValue ?? 0) - stages[0] * stages[1]) < 1e-15)
            #expect(p["stage_log_z_mc"]?.arrayValue?.count == 3)
            #expect(p["interval_mc_source"] == .string("bracket"))
        }
        let text = await runCLICapturingErrors(["toy", "--family", "layered", "--unit-size", "1,2,1", "--eps", "0.1"])
        #expect(text.status == 0 && text.out.contains("stages 10×1, 10×2, 10×1"))
    }

    /// The stage-1 decorrelation check, end to end: two stages whose first-stage units have 50 coordinates,
    /// where 20 random-walk sweeps per step leave the particles near their starts (the lab's shortfall of
    /// about 0.1 nats per unit), report the bracket whatever the outer ESS; units of 3 coordinates decorrelate
    /// and, with the same outer weights' rule, report the sampled interval.
    @Test func stageOneThatDoesNotDecorrelateReportsTheBracket() async throws {
        func run(_ size: String) async throws -> (decorrelation: Double, sources: [JSONValue?]) {
            let j = try await runJSON(["toy", "--family", "layered", "--units", "2,2", "--unit-size", size, "--coupling", "0",
                                       "--eps", "1e-3,0.1", "--mc", "--paths", "16", "--inner", "8", "--json"])
            let d = try #require(j["monte_carlo"]?["smc"]?["stage1"]?["min_decorrelation"]?.doubleValue)
            return (d, try #require(j["points"]?.arrayValue).map { $0["interval_mc_source"] })
        }
        let wide = try await run("50,3"), narrow = try await run("3,3")
        // More stage-1 sweeps move the wide units' particles further; the count is recorded where not the default.
        let more = try await runJSON(["toy", "--family", "layered", "--units", "2,2", "--unit-size", "50,3", "--coupling", "0",
                                      "--eps", "1e-3,0.1", "--mc", "--paths", "16", "--inner", "8", "--stage1-sweeps", "60", "--json"])
        #expect(more["monte_carlo"]?["stage1_sweeps"] == .int(60))
        let further = try #require(more["monte_carlo"]?["smc"]?["stage1"]?["min_decorrelation"]?.doubleValue)
        #expect(further > wide.decorrelation, "\(further) against \(wide.decorrelation)")
        let refused = await runCLICapturingErrors(["toy", "--family", "bernoulli", "--dim", "3", "--eps", "0.1", "--mc", "--stage1-sweeps", "30"])
        #expect(refused.status == 2 && refused.err.contains("--stage1-sweeps is a setting of --family layered"), "\(refused.err)")
        #expect(wide.decorrelation < ReportedInterval.minimumDecorrelation, "\(wide.decorrelation)")
        #expect(wide.sources == [.string("bracket"), .string("bracket")])
        #expect(narrow.decorrelation >= ReportedInterval.minimumDecorrelation, "\(narrow.decorrelation)")
        #expect(narrow.sources == [.string("sampled"), .string("sampled")])
    }

    /// The independence sweeps' default: on where some stage's units have 100 coordinates or more (the same bytes
    /// as `--independence-moves`, and the text says so), off below (the same bytes as `--no-independence-moves`);
    /// `--no-independence-moves` turns them off on wide units.
    @Test func independenceSweepsByDefaultOnWideUnits() async throws {
        func args(_ sizes: String, _ extra: [String] = []) -> [String] {
            ["toy", "--family", "layered", "--units", "2,2", "--unit-size", sizes, "--eps", "0.1", "--mc", "--paths", "8",
             "--inner", "8", "--trace-draws", "200", "--seed", "3", "--json"] + extra
        }
        func key(_ j: JSONValue) -> JSONValue? { j["monte_carlo"]?["independence_moves"] }
        let wide = try await runJSON(args("3,100")), wideOn = try await runJSON(args("3,100", ["--independence-moves"]))
        let wideOff = try await runJSON(args("3,100", ["--no-independence-moves"]))
        #expect(key(wide) == .bool(true) && key(wideOff) == nil)
        #expect(wide["points"] == wideOn["points"] && wide["points"] != wideOff["points"])
        let narrow = try await runJSON(args("99,3")), narrowOff = try await runJSON(args("99,3", ["--no-independence-moves"]))
        #expect(key(narrow) == nil && narrow["points"] == narrowOff["points"])
        #expect(StagedToyMeasurement<LayeredToy>.wideUnitCoordinates == 100)
        let text = await runCLICapturingErrors(Array(args("100,3").dropLast()))
        #expect(text.status == 0 && text.out.contains("seed 3, independence sweeps)"), "\(text.out)")
    }

    /// `--sweeps` reaches joint tempering (other numbers, recorded as `monte_carlo.joint_sweeps`) and is
    /// refused without `--joint` or out of range.
    @Test func jointSweepsThroughTheCLI() async throws {
        let base = ["toy", "--family", "layered", "--units", "2,2", "--unit-size", "3,3", "--coupling", "3", "--eps", "0.1",
                    "--mc", "--paths", "16", "--inner", "8", "--joint", "--json"]
        let five = try await runJSON(base)
        let one = try await runJSON(base + ["--sweeps", "1"])
        #expect(five["monte_carlo"]?["joint_sweeps"] == .int(5))
        #expect(one["monte_carlo"]?["joint_sweeps"] == .int(1))
        let p5 = try #require(five["points"]?.arrayValue?.first), p1 = try #require(one["points"]?.arrayValue?.first)
        #expect(p5["d_zeta_joint_mc"] != p1["d_zeta_joint_mc"])
        #expect(p5["d_zeta_mc"] == p1["d_zeta_mc"], "the smc estimator is untouched")
        for (args, says) in [(["--sweeps", "3"], "add --joint"), (["--joint", "--sweeps", "0"], "--sweeps")] {
            let r = await runCLICapturingErrors(Array(base.prefix(12)) + args)
            #expect(r.status == 2 && r.err.contains(says), "\(args): \(r.err)")
        }
    }

    /// `--tilt-moves` in the summary: a stage the majorant tilts says so with its steps; where the outer weights do
    /// not vary (coupling 0) the stage says it was not tilted and why, and the JSON's `declined` names the same reason.
    /// `--outer-moves` says what it moved (the first trial's, with `--trials`); neither line without its flag.
    @Test func theSummarySaysWhetherAndWhyAStageWasTilted() async throws {
        let base = ["toy", "--family", "layered", "--units", "10,10", "--unit-size", "1,3", "--eps", "0.1", "--mc",
                    "--paths", "64", "--inner", "16", "--seed", "101", "--tilt-moves", "100"]
        let tilted = await runCLICapturingErrors(base + ["--coupling", "6"])
        #expect(tilted.status == 0 && tilted.out.contains("majorant tilt (docs/METHOD.md §22): ε = 0.1: stage 2 tilted (β "), "\(tilted.out)")
        let flat = await runCLICapturingErrors(base + ["--coupling", "0"])
        #expect(flat.status == 0 && flat.out.contains(": its outer ESS is at least half of K)"),
                "\(flat.out)")
        let j = try await runJSON(base + ["--coupling", "0", "--json"])
        let d = try #require(j["points"]?.arrayValue?.first?["stage_tilt"]?.arrayValue?.first)
        #expect(d["engaged"] == .bool(false) && d["declined"] == .string("ess_at_least_half"), "\(d)")
        let none = await runCLICapturingErrors(Array(base.dropLast(2)) + ["--coupling", "6"])
        #expect(none.status == 0 && !none.out.contains("majorant tilt") && !none.out.contains("outer moves"), "no line without the flag")
        let moved = await runCLICapturingErrors(Array(base.dropLast(2)) + ["--coupling", "6", "--outer-moves", "8", "--trials", "2"])
        #expect(moved.status == 0 && moved.out.contains("outer moves (docs/METHOD.md §22; the first trial): ε = 0.1: stage 1 under stage 2's weights in ")
                && moved.out.contains("the interval's source are the unmoved weights'\n") && !moved.out.contains("the bound's last term"), "\(moved.out)")
    }

    @Test func smcRunsBesideTheExactValues() async throws {
        let j = try await runJSON(["toy", "--family", "layered", "--units", "2,2", "--unit-size", "3,3", "--coupling", "3",
                                   "--eps", "0.1", "--mc", "--paths", "16", "--inner", "8", "--trials", "2", "--json"])
        let p = try #require(j["points"]?.arrayValue?.first)
        // The Monte Carlo keys sit beside the exact ones.
        #expect(p["d_zeta"]?.doubleValue != nil)
        #expect(p["d_zeta_mc"]?.doubleValue != nil)
        #expect(p["trials"] == .int(2))
        #expect(p["stage_log_z_mc"]?.arrayValue?.count == 2)
        #expect(p["d_zeta_bracket"]?.arrayValue?.count == 2)
        #expect(j["monte_carlo"]?["inner"] == .int(8))
        #expect(j["monte_carlo"]?["estimator"] == .string("smc"))
    }

    /// `--chains` reaches the estimator: `monte_carlo.chains` says how many runs were joined, and the estimate is
    /// another one than a single run's; without it the key is absent.
    @Test func chainsReachTheEstimator() async throws {
        let base = ["toy", "--family", "layered", "--units", "2,2", "--unit-size", "3,3", "--coupling", "3",
                    "--eps", "0.1", "--mc", "--paths", "8", "--inner", "8", "--json"]
        let one = try await runJSON(base), three = try await runJSON(base + ["--chains", "3"])
        #expect(one["monte_carlo"]?["chains"] == nil)
        #expect(three["monte_carlo"]?["chains"] == .int(3))
        #expect(one["points"]?.arrayValue?.first?["d_zeta_mc"] != three["points"]?.arrayValue?.first?["d_zeta_mc"])
    }

    /// `--island-sweeps` reaches the islands: one sweep per step gives other numbers than the default four,
    /// and the same as the library run with one sweep.
    @Test func islandSweepsReachTheIslands() async throws {
        let base = ["toy", "--family", "layered", "--units", "2,2", "--unit-size", "3,3", "--coupling", "3",
                    "--eps", "0.1", "--mc", "--paths", "8", "--inner", "8", "--json"]
        let four = try await runJSON(base)
        let one = try await runJSON(base + ["--island-sweeps", "1"])
        let a = try #require(four["points"]?.arrayValue?.first?["d_zeta_mc"]?.doubleValue)
        let b = try #require(one["points"]?.arrayValue?.first?["d_zeta_mc"]?.doubleValue)
        #expect(a != b)
        let m = try LayeredToy(units: [2, 2], unitSize: [3, 3], coupling: 3)
        var r = try StagedToyMeasurement.measure(family: "layered", model: m, eps: [0.1], zeta: 2.0 / 3, normalization: .trace)
        try await r.runMonteCarlo(paths: 8, inner: 8, seed: 1, trials: 1, traceDraws: nil, islandSweeps: 1, threads: 2)
        #expect(r.points[0].monteCarlo?.dZetaMc == b)
    }

    @Test func flagsThatDoNotApplyAreRefused() async {
        let cases: [([String], String)] = [
            (["toy", "--family", "layered", "--dim", "3"], "--dim"),
            (["toy", "--family", "layered", "--lambdas", "1"], "--lambdas"),
            (["toy", "--family", "layered", "--mc", "--estimator", "plain"], "--estimator plain"),
            (["toy", "--family", "layered", "--mc", "--bootstrap", "10"], "--bootstrap"),
            (["toy", "--family", "bernoulli", "--dim", "2", "--coupling", "1"], "--coupling"),
            (["toy", "--family", "constant", "--lambdas", "1", "--units", "1,1"], "--units"),
            (["toy", "--family", "bernoulli", "--dim", "2", "--mc", "--inner", "8"], "--inner"),
            (["toy", "--family", "layered", "--box=-1:1"], "--box"),
            (["toy", "--family", "layered", "--threshold", "2"], "--threshold"),
            (["toy", "--family", "layered", "--units", "1,2,3", "--unit-size", "3,3"], "--units"),
            (["toy", "--family", "layered", "--units", "1,1,1,1,1,1,1,1,1", "--unit-size", "1,1,1,1,1,1,1,1,1"], "--units"),
            (["toy", "--family", "layered", "--units", "4"], "--units"),
            (["toy", "--family", "layered", "--unit-size", "0,3"], "--unit-size"),
            (["toy", "--family", "bernoulli", "--dim", "2", "--mc", "--island-sweeps", "8"], "--island-sweeps"),
            (["toy", "--family", "layered", "--mc", "--island-sweeps", "0"], "--island-sweeps"),
            (["toy", "--family", "layered", "--mc", "--outer-moves", "1001"], "--outer-moves"),
            (["toy", "--family", "layered", "--outer-moves", "4"], "add --mc"),
            (["toy", "--family", "layered", "--mc", "--tilt-moves", "10001"], "--tilt-moves"),
            (["toy", "--family", "layered", "--tilt-moves", "4"], "add --mc"),
            (["toy", "--family", "layered", "--mc", "--tilt-moves", "4", "--outer-moves", "4"], "not both"),
            (["toy", "--family", "bernoulli", "--dim", "2", "--mc", "--tilt-moves", "4"], "--tilt-moves"),
            (["toy", "--family", "layered", "--mc", "--chains", "0"], "--chains"),
            (["toy", "--family", "layered", "--mc", "--chains", "65"], "--chains"),
            (["toy", "--family", "layered", "--chains", "4"], "add --mc"),
            (["toy", "--family", "bernoulli", "--dim", "2", "--mc", "--chains", "4"], "--chains"),
            (["toy", "--family", "bernoulli", "--dim", "2", "--mc", "--outer-moves", "4"], "--outer-moves"),
            (["toy", "--family", "layered", "--independence-moves"], "add --mc"),
            (["toy", "--family", "bernoulli", "--dim", "2", "--mc", "--independence-moves"], "--independence-moves"),
            (["toy", "--family", "layered", "--no-independence-moves"], "--no-independence-moves is a setting of the smc estimator"),
            (["toy", "--family", "bernoulli", "--dim", "2", "--mc", "--no-independence-moves"], "--no-independence-moves is a setting of --family layered"),
        ]
        for (args, flag) in cases {
            let r = await runCLICapturingErrors(args + ["--eps", "0.1"])
            #expect(r.status == 2, "\(args): \(r.err)")
            #expect(r.err.contains(flag), "\(args): \(r.err)")
            #expect(r.out.isEmpty)
        }
    }
}
