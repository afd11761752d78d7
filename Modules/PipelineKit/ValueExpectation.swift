/// How a type is named in "expected …" messages, in the configuration's words rather than Swift's.
enum ValueExpectation {
    static func describe(_ type: Any.Type?) -> String {
        guard let type else { return "a value of another type" }
        switch type {
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type: return "a whole number"
        case is Double.Type, is Float.Type: return "a number"
        case is Bool.Type: return "true or false"
        case is String.Type: return "text"
        case is DurationSetting.Type: return "a duration (seconds as a number, or text such as 250ms, 2s, 1m)"
        case is ByteCountSetting.Type: return "a size (bytes as a number, or text such as 512MB, 2GiB)"
        case let described as any DescribedSetting.Type: return described.expectation
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array<") { return "a list" }
            if name.hasPrefix("Dictionary<") { return "a mapping" }
            return "a mapping of settings"
        }
    }
}

/// A settings type that says how it is written, for "expected …" messages.
package protocol DescribedSetting {
    /// "one of: ascending, descending".
    static var expectation: String { get }
}

/// A setting written as one of a few words (`key: relative`), with a message naming them all when it is none.
package protocol SettingChoice: RawRepresentable<String>, CaseIterable, Decodable, DescribedSetting {}

extension SettingChoice {
    /// "one of: url, relative".
    package static var expectation: String { "one of: " + allCases.map(\.rawValue).joined(separator: ", ") }

    /// Decodes one of the words.
    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(rawValue: text) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath, debugDescription: "expected \(Self.expectation) (found '\(text)')"))
        }
        self = value
    }
}
