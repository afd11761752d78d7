extension JSONValue {
    /// What kind of value this is, with its article, for messages: "null", "a Boolean", "a number", "a string",
    /// "an array" or "an object".
    package var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a Boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
