import Foundation

/// Numbers in the sentences that results carry (notes, criteria): `digits` significant digits, in
/// scientific notation below 10⁻⁴ or from 10⁷ on; "—" for nil and ∞/−∞/nan spelled out.
public enum NumberText {
    public static func format(_ x: Double?, digits: Int = 6) -> String {
        guard let x else { return "—" }
        if !x.isFinite { return x > 0 ? "∞" : (x < 0 ? "-∞" : "nan") }
        if x != 0 && (Swift.abs(x) >= 1e7 || Swift.abs(x) < 1e-4) { return String(format: "%.\(digits - 1)e", x) }
        return String(format: "%.\(digits)g", x)
    }
}
