import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Parses XML with Foundation's XMLParser and counts elements by name and by class attribute.
final class XMLCheck: NSObject, XMLParserDelegate {
    var elements: [String: Int] = [:]
    var classes: [String: Int] = [:]
    var texts: [String] = []
    var rootAttributes: [String: String]?
    private var current = ""

    /// Parses `text`; returns nil (and the parser error) when it is not well-formed XML.
    static func parse(_ text: String) -> (check: XMLCheck?, error: String?) {
        let c = XMLCheck()
        let p = XMLParser(data: Data(text.utf8))
        p.delegate = c
        guard p.parse() else { return (nil, p.parserError.map { "\($0)" } ?? "parse failed") }
        return (c, nil)
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if rootAttributes == nil { rootAttributes = attributes }
        elements[name, default: 0] += 1
        if let cls = attributes["class"] { classes[cls, default: 0] += 1 }
        current = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { current += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        let t = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !t.isEmpty { texts.append(t) }
        current = ""
    }
}
