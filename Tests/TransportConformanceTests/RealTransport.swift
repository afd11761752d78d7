import AsyncHTTPClientAdapter
import Logging
import TransportKit
import URLSessionAdapter

/// The real transports, for tests that run the same scenario on each.
enum RealTransport: String, CaseIterable, Sendable, CustomStringConvertible {
    case urlSession = "URLSessionTransport"
    case asyncHTTPClient = "AsyncHTTPClientTransport"

    var description: String { rawValue }

    func make(
        logger: Logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
        maxResponseSize: Int = 256 << 20
    ) -> any Transport {
        switch self {
        case .urlSession:
            URLSessionTransport(configuration: .init(maxResponseSize: maxResponseSize, logger: logger))
        case .asyncHTTPClient:
            AsyncHTTPClientTransport(configuration: .init(maxResponseSize: maxResponseSize, logger: logger))
        }
    }

    /// Makes a transport, runs `body` with it, and shuts it down after.
    func with<Result>(
        logger: Logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }),
        maxResponseSize: Int = 256 << 20,
        _ body: (any Transport) async throws -> Result
    ) async throws -> Result {
        let transport = make(logger: logger, maxResponseSize: maxResponseSize)
        do {
            let result = try await body(transport)
            try? await (transport as? AsyncHTTPClientTransport)?.shutdown()
            return result
        } catch {
            try? await (transport as? AsyncHTTPClientTransport)?.shutdown()
            throw error
        }
    }
}
