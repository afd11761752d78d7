public import Logging
import TetherClock
public import TransportKit

// URLSessionConfiguration, in the initializer, lives in FoundationNetworking on Linux and in Foundation elsewhere.
#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// A `Transport` on Foundation's `URLSession` (`FoundationNetworking` on Linux): no dependency beyond the
/// toolchain, TLS through the platform's own stack.
///
/// ```swift
/// let transport = URLSessionTransport()                                       // defaults
/// let strict = URLSessionTransport(configuration: .init(connectTimeout: .seconds(3), redirects: .never))
/// let service = Service(baseURL: "https://api.example.com", transport: strict.retrying(.default))
/// ```
///
/// Each transport owns one `URLSession`, ephemeral and without a cache or cookie store of its own, so that a 304
/// reaches ResourceKit as a 304 and nothing is remembered between requests that ResourceKit does not know about.
/// The session is invalidated when the transport is deinitialized, on the transport's queue for calls into the
/// session: the deinit never waits. No call from the transport waits for FoundationNetworking's own queue on the
/// caller's thread, and a cancelled or timed-out request returns at once, whatever that queue is doing.
///
/// Timeouts: the request's `TransportRequest.timeout` bounds the whole exchange. URLSession has no separate
/// connect timeout; ``Configuration/connectTimeout`` is its idle timeout, which bounds connection set-up and every
/// silence after it.
public final class URLSessionTransport: Transport {
    /// How a ``URLSessionTransport`` behaves.
    public struct Configuration: Sendable {
        /// The longest wait for a connection, and for each next byte once connected (URLSession's idle timeout).
        public var connectTimeout: Duration
        /// Which redirects are followed.
        public var redirects: RedirectPolicy
        /// The largest response body accepted; a larger one fails with
        /// `TransportError.Kind-swift.struct.responseTooLarge` as soon as it is known to be larger.
        public var maxResponseSize: Int
        /// How many connections to one host may be open at once.
        public var maxConnectionsPerHost: Int
        /// Where requests, responses and failures are logged (`debug`, headers at `trace`), credentials redacted.
        public var logger: Logger

        /// Makes a configuration; every parameter has a default.
        public init(
            connectTimeout: Duration = .seconds(10), redirects: RedirectPolicy = .default,
            maxResponseSize: Int = TransportResponse.defaultMaxSize, maxConnectionsPerHost: Int = 8,
            logger: Logger = Logger(label: "tether.transport.urlsession")
        ) {
            self.connectTimeout = connectTimeout
            self.redirects = redirects
            self.maxResponseSize = maxResponseSize
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.logger = logger
        }
    }

    /// The configuration the transport was made with.
    public let configuration: Configuration
    private let session: URLSession
    private let delegate: SessionDelegate
    /// Where every call into the session that waits for FoundationNetworking's work queue runs — making, resuming and
    /// cancelling a task, invalidating the session — never on the caller's thread. Every session's work queue targets
    /// one queue the whole process shares (FoundationNetworking of Swift 6.3), so any session's work — inflating a
    /// large body, a big transfer's progress — holds up every call into every session, for seconds on a loaded
    /// machine. A caller on one of Swift concurrency's threads, of which there are as many as cores, would hold its
    /// thread as long: caught with both of a two-core machine's threads waiting in `dataTask(with:)`, every task in
    /// the process stalled. Serial, so that a task is resumed before it is cancelled.
    private let sessionCalls = DispatchQueue(label: "tether.transport.urlsession.calls")

    /// Makes a transport with its own `URLSession`, made from a copy of `sessionConfiguration` — where proxies, TLS
    /// settings, extra headers or protocol classes (a stub `URLProtocol` in an app's own tests) come from — with the
    /// transport's rules laid over it: no URL cache and no cookies, the idle timeout and the connections per host from
    /// `configuration`.
    public init(
        configuration: Configuration = Configuration(),
        sessionConfiguration base: URLSessionConfiguration = .ephemeral
    ) {
        self.configuration = configuration
        // A copy: the caller's object stays as it was.
        let sessionConfiguration = base.copy() as? URLSessionConfiguration ?? .ephemeral
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.timeoutIntervalForRequest = max(configuration.connectTimeout.timeInterval.rounded(.up), 1)
        sessionConfiguration.timeoutIntervalForResource = 7 * 24 * 3600
        sessionConfiguration.httpMaximumConnectionsPerHost = max(configuration.maxConnectionsPerHost, 1)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "tether.transport.urlsession.delegate"
        delegate = SessionDelegate(redirects: configuration.redirects, maxResponseSize: configuration.maxResponseSize)
        session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        let session = session
        sessionCalls.async { session.invalidateAndCancel() }
    }

    /// Sends `request` through the session.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await send(request, progress: nil)
    }

    /// Sends `request` as ``send(_:)`` does, reporting progress from the session's delegate callbacks: body bytes
    /// sent, the response's expected length, and its body as it arrives.
    public func send(_ request: TransportRequest, progress: TransportProgressHandler?) async throws
        -> TransportResponse
    {
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            request.url.host?.isEmpty == false
        else {
            throw TransportError(
                .invalidURL, request: request, message: "only http and https URLs with a host can be sent")
        }
        let logger = configuration.logger
        TransportLog.logSending(request, to: logger)
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let response = try await exchange(request, progress: progress)
            TransportLog.logReceived(response, to: request, after: clock.now - start, logger: logger)
            return response
        } catch let error as TransportError {
            TransportLog.logFailed(error, to: logger)
            throw error
        }
    }

    private func exchange(_ request: TransportRequest, progress: TransportProgressHandler?) async throws
        -> TransportResponse
    {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        // FoundationNetworking truncates this to whole seconds (0.5 would time out at once), so it carries only the
        // connect/idle timeout, rounded up; the exchange's own timer enforces the request's timeout exactly.
        urlRequest.timeoutInterval = max(configuration.connectTimeout.timeInterval.rounded(.up), 1)
        for field in ContentCoding.identityUnlessAsked(request.headers) {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        urlRequest.httpBody = request.body

        let exchange = URLSessionExchange(request: request, progress: progress, sessionCalls: sessionCalls)
        let (session, delegate, sessionCalls, prepared) = (session, delegate, sessionCalls, urlRequest)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard exchange.begin(continuation, timeout: request.timeout) else { return }
                sessionCalls.async {
                    // Ended while it waited for its turn (cancelled, timed out): no task to make.
                    guard !exchange.hasEnded else { return }
                    delegate.start(exchange, on: session.dataTask(with: prepared))
                }
            }
        } onCancel: {
            exchange.end(.cancelled)
        }
    }
}
