import TwoScaleCore
import XCTest

/// `ReportedInterval.choose`: the sampled interval only where every diagnostic lets it stand, cut to the
/// bracket; the bracket otherwise.
final class ReportedIntervalTests: XCTestCase {
    let bracket = 10.0...20.0
    let good = (ess: [0.5], logVar: [0.3])

    func choose(_ sampled: ClosedRange<Double>, ess: [Double]? = nil, logVar: [Double]? = nil,
                bracket: ClosedRange<Double>?? = .none) -> ReportedInterval {
        ReportedInterval.choose(sampled: sampled, essFraction: ess ?? good.ess, logWeightVariance: logVar ?? good.logVar,
                                bracket: bracket ?? self.bracket)
    }

    func testSampledInsideTheBracketStands() {
        XCTAssertEqual(choose(12...14), ReportedInterval(range: 12...14, source: .sampled))
    }

    func testSampledIsCutToTheBracket() {
        XCTAssertEqual(choose(8...14), ReportedInterval(range: 10...14, source: .sampled))
        XCTAssertEqual(choose(18...25), ReportedInterval(range: 18...20, source: .sampled))
    }

    func testSampledOutsideTheBracketGivesTheBracket() {
        XCTAssertEqual(choose(21...25), ReportedInterval(range: bracket, source: .bracket))
        XCTAssertEqual(choose(1...9.5), ReportedInterval(range: bracket, source: .bracket))
    }

    func testEachDiagnosticAloneSendsToTheBracket() {
        let min = ReportedInterval.minimumESSFraction
        // Counted ESS just below and at the threshold.
        XCTAssertEqual(choose(12...14, ess: [0.5, min * 0.99]).source, .bracket)
        XCTAssertEqual(choose(12...14, ess: [0.5, min]).source, .sampled)
        // The lognormal limit e^{−s²}: s² = −log(minimumLimitESSFraction) is the edge.
        let edge = -log(ReportedInterval.minimumLimitESSFraction)
        XCTAssertEqual(choose(12...14, logVar: [edge * 1.01]).source, .bracket)
        XCTAssertEqual(choose(12...14, logVar: [edge * 0.99]).source, .sampled)
        XCTAssertEqual(choose(12...14, ess: [0.9, 0.9], logVar: [0.1, edge * 1.01]).source, .bracket, "every stage counts")
    }

    func testOneStageAndNoBracket() {
        XCTAssertEqual(choose(12...14, ess: [], logVar: []).source, .sampled)
        XCTAssertEqual(choose(5...6, ess: [0.01], bracket: .some(nil)), ReportedInterval(range: 5...6, source: .sampled))
    }
}
