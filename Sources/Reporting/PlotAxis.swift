import Foundation
import TwoScaleCore

/// Linear or logarithmic (base 10) scale of one plot axis.
public enum AxisScale: Sendable, Equatable {
    case linear, log
}

/// One labelled tick on an axis. `exponent` is set for log axes, whose labels read 10^k.
public struct AxisTick: Sendable, Equatable {
    public var value: Double
    public var label: String
    public var exponent: Int?
}

/// The visible range of an axis and its ticks, chosen from the data range: 1-2-5 steps on linear axes
/// (the range widened to whole steps), whole decades on log axes (the range widened to decades).
public struct AxisLayout: Sendable, Equatable {
    public var scale: AxisScale
    public var lo: Double
    public var hi: Double
    public var ticks: [AxisTick]
    /// Unlabelled minor ticks (2…9 × 10^k on log axes spanning few decades; none on linear axes).
    /// Log axes over at most two decades also label 2·10^k and 5·10^k.
    public var minorTicks: [Double]

    /// Lays out an axis covering `[dataLo, dataHi]` (finite; positive on log axes).
    public static func make(scale: AxisScale, dataLo: Double, dataHi: Double) throws -> AxisLayout {
        guard dataLo.isFinite, dataHi.isFinite, dataLo <= dataHi else {
            throw TwoScaleError.failure("plot axis: the data range [\(dataLo), \(dataHi)] is not a finite interval")
        }
        switch scale {
        case .linear: return try linear(dataLo, dataHi)
        case .log: return try log(dataLo, dataHi)
        }
    }

    /// Position of `v` in [0, 1] along the axis (log10 on log axes).
    public func fraction(_ v: Double) -> Double {
        switch scale {
        case .linear: return (v - lo) / (hi - lo)
        case .log: return (log10(v) - log10(lo)) / (log10(hi) - log10(lo))
        }
    }

    /// The smallest 1-2-5 step that splits `span` into at most `maxIntervals` intervals.
    static func niceStep(_ span: Double, maxIntervals: Double = 7) -> Double {
        let mag = pow(10, floor(log10(span / maxIntervals)))
        for m in [1.0, 2, 5] where span / (m * mag) <= maxIntervals * (1 + 1e-9) { return m * mag }
        return 10 * mag
    }

    static func linear(_ dLo: Double, _ dHi: Double) throws -> AxisLayout {
        var a = dLo, b = dHi
        if a == b {
            let pad = a == 0 ? 1 : Swift.abs(a) * 0.1
            a -= pad; b += pad
        }
        let step = niceStep(b - a)
        let kLo = floor(a / step + 1e-9), kHi = ceil(b / step - 1e-9)
        let lo = kLo * step, hi = kHi * step
        guard step.isFinite, step > 0, lo.isFinite, hi.isFinite, hi > lo, kHi - kLo <= 100 else {
            throw TwoScaleError.failure("plot axis: cannot lay out ticks for the range [\(dLo), \(dHi)]")
        }
        // Decimals needed to show the step exactly; scientific labels for extreme magnitudes.
        let decimals = max(0, Int(-floor(log10(step) + 1e-9)))
        let extreme = max(Swift.abs(lo), Swift.abs(hi)) >= 1e6 || step < 1e-4
        var ticks: [AxisTick] = []
        var k = kLo
        while k <= kHi {
            var v = k * step
            if Swift.abs(v) < step * 1e-9 { v = 0 }
            let label = extreme ? ReportNumber.format(v) : String(format: "%.\(decimals)f", v)
            ticks.append(AxisTick(value: v, label: label == "-0" ? "0" : label, exponent: nil))
            k += 1
        }
        return AxisLayout(scale: .linear, lo: lo, hi: hi, ticks: ticks, minorTicks: [])
    }

    static func log(_ dLo: Double, _ dHi: Double) throws -> AxisLayout {
        guard dLo > 0 else {
            throw TwoScaleError.failure("plot axis: a log axis needs positive values, the smallest is \(dLo)")
        }
        var eLo = Int(floor(log10(dLo) + 1e-12)), eHi = Int(ceil(log10(dHi) - 1e-12))
        if eHi <= eLo { eHi = eLo + 1 }
        guard eLo >= -320, eHi <= 308 else {
            throw TwoScaleError.failure("plot axis: the range [\(dLo), \(dHi)] is too wide for a log axis")
        }
        if eLo < -307 { eLo = -307 }
        let decades = eHi - eLo
        let every = max(1, Int(ceil(Double(decades) / 8)))
        var ticks: [AxisTick] = []
        var e = eLo
        while e <= eHi {
            if (e - eLo) % every == 0 {
                ticks.append(AxisTick(value: pow(10, Double(e)), label: "10^\(e)", exponent: e))
            }
            e += 1
        }
        var minor: [Double] = []
        if decades <= 6 {
            for e in eLo..<eHi { for m in 2...9 { minor.append(Double(m) * pow(10, Double(e))) } }
        }
        if decades <= 2 {
            // Few decades: also label 2·10^k and 5·10^k, so a narrow range still has readable ticks.
            for e in eLo..<eHi {
                for m in [2.0, 5.0] {
                    let v = m * pow(10, Double(e))
                    ticks.append(AxisTick(value: v, label: ReportNumber.format(v), exponent: nil))
                }
            }
            ticks.sort { $0.value < $1.value }
            minor.removeAll { v in ticks.contains { Swift.abs($0.value - v) <= 1e-9 * v } }
        }
        return AxisLayout(scale: .log, lo: pow(10, Double(eLo)), hi: pow(10, Double(eHi)), ticks: ticks, minorTicks: minor)
    }
}
