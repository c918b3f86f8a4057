import Foundation
import TwoScaleCore
import TwoScaleNumerics
import XCTest

/// `StudentT` against closed forms (ν = 1, 2, 3), GSL quadrature of the density (ν = 7, 30), and the normal
/// limit; the joint estimator's variance factor from it.
final class StudentTTests: XCTestCase {
    /// The CDFs with closed forms: ν = 1 (Cauchy), ν = 2, ν = 3.
    func closedForm(_ x: Double, _ nu: Int) -> Double {
        switch nu {
        case 1: return 0.5 + atan(x) / .pi
        case 2: return 0.5 + x / (2 * (2 + x * x).squareRoot())
        default:
            let u = x / 3.0.squareRoot()
            return 0.5 + (u / (1 + u * u) + atan(u)) / .pi
        }
    }

    func testCDFAgainstClosedForms() {
        for nu in 1...3 {
            for x in [-30.0, -4, -1.5, -0.2, 0, 0.3, 1, 2.5, 7, 50] {
                XCTAssertEqual(StudentT.cdf(x, degrees: Double(nu)), closedForm(x, nu), accuracy: 1e-13, "ν = \(nu), x = \(x)")
            }
        }
    }

    func testQuantilesAgainstClosedForms() {
        // ν = 1: tan(π(p − ½)); ν = 2: (2p − 1)·√(2 / (4p(1 − p))).
        for p in [0.6, 0.9, 0.975, 0.995] {
            XCTAssertEqual(StudentT.quantile(p, degrees: 1), tan(.pi * (p - 0.5)), accuracy: 1e-10 * tan(.pi * (p - 0.5)))
            let two = (2 * p - 1) * (2 / (4 * p * (1 - p))).squareRoot()
            XCTAssertEqual(StudentT.quantile(p, degrees: 2), two, accuracy: 1e-11 * two)
            let q3 = StudentT.quantile(p, degrees: 3)
            XCTAssertEqual(closedForm(q3, 3), p, accuracy: 1e-14)
            XCTAssertEqual(StudentT.quantile(1 - p, degrees: 3), -q3, accuracy: 1e-12)
        }
        XCTAssertEqual(StudentT.quantile(0.975, degrees: 3), 3.182446305284263, accuracy: 1e-11)
    }

    /// ν = 7 and 30: the CDF against GSL's quadrature of the density; ν = 10⁶: the normal quantile.
    func testAgainstQuadratureAndNormalLimit() throws {
        for nu in [7.0, 30.0] {
            let logNorm = lgamma((nu + 1) / 2) - lgamma(nu / 2) - 0.5 * Foundation.log(nu * .pi)
            let density = { (t: Double) in Foundation.exp(logNorm - (nu + 1) / 2 * Foundation.log1p(t * t / nu)) }
            for x in [0.5, 1.7, 2.36, 4.0] {
                let inner = try Quadrature.integrate(density, from: 0, to: x, relTol: 1e-12).value
                XCTAssertEqual(StudentT.cdf(x, degrees: nu), 0.5 + inner, accuracy: 1e-11, "ν = \(nu), x = \(x)")
            }
        }
        XCTAssertEqual(StudentT.quantile(0.975, degrees: 1e6), 1.959963984540054, accuracy: 1e-5)
    }
}
