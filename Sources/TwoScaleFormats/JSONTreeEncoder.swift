import Foundation
import TwoScaleCore

extension JSONValue {
    /// Encodes `value` through its `Encodable` conformance into an ordered JSON tree.
    ///
    /// Every command's result is a typed `Encodable` value; this is how it becomes the JSON that
    /// `--json` prints and a notebook reads. Unlike Foundation's `JSONEncoder` (whose object keys come
    /// out in hash order on Linux), keys stay in the order `encode(to:)` writes them — the declaration
    /// order for a synthesised conformance — so the printed JSON and the reports' columns are stable.
    /// Conventions, the same as `JSONEncoder` with `.convertToSnakeCase`: a key `dZetaJoint` is written
    /// `d_zeta_joint` (keys without capitals, or without lower-case letters, are kept as they are); a nil optional is left
    /// out (declare `@NullIfNil` to write `null`); a `ClosedRange` is `[lower, upper]`. A non-finite
    /// number is refused when the tree is serialised.
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

/// A node of the tree being encoded: empty until a container or a value is written into it.
private final class TreeNode {
    enum Content {
        case empty
        case scalar(JSONValue)
        case object([(String, TreeNode)])
        case array([TreeNode])
    }

    var content: Content = .empty

    var value: JSONValue {
        switch content {
        case .empty: return .object([])
        case let .scalar(v): return v
        case let .object(kv): return .object(kv.map { ($0.0, $0.1.value) })
        case let .array(a): return .array(a.map(\.value))
        }
    }

    /// The child for `key` (replacing an earlier one of that key in place).
    func child(_ key: String) -> TreeNode {
        let n = TreeNode()
        if case var .object(kv) = content {
            if let i = kv.firstIndex(where: { $0.0 == key }) { kv[i].1 = n } else { kv.append((key, n)) }
            content = .object(kv)
        } else {
            content = .object([(key, n)])
        }
        return n
    }

    func appendChild() -> TreeNode {
        let n = TreeNode()
        if case var .array(a) = content {
            a.append(n)
            content = .array(a)
        } else {
            content = .array([n])
        }
        return n
    }
}

private struct TreeKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) { stringValue = "\(intValue)"; self.intValue = intValue }
}

private func scalar(_ v: some Encodable) -> JSONValue? {
    switch v {
    case let x as Double: return .double(x)
    case let x as Float: return .double(Double(x))
    case let x as Int: return .int(x)
    case let x as Int64: return .int(Int(x))
    case let x as Int32: return .int(Int(x))
    case let x as UInt64: return Int(exactly: x).map { .int($0) } ?? .double(Double(x))
    case let x as UInt32: return .int(Int(x))
    case let x as UInt: return Int(exactly: x).map { .int($0) } ?? .double(Double(x))
    case let x as Bool: return .bool(x)
    case let x as String: return .string(x)
    default: return nil
    }
}

private func encodeValue<T: Encodable>(_ value: T, into node: TreeNode, codingPath: [any CodingKey]) throws {
    if let s = scalar(value) {
        node.content = .scalar(s)
    } else {
        try value.encode(to: TreeEncoder(node: node, codingPath: codingPath))
    }
}

private struct TreeEncoder: Encoder {
    let node: TreeNode
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = node.content {} else { node.content = .object([]) }
        return KeyedEncodingContainer(KeyedTree<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = node.content {} else { node.content = .array([]) }
        return UnkeyedTree(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleTree(node: node, codingPath: codingPath) }
}

private struct KeyedTree<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: TreeNode
    var codingPath: [any CodingKey]

    private func name(_ key: Key) -> String { JSONValue.snakeCase(key.stringValue) }

    mutating func encodeNil(forKey key: Key) throws { node.child(name(key)).content = .scalar(.null) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encodeValue(value, into: node.child(name(key)), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = node.child(name(key))
        child.content = .object([])
        return KeyedEncodingContainer(KeyedTree<NestedKey>(node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = node.child(name(key))
        child.content = .array([])
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
    var count: Int {
        if case let .array(a) = node.content { return a.count }
        return 0
    }

    private var nextKey: TreeKey { TreeKey(intValue: count) }

    mutating func encodeNil() throws { node.appendChild().content = .scalar(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let key = nextKey
        try encodeValue(value, into: node.appendChild(), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let key = nextKey
        let child = node.appendChild()
        child.content = .object([])
        return KeyedEncodingContainer(KeyedTree<NestedKey>(node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = nextKey
        let child = node.appendChild()
        child.content = .array([])
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

    mutating func encodeNil() throws { node.content = .scalar(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encodeValue(value, into: node, codingPath: codingPath)
    }
}
