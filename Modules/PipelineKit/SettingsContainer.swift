/// Reads one mapping of settings for a typed configuration struct: it reports keys nobody reads (with a
/// did-you-mean), decodes each value with its default, and records every problem with its key path — so that a
/// configuration with five mistakes gets five messages in one run.
///
/// Use it from a settings struct's `init(from:)`:
///
/// ```swift
/// struct ThrottleSettings: Decodable, Sendable {
///     var limit = 10
///     var window = Duration.seconds(1)
///
///     enum CodingKeys: String, CodingKey, CaseIterable { case limit, window }
///
///     init(from decoder: any Decoder) throws {
///         let settings = try decoder.settings(CodingKeys.self)
///         limit = try settings.decode(.limit, default: limit, where: { $0 > 0 }, "must be at least 1")
///         window = try settings.duration(.window, default: window)
///     }
/// }
/// ```
///
/// Inside ``ConfigurationLoader`` problems are recorded and decoding goes on with the default; decoded on its own
/// (with a plain `YAMLDecoder`, say), the first problem throws.
public struct SettingsContainer<Key: CodingKey & CaseIterable & RawRepresentable<String>> {
    private let container: KeyedDecodingContainer<ConfigurationKey>?
    private let log: IssueLog?
    /// Where this mapping is.
    package let path: ConfigurationPath

    init(decoder: any Decoder, extraKeys: Set<String> = []) throws {
        path = ConfigurationPath(codingPath: decoder.codingPath)
        log = decoder.userInfo[.tetherIssueLog] as? IssueLog
        do {
            container = try decoder.container(keyedBy: ConfigurationKey.self)
        } catch {
            container = nil
            try record(
                .init(kind: .wrongType, path: path, pointsAtKey: false, message: "expected a mapping of settings"))
            return
        }
        // `_` is how a settings type with no keys spells its one case: it is never a key a user can write.
        let known = Set(Key.allCases.map(\.rawValue)).union(extraKeys).subtracting(["_"])
        let allowsType = log?.isPluginMapping(path) ?? false
        for key in container?.allKeys ?? [] where !known.contains(key.stringValue) {
            if allowsType && key.stringValue == "type" { continue }
            var message = "unknown key"
            if let suggestion = Self.closest(to: key.stringValue, among: known) {
                message += "; did you mean '\(suggestion)'?"
            } else if known.isEmpty {
                message += allowsType ? "; this part takes no settings besides 'type'" : "; nothing is allowed here"
            } else {
                message += "; known keys here: " + known.sorted().joined(separator: ", ")
            }
            try record(
                .init(kind: .unknownKey, path: path.appending(key.stringValue), pointsAtKey: true, message: message))
        }
    }

    /// Whether `key` is present (and not null).
    public func contains(_ key: Key) -> Bool {
        guard let container, let codingKey = ConfigurationKey(stringValue: key.rawValue) else { return false }
        return container.contains(codingKey) && ((try? container.decodeNil(forKey: codingKey)) == false)
    }

    /// Whether `key` is present with a null value (`key: null` or `key: ~`), as opposed to absent.
    public func isNull(_ key: Key) -> Bool {
        guard let container, let codingKey = ConfigurationKey(stringValue: key.rawValue), container.contains(codingKey)
        else {
            return false
        }
        return (try? container.decodeNil(forKey: codingKey)) == true
    }

    /// The value at `key`, or nil when it is absent, null, or wrong (recorded).
    public func decode<T: Decodable>(_ key: Key, as type: T.Type = T.self) throws -> T? {
        guard let container, let codingKey = ConfigurationKey(stringValue: key.rawValue) else { return nil }
        do {
            return try container.decodeIfPresent(T.self, forKey: codingKey)
        } catch let problem as ConfigurationProblem {
            // Already recorded where it was found; with no log to record in, it ends decoding.
            if log == nil { throw problem }
            return nil
        } catch let error as DecodingError {
            try record(Self.entry(for: error, at: path.appending(key.rawValue), expecting: T.self))
            return nil
        }
    }

    /// The value at `key`, or `defaultValue` when it is absent or wrong (recorded).
    public func decode<T: Decodable>(_ key: Key, default defaultValue: T) throws -> T {
        try decode(key, as: T.self) ?? defaultValue
    }

    /// The value at `key` if it passes `isValid`; otherwise `defaultValue`, and a wrong value is recorded with
    /// `requirement` ("must be at least 1").
    public func decode<T: Decodable>(
        _ key: Key, default defaultValue: T, where isValid: (T) -> Bool, _ requirement: String
    ) throws -> T {
        guard let value = try decode(key, as: T.self) else { return defaultValue }
        guard isValid(value) else {
            try invalid(key, "\(requirement) (found \(value))")
            return defaultValue
        }
        return value
    }

    /// The value at `key`, which must be present: a missing one is recorded, and the result is nil.
    public func require<T: Decodable>(_ key: Key, as type: T.Type = T.self) throws -> T? {
        guard contains(key) else {
            try record(
                .init(kind: .missingKey, path: path, pointsAtKey: false, message: "missing key '\(key.rawValue)'"))
            return nil
        }
        return try decode(key, as: T.self)
    }

    /// The list at `key`, each element decoded on its own, so that every bad element is reported and the good
    /// ones are kept; empty when absent.
    public func decodeList<T: Decodable>(_ key: Key, as type: T.Type = T.self) throws -> [T] {
        guard contains(key), let container, let codingKey = ConfigurationKey(stringValue: key.rawValue) else {
            return []
        }
        var list: any UnkeyedDecodingContainer
        do {
            list = try container.nestedUnkeyedContainer(forKey: codingKey)
        } catch {
            try record(
                .init(
                    kind: .wrongType, path: path.appending(key.rawValue), pointsAtKey: false, message: "expected a list"
                ))
            return []
        }
        var elements: [T] = []
        while !list.isAtEnd {
            let elementPath = ConfigurationPath(path.appending(key.rawValue).components + [.index(list.currentIndex)])
            do {
                elements.append(try list.decode(T.self))
            } catch let problem as ConfigurationProblem {
                if log == nil { throw problem }
                _ = try? list.decode(SkippedValue.self)
            } catch let error as DecodingError {
                try record(Self.entry(for: error, at: elementPath, expecting: T.self))
                _ = try? list.decode(SkippedValue.self)
            }
        }
        return elements
    }

    /// A duration at `key`: seconds as a number (`2.5`) or text with a unit (`250ms`, `2s`, `1m`, `1h`). It must
    /// be positive, or zero where `allowsZero`.
    public func duration(_ key: Key, default defaultValue: Duration, allowsZero: Bool = false) throws -> Duration {
        try duration(key, allowsZero: allowsZero) ?? defaultValue
    }

    /// An optional duration at `key` (see ``duration(_:default:allowsZero:)``): nil when absent or wrong (recorded).
    public func duration(_ key: Key, allowsZero: Bool = false) throws -> Duration? {
        guard let value = try decode(key, as: DurationSetting.self)?.duration else { return nil }
        if value < .zero || (value == .zero && !allowsZero) {
            try invalid(key, "must be \(allowsZero ? "zero or more" : "more than zero") (found \(value))")
            return nil
        }
        return value
    }

    /// A decoder for the value at `key`, to hand to a nested type; nil when absent.
    public func nestedDecoder(_ key: Key) throws -> (any Decoder)? {
        guard contains(key), let container, let codingKey = ConfigurationKey(stringValue: key.rawValue) else {
            return nil
        }
        return try container.superDecoder(forKey: codingKey)
    }

    /// Records that the value at `key` is not allowed, saying why.
    public func invalid(_ key: Key, _ message: String, column: Int? = nil) throws {
        try record(
            .init(
                kind: .invalidValue, path: path.appending(key.rawValue), pointsAtKey: false, message: message,
                columnOffset: column))
    }

    /// Records that the value at `components`, below this mapping, is not allowed (a list element's key, say).
    func invalid(at components: [ConfigurationPath.Component], _ message: String) throws {
        try record(
            .init(
                kind: .invalidValue, path: ConfigurationPath(path.components + components), pointsAtKey: false,
                message: message))
    }

    /// Records a problem with this whole mapping (two keys that exclude each other, say).
    public func invalidMapping(_ message: String) throws {
        try record(.init(kind: .invalidValue, path: path, pointsAtKey: false, message: message))
    }

    private func record(_ entry: IssueLog.Entry) throws {
        guard let log else { throw ConfigurationProblem(entry: entry) }
        log.record(entry)
    }

    static func entry(for error: DecodingError, at fallback: ConfigurationPath, expecting type: Any.Type)
        -> IssueLog.Entry
    {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let path = context.codingPath.isEmpty ? fallback : ConfigurationPath(codingPath: context.codingPath)
            let expected = path == fallback ? ValueExpectation.describe(type) : ValueExpectation.describe(nil)
            return .init(kind: .wrongType, path: path, pointsAtKey: false, message: "expected \(expected)")
        case .keyNotFound(let key, let context):
            return .init(
                kind: .missingKey, path: ConfigurationPath(codingPath: context.codingPath), pointsAtKey: false,
                message: "missing key '\(key.stringValue)'")
        case .dataCorrupted(let context):
            let path = context.codingPath.isEmpty ? fallback : ConfigurationPath(codingPath: context.codingPath)
            return .init(kind: .invalidValue, path: path, pointsAtKey: false, message: context.debugDescription)
        @unknown default:
            return .init(kind: .invalidValue, path: fallback, pointsAtKey: false, message: "\(error)")
        }
    }

    static func closest(to key: String, among known: Set<String>) -> String? {
        let ranked = known.map { ($0, EditDistance.between(key.lowercased(), $0.lowercased())) }
            .filter { $0.1 <= max(2, $0.0.count / 3) }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
        return ranked.first?.0
    }
}

extension Decoder {
    /// A ``SettingsContainer`` over this decoder's mapping, whose known keys are `keys`' cases.
    public func settings<Key: CodingKey & CaseIterable & RawRepresentable<String>>(
        _ keys: Key.Type
    ) throws -> SettingsContainer<Key> {
        try SettingsContainer(decoder: self)
    }

    /// A ``SettingsContainer`` whose known keys are `keys`' cases and `extraKeys`.
    public func settings<Key: CodingKey & CaseIterable & RawRepresentable<String>>(
        _ keys: Key.Type, alsoAllowing extraKeys: Set<String>
    ) throws -> SettingsContainer<Key> {
        try SettingsContainer(decoder: self, extraKeys: extraKeys)
    }
}

/// Any value, decoded to step over it.
struct SkippedValue: Decodable {
    init(from decoder: any Decoder) throws {}
}

/// Any key of a YAML mapping.
package struct ConfigurationKey: CodingKey, Hashable, Sendable {
    /// The key's text.
    package let stringValue: String
    /// Always nil: configuration keys are text.
    package var intValue: Int? { nil }

    /// Makes a key.
    package init?(stringValue: String) {
        self.stringValue = stringValue
    }

    /// Makes a key from a number's text.
    package init?(intValue: Int) {
        self.stringValue = String(intValue)
    }
}

/// Levenshtein distance, for did-you-mean suggestions.
enum EditDistance {
    static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, cb) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
