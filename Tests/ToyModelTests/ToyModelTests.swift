import Foundation
@testable import RandomStreams
import Testing
@testable import ToyModels
import TwoScaleCore
import TwoScaleNumerics

/// Closed forms for the per-axis averages, derived by hand:
/// bernoulli ∫√λ = 2 asin √t, ∫λ = log(t/(1−t)); poisson ∫√λ = 2√t, ∫λ = log t;
/// exponential ∫√λ = log t, ∫λ = −1/t.
func closedForm(_ f: Family, _ a: Double, _ b: Double) -> (sqrt: Double, lambda: Double) {
    let L = b - a
    switch f.name {
    case "bernoulli":
        return ((2 * asin(b.squareRoot()) - 2 * asin(a.squareRoot())) / L, (log(b / (1 - b)) - log(a / (1 - a))) / L)
    case "poisson":
        return ((2 * b.squareRoot() - 2 * a.squareRoot()) / L, (log(b) - log(a)) / L)
    case "exponential":
        return ((log(b) - log(a)) / L, (1 / a - 1 / b) / L)
    default:
        fatalError("no closed form for \(f.name)")
    }
}

@Suite struct ToyModelTests {
    @Test func quadratureMatchesClosedForms() throws {
        for (f, boxes) in [(Family.bernoulli, [(0.1, 0.9), (0.01, 0.5), (0.3, 0.99)]),
                           (.poisson, [(0.01, 1), (0.5, 7), (1e-4, 0.2)]),
                           (.exponential, [(0.01, 1), (0.2, 3), (1, 100)])] {
            for (a, b) in boxes {
                let m = try ToyModel(family: f, dimension: 3, box: (a, b))
                let cf = closedForm(f, a, b)
                #expect(abs(m.meanSqrtLambda[0] - cf.sqrt) <= 1e-9 * cf.sqrt, "\(f) [\(a),\(b)] √λ")
                #expect(abs(m.meanLambda![0] - cf.lambda) <= 1e-9 * cf.lambda, "\(f) [\(a),\(b)] λ")
                #expect(m.quadratureError.sqrt <= 1e-8 * cf.sqrt)
            }
        }
    }

    @Test func integrableSingularEndpoints() throws {
        // ∫_0^1 t^{-1/2} = 2, ∫_0^1 (t(1−t))^{-1/2} = π: QAGS handles the end-point singularities.
        let p = try ToyModel(family: .poisson, dimension: 2, box: (0, 1))
        #expect(abs(p.meanSqrtLambda[0] - 2) < 1e-9)
        let b = try ToyModel(family: .bernoulli, dimension: 2, box: (0, 1))
        #expect(abs(b.meanSqrtLambda[0] - .pi) < 1e-9)
        // …but E Tr F diverges there: the trace normalisation is refused, none is fine.
        #expect(throws: TwoScaleError.self) { try b.twoScaleDimension(eps: 0.1, zeta: 0.5, normalization: .trace) }
        #expect(throws: TwoScaleError.self) { try p.twoScaleDimension(eps: 0.1, zeta: 0.5, normalization: .trace) }
        let v = try b.twoScaleDimension(eps: 0.1, zeta: 0.5, normalization: .none)
        #expect(abs(v - (1 + 2 * log1p(pow(0.1, -0.5) * Double.pi) / log(10))) < 1e-9)
        // exponential: even E √λ diverges at 0.
        #expect(throws: TwoScaleError.self) { try ToyModel(family: .exponential, dimension: 2, box: (0, 1)) }
    }

    @Test func exactTwoScaleDimensionFactorises() throws {
        // Separable: log E det = Σ_i log1p(t √c ⟨√λ_i⟩), c = d / Σ⟨λ_i⟩.
        let (a, b) = (0.1, 0.9)
        let m = try ToyModel(family: .bernoulli, dimension: 4, box: (a, b))
        let cf = closedForm(.bernoulli, a, b)
        for (e, z) in [(1e-3, 2.0 / 3.0), (0.2, 0.0), (0.05, 0.9)] {
            let t = pow(e, z - 1)
            let c = 1 / cf.lambda  // d/(d⟨λ⟩)
            let expected = z * 4 + 4 * log1p(t * c.squareRoot() * cf.sqrt) / abs(log(e))
            #expect(abs(try m.twoScaleDimension(eps: e, zeta: z, normalization: .trace) - expected) < 1e-9)
        }
    }

    @Test func constantIdentityReference() throws {
        let m = try ToyModel(family: .constant, lambdas: [3.7])
        #expect(abs(try m.twoScaleDimension(eps: 0.01, zeta: 2.0 / 3.0, normalization: .trace) - 1.0423674) < 5e-8)
        let m10 = try ToyModel(family: .constant, lambdas: [0.25], dimension: 10)
        #expect(abs(try m10.twoScaleDimension(eps: 0.05, zeta: 0.8, normalization: .trace) - 11.461381) < 5e-7)
    }

    @Test func rejectsBadModels() {
        #expect(throws: TwoScaleError.self) { try ToyModel(family: .constant, lambdas: []) }
        #expect(throws: TwoScaleError.self) { try ToyModel(family: .constant, lambdas: [1, -2]) }
        #expect(throws: TwoScaleError.self) { try ToyModel(family: .constant, lambdas: [1, 2], dimension: 3) }
        #expect(throws: TwoScaleError.self) { try ToyModel(family: .bernoulli, dimension: 0, box: (0.1, 0.9)) }
        #expect(throws: TwoScaleError.self) { try ToyModel(family: .bernoulli, dimension: 2, box: (0.5, 1.5)) }
        #expect(throws: TwoScaleError.self) { try ToyModel(family: .poisson, dimension: 2, box: (-1, 1)) }
        #expect(throws: TwoScaleError.self) { try ToyModel(family: .poisson, dimension: 2, box: (1, 1)) }
        #expect(throws: TwoScaleError.self) { try ToyModel(family: .bernoulli, lambdas: [1], dimension: 2, box: (0.1, 0.9)) }
    }
}

@Suite struct BoxCoverTests {
    @Test func workedExample() throws {
        let m = try ToyModel(family: .constant, lambdas: [4, 0.01])
        let n = BoxCover.constantMinimal(m, eps: 0.1)
        #expect(n.exact == 20)
        #expect(abs(exp(BoxCover.logDetBound(m, eps: 0.1)) - 42) < 1e-9)
    }

    @Test func sandwichOnRandomConstantCases() throws {
        var rng = Xoshiro256(seed: 2024)
        for _ in 0..<500 {
            let d = 1 + rng.index(6)
            let lam = (0..<d).map { _ in rng.uniform() < 0.15 ? 0 : pow(10, rng.uniform(-3, 3)) }
            let e = pow(10, rng.uniform(-3, -0.01))
            let m = try ToyModel(family: .constant, lambdas: lam)
            let n = BoxCover.constantMinimal(m, eps: e)
            // brute force: product of integer ceilings
            let brute = lam.reduce(1.0) { $0 * max(1, ($1.squareRoot() / e).rounded(.up)) }
            #expect(abs(n.log - log(brute)) <= 1e-9 * max(1, log(brute)) || abs(exp(n.log) - brute) < 1.5)
            #expect(BoxCover.constantLowerBound(m, eps: e) <= n.log + 1e-12)
            #expect(n.log <= BoxCover.logDetBound(m, eps: e) + 1e-12)
        }
    }

    @Test func hugeCountsStayInLogForm() throws {
        let m = try ToyModel(family: .constant, lambdas: [1], dimension: 10_000)
        let n = BoxCover.constantMinimal(m, eps: 1e-3)
        #expect(n.exact == nil)
        #expect(abs(n.log - 10_000 * log(1000)) < 1e-6)
    }

    /// Greedy placement for Poisson in closed form: side s(c) = ε√c, so the centre solving
    /// c − ε√c/2 = x is √c = ε/4 + √(ε²/16 + x), and the next left end is c + ε√c/2.
    func poissonGreedyClosedForm(lo: Double, hi: Double, eps: Double) -> Int {
        var x = lo, n = 0
        while x < hi {
            n += 1
            if hi - eps * hi.squareRoot() / 2 <= x { break }
            let r = eps / 4 + (eps * eps / 16 + x).squareRoot()
            x = r * r + eps * r / 2
        }
        return n
    }

    @Test func greedyMatchesClosedFormRecurrence() throws {
        for (a, b) in [(0.01, 1.0), (0.5, 2.0), (1e-3, 0.1)] {
            for e in [0.3, 0.05, 0.01, 0.002] {
                let g = try #require(try BoxCover.greedyAxisCount(family: .poisson, lo: a, hi: b, eps: e))
                #expect(Int(g) == poissonGreedyClosedForm(lo: a, hi: b, eps: e), "[\(a),\(b)] ε=\(e)")
            }
        }
    }

    @Test func twoScaleCoverIsAValidCoverNeverBelowGreedy() throws {
        for f in [Family.bernoulli, .poisson, .exponential] {
            let m = try ToyModel(family: f, dimension: 2, box: (0.1, 0.9))
            for e in [0.2, 0.05, 0.01, 0.002] {
                for z in [0.0, 0.5, 2.0 / 3.0, 0.9] {
                    let two = try BoxCover.twoScale(m, eps: e, zeta: z)
                    let greedy = try #require(try BoxCover.greedy(m, eps: e))
                    #expect(two.log >= greedy.log - 1e-12, "\(f) ε=\(e) ζ=\(z)")
                    // greedy count per axis ≤ 1 + ε⁻¹∫√λ (each box but the last spans metric length ≥ ε… bound used in the report)
                    #expect(greedy.log <= BoxCover.logDetBound(m, eps: e) + 1e-12)
                }
            }
        }
    }

    @Test func twoScaleCoverForConstantLambdaIsTheMinimalCountAtZetaZero() throws {
        let m = try ToyModel(family: .constant, lambdas: [4, 0.01, 9])
        for e in [0.3, 0.1, 0.01] {
            #expect(try BoxCover.twoScale(m, eps: e, zeta: 0) == BoxCover.constantMinimal(m, eps: e))
        }
    }

    /// Bernoulli greedy by hand: the next centre solves `c − ε√(c(1−c))/2 = x`, i.e. the larger root of
    /// `(1+k)c² − (2x+k)c + x² = 0`, `k = ε²/4`; the box's right end is `c + ε√(c(1−c))/2`.
    func bernoulliGreedyClosedForm(lo: Double, hi: Double, eps: Double) -> Int {
        let k = eps * eps / 4
        var x = lo, n = 0
        while x < hi {
            n += 1
            if hi - eps * (hi * (1 - hi)).squareRoot() / 2 <= x { break }
            let b = 2 * x + k
            let c = (b + (b * b - 4 * (1 + k) * x * x).squareRoot()) / (2 * (1 + k))
            x = c + eps * (c * (1 - c)).squareRoot() / 2
        }
        return n
    }

    @Test func singularEndStillHasAFiniteGreedyCover() throws {
        // λ = ∞ at θ = 0 (and 1 for Bernoulli), yet boxes centred near the end reach it:
        // Poisson's first centre is ε²/4. The two-scale cover (largest λ per meso-interval) is infinite.
        let m = try ToyModel(family: .poisson, dimension: 1, box: (0, 1))
        #expect(try BoxCover.twoScale(m, eps: 0.1, zeta: 0.5).log == .infinity)
        for e in [0.3, 0.1, 0.01] {
            let p = try #require(try BoxCover.greedyAxisCount(family: .poisson, lo: 0, hi: 1, eps: e))
            #expect(Int(p) == poissonGreedyClosedForm(lo: 0, hi: 1, eps: e), "poisson ε=\(e)")
            let b = try #require(try BoxCover.greedyAxisCount(family: .bernoulli, lo: 0, hi: 1, eps: e))
            #expect(Int(b) == bernoulliGreedyClosedForm(lo: 0, hi: 1, eps: e), "bernoulli ε=\(e)")
            // Away from the ends the same recurrence holds: the interior check of the hand formula.
            let bi = try #require(try BoxCover.greedyAxisCount(family: .bernoulli, lo: 0.2, hi: 0.7, eps: e))
            #expect(Int(bi) == bernoulliGreedyClosedForm(lo: 0.2, hi: 0.7, eps: e), "bernoulli interior ε=\(e)")
        }
        // Poisson on [0,1], ε = 0.1: the same count as the box starting just off the singular point.
        #expect(try BoxCover.greedyAxisCount(family: .poisson, lo: 0, hi: 1, eps: 0.1)
                == BoxCover.greedyAxisCount(family: .poisson, lo: 1e-9, hi: 1, eps: 0.1))
    }

    @Test func exponentialSingularEndHasNoFiniteCover() throws {
        // s(c) = εc, so c − s(c)/2 = c(1 − ε/2) > 0 for every c > 0: nothing reaches θ = 0.
        for e in [0.5, 0.1, 0.01] {
            #expect(try BoxCover.greedyAxisCount(family: .exponential, lo: 0, hi: 1, eps: e) == nil)
        }
    }
}
