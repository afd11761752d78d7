public import Foundation
import NIOCore
import NIOPosix
import TransportKit

/// A raw TCP listener on 127.0.0.1 that speaks broken HTTP on purpose — garbage bytes, a body cut short, a silent
/// peer — so that a transport's failure paths meet real sockets. The path of each request, `/misbehave/{name}`,
/// picks the ``Misbehaviour``; the ``ConformanceRecorder`` counts connections opened and closed, which is how the
/// cancellation check sees a transport really abandon a connection.
public final class MisbehavingPeer: Sendable {
    /// `http://127.0.0.1:{port}`.
    public let baseURL: URL
    /// The endpoints whose recorder counts connections.
    public let endpoints: ConformanceEndpoints
    private let channel: any Channel

    private init(channel: any Channel, port: Int, endpoints: ConformanceEndpoints) {
        self.channel = channel
        self.baseURL = URL(string: "http://127.0.0.1:\(port)")!
        self.endpoints = endpoints
    }

    /// The URL that makes the peer misbehave as `misbehaviour` says.
    public func url(_ misbehaviour: Misbehaviour) -> URL {
        URL(string: baseURL.absoluteString + "/misbehave/" + misbehaviour.rawValue)!
    }

    /// Starts listening.
    public static func start(endpoints: ConformanceEndpoints = ConformanceEndpoints()) async throws -> MisbehavingPeer {
        let recorder = endpoints.recorder
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        MisbehavingHandler(endpoints: endpoints, recorder: recorder))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw ConformanceServerError(message: "the misbehaving peer bound no port")
        }
        return MisbehavingPeer(channel: channel, port: port, endpoints: endpoints)
    }

    /// Stops listening. Connections still open are left to their clients' timeouts.
    public func stop() async {
        try? await channel.close()
    }
}

/// Reads one request head, then breaks the protocol as its path asks.
final class MisbehavingHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let endpoints: ConformanceEndpoints
    private let recorder: ConformanceRecorder
    private var received = ByteBuffer()
    private var answered = false

    init(endpoints: ConformanceEndpoints, recorder: ConformanceRecorder) {
        self.endpoints = endpoints
        self.recorder = recorder
    }

    func channelActive(context: ChannelHandlerContext) {
        recorder.recordOpened()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        recorder.recordClosed()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var chunk = unwrapInboundIn(data)
        received.writeBuffer(&chunk)
        guard !answered, let head = received.getString(at: received.readerIndex, length: received.readableBytes),
            head.contains("\r\n\r\n")
        else { return }
        answered = true
        let requestLine = head.prefix { $0 != "\r" }.split(separator: " ")
        let target = requestLine.count > 1 ? String(requestLine[1]) : "/"
        let method = requestLine.first.map(String.init) ?? "GET"
        guard
            case .misbehave(let misbehaviour) = endpoints.plan(
                method: method, target: target, headers: [:], body: Data())
        else {
            write(
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", context: context,
                thenClose: true)
            return
        }
        switch misbehaviour {
        case .garbage:
            write(
                "SSH-2.0-not-http \u{01}\u{02}\u{03} this is not an HTTP response\r\n\r\n\u{00}\u{ff}",
                context: context, thenClose: true)
        case .closeMidBody:
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n"
            write(head + String(repeating: "x", count: 1000), context: context, thenClose: true)
        case .closeMidChunk:
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            let chunk = "3e8\r\n" + String(repeating: "x", count: 1000) + "\r\n"
            write(head + chunk + "3e8\r\n" + String(repeating: "y", count: 10), context: context, thenClose: true)
        case .noAnswer:
            break
        case .headThenSilence:
            write(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n", context: context,
                thenClose: false)
        }
    }

    private func write(_ text: String, context: ChannelHandlerContext, thenClose: Bool) {
        let buffer = context.channel.allocator.buffer(string: text)
        let written = context.writeAndFlush(wrapOutboundOut(buffer))
        if thenClose {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
