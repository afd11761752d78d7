import Foundation
public import LiveQueryKit
import PersistenceKit
public import ResourceKit
import TetherConcurrency
import TetherJSON

/// A resource mirrored into a collection of a `Store` (LiveQueryKit): every new data of the resource — a network
/// load, a restore from the persistent cache, a local override, a mutation's optimistic layer and its rollback — is
/// written in one transaction, so that live queries over the collection see remote data, offline too.
///
/// ```swift
/// let mirror = try service.resource("/stores/abc/items").mirror(
///     into: store.collection("items"), id: "id", scope: "store_id == 'abc'")
/// let cheap = try store.collection("items").find("store_id == 'abc' && price < 10").sort("name")
///     .observeLocal { documents, _ in render(documents) }
/// ```
///
/// Each write, in one transaction:
/// - upserts every document of the response by its id (an unchanged document writes nothing, and wakes no query);
/// - when the response is a list, removes the documents within the mirror's **scope** that the list does not hold
///   (a mirror with no scope owns the whole collection). Two mirrors with different scopes never remove each other's
///   documents; a document two resources reach (a list and a detail) is one document, which both update;
/// - writes the mirror's ``MirrorState`` (when the data was received, its ETag, the last error).
///
/// Server data (a load or a cache restore) older than what the mirror last wrote is not written: when two processes
/// refresh one mirror at once, the later response wins by the resource's timestamp, not by who commits last. A 304
/// writes nothing, unless the state records a failure since the last sync: then it writes the state alone, without
/// the error. A response that cannot be mirrored (``MirrorError``) writes none of its documents; the collection
/// keeps what the last good one left, and the error goes to ``lastError`` and the state.
///
/// The mirror owns its observer of the resource: it mirrors until `stop()` or until it is released. It keeps the
/// resource alive meanwhile. Writes never pile up: while one is in progress, only the newest data waits.
public final class ResourceMirror: Sendable {
    /// The mirror's name: its state's `_id` in ``MirrorState/collection``.
    public let name: String
    /// The resource mirrored.
    public let resource: Resource
    /// The collection written.
    public let collection: StoreCollection
    /// Which documents of the collection are the mirror's: a query (`store_id == 'abc'`), or nil for all of them.
    public let scope: String?
    let shape: MirrorDocuments.Shape
    private let storage = LockedValue(Storage())

    private struct Storage: Sendable {
        var writer = MirrorWriterState<Work, CheckedContinuation<Void, Never>>()
        var lastError: (any Error)?
        var lastSyncCommit: UInt64?
        var completedWrites = 0
        /// Whether the state in the store holds a failure of the resource's load that this mirror recorded after its
        /// last sync: one a 304 answers.
        var failureRecorded = false
        /// Whether the resource's data is a response the mirror refused: a 304 confirms the refusal.
        var dataRefused = false
    }

    /// What the writer writes: data, the resource's failure, or the server's confirmation (a 304) of data written.
    enum Work: Sendable {
        case data(Entity, NewDataSource)
        case failure(String, at: Date)
        case confirmed
    }

    init(
        resource: Resource, collection: StoreCollection, idField: String, scope: String?, path: String?,
        name: String?
    ) throws(MirrorError) {
        self.resource = resource
        self.collection = collection
        self.scope = scope
        self.shape = MirrorDocuments.Shape(path: path, idField: idField)
        self.name = name ?? "\(collection.name) <- \(resource.urlString)"
        guard !shape.idField.isEmpty else {
            throw MirrorError(.invalidID, "the id field is empty", url: resource.urlString, path: shape.pathText)
        }
        if let scope {
            do {
                _ = try collection.find(scope).compiled()
            } catch let error as QueryError {
                throw MirrorError(
                    .invalidScope, error.description, url: resource.urlString, path: shape.pathText)
            } catch {
                throw MirrorError(.invalidScope, "\(error)", url: resource.urlString, path: shape.pathText)
            }
        }
    }

    /// Starts observing: what the resource holds already is written at once, then every change.
    func start(loadingIfNeeded: Bool) {
        resource.addObserver(owner: self) { [weak self] resource, event in
            self?.resourceChanged(resource, event)
        }
        if let entity = resource.latestData { offer(.data(entity, .cache)) }
        if loadingIfNeeded { resource.loadIfNeeded() }
    }

    /// Stops mirroring: no change of the resource after this is written (a write in progress finishes). What is
    /// written stays. From a thread that may wait; in async code, use `await stop()`.
    public func stop() {
        resource.removeObservers(ownedBy: self)
    }

    /// Stops mirroring (see `stop()`), suspending rather than blocking while the mirror's observer finishes a call.
    public func stop() async {
        await resource.removeObservers(ownedBy: self)
    }

    /// The mirror's state in the store, to read or observe (see ``MirrorState``).
    public var state: PendingIDQuery {
        collection.store.collection(MirrorState.collection).findByID(name)
    }

    /// Why the last write failed (a ``MirrorError``, or the store's `PersistenceError`); nil once one succeeds.
    public var lastError: (any Error)? {
        storage.withLock { $0.lastError }
    }

    /// The store's last commit when the last sync had been written: that sync's commit or a later one. Nil before
    /// the first sync.
    public var lastSyncCommit: UInt64? {
        storage.withLock { $0.lastSyncCommit }
    }

    /// How many writes have finished — data written, data refused, failures recorded: tests wait for a count.
    package var completedWrites: Int {
        storage.withLock { $0.completedWrites }
    }

    /// Returns once every change offered so far has been written (or refused): the live queries can then be waited
    /// for with `store.waitForLiveQueries()`.
    public func waitForWrites() async {
        await withCheckedContinuation { continuation in
            let waiting = storage.withLock { $0.writer.wait(continuation) }
            if !waiting { continuation.resume() }
        }
    }

    private func resourceChanged(_ resource: Resource, _ event: ResourceEvent) {
        switch event {
        case .newData(.wipe), .observerAdded, .requested, .requestCancelled:
            // A wipe forgets the resource's data, not the store's: the mirror keeps the last-known state.
            return
        case .notModified:
            // The server confirms the data: nothing to write, unless the state still says that the last load
            // failed. Then the state is written without the error — no document — so a screen that showed
            // "offline" shows the data as current; or, when the data confirmed was refused, the refusal again.
            let (failed, refused) = storage.withLock { ($0.failureRecorded, $0.dataRefused) }
            guard failed else { return }
            if refused, let entity = resource.latestData {
                offer(.data(entity, .network))
            } else {
                offer(.confirmed)
            }
        case .newData(let source):
            guard let entity = resource.latestData else { return }
            offer(.data(entity, source))
        case .error:
            guard let error = resource.latestError else { return }
            offer(.failure(error.description, at: error.timestamp))
        }
    }

    private func offer(_ work: Work) {
        let action = storage.withLock { storage in
            storage.writer.offer(work) { waiting in
                // Data waiting to be written clears the error itself; a confirmation adds nothing to it.
                if case .confirmed = work, case .data = waiting { true } else { false }
            }
        }
        guard case .startWriting(let first) = action else { return }
        Task { await self.writeAll(startingWith: first) }
    }

    private func writeAll(startingWith first: Work) async {
        var work = first
        while true {
            await write(work)
            let action = storage.withLock {
                $0.completedWrites += 1
                return $0.writer.finished()
            }
            switch action {
            case .write(let next):
                work = next
            case .stop(let waiters):
                for waiter in waiters { waiter.resume() }
                return
            }
        }
    }

    private func write(_ work: Work) async {
        switch work {
        case .data(let entity, let source):
            do {
                guard let content = entity.typedContent(as: JSONValue.self) else {
                    throw MirrorError(
                        .notJSON, "the content is \(type(of: entity.content)) (\(entity.contentType)), not JSON",
                        url: resource.urlString, path: shape.pathText)
                }
                let documents = try MirrorDocuments(content, shape: shape, url: resource.urlString)
                let isServerData = source == .network || source == .cache
                let written = try await sync(documents, entity: entity, onlyIfNewer: isServerData)
                storage.withLock {
                    $0.lastError = nil
                    $0.dataRefused = false
                    if written {
                        $0.lastSyncCommit = collection.store.lastCommit
                        $0.failureRecorded = false
                    }
                }
            } catch {
                // Nothing of the response was written; the state says why, as of when the response came.
                storage.withLock {
                    $0.lastError = error
                    $0.dataRefused = true
                    $0.failureRecorded = false
                }
                try? await recordFailure("\(error)", at: entity.timestamp)
            }
        case .failure(let message, let date):
            do {
                try await recordFailure(message, at: date)
                storage.withLock { $0.failureRecorded = true }
            } catch {
                storage.withLock { $0.lastError = error }
            }
        case .confirmed:
            do {
                try await clearFailure()
                storage.withLock { $0.failureRecorded = false }
            } catch {
                storage.withLock { $0.lastError = error }
            }
        }
    }

    /// Writes `documents` and the state in one transaction; false when newer data was written already.
    private func sync(_ documents: MirrorDocuments, entity: Entity, onlyIfNewer: Bool) async throws -> Bool {
        let (name, scope, url, path) = (name, scope, resource.urlString, shape.pathText)
        let collectionName = collection.name
        return try await collection.store.write { transaction in
            let states = transaction.collection(MirrorState.collection)
            let previous = try states.findByID(name).flatMap(MirrorState.init)
            if onlyIfNewer, let syncedAt = previous?.syncedAt, syncedAt > entity.timestamp { return false }
            let target = transaction.collection(collectionName)
            // What the scope holds now: each document's canonical text, by id. A list removes what it does not
            // hold; a document whose text is the stored one is not written again, since the store would change
            // nothing for it. Comparing texts spares parsing every stored document.
            var stored: [String: String] = [:]
            if documents.isList {
                let held = try target.canonicalTexts(matching: scope)
                stored.reserveCapacity(held.count)
                for (id, text) in held { stored[id] = text }
                let listed = Set(documents.entries.map(\.id))
                for (id, _) in held where !listed.contains(id) {
                    try target.remove(id: id)
                }
            }
            for (index, entry) in documents.entries.enumerated()
            where stored[entry.id].map({ $0 != entry.canonicalText }) ?? true {
                do {
                    try target.upsert(entry.value)
                } catch let error as PersistenceError where error.kind == .invalidDocument {
                    throw MirrorError(
                        .unstorableDocument, "the store refuses the document: \(error.message)", url: url,
                        path: path, element: documents.isList ? index : nil, id: entry.id)
                }
            }
            let state = MirrorState(
                name: name, url: url, mirroredCollection: collectionName, scope: scope, syncedAt: entity.timestamp,
                etag: entity.etag, documentCount: documents.entries.count)
            try states.upsert(state.document)
            return true
        }
    }

    /// Writes the state without its error, keeping everything else: the server has confirmed the data.
    private func clearFailure() async throws {
        let name = name
        try await collection.store.write { transaction in
            let states = transaction.collection(MirrorState.collection)
            guard var state = try states.findByID(name).flatMap(MirrorState.init), state.error != nil else { return }
            state.error = nil
            state.errorAt = nil
            try states.upsert(state.document)
        }
    }

    /// Records a failure in the state, keeping what the last sync wrote.
    private func recordFailure(_ message: String, at date: Date) async throws {
        let (name, scope, url, collectionName) = (name, scope, resource.urlString, collection.name)
        try await collection.store.write { transaction in
            let states = transaction.collection(MirrorState.collection)
            var state =
                try states.findByID(name).flatMap(MirrorState.init)
                ?? MirrorState(name: name, url: url, mirroredCollection: collectionName, scope: scope)
            state.error = message
            state.errorAt = date
            try states.upsert(state.document)
        }
    }
}

extension Resource {
    /// Mirrors this resource into `collection` (see ``ResourceMirror``) until the mirror is stopped or released.
    ///
    /// - Parameters:
    ///   - collection: the collection to write.
    ///   - id: the field (a dotted path) that identifies a document; its value, a non-empty string, is the
    ///     document's `_id`.
    ///   - scope: which documents of the collection are this mirror's (a query); nil for the whole collection.
    ///   - path: where the documents are in the response (`items`, `data.items`); nil for the response itself, an
    ///     array of documents or one document.
    ///   - name: the mirror's name, its state's `_id`; by default the collection's name and the resource's URL.
    ///   - loadingIfNeeded: whether to call `loadIfNeeded()` once the mirror observes.
    /// - Throws: ``MirrorError`` for a scope that is not a query (``MirrorError/Kind/invalidScope``, with the column)
    ///   or an empty id field.
    public func mirror(
        into collection: StoreCollection, id: String = "_id", scope: String? = nil, path: String? = nil,
        name: String? = nil, loadingIfNeeded: Bool = true
    ) throws(MirrorError) -> ResourceMirror {
        let mirror = try ResourceMirror(
            resource: self, collection: collection, idField: id, scope: scope, path: path, name: name)
        mirror.start(loadingIfNeeded: loadingIfNeeded)
        return mirror
    }
}
