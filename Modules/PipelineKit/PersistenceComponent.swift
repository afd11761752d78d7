public import DocumentStoreKit
public import EntityCacheKit
public import MutationOutboxKit
public import ServiceLifecycle

/// What a persistence plugin makes: the document store live queries run on, the entity cache resources survive
/// restarts with, the outbox durable mutations wait in, and the background part that closes them when the pipeline
/// stops.
public struct PersistenceComponent: PipelineComponent, Sendable {
    /// The store behind live queries.
    package var documents: any DocumentStore
    /// The cache behind resources' persistent cache; nil for none.
    package var entityCache: (any EntityCache)?
    /// Where durable mutations wait for the server; nil for none.
    package var mutationOutbox: (any MutationOutbox)?
    /// Run in the pipeline's `ServiceGroup`; closes the files when the group stops.
    package var lifecycle: (any ServiceLifecycle.Service)?
    /// Where the data lives, for logs and the sample's report ("SQLite: /path/store.sqlite").
    package var summary: String
    /// Called as the pipeline's service group begins to shut down, before the application is stopped: ends the waits
    /// that would hold the shutdown up (SQLite: a write waiting for another process's lock fails at once).
    package var shutdownBegins: (@Sendable () -> Void)?

    /// Makes a component.
    public init(
        documents: any DocumentStore, entityCache: (any EntityCache)?, mutationOutbox: (any MutationOutbox)? = nil,
        lifecycle: (any ServiceLifecycle.Service)? = nil, summary: String, shutdownBegins: (@Sendable () -> Void)? = nil
    ) {
        self.documents = documents
        self.entityCache = entityCache
        self.mutationOutbox = mutationOutbox
        self.lifecycle = lifecycle
        self.summary = summary
        self.shutdownBegins = shutdownBegins
    }
}
