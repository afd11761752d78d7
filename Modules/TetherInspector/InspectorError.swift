/// Why the inspector cannot start, with what was wrong.
public struct InspectorError: Error, Sendable, Hashable, CustomStringConvertible {
    enum Reason: Sendable, Hashable {
        case nonLoopbackWithoutToken(host: String)
        case invalidPort(Int)
        case emptyToken
        case cannotListen(host: String, port: Int, detail: String)
    }

    /// What kind of problem it is: the cases can grow without breaking a `switch` of yours.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        let name: String
        /// Listening on an address other than loopback without a token.
        public static let nonLoopbackWithoutToken = Kind(name: "nonLoopbackWithoutToken")
        /// A port outside 0…65535.
        public static let invalidPort = Kind(name: "invalidPort")
        /// A token that is the empty string.
        public static let emptyToken = Kind(name: "emptyToken")
        /// The address could not be listened on (in use, not this machine's).
        public static let cannotListen = Kind(name: "cannotListen")
        public var description: String { name }
    }

    let reason: Reason

    init(_ reason: Reason) {
        self.reason = reason
    }

    /// The kind of problem.
    public var kind: Kind {
        switch reason {
        case .nonLoopbackWithoutToken: .nonLoopbackWithoutToken
        case .invalidPort: .invalidPort
        case .emptyToken: .emptyToken
        case .cannotListen: .cannotListen
        }
    }

    public var description: String {
        switch reason {
        case .nonLoopbackWithoutToken(let host):
            "the inspector would listen on \(host), beyond this machine, without a token: give it a token, or listen on 127.0.0.1"
        case .invalidPort(let port): "the inspector's port \(port) is not in 0…65535"
        case .emptyToken: "the inspector's token is empty: give a non-empty one, or none on loopback"
        case .cannotListen(let host, let port, let detail): "the inspector cannot listen on \(host):\(port): \(detail)"
        }
    }
}
