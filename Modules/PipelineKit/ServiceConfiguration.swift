import Foundation

/// One service (`services.<name>:`): where it is, how requests travel, and how its resources behave.
///
/// ```yaml
/// services:
///   demo:
///     base_url: https://api.example.com/v1
///     transport: { type: async-http-client, connect_timeout: 5s }
///     retry: { attempts: 3 }
///     mutations: { max_pending: 500 }
///     request_timeout: 30s
///     expiry: 30s
///     resources:
///       - pattern: /stores/*/items
///         expiry: 10s
/// ```
package struct ServiceConfiguration: Decodable, Sendable {
    /// The base URL; nil to take the default given at assembly (the sample's embedded server), or for a service
    /// that only uses absolute URLs.
    package var baseURL: String?
    /// The transport; nil for the registry's default (an error at assembly when there is none).
    package var transport: PluginChoice<TransportComponent>?
    /// How failed requests are retried.
    package var retry: RetrySettings
    /// How mutations carry their idempotency keys, and how many may be pending.
    package var mutations: MutationSettings
    /// Each request's timeout.
    package var requestTimeout: Duration
    /// How long loaded data stays fresh (Siesta's `expirationTime`).
    package var expiry: Duration
    /// How long after a failure `loadIfNeeded()` tries again (Siesta's `retryTime`).
    package var retryAfter: Duration
    /// Headers added to every request.
    package var headers: [String: String]
    /// More header names that carry credentials (`sensitive_headers: [X-Tenant-Secret]`), beside
    /// `HTTPHeaders.credentialFieldNames`: redacted in logs, dropped on a redirect to another origin.
    package var sensitiveHeaders: [String]
    /// Whether every resource gets the standard text and JSON transformers.
    package var standardStages: Bool
    /// The persistent cache, when persistence provides one.
    package var cache: CacheSettings
    /// Rules by path pattern, applied in order after the settings above.
    package var resources: [ResourceRule]

    /// The keys.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case baseURL = "base_url"
        case transport, retry, mutations
        case requestTimeout = "request_timeout"
        case expiry
        case retryAfter = "retry_after"
        case headers
        case sensitiveHeaders = "sensitive_headers"
        case standardStages = "standard_stages"
        case cache, resources
    }

    /// A service with every default: the registry's transport, 60 s timeout, 30 s expiry, 1 s retry.
    package init(baseURL: String? = nil, transport: PluginChoice<TransportComponent>? = nil) {
        self.baseURL = baseURL
        self.transport = transport
        retry = RetrySettings()
        mutations = MutationSettings()
        requestTimeout = .seconds(60)
        expiry = .seconds(30)
        retryAfter = .seconds(1)
        headers = [:]
        sensitiveHeaders = []
        standardStages = true
        cache = CacheSettings()
        resources = []
    }

    /// Decodes a service; every key has a default.
    package init(from decoder: any Decoder) throws {
        self.init()
        let settings = try decoder.settings(CodingKeys.self)
        baseURL = try settings.decode(.baseURL, as: String.self)
        if let baseURL, let problem = Self.problem(withBaseURL: baseURL) { try settings.invalid(.baseURL, problem) }
        transport = try settings.decode(.transport, as: PluginChoice<TransportComponent>.self)
        retry = try settings.decode(.retry, default: retry)
        mutations = try settings.decode(.mutations, default: mutations)
        requestTimeout = try settings.duration(.requestTimeout, default: requestTimeout)
        expiry = try settings.duration(.expiry, default: expiry, allowsZero: true)
        retryAfter = try settings.duration(.retryAfter, default: retryAfter, allowsZero: true)
        headers = try settings.decode(.headers, default: headers)
        sensitiveHeaders = try settings.decode(.sensitiveHeaders, default: sensitiveHeaders)
        for (index, name) in sensitiveHeaders.enumerated() where !Self.isFieldName(name) {
            try settings.invalid(
                .sensitiveHeaders,
                "item \(index) ('\(name)') is not a header field name (letters, digits and !#$%&'*+-.^_`|~)")
        }
        standardStages = try settings.decode(.standardStages, default: standardStages)
        cache = try settings.decode(.cache, default: cache)
        resources = try settings.decodeList(.resources, as: ResourceRule.self)
    }

    /// Whether `name` is an HTTP field name (RFC 9110 token).
    static func isFieldName(_ name: String) -> Bool {
        !name.isEmpty
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "!#$%&'*+-.^_`|~".unicodeScalars.contains($0))
            }
    }

    /// What is wrong with `text` as a base URL, or nil when it is usable: absolute, http or https, with a host.
    package static func problem(withBaseURL text: String) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            return "not a URL: '\(text)' (write it in full, as in https://api.example.com/v1)"
        }
        guard scheme == "http" || scheme == "https" else {
            return "the base URL must use http or https (found '\(scheme)' in '\(text)')"
        }
        guard let host = url.host, !host.isEmpty else { return "the base URL has no host: '\(text)'" }
        if url.query != nil || url.fragment != nil {
            return "the base URL must not have a query or fragment: '\(text)'"
        }
        return nil
    }
}

/// Whether a service's resources use the persistent cache, and how entries are named (`cache:`).
package struct CacheSettings: Decodable, Sendable, Hashable {
    /// How a resource's cache entry is named.
    package enum Key: String, Sendable, Hashable, SettingChoice {
        /// The whole URL: one cache file can serve several services.
        case url
        /// The URL relative to the base URL: entries survive a change of host or port (a server on an ephemeral
        /// port, staging and production sharing a file).
        case relative
    }

    /// Whether resources use the cache (when persistence provides one).
    package var enabled: Bool
    /// How entries are named.
    package var key: Key

    /// The keys.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case enabled, key
    }

    /// Enabled, keyed by URL.
    package init(enabled: Bool = true, key: Key = .url) {
        self.enabled = enabled
        self.key = key
    }

    /// Decodes the settings.
    package init(from decoder: any Decoder) throws {
        self.init()
        let settings = try decoder.settings(CodingKeys.self)
        enabled = try settings.decode(.enabled, default: enabled)
        key = try settings.decode(.key, default: key)
    }
}
