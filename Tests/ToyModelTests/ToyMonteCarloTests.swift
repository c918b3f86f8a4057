import Foundation
import RandomStreams
import ToyModels
import TwoScaleCore
import XCTest

/// The Monte Carlo estimators on toy models, whose 2sED is exact.
final class ToyMonteCarloTests: XCTestCase {
    /// smc intervals hold the exact value in at least 18 of 20 seeds (Bernoulli, d = 300).
    func testSMCIntervalsCoverTheExactValue() async throws {
        let model = try ToyModel(family: .bernoulli, dimension: 300, box: (0.05, 0.95))
        let eps = [1e-3, 0.1]
        var covered = [0, 0]
        for seed in 1...20 {
            let r = try await ToyMonteCarlo(model: model, method: .smc, paths: 64, seed: UInt64(seed), traceDraws: 200)
                .run(eps: eps, zeta: 2.0 / 3, normalization: .trace, threads: 2)
            for (i, e) in eps.enumerated() {
                let exact = try model.twoScaleDimension(eps: e, zeta: 2.0 / 3, normalization: .trace)
                if r.points[i].interval95.contains(exact) { covered[i] += 1 }
            }
        }
        XCTAssertGreaterThanOrEqual(covered[0], 18, "ε = 10⁻³: \(covered[0])/20")
        XCTAssertGreaterThanOrEqual(covered[1], 18, "ε = 0.1: \(covered[1])/20")
    }

    /// With the raw metric (no normalisation) and constant λ the smc estimate is exact: every draw has
    /// the same determinant, so the variance is zero and the value is Σ log1p(s √λ_i).
    func testConstantFamilyIsExactWithoutNormalisation() async throws {
        let model = try ToyModel(family: .constant, lambdas: [4, 0.01, 2.5])
        let r = try await ToyMonteCarlo(model: model, method: .smc, paths: 8, seed: 1)
            .run(eps: [0.05, 0.3], zeta: 0.8, normalization: .none, threads: 1)
        for p in r.points {
            let exact = try model.twoScaleDimension(eps: p.eps, zeta: 0.8, normalization: .none)
            XCTAssertEqual(p.dZeta, exact, accuracy: 1e-10)
            XCTAssertEqual(p.interval95.upperBound - p.interval95.lowerBound, 0, accuracy: 1e-10)
        }
    }

    /// A draw's loops (`lambdaSum`, `sqrtLambdas`: one call per θ, compiled per family) give, bit for bit,
    /// λ and √λ taken coordinate by coordinate at the same uniforms, for every shipped family.
    func testDrawLoopsMatchTheFamilyCoordinateByCoordinate() {
        for family in AxisFamilies.all {
            let lo = family.domain.lo == 0 ? 0.05 : family.domain.lo, hi = family.domain.hi.isFinite ? 0.95 : 3.0
            var a = Xoshiro256(seed: 7, stream: [3, 1]), b = a, c = a, d = a
            let sum = family.lambdaSum(count: 1_000, lo: lo, hi: hi, rng: &a)
            var expected = 0.0
            for _ in 0..<1_000 { expected += family.lambda(b.uniform(lo, hi)) }
            XCTAssertEqual(sum, expected, family.name)
            let roots = family.sqrtLambdas(count: 1_000, lo: lo, hi: hi, rng: &c)
            XCTAssertEqual(roots, (0..<1_000).map { _ in family.sqrtLambda(d.uniform(lo, hi)) }, family.name)
            XCTAssertEqual(a.next(), b.next(), "\(family.name): one uniform per coordinate")
        }
    }

    /// The plain estimator's failure that motivated smc (d = 10⁴): low by far more than its interval.
    func testPlainEstimatorIsBiasedInHighDimension() async throws {
        let model = try ToyModel(family: .bernoulli, dimension: 10_000, box: (0.05, 0.95))
        let exact = try model.twoScaleDimension(eps: 1e-3, zeta: 2.0 / 3, normalization: .trace)
        let r = try await ToyMonteCarlo(model: model, method: .plain, paths: 100, seed: 1)
            .run(eps: [1e-3], zeta: 2.0 / 3, normalization: .trace, threads: 2)
        let p = r.points[0]
        XCTAssertLessThan(p.interval95.upperBound, exact - 5, "plain: \(String(describing: p.ci95)) vs exact \(exact)")
        XCTAssertLessThan(try XCTUnwrap(r.minESS), 3)
        let s = try await ToyMonteCarlo(model: model, method: .smc, paths: 100, seed: 1)
            .run(eps: [1e-3], zeta: 2.0 / 3, normalization: .trace, threads: 2)
        XCTAssertTrue(s.points[0].interval95.contains(exact), "smc: \(String(describing: s.points[0].ci95)) vs exact \(exact)")
    }

    /// Results do not depend on the thread count.
    func testThreadIndependence() async throws {
        let model = try ToyModel(family: .poisson, dimension: 700, box: (0.05, 1))
        let mc = try ToyMonteCarlo(model: model, method: .smc, paths: 20, seed: 4, traceDraws: 50)
        let a = try await mc.run(eps: [1e-3, 0.2], zeta: 0.7, normalization: .trace, threads: 1)
        let b = try await mc.run(eps: [1e-3, 0.2], zeta: 0.7, normalization: .trace, threads: 3)
        XCTAssertEqual(a.points, b.points)
    }
}
