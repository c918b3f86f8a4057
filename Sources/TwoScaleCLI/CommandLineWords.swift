import ArgumentParser

/// What the command line means before the parser reads it: a value that starts with a minus sign, and a
/// command name the parser does not know.
enum CommandLineWords {
    /// `--flag -0.1` becomes `--flag=-0.1`, so that a negative number is the flag's value (which the flag's
    /// own check then judges) rather than an unknown option that leaves the flag without a value.
    static func joiningNegativeValues(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a == "--" { out += arguments[i...]; break }
            if a.hasPrefix("--"), !a.contains("="), i + 1 < arguments.count, looksNegative(arguments[i + 1]) {
                out.append(a + "=" + arguments[i + 1])
                i += 2
                continue
            }
            out.append(a)
            i += 1
        }
        return out
    }

    /// A word that starts like a negative number: `-0.1`, `-1e-3`, `-1:1`, `-.5`.
    static func looksNegative(_ word: String) -> Bool {
        let s = Array(word)
        guard s.count >= 2, s[0] == "-" else { return false }
        return s[1].isNumber || (s[1] == "." && s.count >= 3 && s[2].isNumber)
    }

    /// The message for a first word that is no command (`twoscale edd …`), with the nearest command names.
    static func unknownCommand(_ arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        let names = TwoScaleCommands.all.compactMap { $0.configuration.commandName } + ["help"]
        guard !names.contains(first) else { return nil }
        // Near: at most two edits, and fewer than half the longer word's letters.
        let near = names.map { ($0, distance($0, first)) }.filter { $0.1 <= 2 && 2 * $0.1 < Swift.max($0.0.count, first.count) }
            .sorted { $0.1 < $1.1 }.map(\.0)
        let hint = near.isEmpty ? "" : "; did you mean " + near.map { "'\($0)'" }.joined(separator: " or ") + "?"
        return "unknown command '\(first)'\(hint). The commands are \(names.dropLast().joined(separator: ", ")) (twoscale help CMD)."
    }

    /// Edit distance between two words: insertions, deletions, substitutions and transpositions of
    /// neighbours count one each (optimal string alignment).
    static func distance(_ a: String, _ b: String) -> Int {
        let x = Array(a), y = Array(b)
        if x.isEmpty || y.isEmpty { return x.count + y.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: y.count + 1), count: x.count + 1)
        for i in 0...x.count { d[i][0] = i }
        for j in 0...y.count { d[0][j] = j }
        for i in 1...x.count {
            for j in 1...y.count {
                d[i][j] = Swift.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
                if i > 1, j > 1, x[i - 1] == y[j - 2], x[i - 2] == y[j - 1] { d[i][j] = Swift.min(d[i][j], d[i - 2][j - 2] + 1) }
            }
        }
        return d[x.count][y.count]
    }
}
