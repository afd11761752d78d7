public import Foundation

/// A TCP socket on 127.0.0.1, bound to a port the kernel picks: the port stays taken while the socket is open.
enum LoopbackSocket {
    /// Binds a new socket, and listens with `backlog` if given; returns it with its address. Throws if the kernel
    /// refuses a socket call.
    static func bind(listeningWithBacklog backlog: Int32?) throws -> (descriptor: Int32, address: sockaddr_in) {
        let descriptor = socket(AF_INET, streamType, 0)
        guard descriptor >= 0 else { throw ConformanceServerError(message: "socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Foundation.bind(descriptor, $0, length) == 0 && (backlog.map { listen(descriptor, $0) == 0 } ?? true)
                    && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(descriptor)
            throw ConformanceServerError(message: "could not bind a loopback socket: errno \(code)")
        }
        return (descriptor, address)
    }

    /// `http://127.0.0.1:{port}/echo` for a bound socket's address.
    static func echoURL(_ address: sockaddr_in) -> URL {
        URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/echo")!
    }

    #if canImport(Glibc) || canImport(Musl)
    static let streamType = Int32(SOCK_STREAM.rawValue)
    #else
    static let streamType = SOCK_STREAM
    #endif
}

/// A loopback port that refuses every connection, and that nothing else can take while this is open: a socket bound
/// to it that never listens, so the kernel answers each connection attempt with a reset. (A port bound and released
/// at once could be taken by another test's server in between, which then answered instead of refusing.)
public final class RefusingPort: Sendable {
    /// `http://127.0.0.1:{port}/echo`.
    public let url: URL
    private let descriptor: Int32

    /// Binds the port. Throws if the kernel refuses a socket call.
    public init() throws {
        let (descriptor, address) = try LoopbackSocket.bind(listeningWithBacklog: nil)
        self.descriptor = descriptor
        url = LoopbackSocket.echoURL(address)
    }

    deinit {
        close(descriptor)
    }
}
