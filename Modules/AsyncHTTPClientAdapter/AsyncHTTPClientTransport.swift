public import AsyncHTTPClient
import Foundation
public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
public import NIOSSL
public import ServiceLifecycle
import TetherClock
import TetherConcurrency
public import TransportKit

/// A `Transport` on swift-server's AsyncHTTPClient: SwiftNIO underneath, TLS through NIOSSL, HTTP/2 where the
/// server offers it.
///
/// It shares an `HTTPClient` you already have, or owns one. An owned client must be shut down — run the transport
/// as a swift-service-lifecycle `Service` (it shuts the client down when the group does), or call ``shutdown()``:
///
/// ```swift
/// let transport = AsyncHTTPClientTransport(configuration: .init(connectTimeout: .seconds(3)))
/// let group = ServiceGroup(services: [transport, …], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()                       // or, without a group: try await transport.shutdown()
///
/// let shared = AsyncHTTPClientTransport(client: .shared)   // yours to manage; never shut down by the transport
/// ```
///
/// An owned client that is never shut down is not leaked: deinitializing the transport starts the client's shutdown
/// and logs a warning.
///
/// Redirects are followed by the transport, per ``Configuration/redirects``; an owned client is made with
/// AsyncHTTPClient's own redirects turned off. A shared client's own redirect configuration applies first — make it
/// `.disallow` to let the transport's policy decide.
public final class AsyncHTTPClientTransport: Transport, Service {
    /// How an ``AsyncHTTPClientTransport`` behaves.
    public struct Configuration: Sendable {
        /// The longest wait for a connection to be established (an owned client only).
        public var connectTimeout: Duration
        /// Which redirects are followed.
        public var redirects: RedirectPolicy
        /// The largest response body accepted; a larger one fails with
        /// `TransportError.Kind-swift.struct.responseTooLarge`.
        public var maxResponseSize: Int
        /// How many HTTP/1.1 connections to one host an owned client keeps at most (a soft limit).
        public var maxConnectionsPerHost: Int
        /// TLS settings for an owned client; nil uses NIOSSL's defaults (the system's trust roots, TLS 1.2+).
        public var tls: TLSConfiguration?
        /// Where requests, responses and failures are logged (`debug`, headers at `trace`), credentials redacted.
        public var logger: Logger

        /// Makes a configuration; every parameter has a default.
        public init(
            connectTimeout: Duration = .seconds(10), redirects: RedirectPolicy = .default,
            maxResponseSize: Int = TransportResponse.defaultMaxSize, maxConnectionsPerHost: Int = 8,
            tls: TLSConfiguration? = nil,
            logger: Logger = Logger(label: "tether.transport.async-http-client")
        ) {
            self.connectTimeout = connectTimeout
            self.redirects = redirects
            self.maxResponseSize = maxResponseSize
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.tls = tls
            self.logger = logger
        }
    }

    /// The configuration the transport was made with.
    public let configuration: Configuration
    /// The client requests go through.
    public let client: HTTPClient
    /// Whether the transport owns ``client`` and must shut it down.
    public let ownsClient: Bool
    private let isShutDown = LockedValue(false)

    /// Makes a transport that owns a new client, built from `configuration`. Shut it down with ``shutdown()`` or
    /// by running the transport in a `ServiceGroup`.
    public init(configuration: Configuration = Configuration()) {
        var clientConfiguration = HTTPClient.Configuration(
            tlsConfiguration: configuration.tls,
            redirectConfiguration: .disallow,
            timeout: HTTPClient.Configuration.Timeout(
                connect: .nanoseconds(Int64(configuration.connectTimeout.timeInterval * 1e9))),
            connectionPool: HTTPClient.Configuration.ConnectionPool(
                idleTimeout: .seconds(60),
                concurrentHTTP1ConnectionsPerHostSoftLimit: max(configuration.maxConnectionsPerHost, 1)),
            decompression: .disabled
        )
        clientConfiguration.httpVersion = .automatic
        // A refused or failed connection fails the request at once; retrying is RetryingTransport's decision.
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        self.client = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: clientConfiguration)
        self.ownsClient = true
        self.configuration = configuration
    }

    /// Makes a transport on a client you own and shut down yourself (for instance `HTTPClient.shared`). The
    /// client's own timeouts, TLS and pool settings apply; `configuration` supplies the redirect policy, the size
    /// limit and the logger. Leave the client's decompression off (AsyncHTTPClient's default): the transport
    /// decodes the codings a request asks for itself, within the size limit.
    public init(client: HTTPClient, configuration: Configuration = Configuration()) {
        self.client = client
        self.ownsClient = false
        self.configuration = configuration
    }

    deinit {
        guard ownsClient, !isShutDown.withLock({ $0 }) else { return }
        configuration.logger.warning(
            "AsyncHTTPClientTransport deinitialized without shutdown(); shutting its client down now")
        client.shutdown { _ in }
    }

    /// Shuts an owned client down, once; later calls, and calls on a transport that shares its client, do
    /// nothing. Requests sent afterwards fail.
    public func shutdown() async throws {
        guard ownsClient else { return }
        let first = isShutDown.withLock { state -> Bool in
            defer { state = true }
            return !state
        }
        if first { try await client.shutdown() }
    }

    /// Runs as a swift-service-lifecycle `Service`: waits for graceful shutdown (or cancellation), then shuts an
    /// owned client down.
    public func run() async throws {
        try? await gracefulShutdown()
        try await shutdown()
    }

    /// Sends `request` through the client, following redirects as configured.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await send(request, progress: nil)
    }

    /// Sends `request` as ``send(_:)`` does, reporting progress: the body as the client takes it, in pieces of
    /// 64 KiB, and the response's body as it arrives.
    public func send(_ request: TransportRequest, progress: TransportProgressHandler?) async throws
        -> TransportResponse
    {
        let logger = configuration.logger
        TransportLog.logSending(request, to: logger)
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = NIODeadline.now() + .nanoseconds(Int64(min(request.timeout.timeInterval, 31_536_000) * 1e9))
        do {
            let response = try await withDeadline(deadline, request: request) {
                try await self.configuration.redirects.send(request) { hop in
                    try await self.exchange(hop, deadline: deadline, progress: progress)
                }
            }
            TransportLog.logReceived(response, to: request, after: clock.now - start, logger: logger)
            return response
        } catch {
            let failure = NIOErrorMapping.transportError(
                error, request: request, maxResponseSize: configuration.maxResponseSize)
            TransportLog.logFailed(failure, to: logger)
            throw failure
        }
    }

    /// Runs `work` so that it ends at `deadline` with `timedOut`. AsyncHTTPClient's own deadline stops at the
    /// response head; a server that sends a head and then stalls would otherwise hold the request for ever.
    private func withDeadline(
        _ deadline: NIODeadline, request: TransportRequest,
        _ work: @escaping @Sendable () async throws -> TransportResponse
    ) async throws -> TransportResponse {
        let expired = LockedValue(false)
        let task = Task(operation: work)
        let timer = client.eventLoopGroup.any().scheduleTask(deadline: deadline) {
            expired.withLock { $0 = true }
            task.cancel()
        }
        defer { timer.cancel() }
        do {
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        } catch  where expired.withLock({ $0 }) {
            throw TransportError(
                .timedOut, request: request, message: "no complete response within \(request.timeout)", cause: error)
        }
    }

    private func exchange(
        _ request: TransportRequest, deadline: NIODeadline, progress: TransportProgressHandler?
    ) async throws -> TransportResponse {
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            request.url.host?.isEmpty == false
        else {
            throw TransportError(
                .invalidURL, request: request, message: "only http and https URLs with a host can be sent")
        }
        if ownsClient, isShutDown.withLock({ $0 }) {
            throw TransportError(.other, request: request, message: "the transport's client has been shut down")
        }
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = .init(rawValue: request.method.rawValue)
        for field in ContentCoding.identityUnlessAsked(request.headers) {
            outgoing.headers.add(name: field.name, value: field.value)
        }
        let counts = LockedValue(TransportProgress(bytesToSend: Int64(request.body?.count ?? 0)))
        var report: (@Sendable ((inout TransportProgress) -> Void) -> Void)?
        if let progress {
            report = { @Sendable change in
                progress(
                    counts.withLock { counts in
                        change(&counts)
                        return counts
                    })
            }
        }
        if let body = request.body {
            if let report {
                // Handed over piece by piece, so that what the client has taken is what has been sent.
                let pieces = Self.pieces(of: body, size: 64 << 10)
                let taken = LockedValue(0)
                let sequence = AsyncStream<ByteBuffer> {
                    let index = taken.withLock { taken in
                        defer { taken += 1 }
                        return taken
                    }
                    guard index < pieces.count else { return nil }
                    report { $0.bytesSent += Int64(pieces[index].readableBytes) }
                    return pieces[index]
                }
                outgoing.body = .stream(sequence, length: .known(Int64(body.count)))
            } else {
                outgoing.body = .bytes(ByteBuffer(bytes: body))
            }
        }

        let response = try await client.execute(outgoing, deadline: deadline)
        var headers = TransportKit.HTTPHeaders()
        for field in response.headers { headers.add(name: field.name, value: field.value) }
        if let refusal = ContentCoding.refusal(of: headers, to: request) { throw refusal }
        if let length = response.headers.first(name: "Content-Length").flatMap(Int.init),
            length > configuration.maxResponseSize
        {
            throw TransportError(
                .responseTooLarge, request: request,
                message: "the response body is \(length) bytes, more than \(configuration.maxResponseSize)")
        }
        guard let report else {
            let body = try await response.body.collect(upTo: configuration.maxResponseSize)
            return try ContentCoding.decoded(
                TransportResponse(
                    status: Int(response.status.code), headers: headers, body: Data(body.readableBytesView)),
                for: request, limit: configuration.maxResponseSize)
        }
        let expected = response.headers.first(name: "Content-Length").flatMap(Int64.init)
        report { counts in
            counts.hasResponse = true
            counts.bytesToReceive = expected
        }
        var body = Data()
        for try await piece in response.body {
            guard body.count + piece.readableBytes <= configuration.maxResponseSize else {
                throw TransportError(
                    .responseTooLarge, request: request,
                    message: "the response body is larger than \(configuration.maxResponseSize) bytes")
            }
            body.append(contentsOf: piece.readableBytesView)
            report { $0.bytesReceived = Int64(body.count) }
        }
        return try ContentCoding.decoded(
            TransportResponse(status: Int(response.status.code), headers: headers, body: body), for: request,
            limit: configuration.maxResponseSize)
    }

    /// `data` in buffers of at most `size` bytes.
    private static func pieces(of data: Data, size: Int) -> [ByteBuffer] {
        stride(from: 0, to: data.count, by: size).map { start in
            ByteBuffer(bytes: data[data.startIndex + start..<data.startIndex + min(start + size, data.count)])
        }
    }
}
