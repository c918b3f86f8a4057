import CGSL
import Foundation
import TwoScaleCore

/// GSL set-up: the default error handler calls `abort()`; twoscale turns it off once, before any GSL
/// call, and checks every returned status instead.
public enum GSL {
    private static let installed: Bool = {
        gsl_set_error_handler_off()
        openblas_set_num_threads(1)
        return true
    }()

    /// Call before using GSL or BLAS (cheap after the first time).
    @inline(__always)
    public static func prepare() { _ = installed }

    /// Turns a GSL status into an error naming what failed.
    public static func check(_ status: Int32, _ what: String) throws {
        guard status != GSL_SUCCESS else { return }
        let reason = String(cString: gsl_strerror(status))
        throw TwoScaleError.failure("\(what) failed in GSL: \(reason) (status \(status))")
    }
}

/// A Swift closure as a `gsl_function`; the box lives for the duration of one call.
final class FunctionBox {
    let f: (Double) -> Double
    var nonFinite = false
    init(_ f: @escaping (Double) -> Double) { self.f = f }
}

private func trampoline(_ x: Double, _ params: UnsafeMutableRawPointer?) -> Double {
    let box = Unmanaged<FunctionBox>.fromOpaque(params!).takeUnretainedValue()
    let y = box.f(x)
    if !y.isFinite { box.nonFinite = true }
    return y
}

func withGSLFunction<R>(_ f: @escaping (Double) -> Double, _ body: (inout gsl_function, FunctionBox) throws -> R) rethrows -> R {
    GSL.prepare()
    let box = FunctionBox(f)
    let u = Unmanaged.passRetained(box)
    defer { u.release() }
    var fn = gsl_function(function: trampoline, params: u.toOpaque())
    return try body(&fn, box)
}

/// Adaptive quadrature (GSL QAGS: 21-point Gauss–Kronrod with Wynn's ε-algorithm), which handles
/// integrable singularities at the end points.
public enum Quadrature {
    public struct Result: Sendable {
        public let value: Double
        public let errorEstimate: Double
    }

    /// `∫_a^b f(x) dx` to `max(absTol, relTol·|I|)`; throws if GSL fails or its error estimate
    /// exceeds the requested tolerance.
    public static func integrate(_ f: @escaping (Double) -> Double, from a: Double, to b: Double,
                                 absTol: Double = 0, relTol: Double = 1e-10, limit: Int = 1000) throws -> Result {
        try withGSLFunction(f) { fn, box in
            guard let ws = gsl_integration_workspace_alloc(limit) else {
                throw TwoScaleError.failure("quadrature: cannot allocate a GSL workspace")
            }
            defer { gsl_integration_workspace_free(ws) }
            var value = 0.0, err = 0.0
            let status = gsl_integration_qags(&fn, a, b, absTol, relTol, limit, ws, &value, &err)
            if box.nonFinite {
                throw TwoScaleError.failure("quadrature on [\(a), \(b)]: the integrand is not finite inside the interval")
            }
            try GSL.check(status, "quadrature on [\(a), \(b)]")
            let tol = Swift.max(absTol, relTol * Swift.abs(value))
            guard value.isFinite, err <= 10 * tol + 1e-300 else {
                throw TwoScaleError.failure("quadrature on [\(a), \(b)]: error estimate \(err) exceeds the tolerance \(tol)")
            }
            return Result(value: value, errorEstimate: err)
        }
    }
}

/// Bracketing root finding (GSL Brent).
public enum RootFinder {
    /// A root of `f` in `[lo, hi]`, where `f(lo)` and `f(hi)` differ in sign, to `absTol + relTol·|x|`.
    public static func brent(_ f: @escaping (Double) -> Double, lo: Double, hi: Double,
                             absTol: Double = 0, relTol: Double = 1e-13, maxIterations: Int = 200) throws -> Double {
        try withGSLFunction(f) { fn, box in
            guard let s = gsl_root_fsolver_alloc(twoscale_root_brent()) else {
                throw TwoScaleError.failure("root finding: cannot allocate a GSL solver")
            }
            defer { gsl_root_fsolver_free(s) }
            try GSL.check(gsl_root_fsolver_set(s, &fn, lo, hi), "root finding on [\(lo), \(hi)]")
            for _ in 0..<maxIterations {
                try GSL.check(gsl_root_fsolver_iterate(s), "root finding iteration")
                if box.nonFinite { throw TwoScaleError.failure("root finding: the function is not finite on [\(lo), \(hi)]") }
                let a = gsl_root_fsolver_x_lower(s), b = gsl_root_fsolver_x_upper(s)
                let st = gsl_root_test_interval(a, b, absTol, relTol)
                if st == GSL_SUCCESS { return gsl_root_fsolver_root(s) }
                if st != GSL_CONTINUE { try GSL.check(st, "root finding convergence test") }
            }
            throw TwoScaleError.failure("root finding on [\(lo), \(hi)] did not converge in \(maxIterations) iterations")
        }
    }
}
