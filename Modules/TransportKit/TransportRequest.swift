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
    /// How long the whole exchange may take before it fails with ``TransportError/Kind-swift.enum/timedOut``.
    public var timeout: Duration

    /// Makes a request; the timeout defaults to 60 seconds.
    public init(
        method: HTTPMethod = .get, url: URL, headers: HTTPHeaders = [:], body: Data? = nil,
        timeout: Duration = .seconds(60)
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// `METHOD url`.
    public var description: String { "\(method) \(url.absoluteString)" }
}
