package import Hummingbird
package import Logging

/// A Hummingbird HTTP/1.1 server on 127.0.0.1 and an ephemeral port: loopback only, so nothing off the machine can
/// reach it. The sample's demo API and the conformance suite's HTTP server are both one.
///
/// ```swift
/// let server = try await LoopbackServer.start(serverName: "tether-demo", logger: logger) { request in
///     Response(status: .ok)
/// }
/// defer { Task { await server.stop() } }
/// print(server.baseURL)                          // http://127.0.0.1:41237
/// ```
package final class LoopbackServer: Sendable {
    /// The port the server listens on.
    package let port: Int
    private let task: Task<Void, any Error>

    private init(port: Int, task: Task<Void, any Error>) {
        self.port = port
        self.task = task
    }

    /// `http://127.0.0.1:{port}`.
    package var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts a server that answers every request with `respond`; returns once it accepts connections.
    ///
    /// - Throws: ``LoopbackServerError`` when the server stops before it has bound a port.
    package static func start(
        serverName: String, logger: Logger,
        respond: @escaping @Sendable (Request) async throws -> Response
    ) async throws(LoopbackServerError) -> LoopbackServer {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let responder = CallbackResponder<BasicRequestContext> { request, _ in try await respond(request) }
        let application = Application(
            responder: responder,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0), serverName: serverName),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            },
            logger: logger
        )
        let task = Task { try await application.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            throw LoopbackServerError(serverName: serverName, outcome: "\(await task.result)")
        }
        return LoopbackServer(port: port, task: task)
    }

    /// Stops the server and waits until it has closed its socket.
    package func stop() async {
        task.cancel()
        _ = await task.result
    }
}

/// A loopback server stopped before it bound a port.
package struct LoopbackServerError: Error, CustomStringConvertible {
    /// The server's name (`tether-demo`, `tether-conformance`).
    package let serverName: String
    /// How its run ended, as text.
    package let outcome: String

    package var description: String { "the \(serverName) server did not start on 127.0.0.1: \(outcome)" }
}
