public import TetherClock
import TetherConcurrency

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A transport that answers from a script instead of a network: routes, scripted replies (status, headers, body,
/// delay, failure), a log of every request, and delays on an injected clock, so that what depends on a transport
/// is tested deterministically.
///
/// ```swift
/// let clock = ManualTimeSource()
/// let transport = InMemoryTransport(timeSource: clock)
/// transport.route(.get, "https://api.example.com/items", reply: .json(#"[{"id": 1}]"#, headers: ["ETag": "\"v1\""]))
/// transport.enqueue(.get, "https://api.example.com/items", .status(304))   // next request only, then the route
/// transport.route(.get, "https://api.example.com/slow", reply: .text("late", delay: .seconds(5)))
/// ```
///
/// A request takes the first reply queued for it with ``enqueue(_:_:_:)``, else its route's reply (a route for a
/// method before one for any method), else the ``respond(with:)`` handler's, else fails with
/// `TransportError.Kind-swift.struct.noRoute`. URLs are matched on their absolute string, query included.
///
/// It keeps the promises of a real transport, and passes `TransportConformance`'s suite: a reply later than the
/// request's timeout fails with `TransportError.Kind-swift.struct.timedOut` when the timeout elapses on the clock,
/// cancellation fails with `TransportError.Kind-swift.struct.cancelled`, and redirects are followed as its
/// `RedirectPolicy` says (each hop is a request of its own in the log).
public final class InMemoryTransport: Transport {
    /// A scripted reply.
    public struct Reply: Sendable {
        /// The status code.
        public var status: Int
        /// The header fields.
        public var headers: HTTPHeaders
        /// The body.
        public var body: Data
        /// How long, on the transport's clock, before the reply (or failure) arrives.
        public var delay: Duration
        /// When set, the request fails with a `TransportError` of this kind instead of replying.
        public var failure: TransportError.Kind?
        /// In how many pieces the body arrives (progress is reported after each), and how long, on the clock, each
        /// piece after the first takes. One piece by default: the body arrives with the head.
        public var pieces = 1
        /// The time between two pieces of the body.
        public var pieceInterval: Duration = .zero

        /// Makes a reply.
        public init(
            status: Int = 200, headers: HTTPHeaders = [:], body: Data = Data(), delay: Duration = .zero,
            failure: TransportError.Kind? = nil
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
            self.failure = failure
        }

        /// A reply with this status and no body.
        public static func status(_ status: Int, headers: HTTPHeaders = [:], delay: Duration = .zero) -> Reply {
            Reply(status: status, headers: headers, delay: delay)
        }

        /// A `text/plain; charset=utf-8` reply.
        public static func text(
            _ text: String, status: Int = 200, headers: HTTPHeaders = [:], delay: Duration = .zero
        ) -> Reply {
            var headers = headers
            if headers["Content-Type"] == nil { headers["Content-Type"] = "text/plain; charset=utf-8" }
            return Reply(status: status, headers: headers, body: Data(text.utf8), delay: delay)
        }

        /// An `application/json` reply whose body is `json`, as given.
        public static func json(
            _ json: String, status: Int = 200, headers: HTTPHeaders = [:], delay: Duration = .zero
        ) -> Reply {
            var headers = headers
            if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
            return Reply(status: status, headers: headers, body: Data(json.utf8), delay: delay)
        }

        /// A failure to exchange, after `delay`.
        public static func failure(_ kind: TransportError.Kind, delay: Duration = .zero) -> Reply {
            Reply(delay: delay, failure: kind)
        }

        /// This reply with its body arriving in `pieces` pieces, `interval` apart on the clock — progress is reported
        /// after each. The timeout still counts to the head only.
        public func arriving(in pieces: Int, every interval: Duration) -> Reply {
            var reply = self
            reply.pieces = max(1, pieces)
            reply.pieceInterval = interval
            return reply
        }

        /// No reply ever: the request ends only by its timeout or by cancellation.
        public static let never = Reply(delay: .seconds(1_000_000_000))
    }

    struct RouteKey: Hashable {
        let method: HTTPMethod?
        let url: String
    }

    struct State {
        var routes: [RouteKey: Reply] = [:]
        var queued: [RouteKey: [Reply]] = [:]
        var log: [TransportRequest] = []
        var inFlight = 0
        var responder: (@Sendable (TransportRequest) -> Reply?)?
    }

    private let state = LockedValue(State())
    private let timeSource: any TimeSource
    /// Which redirects are followed.
    public let redirects: RedirectPolicy

    /// Makes a transport with no routes whose delays and timeouts run on `timeSource`, following redirects as
    /// `redirects` says.
    public init(timeSource: any TimeSource = SystemTimeSource(), redirects: RedirectPolicy = .default) {
        self.timeSource = timeSource
        self.redirects = redirects
    }

    /// Answers every request that no queued reply or route answers with what `responder` returns (nil: no route).
    /// Replaces any previous handler.
    public func respond(with responder: @escaping @Sendable (TransportRequest) -> Reply?) {
        state.withLock { $0.responder = responder }
    }

    /// Answers every `method` request to `url` (every method, when `method` is nil) with `reply`, replacing the
    /// route's previous reply.
    public func route(_ method: HTTPMethod?, _ url: String, reply: Reply) {
        state.withLock { $0.routes[RouteKey(method: method, url: url)] = reply }
    }

    /// Answers every request to `url`, whatever its method, with `reply` (see ``route(_:_:reply:)``).
    public func route(_ url: String, reply: Reply) {
        route(nil, url, reply: reply)
    }

    /// Queues `replies` for the next `method` requests to `url` (any method, when nil), one each, ahead of the
    /// route.
    public func enqueue(_ method: HTTPMethod?, _ url: String, _ replies: Reply...) {
        state.withLock { $0.queued[RouteKey(method: method, url: url), default: []].append(contentsOf: replies) }
    }

    /// Every request sent so far, in order.
    public var requests: [TransportRequest] {
        state.withLock { $0.log }
    }

    /// How many requests were sent to `url` (with `method`, when given).
    public func requestCount(to url: String, method: HTTPMethod? = nil) -> Int {
        state.withLock { state in
            state.log.count { $0.url.absoluteString == url && (method == nil || $0.method == method) }
        }
    }

    /// How many requests are between being sent and being answered.
    public var inFlightCount: Int {
        state.withLock { $0.inFlight }
    }

    /// Forgets the request log (routes and queued replies stay).
    public func clearLog() {
        state.withLock { $0.log.removeAll() }
    }

    /// Answers `request` from the script, after the reply's delay on the transport's clock, following redirects.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try await send(request, progress: nil)
    }

    /// Answers `request` as ``send(_:)`` does, reporting progress: the whole body sent at once, then the
    /// response's body as its pieces arrive (``Reply/arriving(in:every:)``).
    public func send(_ request: TransportRequest, progress: TransportProgressHandler?) async throws
        -> TransportResponse
    {
        try await redirects.send(request) { try await exchange($0, progress: progress) }
    }

    /// As on a wire: `Accept-Encoding: identity` unless the request names its own, a reply coded in a way the
    /// request did not accept refused at its head, and one coded as it asked decoded (``TransportKit/ContentCoding``).
    private func exchange(_ asked: TransportRequest, progress: TransportProgressHandler?) async throws
        -> TransportResponse
    {
        var request = asked
        request.headers = ContentCoding.identityUnlessAsked(asked.headers)
        let (reply, responder) = state.withLock { state -> (Reply?, (@Sendable (TransportRequest) -> Reply?)?) in
            state.log.append(request)
            state.inFlight += 1
            let url = request.url.absoluteString
            for key in [RouteKey(method: request.method, url: url), RouteKey(method: nil, url: url)] {
                if var replies = state.queued[key], !replies.isEmpty {
                    let reply = replies.removeFirst()
                    state.queued[key] = replies.isEmpty ? nil : replies
                    return (reply, nil)
                }
            }
            let routed =
                state.routes[RouteKey(method: request.method, url: url)]
                ?? state.routes[RouteKey(method: nil, url: url)]
            return (routed, routed == nil ? state.responder : nil)
        }
        defer { state.withLock { $0.inFlight -= 1 } }
        guard let reply = reply ?? responder?(request) else {
            throw TransportError(.noRoute, request: request, message: "no route or queued reply for this request")
        }
        let toSend = Int64(request.body?.count ?? 0)
        progress?(TransportProgress(bytesSent: toSend, bytesToSend: toSend))
        let timesOut = reply.delay > request.timeout
        do {
            let wait = timesOut ? request.timeout : reply.delay
            if wait > .zero { try await timeSource.sleep(for: wait) }
            try Task.checkCancellation()
            if let progress, reply.failure == nil, !timesOut {
                try await deliver(reply, sending: toSend, to: progress)
            }
        } catch {
            throw TransportError(
                .cancelled, request: request, message: "cancelled before the reply arrived", cause: error)
        }
        if timesOut {
            throw TransportError(.timedOut, request: request, message: "no reply within \(request.timeout)")
        }
        if let failure = reply.failure {
            throw TransportError(failure, request: request, message: "scripted failure: \(failure)")
        }
        if let refusal = ContentCoding.refusal(of: reply.headers, to: asked) { throw refusal }
        return try ContentCoding.decoded(
            TransportResponse(status: reply.status, headers: reply.headers, body: reply.body), for: request,
            limit: TransportResponse.defaultMaxSize)
    }

    /// Reports the reply's body arriving piece by piece, `pieceInterval` apart.
    private func deliver(_ reply: Reply, sending sent: Int64, to progress: TransportProgressHandler) async throws {
        let total = Int64(reply.body.count)
        // Its length is known unless the reply is framed in chunks, as a server would send one.
        let chunked = reply.headers["Transfer-Encoding"]?.lowercased().contains("chunked") == true
        let stated = chunked ? nil : reply.headers["Content-Length"].flatMap { Int64($0) } ?? total
        for piece in 1...reply.pieces {
            if piece > 1, reply.pieceInterval > .zero { try await timeSource.sleep(for: reply.pieceInterval) }
            try Task.checkCancellation()
            progress(
                TransportProgress(
                    bytesSent: sent, bytesToSend: sent, bytesReceived: total * Int64(piece) / Int64(reply.pieces),
                    bytesToReceive: stated, hasResponse: true))
        }
    }
}
