public import Foundation
import TransportKit

/// Where the conformance suite sends its requests: a well-behaved HTTP server, a misbehaving peer, a refused port
/// and a host that does not resolve — and the recorder of what the server side saw.
public protocol ConformanceHost: Sendable {
    /// The URL of `pathAndQuery` on the well-behaved server (see ``ConformanceEndpoints`` for the paths).
    func url(_ pathAndQuery: String) -> URL
    /// The URL of `pathAndQuery` on the same well-behaved server, reached as another origin (another host name):
    /// what a cross-origin redirect leads to.
    func otherOriginURL(_ pathAndQuery: String) -> URL
    /// A URL on which the peer misbehaves as `misbehaviour` says.
    func url(_ misbehaviour: Misbehaviour) -> URL
    /// A URL whose port refuses connections.
    var refusedURL: URL { get }
    /// A URL whose host name does not resolve.
    var unresolvableURL: URL { get }
    /// A URL whose port never completes a connection (see ``UnacceptingListener``).
    var unacceptingURL: URL { get }
    /// What the server side saw.
    var recorder: ConformanceRecorder { get }
    /// Whether ``recorder`` sees real connections open and close (false for an in-memory host).
    var observesConnections: Bool { get }
}

/// The real host: a ``LoopbackHTTPServer`` and a ``MisbehavingPeer`` on 127.0.0.1, started for one use and stopped
/// after it.
public struct LoopbackConformanceHost: ConformanceHost {
    /// The HTTP server.
    public let server: LoopbackHTTPServer
    /// The misbehaving peer.
    public let peer: MisbehavingPeer
    /// A loopback port that refuses connections, held for the host's lifetime.
    public let refusing: RefusingPort
    /// The refusing port's URL.
    public var refusedURL: URL { refusing.url }
    /// The listener that never accepts.
    public let unaccepting: UnacceptingListener
    /// The unaccepting listener's URL.
    public var unacceptingURL: URL { unaccepting.url }
    /// `http://tether-conformance.invalid/` (the `.invalid` top-level domain never resolves, RFC 2606).
    public let unresolvableURL = URL(string: "http://tether-conformance.invalid/echo")!
    /// What the server and the peer saw.
    public var recorder: ConformanceRecorder { server.endpoints.recorder }
    /// True: the peer counts real connections.
    public var observesConnections: Bool { true }

    /// Starts a server and a peer sharing one recorder, runs `body`, and stops both whatever `body` does.
    public static func with<Result: Sendable>(_ body: (LoopbackConformanceHost) async throws -> Result) async throws
        -> Result
    {
        let endpoints = ConformanceEndpoints()
        let server = try await LoopbackHTTPServer.start(endpoints: endpoints)
        let peer: MisbehavingPeer
        do { peer = try await MisbehavingPeer.start(endpoints: endpoints) } catch {
            await server.stop()
            throw error
        }
        let host: LoopbackConformanceHost
        do {
            host = LoopbackConformanceHost(
                server: server, peer: peer, refusing: try RefusingPort(), unaccepting: try UnacceptingListener())
        } catch {
            await peer.stop()
            await server.stop()
            throw error
        }
        do {
            let result = try await body(host)
            await peer.stop()
            await server.stop()
            return result
        } catch {
            await peer.stop()
            await server.stop()
            throw error
        }
    }

    /// The URL of `pathAndQuery` on the HTTP server.
    public func url(_ pathAndQuery: String) -> URL { server.url(pathAndQuery) }

    /// The URL of `pathAndQuery` on the HTTP server as `localhost` rather than `127.0.0.1`: another origin.
    public func otherOriginURL(_ pathAndQuery: String) -> URL {
        var components = URLComponents(url: server.url(pathAndQuery), resolvingAgainstBaseURL: false)!
        components.host = "localhost"
        return components.url!
    }

    /// The misbehaving peer's URL for `misbehaviour`.
    public func url(_ misbehaviour: Misbehaviour) -> URL { peer.url(misbehaviour) }
}
