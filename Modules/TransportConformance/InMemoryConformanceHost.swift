public import Foundation
import TetherClock
public import TransportKit

/// The in-memory host: no sockets, an `InMemoryTransport` answering with the same ``ConformanceEndpoints`` as
/// the loopback server. Misbehaviours become what a real transport reports for them — garbage is
/// `TransportError.Kind-swift.struct.malformedResponse`, a cut body `TransportError.Kind-swift.struct.connectionFailed`,
/// a silent peer no reply at all — so that tests written against the double see what they would see for real.
public struct InMemoryConformanceHost: ConformanceHost {
    /// `http://conformance.in-memory`.
    public static let baseURL = "http://conformance.in-memory"

    /// The endpoints the transports answer with.
    public let endpoints = ConformanceEndpoints()
    /// A URL the in-memory transport refuses.
    public let refusedURL = URL(string: "http://127.0.0.1:9/echo")!
    /// A URL whose host the in-memory transport cannot resolve.
    public let unresolvableURL = URL(string: "http://tether-conformance.invalid/echo")!
    /// A URL the in-memory transport never connects to: it fails with timedOut after the connect timeout.
    public let unacceptingURL = URL(string: "http://127.0.0.2:9/echo")!
    /// What the endpoints saw.
    public var recorder: ConformanceRecorder { endpoints.recorder }
    /// False: there are no connections.
    public var observesConnections: Bool { false }

    /// Makes a host.
    public init() {}

    /// The URL of `pathAndQuery` on the in-memory server.
    public func url(_ pathAndQuery: String) -> URL { URL(string: Self.baseURL + pathAndQuery)! }

    /// The URL of `pathAndQuery` on the in-memory server under another host name (another origin).
    public func otherOriginURL(_ pathAndQuery: String) -> URL { URL(string: Self.otherOrigin + pathAndQuery)! }

    /// `http://other-origin.conformance.in-memory`: the same endpoints under another origin.
    static let otherOrigin = "http://other-origin.conformance.in-memory"

    /// The URL of `misbehaviour` on the in-memory server.
    public func url(_ misbehaviour: Misbehaviour) -> URL { url("/misbehave/" + misbehaviour.rawValue) }

    /// An in-memory transport that answers for this host, following redirects as `redirects` says and giving up
    /// on the unaccepting URL after `connectTimeout`.
    public func makeTransport(redirects: RedirectPolicy = .default, connectTimeout: Duration = .seconds(10))
        -> InMemoryTransport
    {
        let transport = InMemoryTransport(timeSource: SystemTimeSource(), redirects: redirects)
        let endpoints = endpoints
        let refused = refusedURL.host
        let unresolvable = unresolvableURL.host
        let unaccepting = unacceptingURL.host
        transport.respond { request in
            if request.url.host == unaccepting { return .failure(.timedOut, delay: connectTimeout) }
            if request.url.scheme == "https" { return .failure(.tlsFailure) }  // this host speaks plain HTTP only
            if request.url.host == refused { return .failure(.connectionRefused) }
            if request.url.host == unresolvable { return .failure(.hostNotFound) }
            let url = request.url.absoluteString
            guard let base = [Self.baseURL, Self.otherOrigin].first(where: { url.hasPrefix($0) }) else { return nil }
            let target = String(url.dropFirst(base.count))
            switch endpoints.plan(
                method: request.method.rawValue, target: target.isEmpty ? "/" : target, headers: request.headers,
                body: request.body ?? Data())
            {
            case .respond(let reply):
                var headers = reply.headers
                // As the loopback server frames it: in chunks with no length, or with a Content-Length.
                if reply.chunkSize != nil {
                    headers["Transfer-Encoding"] = "chunked"
                } else if headers["Content-Length"] == nil {
                    headers["Content-Length"] = "\(reply.body.count)"
                }
                return InMemoryTransport.Reply(
                    status: reply.status, headers: headers, body: reply.body, delay: reply.delay)
            case .misbehave(.garbage):
                return .failure(.malformedResponse)
            case .misbehave(.closeMidBody), .misbehave(.closeMidChunk):
                return .failure(.connectionFailed)
            case .misbehave(.noAnswer), .misbehave(.headThenSilence):
                return .never
            }
        }
        return transport
    }
}
