import Foundation
import ToyModels
@testable import TwoScaleCLI
import TwoScaleCore
import TwoScaleFormats
import XCTest

/// A family defined only here, `λ(t) = t²` on (0, ∞) (no singular point): `⟨√λ⟩ = (lo + hi)/2` and
/// `⟨λ⟩ = (lo² + lo·hi + hi²)/3` in closed form. It plugs in the way a new family would.
struct SquareTestFamily: AxisFamily {
    var name: String { "test-square" }
    func lambda(_ t: Double) -> Double { t * t }
    func sqrtLambda(_ t: Double) -> Double { Swift.abs(t) }
    var domain: (lo: Double, hi: Double) { (0, .infinity) }
    var singularPoints: [Double] { [] }
    var singularPower: Double { 0 }
}

/// A toy family is one type: registered under a new name, `toy` and `bound` take it with no change to
/// the commands, and its exact 2sED is the closed form's.
final class ToyFamilySeamTests: XCTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try AxisFamilies.register(SquareTestFamily())
    }

    override func tearDown() {
        AxisFamilies.unregister("test-square")
        super.tearDown()
    }

    func testRegisteredFamilyRunsThroughToyAndBound() async throws {
        let (lo, hi, d, zeta) = (1.0, 2.0, 3, 2.0 / 3.0)
        let json = try await runJSON(["toy", "--family", "test-square", "--dim", "\(d)", "--box", "\(lo):\(hi)", "--eps", "0.1,0.01",
                                      "--zeta", "\(zeta)", "--json"])
        XCTAssertEqual(json["family"], .string("test-square"))
        let meanSqrt = (lo + hi) / 2, meanLambda = (lo * lo + lo * hi + hi * hi) / 3
        let c = 1 / meanLambda  // d / (d ⟨λ⟩)
        guard case let .array(points)? = json["points"] else { return XCTFail("no points") }
        XCTAssertEqual(points.count, 2)
        for (p, eps) in zip(points, [0.1, 0.01]) {
            let s = ScaleParameters.t(eps: eps, zeta: zeta) * c.squareRoot()
            let exact = TwoScale.dimension(logMeanDet: Double(d) * Foundation.log1p(s * meanSqrt), dimension: d, zeta: zeta, eps: eps)
            XCTAssertEqual(try XCTUnwrap(p["d_zeta"]?.doubleValue), exact, accuracy: 1e-9 * exact, "ε = \(eps)")
        }
        let bound = try await runJSON(["bound", "--family", "test-square", "--dim", "\(d)", "--box", "\(lo):\(hi)", "--n", "100,1000",
                                       "--json"])
        XCTAssertNotNil(bound["points"])
        let unknown = await runCLICapturingErrors(["toy", "--family", "test-nothing", "--dim", "2"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.err.contains("test-square"), "the parser lists the registered family: \(unknown.err)")
    }

    func testNamesAreUniqueAndShippedFamiliesStay() {
        XCTAssertThrowsError(try AxisFamilies.register(SquareTestFamily()), "a name already taken")
        XCTAssertThrowsError(try AxisFamilies.register(BernoulliFamily()))
        AxisFamilies.unregister("bernoulli")
        XCTAssertEqual(Family(name: "bernoulli"), .bernoulli, "a shipped family cannot be removed")
        XCTAssertEqual(Family.names.prefix(4), ["constant", "bernoulli", "poisson", "exponential"])
    }
}
