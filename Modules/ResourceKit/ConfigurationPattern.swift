import TransportKit

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Which resources a configuration rule applies to: a glob, a predicate, or all.
///
/// A glob beginning with `/` (or with no scheme) is relative to the service's base URL; otherwise it is an absolute
/// URL. `*` matches within one path segment, `**` across segments. Globs match the URL without its query, so
/// `"/items/*"` matches `/items/1` and `/items/1?sort=name` but not `/items/1/tags`.
///
/// ```swift
/// service.configure("/items/**") { $0.expirationTime = .seconds(60) }
/// service.configure(.matching { $0.query != nil }) { $0.headers["Cache-Control"] = "no-cache" }
/// ```
public struct ConfigurationPattern: Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    enum Form: Sendable {
        case all
        case glob(String)
        case predicate(@Sendable (URL) -> Bool)
    }

    let form: Form

    /// Every resource.
    public static var all: ConfigurationPattern { ConfigurationPattern(form: .all) }

    /// Resources whose URL satisfies `predicate`.
    public static func matching(_ predicate: @escaping @Sendable (URL) -> Bool) -> ConfigurationPattern {
        ConfigurationPattern(form: .predicate(predicate))
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
        case .predicate: "predicate"
        }
    }

    /// The pattern made ready to match URLs of a service with `base` (no trailing slash).
    func compiled(base: String?) -> CompiledPattern {
        switch form {
        case .all:
            return .all
        case .predicate(let predicate):
            return .predicate(predicate)
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
