import AsyncHTTPClient
import AsyncHTTPClientAdapter
import InMemoryLogging
import Logging
import ServiceLifecycle
import Testing
import TetherTestingTraits
import TransportConformance
import TransportKit

@Suite("AsyncHTTPClientTransport", .needsProcessorTime, .timeLimit(minutes: 3))
struct AsyncHTTPClientTransportTests {
    @Test("Run as a Service, an owned client is shut down when the group shuts down; later sends fail")
    func serviceLifecycle() async throws {
        try await LoopbackHTTPServer.with { server in
            let transport = AsyncHTTPClientTransport()
            let group = ServiceGroup(
                services: [transport], logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                let response = try await transport.send(TransportRequest(url: server.url("/echo")))
                #expect(response.status == 200)
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            await #expect { try await transport.send(TransportRequest(url: server.url("/echo"))) } throws: { error in
                guard let error = error as? TransportError else { return false }
                return error.kind == .other && error.message.contains("shut down")
            }
            try await transport.shutdown()  // once more: nothing happens
        }
    }

    @Test("A shared client is used, never shut down by the transport")
    func sharedClient() async throws {
        try await LoopbackHTTPServer.with { server in
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
            let transport = AsyncHTTPClientTransport(client: client)
            #expect(!transport.ownsClient)
            #expect(try await transport.send(TransportRequest(url: server.url("/echo"))).status == 200)
            try await transport.shutdown()
            #expect(try await transport.send(TransportRequest(url: server.url("/echo"))).status == 200, "still open")
            try await client.shutdown()
        }
    }

    @Test("An owned client dropped without shutdown() is shut down by the transport, with a warning — not leaked")
    func droppedWithoutShutdown() async throws {
        let handler = InMemoryLogHandler()
        try await LoopbackHTTPServer.with { server in
            do {
                let transport = AsyncHTTPClientTransport(
                    configuration: .init(logger: Logger(label: "test", factory: { _ in handler })))
                let response = try await transport.send(TransportRequest(url: server.url("/echo")))
                #expect(response.status == 200)
            }
        }
        #expect(
            handler.entries.contains { $0.level == .warning && $0.message.description.contains("without shutdown()") })
    }
}
