import Foundation
import TwoScaleCore

extension JSONValue {
    /// Encodes `value` through its `Encodable` conformance into an ordered JSON tree.
    ///
    /// Every command's result is a typed `Encodable` value; this is how it becomes the JSON that
    /// JSON output prints and a notebook reads. Unlike Foundation's `JSONEncoder` (whose object keys come
    /// out in hash order on Linux), keys stay in the order `encode(to:)` writes them — the declaration
    /// order for a synthesised conformance — so the printed JSON and the reports' columns are stable.
    /// Conventions: a field `dZetaJoint` is written `d_zeta_joint` (as `JSONEncoder`'s `.convertToSnakeCase`
    /// does for such names; unlike it, a run of capitals is one word, `URLPath` → `url_path`, and a name
    /// without lower-case letters, a constant's `C`, is kept); a nil optional is left out (declare
    /// `@NullIfNil` to write `null`); a `ClosedRange` is `[lower, upper]`; a `[String: …]` dictionary is
    /// written with its keys sorted and unconverted (they are data). A whole number in `UInt64` is
    /// written exactly; a non-finite number is refused when the tree is serialised.
    public init<T: Encodable>(encoding value: T) throws {
        let root = TreeNode()
        try value.encode(to: TreeEncoder(node: root, codingPath: []))
        self = root.value
    }

    /// `key` in snake case: a word starts at each upper-case letter (a run of capitals is one word, as
    /// in `URLPath` → `url_path`), words are lower-cased and joined by `_`. A key without lower-case
    /// letters (a constant's name such as `C` or `K`) is kept as it is.
    public static func snakeCase(_ key: String) -> String {
        guard key.contains(where: \.isUppercase), key.contains(where: \.isLowercase) else { return key }
        let chars = Array(key)
        var out = ""
        for (i, c) in chars.enumerated() {
            if c.isUppercase, i > 0 {
                let prev = chars[i - 1]
                let nextLower = i + 1 < chars.count && chars[i + 1].isLowercase
                if !prev.isUppercase || nextLower, prev != "_" { out.append("_") }
            }
            out.append(contentsOf: c.lowercased())
        }
        return out
    }
}

/// A node of the tree being encoded: empty until a container or a value is written into it. Children
/// are appended in place (an object keeps an index of its keys), so encoding is linear in the size.
private final class TreeNode {
    enum Kind { case empty, scalar, object, array }

    var kind: Kind = .empty
    var scalar: JSONValue = .null
    var keys: [String] = []
    var children: [TreeNode] = []
    var index: [String: Int] = [:]

    var value: JSONValue {
        switch kind {
        case .empty: return .object([])
        case .scalar: return scalar
        case .object: return .object(zip(keys, children).map { ($0, $1.value) })
        case .array: return .array(children.map(\.value))
        }
    }

    func set(_ v: JSONValue) {
        kind = .scalar
        scalar = v
        keys = []
        children = []
        index = [:]
    }

    func makeObject() {
        if kind != .object { kind = .object; keys = []; children = []; index = [:] }
    }

    func makeArray() {
        if kind != .array { kind = .array; keys = []; children = []; index = [:] }
    }

    /// The child for `key` (an earlier child of that key is replaced in its place).
    func child(_ key: String) -> TreeNode {
        makeObject()
        let n = TreeNode()
        if let i = index[key] {
            children[i] = n
        } else {
            index[key] = children.count
            keys.append(key)
            children.append(n)
        }
        return n
    }

    func appendChild() -> TreeNode {
        makeArray()
        let n = TreeNode()
        children.append(n)
        return n
    }
}

private struct TreeKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) { stringValue = "\(intValue)"; self.intValue = intValue }
}

/// The JSON scalar of a standard scalar type; nil for anything else. A whole number above `Int.max`
/// (a `UInt64` seed of 2⁶³ or more) is written exactly, as `.uint`, never rounded to a double.
private func scalar(_ v: some Encodable, codingPath: [any CodingKey]) throws -> JSONValue? {
    func whole<I: BinaryInteger>(_ x: I) throws -> JSONValue {
        if let i = Int(exactly: x) { return .int(i) }
        guard let u = UInt64(exactly: x) else {
            throw EncodingError.invalidValue(x, .init(codingPath: codingPath, debugDescription: "\(x) does not fit a JSON whole number here"))
        }
        return .uint(u)
    }
    switch v {
    case let x as Double: return .double(x)
    case let x as Float: return .double(Double(x))
    case let x as Int: return .int(x)
    case let x as Int8: return .int(Int(x))
    case let x as Int16: return .int(Int(x))
    case let x as Int32: return .int(Int(x))
    case let x as Int64: return try whole(x)
    case let x as UInt: return try whole(x)
    case let x as UInt8: return .int(Int(x))
    case let x as UInt16: return .int(Int(x))
    case let x as UInt32: return .int(Int(x))
    case let x as UInt64: return try whole(x)
    case let x as Bool: return .bool(x)
    case let x as String: return .string(x)
    default: return nil
    }
}

/// A dictionary with string keys: written with its keys sorted and as they are (data, not field names).
private protocol StringKeyedEncodable {
    func encodeSorted(into node: TreeNode, codingPath: [any CodingKey]) throws
}

extension Dictionary: StringKeyedEncodable where Key == String, Value: Encodable {
    fileprivate func encodeSorted(into node: TreeNode, codingPath: [any CodingKey]) throws {
        node.makeObject()
        for k in keys.sorted() {
            try encodeValue(self[k]!, into: node.child(k), codingPath: codingPath + [TreeKey(stringValue: k)])
        }
    }
}

private func encodeValue<T: Encodable>(_ value: T, into node: TreeNode, codingPath: [any CodingKey]) throws {
    if let s = try scalar(value, codingPath: codingPath) {
        node.set(s)
    } else if let d = value as? any StringKeyedEncodable {
        try d.encodeSorted(into: node, codingPath: codingPath)
    } else if let a = value as? [Double] {
        node.makeArray()
        for x in a { node.appendChild().set(.double(x)) }
    } else {
        try value.encode(to: TreeEncoder(node: node, codingPath: codingPath))
    }
}

private struct TreeEncoder: Encoder {
    let node: TreeNode
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeObject()
        return KeyedEncodingContainer(KeyedTree<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeArray()
        return UnkeyedTree(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleTree(node: node, codingPath: codingPath) }
}

private struct KeyedTree<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: TreeNode
    var codingPath: [any CodingKey]

    private func name(_ key: Key) -> String { JSONValue.snakeCase(key.stringValue) }

    mutating func encodeNil(forKey key: Key) throws { node.child(name(key)).set(.null) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encodeValue(value, into: node.child(name(key)), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = node.child(name(key))
        child.makeObject()
        return KeyedEncodingContainer(KeyedTree<NestedKey>(node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = node.child(name(key))
        child.makeArray()
        return UnkeyedTree(node: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        TreeEncoder(node: node.child("super"), codingPath: codingPath + [TreeKey(stringValue: "super")])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        TreeEncoder(node: node.child(name(key)), codingPath: codingPath + [key])
    }
}

private struct UnkeyedTree: UnkeyedEncodingContainer {
    let node: TreeNode
    var codingPath: [any CodingKey]
    var count: Int { node.kind == .array ? node.children.count : 0 }

    private var nextKey: TreeKey { TreeKey(intValue: count) }

    mutating func encodeNil() throws { node.appendChild().set(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let key = nextKey
        try encodeValue(value, into: node.appendChild(), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let key = nextKey
        let child = node.appendChild()
        child.makeObject()
        return KeyedEncodingContainer(KeyedTree<NestedKey>(node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = nextKey
        let child = node.appendChild()
        child.makeArray()
        return UnkeyedTree(node: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        let key = nextKey
        return TreeEncoder(node: node.appendChild(), codingPath: codingPath + [key])
    }
}

private struct SingleTree: SingleValueEncodingContainer {
    let node: TreeNode
    var codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.set(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encodeValue(value, into: node, codingPath: codingPath)
    }
}
