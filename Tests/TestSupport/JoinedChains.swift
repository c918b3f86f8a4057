import Foundation
import TwoScaleCore
import XCTest

/// R chains joined (`StagedSMC.chains`) against the same chains run one by one (`singles[c]`: chain c's points):
/// at each ε the 2sED and the lower 2sED are the runs' means (d_ζ is affine in log E det), their 95% half-widths
/// Student's t with R − 1 degrees of freedom times the runs' standard deviation over √R, and the runs differ.
public func assertJoinedChains(_ joined: [EpsilonEstimate], singles: [[EpsilonEstimate]],
                               file: StaticString = #filePath, line: UInt = #line) throws {
    let r = Double(singles.count)
    let t = StudentT.quantile(0.975, degrees: r - 1)
    for (i, p) in joined.enumerated() {
        let lowers = try singles.map { try XCTUnwrap($0[i].dZetaLower, file: file, line: line) }
        let lower = try XCTUnwrap(p.dZetaLower, file: file, line: line)
        for (value, interval, of) in [(p.dZeta, p.ci95, singles.map { $0[i].dZeta }), (lower, p.ci95Lower, lowers)] {
            let mean = of.reduce(0, +) / r
            let sd = (of.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (r - 1)).squareRoot()
            let ci = try XCTUnwrap(interval, file: file, line: line)
            XCTAssertEqual(value, mean, accuracy: 1e-9, "ε = \(p.eps)", file: file, line: line)
            XCTAssertEqual((ci.upperBound - ci.lowerBound) / 2, t * sd / r.squareRoot(), accuracy: 1e-9 * (1 + sd), "ε = \(p.eps)",
                           file: file, line: line)
            XCTAssertGreaterThan(sd, 0, "ε = \(p.eps): the chains differ", file: file, line: line)
        }
    }
}
