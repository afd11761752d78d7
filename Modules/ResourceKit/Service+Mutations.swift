import Logging
public import MutationOutboxKit
public import PersistenceKit
import TetherConcurrency

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A service's mutations: where durable ones are kept, which optimistic updates survive a restart, and what the
/// server refused.
extension Service {
    /// How the service's mutations are kept and sent: the outbox, whether they are durable by default, their order,
    /// the waits between attempts (see ``MutationConfiguration``).
    public var mutationConfiguration: MutationConfiguration {
        get { core.durable.configuration }
        set { core.durable.configuration = newValue }
    }

    /// Defines the optimistic update `name` stands for (``OptimisticUpdate/named(_:)``): `make` turns a mutation's
    /// body into the update it shows. A durable mutation stores the name; resumed after a restart, it shows its layer
    /// again. Define every name before ``resumeMutations()``. `make` may throw for a body it cannot read: a new
    /// mutation then fails at once, a resumed one is sent without its layer, saying so in the log. Names beginning
    /// with `@` are Tether's own.
    public func defineOptimisticUpdate(
        _ name: String, _ make: @escaping @Sendable (_ body: Data?) throws -> OptimisticUpdate
    ) {
        core.durable.state.withLock { $0.definitions[name] = make }
    }

    /// Sends the mutations the outbox holds pending — left by a process that ended before the server accepted them —
    /// in the order they were made, each with its optimistic layer shown again at once, as their `mutate` did.
    /// Those this process sends already are skipped, so calling it twice sends nothing twice; those another live
    /// process holds are left to it (the outbox's `takePending()`). Returns their requests.
    ///
    /// ```swift
    /// service.mutationConfiguration.outbox = try SQLiteMutationOutbox(path: path)
    /// service.defineOptimisticUpdate("append-item") { body in … }
    /// try service.resumeMutations()
    /// ```
    ///
    /// - Throws: `PersistenceError` when the outbox cannot be read; nothing is sent then.
    @discardableResult
    public func resumeMutations() throws(PersistenceError) -> [Request] {
        guard let outbox = mutationConfiguration.outbox else { return [] }
        let entries = try outbox.takePending()
        let failed = try outbox.failedEntries()
        core.tracker.change { $0.failed = failed }
        var resumed: [Request] = []
        for entry in entries {
            if let request = resource(absoluteURL: entry.url).resumeMutation(entry) { resumed.append(request) }
        }
        core.logging.stateChanges.debug(
            "resumed mutations from the outbox", metadata: ["count": "\(resumed.count)"])
        return resumed
    }

    /// The durable mutations the server refused for good (a `4xx` other than `408` and `429`, or a response the
    /// pipeline rejected), in the order they were made, each with its `failure`. They were rolled back;
    /// they stay here until ``clearFailedMutations()``, for the application to show or to make again.
    public func failedMutations() async throws(PersistenceError) -> [OutboxEntry] {
        guard let outbox = mutationConfiguration.outbox else { return [] }
        return try await core.durable.onQueue { () -> Result<[OutboxEntry], PersistenceError> in
            Result { () throws(PersistenceError) in try outbox.failedEntries() }
        }.get()
    }

    /// The durable mutations not yet accepted by the server, in the order they were made: those this process sends
    /// or waits to send, and any left by another.
    public func pendingMutations() async throws(PersistenceError) -> [OutboxEntry] {
        guard let outbox = mutationConfiguration.outbox else { return [] }
        return try await core.durable.onQueue { () -> Result<[OutboxEntry], PersistenceError> in
            Result { () throws(PersistenceError) in try outbox.pendingEntries() }
        }.get()
    }

    /// Empties the failed list.
    public func clearFailedMutations() async throws(PersistenceError) {
        guard let outbox = mutationConfiguration.outbox else { return }
        try await core.durable.onQueue { () -> Result<Void, PersistenceError> in
            Result { () throws(PersistenceError) in try outbox.removeFailedEntries() }
        }.get()
        core.tracker.change { $0.failed = [] }
    }

    /// The service's mutations as they change: the current ``MutationsSnapshot`` at once, then the latest after each
    /// change — pending ones made, sent, waiting to be tried again, settled; durable ones refused. A reader that
    /// falls behind gets the newest, never a queue of them. Ends when the iterating task is cancelled.
    ///
    /// ```swift
    /// for await snapshot in service.mutations {
    ///     badge.count = snapshot.pending.count
    ///     banner.isShown = !snapshot.failed.isEmpty
    /// }
    /// ```
    public var mutations: MutationSnapshots {
        MutationSnapshots(tracker: core.tracker)
    }
}
