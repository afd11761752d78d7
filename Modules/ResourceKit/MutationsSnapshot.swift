public import MutationOutboxKit
public import TransportKit

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a service's mutations are doing: those pending in this process, and the durable ones the server refused for
/// good. ``Service/mutations`` hands out the latest.
public struct MutationsSnapshot: Sendable, Equatable {
    /// One pending mutation.
    public struct Mutation: Sendable, Equatable, Identifiable {
        /// Where a pending mutation stands.
        public enum Phase: Sendable, Equatable {
            /// A durable mutation waiting for the one before it in its lane.
            case waiting
            /// Being sent.
            case sending
            /// A durable mutation waiting to be tried again after `failures` transient failures in a row.
            case retrying(failures: Int)
        }

        /// Its idempotency key (or, with none sent, a key of its own).
        public let id: String
        /// The method.
        public let method: HTTPMethod
        /// The resource's URL.
        public let url: String
        /// Whether it is in the outbox.
        public let isDurable: Bool
        /// When it was made (or resumed).
        public let began: Date
        /// Where it stands.
        public internal(set) var phase: Phase
    }

    /// The mutations pending in this process, in the order they were made.
    public internal(set) var pending: [Mutation]
    /// The durable mutations the server refused for good, as the outbox keeps them (see `Service.failedMutations()`):
    /// those read by `resumeMutations()` and those refused since, until `clearFailedMutations()`.
    public internal(set) var failed: [OutboxEntry]

    /// Nothing pending, nothing failed.
    public static let empty = MutationsSnapshot(pending: [], failed: [])
}
