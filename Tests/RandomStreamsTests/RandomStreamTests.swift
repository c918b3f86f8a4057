import Foundation
@testable import RandomStreams
import Testing

@Suite struct RandomTests {
    @Test func streamsAreReproducibleAndDistinct() {
        var a = Xoshiro256(seed: 1, stream: [2, 3])
        var b = Xoshiro256(seed: 1, stream: [2, 3])
        var c = Xoshiro256(seed: 1, stream: [3, 2])
        let xa = (0..<5).map { _ in a.next() }
        #expect(xa == (0..<5).map { _ in b.next() })
        #expect(xa != (0..<5).map { _ in c.next() })
    }

    @Test func normalMoments() {
        var r = Xoshiro256(seed: 42)
        let n = 200_000
        var s = 0.0, s2 = 0.0
        for _ in 0..<n { let z = r.normal(); s += z; s2 += z * z }
        #expect(abs(s / Double(n)) < 0.01)
        #expect(abs(s2 / Double(n) - 1) < 0.01)
    }
}
