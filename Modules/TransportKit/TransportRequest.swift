#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a ``Transport`` sends: method, URL, headers, body and a timeout.
public struct TransportRequest: Sendable, Hashable, CustomStringConvertible {
    /// The method.
    public var method: HTTPMethod
    /// The absolute URL.
    public var url: URL
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body, if any.
    public var body: Data?
    /// How long the whole exchange may take before it fails with ``TransportError/Kind-swift.struct/timedOut``.
    public var timeout: Duration
    /// The names of the header fields that carry credentials, lower-cased: their values are redacted in every log
    /// line, and they are dropped when a redirect leads to another origin (scheme, host or port). Defaults to
    /// ``HTTPHeaders/credentialFieldNames``; add your own (`sensitive_headers:` in `configuration.yaml`).
    public var sensitiveHeaders: Set<String> {
        get { _sensitiveHeaders }
        set { _sensitiveHeaders = Self.lowercased(newValue) }
    }
    private var _sensitiveHeaders: Set<String>

    /// Makes a request; the timeout defaults to 60 seconds.
    public init(
        method: HTTPMethod = .get, url: URL, headers: HTTPHeaders = [:], body: Data? = nil,
        timeout: Duration = .seconds(60), sensitiveHeaders: Set<String> = HTTPHeaders.credentialFieldNames
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self._sensitiveHeaders = Self.lowercased(sensitiveHeaders)
    }

    /// `METHOD url`.
    public var description: String { "\(method) \(url.absoluteString)" }

    /// `names`, lower-cased: the set itself when every name already is (the default's case, on every request), so
    /// that no name is copied and nothing is hashed again.
    private static func lowercased(_ names: Set<String>) -> Set<String> {
        let uppercase = UInt8(ascii: "A")...UInt8(ascii: "Z")
        let isLowercased = names.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 && !uppercase.contains($0) } }
        return isLowercased ? names : Set(names.map { $0.lowercased() })
    }
}

extension URL {
    /// Whether `other` has the same origin — scheme, host and port — as this URL. A redirect to another origin
    /// drops the request's ``TransportRequest/sensitiveHeaders``.
    public func isSameOrigin(as other: URL) -> Bool {
        scheme?.lowercased() == other.scheme?.lowercased() && host?.lowercased() == other.host?.lowercased()
            && effectivePort == other.effectivePort
    }

    /// The port, or the scheme's default (80, 443) when the URL names none.
    private var effectivePort: Int? {
        port ?? ["http": 80, "https": 443][scheme?.lowercased() ?? ""]
    }
}
