/// A JSON value as a `Sendable`, `Hashable` Swift value: what ResourceKit's JSON transformer makes of a body, and
/// what a document in a `PersistenceKit` store is.
///
/// ```swift
/// let name = resource.typedContent(as: JSONValue.self)?["user"]?["name"]?.stringValue
/// let document: JSONValue = ["_id": "a1", "name": "Pear", "stock": 12]
/// let text = document.jsonText                       // {"_id":"a1","name":"Pear","stock":12}
/// let again = try JSONValue(parsing: text)            // equal to document
/// ```
///
/// Numbers are `Double`s, as in JavaScript: whole numbers up to 2^53 round-trip exactly.
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The member named `key` of an object, or nil.
    @inlinable
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { object[key] } else { nil }
    }

    /// The element at `index` of an array, or nil when out of range or not an array.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let array) = self, array.indices.contains(index) { array[index] } else { nil }
    }

    /// The string, if this is one.
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    /// The number, if this is one.
    public var doubleValue: Double? { if case .number(let value) = self { value } else { nil } }
    /// The number as an `Int`, if this is a whole number that fits.
    public var intValue: Int? { doubleValue.flatMap { Int(exactly: $0) } }
    /// The Boolean, if this is one.
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }

    /// The value at `path`, one member name per step (`["address", "city"]`); nil when a step is missing or not
    /// an object.
    ///
    /// Inlinable, so that a caller's lookups are specialized for its path type: a query compares documents by
    /// their sort fields many times per result.
    @inlinable
    public subscript(path path: some Sequence<String>) -> JSONValue? {
        var value: JSONValue? = self
        for key in path {
            guard let current = value else { return nil }
            value = current[key]
        }
        return value
    }

    /// The value as compact JSON text, keys sorted: ``jsonText``.
    public var description: String { jsonText }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByStringInterpolation, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
    /// A Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// A whole number.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// A number.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A string with interpolations: `["_id": "item-\(index)"]`.
    public init(stringInterpolation: DefaultStringInterpolation) {
        self = .string(String(stringInterpolation: stringInterpolation))
    }
    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object. A key given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
