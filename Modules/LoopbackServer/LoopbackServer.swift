package import Hummingbird
package import Logging
import ServiceLifecycle

/// A Hummingbird HTTP/1.1 server on 127.0.0.1 and an ephemeral port: loopback only, so nothing off the machine can
/// reach it. The sample's demo API and the conformance suite's HTTP server are both one.
///
/// It runs in a service group of its own, and ``stop()`` shuts it down gracefully: it stops accepting, and every
/// connection already accepted is served (for up to a second) or closed in order. (Cancelling the server's task
/// instead can drop a connection accepted at that moment, which SwiftNIO traps on.)
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
    private let group: ServiceGroup
    private let task: Task<Void, any Error>

    private init(port: Int, group: ServiceGroup, task: Task<Void, any Error>) {
        self.port = port
        self.group = group
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
        // No signals: the process's own service group, if it has one, decides what a signal means. A response
        // still running after a second (a test's slow endpoint) is cancelled; by then nothing new is accepted.
        var configuration = ServiceGroupConfiguration(services: [application], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(1)
        let group = ServiceGroup(configuration: configuration)
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            await group.triggerGracefulShutdown()
            throw LoopbackServerError(serverName: serverName, outcome: "\(await task.result)")
        }
        return LoopbackServer(port: port, group: group, task: task)
    }

    /// Shuts the server down gracefully and waits until it has closed its socket.
    package func stop() async {
        await group.triggerGracefulShutdown()
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
