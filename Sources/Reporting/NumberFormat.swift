import Foundation

/// Number formatting for reports. Everything here is locale-independent and deterministic: the same
/// value always gives the same characters.
public enum ReportNumber {
    /// A readable number with about six significant digits: whole numbers below 10⁹ as integers,
    /// scientific notation (`1.5e-7`, `2.34567e9`) for very large or very small magnitudes, and
    /// `∞`, `-∞`, `nan` for non-finite values (which never reach an SVG).
    public static func format(_ x: Double) -> String {
        if x.isNaN { return "nan" }
        if x.isInfinite { return x > 0 ? "∞" : "-∞" }
        if x == 0 { return "0" }
        if x == x.rounded(), Swift.abs(x) < 1e9 { return String(Int64(x)) }
        return tidyExponent(String(format: "%.6g", x))
    }

    /// `1e-05` → `1e-5`, `1.5e+07` → `1.5e7`.
    static func tidyExponent(_ s: String) -> String {
        guard let e = s.firstIndex(where: { $0 == "e" || $0 == "E" }) else { return s }
        let mantissa = s[..<e]
        var exp = s[s.index(after: e)...]
        var sign = ""
        if exp.first == "-" { sign = "-"; exp = exp.dropFirst() } else if exp.first == "+" { exp = exp.dropFirst() }
        let digits = exp.drop { $0 == "0" }
        return mantissa + "e" + sign + (digits.isEmpty ? "0" : String(digits))
    }

    /// A coordinate for SVG output: fixed two decimals, never `-0.00`. Callers pass finite values only.
    static func coordinate(_ x: Double) -> String {
        let s = String(format: "%.2f", x)
        return s == "-0.00" ? "0.00" : s
    }
}
