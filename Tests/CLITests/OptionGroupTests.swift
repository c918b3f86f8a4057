import Foundation
@testable import TwoScaleCLI
import XCTest

/// The shared option groups (OptionGroups.swift): every command that takes a concern's flags gives the
/// same message for the same mistake, exits 2 and prints nothing on stdout; a command's own defaults
/// stay its own.
final class OptionGroupTests: XCTestCase {
    static let ed = ["ed", "--arch", "8-4-3", "--samples", "10", "--eps", "0.1"]
    static let fisher = ["fisher", "--arch", "8-4-3", "--data", "synthetic:gaussian", "--samples", "10", "--sigma2", "0.1"]
    static let train = ["train", "--arch", "8-4-3", "--data", "synthetic:teacher:8-4-3", "--samples", "50"]
    static let compare = ["compare", "--archs", "8-4-3,8-3-3", "--data", "synthetic:teacher:8-4-3", "--samples", "60"]
    static let gap = ["gap", "--teacher", "8-4-3", "--student", "8-4-3"]

    /// `--flag value` (replacing the base line's value where it has one).
    static func with(_ base: [String], _ flag: String, _ value: String) -> [String] {
        var line = base
        if let i = line.firstIndex(of: flag), i + 1 < line.count { line[i + 1] = value } else { line += [flag, value] }
        return line
    }

    /// One mistake per concern, given to every command that takes that concern's flags.
    func testTheSameMistakeGetsTheSameMessage() async {
        let cases: [(flag: String, value: String, commands: [[String]], expected: String)] = [
            // model
            ("--arch", "8-x-3", [Self.ed, Self.fisher, Self.train], "--arch: '8-x-3' is not allowed;"),
            ("--activation", "cube", [Self.ed, Self.fisher, Self.train, Self.compare, Self.gap],
             "The value 'cube' is invalid for '--activation <activation>'"),
            ("--fisher", "foo", [Self.ed, Self.fisher], "The value 'foo' is invalid for '--fisher <fisher>'"),
            ("--sigma2", "0", [Self.ed, Self.fisher, Self.compare],
             "--sigma2: '0.0' is not allowed; the noise variance σ² must be a finite number > 0"),
            ("--noise-samples", "0", [Self.ed, Self.fisher, Self.compare],
             "--noise-samples: '0' is not allowed; the number of noise draws R must be ≥ 1"),
            // data
            ("--samples", "0", [Self.ed, Self.fisher, Self.train, Self.compare], "--samples: '0' is not allowed; the number of samples must be ≥ 1"),
            ("--labels", "99", [Self.ed, Self.fisher, Self.train, Self.compare], "The value '99' is invalid for '--labels <labels>'"),
            ("--shape", "2x", [Self.ed, Self.fisher, Self.train, Self.compare], "--shape: '2x' is not allowed; an image shape is HxWxC"),
            // training
            ("--optimizer", "foo", [Self.train, Self.compare, Self.gap], "--optimizer: 'foo' is not allowed; the optimizer is sgd or adam"),
            ("--lr", "0", [Self.train, Self.compare, Self.gap], "--lr: '0.0' is not allowed; the learning rate must be a finite number > 0"),
            ("--momentum", "1", [Self.train, Self.compare, Self.gap], "--momentum: '1.0' is not allowed; the momentum must lie in [0, 1)"),
            ("--batch", "0", [Self.train, Self.compare, Self.gap], "--batch: '0' is not allowed; the batch size must be ≥ 1"),
            ("--epochs", "0", [Self.train, Self.compare, Self.gap], "--epochs: '0' is not allowed; give at least 1 epoch"),
        ]
        for c in cases {
            for base in c.commands {
                let line = Self.with(base, c.flag, c.value)
                let r = await runCLICapturingErrors(line)
                XCTAssertEqual(r.status, 2, "\(line.joined(separator: " ")): \(r.err)")
                XCTAssertTrue(r.err.contains(c.expected), "\(base[0]) \(c.flag) \(c.value): \(r.err)")
                XCTAssertTrue(r.out.isEmpty, "\(base[0]) \(c.flag) \(c.value)")
            }
        }
    }

    /// Data without labels for training: the library's message (`Trainer.validate`) from train and compare.
    func testTrainingDataNeedsLabelsInEveryCommand() async {
        for base in [Self.train, Self.compare] {
            let r = await runCLICapturingErrors(Self.with(Self.with(base, "--data", "synthetic:gaussian"), "--labels", "none"))
            XCTAssertEqual(r.status, 2, r.err)
            XCTAssertTrue(r.err.contains("--data: 'synthetic:gaussian' is not allowed; training needs class labels"), "\(base[0]): \(r.err)")
        }
    }

    /// The groups take each command's own defaults: ed reads 100 Gaussian inputs with σ² = 0.1 and no label
    /// column, fisher needs --data and --sigma2, train and compare label the last CSV column, gap trains
    /// with lr 0.01, batch 32 and 20 epochs, compare with 5 epochs and plain.
    func testEachCommandKeepsItsDefaults() throws {
        let ed = try EdCommand.parse(["--arch", "8-4-3"])
        XCTAssertEqual(ed.data.data, "synthetic:gaussian")
        XCTAssertEqual(ed.data.samples, 100)
        XCTAssertEqual(ed.data.labels.rawValue, "none")
        XCTAssertEqual(ed.fisherModel.noise.sigma2, 0.1)
        XCTAssertNil(ed.estimation.estimator)
        XCTAssertThrowsError(try FisherCommand.parse(["--arch", "8-4-3", "--sigma2", "0.1"]))  // --data required
        XCTAssertThrowsError(try FisherCommand.parse(["--arch", "8-4-3", "--data", "synthetic:gaussian"]))  // --sigma2 for markov
        let fisher = try FisherCommand.parse(["--arch", "8-4-3", "--data", "synthetic:gaussian", "--fisher", "output"])
        XCTAssertNil(fisher.fisherModel.noise.sigma2)
        XCTAssertNil(fisher.data.samples)
        XCTAssertEqual(fisher.data.labels.rawValue, "none")
        let train = try TrainCommand.parse(["--arch", "8-4-3", "--data", "synthetic:teacher:8-4-3"])
        XCTAssertEqual(train.data.labels.rawValue, "last")
        XCTAssertEqual([train.training.lr, Double(train.training.batch), Double(train.training.epochs)], [1e-3, 64, 10])
        let gap = try GapCommand.parse(["--teacher", "8-4-3", "--student", "8-4-3"])
        XCTAssertEqual([gap.training.lr, Double(gap.training.batch), Double(gap.training.epochs)], [1e-2, 32, 20])
        let compare = try CompareCommand.parse(["--archs", "8-4-3,8-3-3", "--data", "synthetic:teacher:8-4-3"])
        XCTAssertEqual([compare.training.lr, Double(compare.training.batch), Double(compare.training.epochs)], [1e-3, 64, 5])
        XCTAssertEqual(compare.estimator.rawValue, "plain")
        XCTAssertEqual(compare.noise.sigma2, 0.1)
        XCTAssertEqual(compare.data.labels.rawValue, "last")
    }
}
