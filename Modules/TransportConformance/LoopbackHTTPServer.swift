public import Foundation
import HTTPTypes
import Hummingbird
public import Logging
import LoopbackServer
import NIOCore
import TransportKit

/// A real HTTP/1.1 server (Hummingbird) on 127.0.0.1 and an ephemeral port, answering with
/// ``ConformanceEndpoints``. Start it inside a test, stop it after:
///
/// ```swift
/// let server = try await LoopbackHTTPServer.start()
/// defer { Task { await server.stop() } }        // or: try await LoopbackHTTPServer.with { server in … }
/// let url = server.url("/echo")
/// ```
///
/// It binds to the loopback interface only; nothing off the machine can reach it.
public final class LoopbackHTTPServer: Sendable {
    /// `http://127.0.0.1:{port}`.
    public let baseURL: URL
    /// The port the server listens on.
    public let port: Int
    /// The endpoints it serves (and their recorder).
    public let endpoints: ConformanceEndpoints
    private let server: LoopbackServer

    private init(server: LoopbackServer, endpoints: ConformanceEndpoints) {
        self.server = server
        self.port = server.port
        self.baseURL = URL(string: server.baseURL)!
        self.endpoints = endpoints
    }

    /// The absolute URL of `pathAndQuery` on this server.
    public func url(_ pathAndQuery: String) -> URL {
        URL(string: baseURL.absoluteString + pathAndQuery)!
    }

    /// Starts a server answering with `endpoints`; returns once it accepts connections.
    public static func start(
        endpoints: ConformanceEndpoints = ConformanceEndpoints(),
        logger: Logger = Logger(label: "tether.conformance.http-server", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> LoopbackHTTPServer {
        do {
            let server = try await LoopbackServer.start(serverName: "tether-conformance", logger: logger) { request in
                try await respond(to: request, endpoints: endpoints)
            }
            return LoopbackHTTPServer(server: server, endpoints: endpoints)
        } catch {
            throw ConformanceServerError(message: error.description)
        }
    }

    /// Starts a server, runs `body` with it and stops it, whatever `body` does.
    public static func with<Result: Sendable>(
        endpoints: ConformanceEndpoints = ConformanceEndpoints(),
        _ body: (LoopbackHTTPServer) async throws -> Result
    ) async throws -> Result {
        let server = try await start(endpoints: endpoints)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Stops the server and waits until it has closed its socket.
    public func stop() async {
        await server.stop()
    }

    private static func respond(to request: Request, endpoints: ConformanceEndpoints) async throws -> Response {
        let body = try await request.body.collect(upTo: 256 << 20)
        var headers = HTTPHeaders()
        for field in request.headers { headers.add(name: field.name.rawName, value: field.value) }
        let plan = endpoints.plan(
            method: request.method.rawValue, target: request.uri.description, headers: headers,
            body: Data(body.readableBytesView))
        guard case .respond(let reply) = plan else {
            return Response(
                status: .notImplemented,
                body: ResponseBody(byteBuffer: ByteBuffer(string: "misbehaviour needs the misbehaving peer")))
        }
        if reply.delay > .zero { try await Task.sleep(for: reply.delay) }
        var fields = HTTPFields()
        for field in reply.headers {
            if let name = HTTPField.Name(field.name) { fields.append(HTTPField(name: name, value: field.value)) }
        }
        let status = HTTPResponse.Status(code: reply.status)
        guard let chunkSize = reply.chunkSize else {
            return Response(
                status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: reply.body)))
        }
        let payload = reply.body
        return Response(
            status: status, headers: fields,
            body: ResponseBody { writer in
                var offset = 0
                while offset < payload.count {
                    let end = min(offset + chunkSize, payload.count)
                    try await writer.write(ByteBuffer(bytes: payload[offset..<end]))
                    offset = end
                }
                try await writer.finish(nil)
            })
    }
}

/// A conformance server could not start.
public struct ConformanceServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public var message: String
    /// The message.
    public var description: String { message }
}
