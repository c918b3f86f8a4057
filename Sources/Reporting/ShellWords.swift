/// Splits a command or directive line into words the way a POSIX shell would for plain words:
/// whitespace separates words; `'…'` quotes literally; `"…"` quotes with `\"` and `\\` escapes;
/// outside quotes `\` escapes the next character. No expansion of any kind happens.
enum ShellWords {
    /// Why a line could not be split, with the character offset where the problem starts.
    struct Problem: Error, Equatable {
        var message: String
        var offset: Int
    }

    /// The words of `text`. When `forbidOperators` is set, unquoted `| ; & < > $ \``  are refused:
    /// notebook commands do not run in a shell, so pipes, redirections and variables cannot work.
    static func split(_ text: String, forbidOperators: Bool = false) throws(Problem) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        let chars = Array(text)
        var i = 0
        while i < chars.count {
            let ch = chars[i]
            switch ch {
            case " ", "\t":
                if inWord { words.append(current); current = ""; inWord = false }
            case "'":
                inWord = true
                let start = i
                i += 1
                while i < chars.count, chars[i] != "'" { current.append(chars[i]); i += 1 }
                guard i < chars.count else { throw Problem(message: "unterminated ' quote", offset: start) }
            case "\"":
                inWord = true
                let start = i
                i += 1
                while i < chars.count, chars[i] != "\"" {
                    if chars[i] == "\\", i + 1 < chars.count, chars[i + 1] == "\"" || chars[i + 1] == "\\" { i += 1 }
                    current.append(chars[i])
                    i += 1
                }
                guard i < chars.count else { throw Problem(message: "unterminated \" quote", offset: start) }
            case "\\":
                inWord = true
                guard i + 1 < chars.count else { throw Problem(message: "a \\ at the end of the text escapes nothing", offset: i) }
                i += 1
                current.append(chars[i])
            default:
                if forbidOperators, "|;&<>$`".contains(ch) {
                    throw Problem(message: "'\(ch)' is a shell operator; notebook commands are not run by a shell (quote it if it is part of a value)", offset: i)
                }
                inWord = true
                current.append(ch)
            }
            i += 1
        }
        if inWord { words.append(current) }
        return words
    }
}
