import Foundation
import TwoScaleCore
import XCTest

/// `StandardNormal` against reference quantiles (Wichura's AS 241, as Python's `statistics.NormalDist`
/// computes them: accurate to about 10⁻¹⁶), the round trip through `erfc`, and the far tail.
final class StandardNormalTests: XCTestCase {
    func testReferenceQuantiles() {
        let table: [(p: Double, z: Double)] = [
            (0.5, 0), (0.975, 1.9599639845400536), (0.95, 1.6448536269514715), (0.995, 2.5758293035489),
            (0.8413447460685429, 1), (0.02425, -1.9729610513118845), (1e-10, -6.361340902404056),
            (1e-15, -7.941345326170995), (1e-300, -37.0470962993612),
        ]
        for (p, z) in table {
            XCTAssertEqual(StandardNormal.quantile(p), z, accuracy: 1e-13 * Swift.max(1, Swift.abs(z)), "p = \(p)")
        }
        for p in [0.001, 0.02425, 0.3] {
            XCTAssertEqual(StandardNormal.quantile(p), -StandardNormal.quantile(1 - p), accuracy: 1e-13, "p = \(p)")
        }
    }

    func testRoundTrip() {
        for p in stride(from: 1e-6, to: 1, by: 0.0137) {
            XCTAssertEqual(StandardNormal.cdf(StandardNormal.quantile(p)), p, accuracy: 1e-14 * p, "p = \(p)")
        }
        for p in [1e-300, 1e-100, 1e-20] {
            XCTAssertEqual(StandardNormal.cdf(StandardNormal.quantile(p)) / p, 1, accuracy: 1e-12, "p = \(p)")
        }
    }
}
