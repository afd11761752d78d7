/// Where the inspector listens, and who may ask it.
///
/// By default it listens on 127.0.0.1 and a free port, and asks for no token: nothing off the machine can reach it.
/// Any other address needs a token, which every request must then carry (`Authorization: Bearer …`, or `?token=…`
/// for the page in a browser).
public struct InspectorConfiguration: Sendable, Hashable {
    /// The address to listen on: `127.0.0.1` (the default), `::1`, or — with a token — another one.
    public var host: String
    /// The port; 0 (the default) picks a free one (see ``Inspector/port()``).
    public var port: Int
    /// The token every request must carry; nil: none (allowed on loopback only).
    public var token: String?

    /// Makes a configuration.
    public init(host: String = "127.0.0.1", port: Int = 0, token: String? = nil) {
        self.host = host
        self.port = port
        self.token = token
    }

    /// Whether `host` names the loopback interface.
    var isLoopback: Bool {
        host == "127.0.0.1" || host == "::1" || host == "localhost" || host.hasPrefix("127.")
    }

    /// Checks the configuration: a port in range, a non-empty token, and a token when not on loopback.
    func validate() throws(InspectorError) {
        guard (0...65_535).contains(port) else { throw InspectorError(.invalidPort(port)) }
        if let token, token.isEmpty { throw InspectorError(.emptyToken) }
        if !isLoopback, token == nil { throw InspectorError(.nonLoopbackWithoutToken(host: host)) }
    }
}
