/// An optional result field whose key is always written: `null` when the value is absent.
///
/// Result types are `Encodable`; a plain optional property is left out of the output when it is nil
/// (Swift's synthesised conformance uses `encodeIfPresent`), which suits fields that exist only on
/// request (`d_zeta_lower` without `Setting.lower`). A field that is part of every result but may have no value
/// (a covering count too large for a double, an interval with the bootstrap off) is declared
/// `@NullIfNil var x: Double?` instead, so readers always find the key.
@propertyWrapper
public struct NullIfNil<Value: Encodable & Sendable>: Encodable, Sendable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        if let v = wrappedValue { try c.encode(v) } else { try c.encodeNil() }
    }
}

extension NullIfNil: Equatable where Value: Equatable {}

/// Decoding reads `null` as nil (a store's meta.json records σ² as null for the output FIM).
extension NullIfNil: Decodable where Value: Decodable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        self.init(wrappedValue: c.decodeNil() ? nil : try c.decode(Value.self))
    }
}

/// A coding key spelled out where it is used, for results whose keys are not Swift names
/// (`gap_mean_01`, `noise-samples`) or depend on the data (`d_zeta_sd` for each measure).
public struct ResultKey: CodingKey, Sendable {
    public var stringValue: String
    public var intValue: Int? { nil }
    public init(_ s: String) { stringValue = s }
    public init?(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
}
