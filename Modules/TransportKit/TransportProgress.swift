/// How far an exchange has got, in bytes: what a transport reports while it sends a request and receives the
/// response (see ``Transport/send(_:progress:)``).
public struct TransportProgress: Sendable, Hashable, CustomStringConvertible {
    /// Request body bytes handed to the connection so far.
    public var bytesSent: Int64
    /// The request body's size (0 without a body).
    public var bytesToSend: Int64
    /// Response body bytes received so far (after content decoding, if the transport decodes).
    public var bytesReceived: Int64
    /// The response body's size when the server said (`Content-Length`); nil until the head arrives, or when it
    /// did not say.
    public var bytesToReceive: Int64?
    /// Whether the response's head has arrived.
    public var hasResponse: Bool

    /// Makes a report.
    public init(
        bytesSent: Int64 = 0, bytesToSend: Int64 = 0, bytesReceived: Int64 = 0, bytesToReceive: Int64? = nil,
        hasResponse: Bool = false
    ) {
        self.bytesSent = bytesSent
        self.bytesToSend = bytesToSend
        self.bytesReceived = bytesReceived
        self.bytesToReceive = bytesToReceive
        self.hasResponse = hasResponse
    }

    /// The whole exchange as one fraction from 0 to 1, as Siesta estimates it: sending is the first half when
    /// there is a body, receiving the rest. A body of unknown length approaches 1 as bytes arrive, never reaching
    /// it; an empty one counts as received with the head.
    public var fractionCompleted: Double {
        let sendShare = bytesToSend > 0 ? 0.5 : 0
        let sent = bytesToSend > 0 ? min(1, Double(bytesSent) / Double(bytesToSend)) : 1
        let received: Double =
            switch bytesToReceive {
            case .some(let total) where total > 0: min(1, Double(bytesReceived) / Double(total))
            case .some: hasResponse ? 1 : 0
            case nil: bytesReceived > 0 ? 1 - 1 / (1 + Double(bytesReceived) / 65_536) : 0
            }
        return min(1, max(0, sendShare * sent + (1 - sendShare) * received))
    }

    /// `sent a/b, received c/d`.
    public var description: String {
        "sent \(bytesSent)/\(bytesToSend), received \(bytesReceived)/\(bytesToReceive.map(String.init) ?? "?")"
    }
}

/// Where a transport reports progress. Calls may come from the transport's threads; each report is complete (not
/// a delta), and counts never go down within one exchange. A redirect starts the counts of its hop afresh.
public typealias TransportProgressHandler = @Sendable (TransportProgress) -> Void
