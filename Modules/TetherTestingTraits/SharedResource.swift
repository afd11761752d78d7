/// Something every test in the process shares that one heavy test can hold up for seconds, such as
/// FoundationNetworking's one work queue: tests that hold it up take it in turns (``Testing/Trait/holdsUp(_:)``).
public struct SharedResource: Hashable, Sendable, CustomStringConvertible {
    /// What the resource is, for people.
    public let description: String

    /// A resource named `description`; two resources are the same when their names are.
    public init(_ description: String) {
        self.description = description
    }

    /// The one queue on which FoundationNetworking runs every `URLSession` in the process: libcurl inflates a body
    /// on it, and a test's handlers run on it.
    public static let foundationNetworkingQueue = SharedResource("FoundationNetworking's work queue")
}
