public import Foundation
import TransportKit

/// A loopback port whose accept queue is full: the listener never accepts, and filler connections occupy its
/// queue, so the kernel drops every further connection attempt and a client's connect hangs — until its connect
/// timeout. Real sockets, no routing tricks (off-machine "unroutable" addresses are often answered by proxies).
public final class UnacceptingListener: Sendable {
    /// `http://127.0.0.1:{port}/echo`.
    public let url: URL
    private let descriptors: [Int32]

    /// Listens with a backlog of 0 and fills the queue. Throws if the kernel refuses a socket call.
    public init() throws {
        let (listener, bound) = try LoopbackSocket.bind(listeningWithBacklog: 0)
        var address = bound
        var fillers: [Int32] = []
        for _ in 0..<4 {
            let filler = socket(AF_INET, LoopbackSocket.streamType, 0)
            guard filler >= 0 else { continue }
            _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL) | O_NONBLOCK)
            _ = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            fillers.append(filler)
        }
        descriptors = [listener] + fillers
        url = LoopbackSocket.echoURL(address)
    }

    deinit {
        for descriptor in descriptors { close(descriptor) }
    }
}
