import XCTest
@testable import Experiments
@testable import Training

/// `compare`'s pair rule: ordered only when the certified brackets are disjoint (touching ends overlap).
final class BracketPairTests: XCTestCase {
    func testOrder() {
        XCTAssertEqual(BracketPair.order(1...2, 3...4), "<")
        XCTAssertEqual(BracketPair.order(3...4, 1...2), ">")
        XCTAssertNil(BracketPair.order(1...3, 3...4))
        XCTAssertNil(BracketPair.order(1...5, 2...3))
        XCTAssertNil(BracketPair.order(nil, 2...3))
    }
}
