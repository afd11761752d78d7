import Logging
public import PipelineKit
import SQLiteAdapter
import ServiceLifecycle

/// `type: sqlite` — the document store, the entity cache and the mutation outbox in SQLite files (GRDB, WAL, created
/// 0600), closed by
/// the pipeline's `ServiceGroup` when it stops. Relative paths are resolved against the configuration file's
/// folder; `TETHER_STORE_PATH` and `TETHER_CACHE_PATH` override them.
///
/// ```yaml
/// persistence:
///   type: sqlite
///   store_path: tether-store.sqlite     # live queries' documents
///   cache_path: tether-cache.sqlite     # resources' persistent cache; null for none
///   outbox_path: tether-outbox.sqlite   # durable mutations; null for none
///   busy_timeout: 5s
///   max_readers: 5
///   integrity_check_on_open: true
///   follow_other_processes: false       # true when other processes write the store too
///   follow_interval: 50ms               # how often their commits are looked for
/// ```
public struct SQLitePersistencePlugin: PipelinePlugin {
    /// "sqlite".
    public let type = "sqlite"

    /// The settings.
    public struct Settings: Decodable, Sendable {
        /// The document store's file.
        public var storePath: String
        /// The entity cache's file; nil for no persistent cache.
        public var cachePath: String?
        /// The mutation outbox's file; nil for no outbox.
        public var outboxPath: String?
        /// How long a write waits for another process's lock.
        public var busyTimeout: Duration
        /// How many reads may run at once.
        public var maxReaders: Int
        /// Whether opening runs `PRAGMA quick_check` (reads the whole file).
        public var checksIntegrityOnOpen: Bool
        /// Whether the pipeline follows the store's change log, so that live queries hear other processes' writes
        /// (`SQLiteDocumentStore.followOtherProcesses(checkingEvery:)`, run in the pipeline's service group).
        public var followsOtherProcesses: Bool
        /// How often the change log is read for other processes' commits.
        public var followInterval: Duration

        /// The keys.
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case storePath = "store_path"
            case cachePath = "cache_path"
            case outboxPath = "outbox_path"
            case busyTimeout = "busy_timeout"
            case maxReaders = "max_readers"
            case checksIntegrityOnOpen = "integrity_check_on_open"
            case followsOtherProcesses = "follow_other_processes"
            case followInterval = "follow_interval"
        }

        /// `tether-store.sqlite` and `tether-cache.sqlite`, with SQLiteAdapter's defaults.
        public init() {
            storePath = "tether-store.sqlite"
            cachePath = "tether-cache.sqlite"
            outboxPath = "tether-outbox.sqlite"
            let defaults = SQLiteConfiguration()
            busyTimeout = defaults.busyTimeout
            maxReaders = defaults.maximumReaderCount
            checksIntegrityOnOpen = defaults.checksIntegrityOnOpen
            followsOtherProcesses = false
            followInterval = .milliseconds(50)
        }

        /// Decodes the settings.
        public init(from decoder: any Decoder) throws {
            self.init()
            let settings = try decoder.settings(CodingKeys.self)
            storePath = try settings.decode(.storePath, default: storePath, where: { !$0.isEmpty }, "must name a file")
            if settings.isNull(.cachePath) {
                cachePath = nil
            } else {
                cachePath = try settings.decode(
                    .cachePath, default: cachePath ?? "", where: { !$0.isEmpty },
                    "must name a file (or be null for no cache)")
            }
            if settings.isNull(.outboxPath) {
                outboxPath = nil
            } else {
                outboxPath = try settings.decode(
                    .outboxPath, default: outboxPath ?? "", where: { !$0.isEmpty },
                    "must name a file (or be null for no outbox)")
            }
            busyTimeout = try settings.duration(.busyTimeout, default: busyTimeout, allowsZero: true)
            maxReaders = try settings.decode(.maxReaders, default: maxReaders, where: { $0 >= 1 }, "must be at least 1")
            checksIntegrityOnOpen = try settings.decode(.checksIntegrityOnOpen, default: checksIntegrityOnOpen)
            followsOtherProcesses = try settings.decode(.followsOtherProcesses, default: followsOtherProcesses)
            followInterval = try settings.duration(.followInterval, default: followInterval)
            if let cachePath, cachePath == storePath {
                try settings.invalid(.cachePath, "the cache needs a file of its own (both are '\(storePath)')")
            }
            if let outboxPath, outboxPath == storePath || outboxPath == cachePath {
                try settings.invalid(.outboxPath, "the outbox needs a file of its own ('\(outboxPath)' is taken)")
            }
        }
    }

    /// Makes the plugin.
    public init() {}

    /// The default files and settings.
    public var defaultSettings: Settings { Settings() }

    /// Opens the files; a file that cannot be opened (missing folder, damaged store) throws, naming it.
    public func make(_ settings: Settings, context: AssemblyContext) throws -> PersistenceComponent {
        var configuration = SQLiteConfiguration()
        configuration.busyTimeout = settings.busyTimeout
        configuration.maximumReaderCount = settings.maxReaders
        configuration.checksIntegrityOnOpen = settings.checksIntegrityOnOpen
        var logger = context.logger
        logger[metadataKey: "part"] = "persistence.sqlite"
        configuration.logger = logger
        let storePath = context.resolve(settings.storePath)
        let cachePath = settings.cachePath.map(context.resolve)
        let outboxPath = settings.outboxPath.map(context.resolve)
        if let cachePath, DatabaseFile.isSameFile(storePath, cachePath) {
            throw SameFile(key: "cache_path", path: cachePath, other: "store_path", otherPath: storePath)
        }
        if let outboxPath {
            for (key, other) in [("store_path", storePath), ("cache_path", cachePath)] {
                if let other, DatabaseFile.isSameFile(outboxPath, other) {
                    throw SameFile(key: "outbox_path", path: outboxPath, other: key, otherPath: other)
                }
            }
        }
        let store = try SQLiteDocumentStore(path: storePath, configuration: configuration)
        let cache: SQLiteEntityCache?
        let outbox: SQLiteMutationOutbox?
        do {
            cache = try cachePath.map { try SQLiteEntityCache(path: $0, configuration: configuration) }
            outbox = try outboxPath.map { try SQLiteMutationOutbox(path: $0, configuration: configuration) }
        } catch {
            try? store.close()
            throw error
        }
        let lifecycle = SQLiteFilesService(
            store: store, outbox: outbox, following: settings.followsOtherProcesses ? settings.followInterval : nil)
        let summary =
            "SQLite: store \(storePath)" + (settings.followsOtherProcesses ? " (following other processes)" : "")
            + (cachePath.map { ", cache \($0)" } ?? ", no cache")
            + (outboxPath.map { ", outbox \($0)" } ?? ", no outbox")
        return PersistenceComponent(
            documents: store, entityCache: cache, mutationOutbox: outbox, lifecycle: lifecycle, summary: summary,
            shutdownBegins: { store.stopWaitingForLocks() })
    }
}

/// Two of `store_path`, `cache_path` and `outbox_path` name one file (the same path written two ways, a symbolic or
/// a hard link).
struct SameFile: Error, CustomStringConvertible {
    let key: String
    let path: String
    let other: String
    let otherPath: String

    var description: String {
        "\(key) (\(path)) is the same file as \(other) (\(otherPath)); each needs a file of its own"
    }
}

/// The SQLite files in the pipeline's service group: follows the store's change log while the group runs (when
/// asked), and closes the files when it stops.
struct SQLiteFilesService: ServiceLifecycle.Service, CustomStringConvertible {
    let store: SQLiteDocumentStore
    /// Closed with the store: what it holds is let go of, for the next process.
    let outbox: SQLiteMutationOutbox?
    /// How often to read the change log; nil when other processes' commits are not followed.
    let following: Duration?

    var description: String { "SQLite files" + (following == nil ? "" : ", following other processes") }

    func run() async throws {
        var failure: (any Error)?
        if let interval = following {
            let store = store
            do {
                try await cancelWhenGracefulShutdown { try await store.followOtherProcesses(checkingEvery: interval) }
            } catch is CancellationError {
                // The group is shutting down.
            } catch {
                failure = error  // the file can no longer be read: the group stops, the files still close
            }
        } else {
            try? await gracefulShutdown()
        }
        try? outbox?.close()
        try store.close()
        if let failure { throw failure }
    }
}
