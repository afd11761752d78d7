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
        let listener = socket(AF_INET, Self.streamType, 0)
        guard listener >= 0 else { throw ConformanceServerError(message: "socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 0) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw ConformanceServerError(message: "could not bind an unaccepting listener: errno \(errno)")
        }
        var fillers: [Int32] = []
        for _ in 0..<4 {
            let filler = socket(AF_INET, Self.streamType, 0)
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
        url = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/echo")!
    }

    deinit {
        for descriptor in descriptors { close(descriptor) }
    }

    #if canImport(Glibc) || canImport(Musl)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    #else
    private static let streamType = SOCK_STREAM
    #endif
}
