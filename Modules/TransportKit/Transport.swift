/// The role of anything that carries a request to a server and brings back its response.
///
/// One method, so that an adapter is small and a test double is smaller: `URLSessionTransport`,
/// `AsyncHTTPClientTransport` and ``InMemoryTransport`` all conform.
///
/// The contract:
/// - Any HTTP status is a response, not an error: 404 and 500 come back as a ``TransportResponse``.
/// - Failures to exchange (no connection, timeout, bad URL) throw a ``TransportError`` naming the request.
/// - Cancelling the calling task cancels the exchange: `send` then throws a ``TransportError`` of kind
///   ``TransportError/Kind-swift.struct/cancelled`` (or `CancellationError`) promptly, and sends nothing further.
/// - `send` may be called from any task, concurrently.
/// - With a progress handler, the transport reports the bytes it has sent and received as the exchange goes on
///   (``TransportProgress``), at least once after the last body byte arrives, and never after `send` returns.
///   A transport that cannot tell keeps the default, which reports nothing.
public protocol Transport: Sendable {
    /// Sends `request` and returns the server's response.
    func send(_ request: TransportRequest) async throws -> TransportResponse

    /// Sends `request`, reporting to `progress` as bytes go out and come in, and returns the server's response.
    func send(_ request: TransportRequest, progress: TransportProgressHandler?) async throws -> TransportResponse
}

extension Transport {
    /// Sends `request` without reporting progress: for transports that cannot tell.
    public func send(_ request: TransportRequest, progress: TransportProgressHandler?) async throws
        -> TransportResponse
    {
        try await send(request)
    }
}
