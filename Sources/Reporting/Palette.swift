/// The Okabe–Ito colour-blind-safe palette (yellow last: it is faint on white). Series past the
/// eighth reuse the colours with a dash pattern so every series stays distinguishable.
public enum Palette {
    public static let colors = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]
    public static let dashes = ["", "6 3", "2 3", "8 3 2 3"]

    /// Colour of series `i` (0-based).
    public static func color(_ i: Int) -> String { colors[((i % colors.count) + colors.count) % colors.count] }

    /// Dash pattern of series `i` (empty for a solid line).
    static func dash(_ i: Int) -> String { dashes[(max(0, i) / colors.count) % dashes.count] }
}

/// Escapes text for SVG/XML character data and attribute values.
enum XMLText {
    static func escape(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // Control characters are not allowed in XML 1.0; tabs and newlines become spaces.
                if u.value < 0x20 || (0x7F...0x9F).contains(u.value) || u.value == 0xFFFE || u.value == 0xFFFF {
                    out += " "
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out
    }
}
