import Foundation

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny generator used to seed others and to derive
/// independent streams from (seed, stream ids).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    @inlinable
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// xoshiro256** (Blackman & Vigna), the generator behind every random draw in twoscale.
///
/// Reproducibility across thread counts comes from *streams*: every unit of work (a path, an inner
/// draw, a trial) gets its own generator `Xoshiro256(seed:, stream:)` derived from the user's seed and
/// the unit's indices, so the result never depends on which thread ran it, or in what order.
public struct Xoshiro256: RandomNumberGenerator, Sendable {
    public var s: (UInt64, UInt64, UInt64, UInt64)
    var cachedNormal: Double?

    public init(seed: UInt64, stream: [UInt64] = []) {
        var sm = SplitMix64(seed: seed)
        for id in stream {
            sm = SplitMix64(seed: sm.next() ^ (id &* 0xD1B5_4A32_D192_ED03))
        }
        s = (sm.next(), sm.next(), sm.next(), sm.next())
        if s == (0, 0, 0, 0) { s.0 = 1 }
        cachedNormal = nil
    }

    @inlinable
    static func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    @inlinable
    public mutating func next() -> UInt64 {
        let result = Self.rotl(s.1 &* 5, 7) &* 9
        let t = s.1 << 17
        s.2 ^= s.0
        s.3 ^= s.1
        s.1 ^= s.2
        s.0 ^= s.3
        s.2 ^= t
        s.3 = Self.rotl(s.3, 45)
        return result
    }

    /// Uniform on [0, 1) with 53 random bits.
    @inlinable
    public mutating func uniform() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// Uniform on [lo, hi).
    @inlinable
    public mutating func uniform(_ lo: Double, _ hi: Double) -> Double { lo + (hi - lo) * uniform() }

    /// Standard normal by the Box–Muller transform (pairs; the second value is cached).
    public mutating func normal() -> Double {
        if let z = cachedNormal {
            cachedNormal = nil
            return z
        }
        let u1 = 1.0 - uniform()  // (0, 1]
        let u2 = uniform()
        let r = (-2.0 * Foundation.log(u1)).squareRoot()
        let a = 2.0 * Double.pi * u2
        cachedNormal = r * Foundation.sin(a)
        return r * Foundation.cos(a)
    }

    /// A uniform index in 0..<n without modulo bias (Lemire).
    public mutating func index(_ n: Int) -> Int {
        Int(truncatingIfNeeded: next(upperBound: UInt64(n)))
    }

    /// The words of `savedState`.
    public static let savedStateWords = 6

    /// The generator's whole state as six words (the four of xoshiro256**, then whether a Box–Muller normal is
    /// cached and its bits), for a checkpoint: `init(savedState:)` continues the same sequence.
    public var savedState: [UInt64] {
        [s.0, s.1, s.2, s.3, cachedNormal == nil ? 0 : 1, cachedNormal?.bitPattern ?? 0]
    }

    /// The generator `savedState` was read from; nil where the words are not such a state.
    public init?(savedState w: [UInt64]) {
        guard w.count == Self.savedStateWords, w[4] <= 1, (w[0], w[1], w[2], w[3]) != (0, 0, 0, 0) else { return nil }
        s = (w[0], w[1], w[2], w[3])
        cachedNormal = w[4] == 1 ? Double(bitPattern: w[5]) : nil
    }
}
