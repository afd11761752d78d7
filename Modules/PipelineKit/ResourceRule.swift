package import ResourceKit
package import TransportKit

/// Configuration for the resources whose paths match a pattern (`resources:` of a service), applied in order
/// after the service's own settings — Siesta's `configure(_:)` in YAML.
///
/// ```yaml
/// resources:
///   - pattern: /stores/*/items     # * and ? within a segment, ** across segments
///     expiry: 10s
///     stages: [{ type: json }]
///   - regex: "/v[0-9]+/"           # or a regular expression, matched anywhere in the absolute URL
///     timeout: 5s
/// ```
package struct ResourceRule: Decodable, Sendable {
    /// The glob the resource's path is matched against (see `ConfigurationPattern`); empty for a `regex:` rule.
    package var pattern: String
    /// The regular expression matched anywhere in the absolute URL, query included; nil for a `pattern:` rule.
    package var regex: String?
    /// The request methods it applies to; nil for all.
    package var methods: [HTTPMethod]?
    /// How long loaded data stays fresh.
    package var expiry: Duration?
    /// How long after a failure `loadIfNeeded()` tries again.
    package var retryAfter: Duration?
    /// Each request's timeout.
    package var timeout: Duration?
    /// Headers added to each request.
    package var headers: [String: String]
    /// Whether these resources use the persistent cache (nil: the service's setting).
    package var cache: Bool?
    /// Transformers added to their response pipeline.
    package var stages: [PluginChoice<ResponseStage>]

    /// The keys.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case pattern, regex, methods, expiry
        case retryAfter = "retry_after"
        case timeout, headers, cache, stages
    }

    /// Decodes a rule: `pattern` (which must start with `/`, or be `**`) or `regex` (which must compile), not both.
    package init(from decoder: any Decoder) throws {
        let settings = try decoder.settings(CodingKeys.self)
        if settings.contains(.regex) {
            pattern = ""
            regex = try settings.decode(.regex, as: String.self)
            if settings.contains(.pattern) {
                try settings.invalid(.regex, "a rule matches by `pattern` or by `regex`, not both")
            } else if let regex {
                do {
                    _ = try ConfigurationPattern.regex(regex)
                } catch {
                    try settings.invalid(.regex, "\(error)")
                }
            }
        } else {
            pattern = try settings.require(.pattern, as: String.self) ?? "**"
            regex = nil
            if !(pattern.hasPrefix("/") || pattern.hasPrefix("*") || pattern.contains("://")) {
                try settings.invalid(
                    .pattern, "a pattern is a path from the service's base URL: start it with / (found '\(pattern)')")
            }
        }
        methods = try settings.decode(.methods, as: [String].self).map {
            $0.map { HTTPMethod(rawValue: $0.uppercased()) }
        }
        expiry = try settings.duration(.expiry, allowsZero: true)
        retryAfter = try settings.duration(.retryAfter, allowsZero: true)
        timeout = try settings.duration(.timeout)
        headers = try settings.decode(.headers, default: [:])
        cache = try settings.decode(.cache, as: Bool.self)
        stages = try settings.decode(.stages, default: [])
    }

    /// What the rule matches, as ResourceKit takes it.
    package var configurationPattern: ConfigurationPattern {
        if let regex, let compiled = try? ConfigurationPattern.regex(regex) { return compiled }
        return ConfigurationPattern(pattern)
    }

    /// `pattern`, or `regex(…)`.
    var matchDescription: String {
        regex.map { "regex(\($0))" } ?? pattern
    }
}
