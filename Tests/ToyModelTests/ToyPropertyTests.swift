import Foundation
import PropertyBased
import Testing
@testable import ToyModels
@testable import TwoScaleCore

/// Random toy models (every family, random d, box, ε, ζ, normalisation): either a finite answer with the
/// invariants of docs/METHOD.md §5 or a `TwoScaleError` — never a trap, a NaN or an infinity.
@Suite struct ToyPropertyTests {
    static let eps = Gen.double(in: 0...1).map { u in u < 0.9 ? Foundation.pow(10, -300 * u / 0.9 - 0.31) : 1 - Foundation.pow(10, -12 * (u - 0.9) / 0.1) }

    @Test func constantFamilyMatchesClosedFormAndInvariants() async {
        await propertyCheck(count: 2000, input: Gen.double(in: -30...30).array(of: 1...6), Self.eps, Gen.double(in: 0...0.999999),
                            Gen.bool) { logLambdas, eps, zeta, trace in
            let lambdas = logLambdas.map { $0 < -29 ? 0 : Foundation.pow(10, $0) }
            do {
                let m = try ToyModel(family: .constant, lambdas: lambdas, box: (0, 1))
                let norm: Normalization = trace ? .trace : .none
                let dz = try m.twoScaleDimension(eps: eps, zeta: zeta, normalization: norm)
                let d = Double(lambdas.count)
                #expect(dz.isFinite)
                #expect(dz >= zeta * d - 1e-12 * d, "≥ ζd")
                // Closed form in log space.
                let sum = lambdas.reduce(0, +)
                let c = trace ? (sum > 0 ? d / sum : 0) : 1
                var s = 0.0
                for l in lambdas where l > 0 && c > 0 {
                    let lt = (zeta - 1) * Foundation.log(eps) + 0.5 * Foundation.log(c * l)
                    s += lt > 36 ? lt + Foundation.exp(-lt) : Foundation.log1p(Foundation.exp(lt))
                }
                let want = zeta * d + s / Swift.abs(Foundation.log(eps))
                #expect(Swift.abs(dz - want) <= 1e-9 * Swift.max(1, Swift.abs(want)), "\(dz) vs \(want)")
                // Box counts are finite logs (or the count is reported in log form only).
                let count = BoxCover.constantMinimal(m, eps: eps)
                #expect(count.log.isFinite && count.log >= 0)
                #expect(BoxCover.constantLowerBound(m, eps: eps) <= count.log + 1e-9 * Swift.max(1, count.log))
                #expect(BoxCover.logDetBound(m, eps: eps).isFinite)
            } catch let e as TwoScaleError {
                // Only the trace normalisation of an overflowing trace may be refused.
                #expect(e.message.contains("Tr F"), "\(e.message)")
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    @Test func smoothFamiliesNeverTrap() async {
        let families: [Family] = [.bernoulli, .poisson, .exponential]
        await propertyCheck(count: 300, input: Gen.int(in: 0...2), Gen.int(in: 1...50), Gen.double(in: 0...1), Gen.double(in: 0...1),
                            Self.eps, Gen.double(in: 0...0.999999)) { f, d, u1, u2, eps, zeta in
            let family = families[f]
            // Boxes inside (0, 1) for Bernoulli, inside (0, 100) otherwise, sometimes touching 0.
            let top = family == .bernoulli ? 1.0 : 100.0
            let a = u1 < 0.1 ? 0 : u1 * top, b = u2 * top
            guard a != b else { return }
            do {
                let m = try ToyModel(family: family, dimension: d, box: (Swift.min(a, b), Swift.max(a, b)))
                for norm in [Normalization.trace, .none] {
                    do {
                        let dz = try m.twoScaleDimension(eps: eps, zeta: zeta, normalization: norm)
                        #expect(dz.isFinite && dz >= zeta * Double(d) - 1e-9 * Double(d), "\(family) d=\(d) [\(a),\(b)] ε=\(eps) ζ=\(zeta): \(dz)")
                    } catch is TwoScaleError {}
                }
            } catch is TwoScaleError {
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }
}
