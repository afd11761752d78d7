import TransportKit

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Which resources a configuration rule applies to: a glob, a regular expression, a predicate, or all.
///
/// A glob beginning with `/` (or with no scheme) is relative to the service's base URL; otherwise it is an absolute
/// URL. Globs match the URL without its query, Siesta's way: `*` any run within one path segment, `?` one character
/// within a segment, `**` any run across segments, and `/**/` zero or more whole segments. A regular expression
/// matches anywhere in the absolute URL, query included (Siesta's `NSRegularExpression` patterns).
///
/// | Pattern | Matches | Does not match |
/// |---|---|---|
/// | `/items/*` | `/items/1`, `/items/1?sort=name` | `/items/1/tags`, `/items` |
/// | `/items/?` | `/items/1` | `/items/12` |
/// | `/items/**` | `/items/1`, `/items/1/tags` | `/items` |
/// | `/users/**/avatar` | `/users/avatar`, `/users/7/avatar`, `/users/7/a/avatar` | `/users/7/avatars` |
/// | `.regex("/v[0-9]+/")` | `https://api.example.com/v2/items` | `https://api.example.com/vx/items` |
///
/// ```swift
/// service.configure("/items/**") { $0.expirationTime = .seconds(60) }
/// service.configure(.matching { $0.query != nil }) { $0.headers["Cache-Control"] = "no-cache" }
/// ```
public struct ConfigurationPattern: Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    enum Form: Sendable {
        case all
        case glob(String)
        case regex(String)
        case predicate(@Sendable (URL) -> Bool)
    }

    /// A regular expression that does not compile: which, and why.
    public struct InvalidRegex: Error, Sendable, CustomStringConvertible {
        /// The pattern given.
        public let pattern: String
        /// What the regular-expression parser said.
        public let reason: String

        /// `invalid regular expression "…": reason`.
        public var description: String { "invalid regular expression \"\(pattern)\": \(reason)" }
    }

    let form: Form

    /// Every resource.
    public static var all: ConfigurationPattern { ConfigurationPattern(form: .all) }

    /// Resources whose URL satisfies `predicate`.
    public static func matching(_ predicate: @escaping @Sendable (URL) -> Bool) -> ConfigurationPattern {
        ConfigurationPattern(form: .predicate(predicate))
    }

    /// Resources whose absolute URL, query included, contains a match for the regular expression `pattern`.
    ///
    /// - Throws: ``InvalidRegex`` when `pattern` does not compile, naming it.
    public static func regex(_ pattern: String) throws(InvalidRegex) -> ConfigurationPattern {
        do {
            _ = try Regex(pattern)
        } catch {
            throw InvalidRegex(pattern: pattern, reason: "\(error)")
        }
        return ConfigurationPattern(form: .regex(pattern))
    }

    /// Resources whose URL matches the glob `pattern`.
    public init(_ pattern: String) {
        form = .glob(pattern)
    }

    /// Resources whose URL matches the glob `value`.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    init(form: Form) {
        self.form = form
    }

    /// The glob, `all`, or `predicate`.
    public var description: String {
        switch form {
        case .all: "all"
        case .glob(let pattern): pattern
        case .regex(let pattern): "regex(\(pattern))"
        case .predicate: "predicate"
        }
    }

    /// What an outbox stores for it; nil for a predicate, which cannot be stored.
    var stored: String? {
        switch form {
        case .all: "@all"
        case .glob(let pattern): pattern
        case .regex(let pattern): "@regex:" + pattern
        case .predicate: nil
        }
    }

    /// The pattern an outbox stored as `stored`.
    init(stored: String) {
        if stored == "@all" {
            form = .all
        } else if stored.hasPrefix("@regex:") {
            form = .regex(String(stored.dropFirst("@regex:".count)))
        } else {
            form = .glob(stored)
        }
    }

    /// The pattern made ready to match URLs of a service with `base` (no trailing slash).
    func compiled(base: String?) -> CompiledPattern {
        switch form {
        case .all:
            return .all
        case .predicate(let predicate):
            return .predicate(predicate)
        case .regex(let pattern):
            // `Regex` is not Sendable, so the rule keeps the text and compiles it where it matches: once per
            // resource and configuration change, as configurations are cached.
            return .predicate { url in (try? Regex(pattern)).map { url.absoluteString.contains($0) } ?? false }
        case .glob(let pattern):
            if pattern.contains("://") { return .glob(Glob(pattern)) }
            let relative = pattern.hasPrefix("/") ? pattern : "/" + pattern
            return .glob(Glob((base ?? "") + relative))
        }
    }
}

/// A pattern ready to match.
enum CompiledPattern: Sendable {
    case all
    case glob(Glob)
    case predicate(@Sendable (URL) -> Bool)

    func matches(_ url: URL, withoutQuery: String) -> Bool {
        switch self {
        case .all: true
        case .glob(let glob): glob.matches(withoutQuery)
        case .predicate(let predicate): predicate(url)
        }
    }
}
