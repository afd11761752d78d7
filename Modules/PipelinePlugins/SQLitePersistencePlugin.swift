import PersistenceKit
import Logging
public import PipelineKit
import SQLiteAdapter

/// `type: sqlite` — the document store and the entity cache in SQLite files (GRDB, WAL, created 0600), closed by
/// the pipeline's `ServiceGroup` when it stops. Relative paths are resolved against the configuration file's
/// folder; `TETHER_STORE_PATH` and `TETHER_CACHE_PATH` override them.
///
/// ```yaml
/// persistence:
///   type: sqlite
///   store_path: tether-store.sqlite     # live queries' documents
///   cache_path: tether-cache.sqlite     # resources' persistent cache; null for none
///   busy_timeout: 5s
///   max_readers: 5
///   integrity_check_on_open: true
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
        /// How long a write waits for another process's lock.
        public var busyTimeout: Duration
        /// How many reads may run at once.
        public var maxReaders: Int
        /// Whether opening runs `PRAGMA quick_check` (reads the whole file).
        public var checksIntegrityOnOpen: Bool

        /// The keys.
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case storePath = "store_path", cachePath = "cache_path", busyTimeout = "busy_timeout"
            case maxReaders = "max_readers", checksIntegrityOnOpen = "integrity_check_on_open"
        }

        /// `tether-store.sqlite` and `tether-cache.sqlite`, with SQLiteAdapter's defaults.
        public init() {
            storePath = "tether-store.sqlite"
            cachePath = "tether-cache.sqlite"
            let defaults = SQLiteConfiguration()
            busyTimeout = defaults.busyTimeout
            maxReaders = defaults.maximumReaderCount
            checksIntegrityOnOpen = defaults.checksIntegrityOnOpen
        }

        /// Decodes the settings.
        public init(from decoder: any Decoder) throws {
            self.init()
            let settings = try decoder.settings(CodingKeys.self)
            storePath = try settings.decode(.storePath, default: storePath, where: { !$0.isEmpty }, "must name a file")
            if settings.isNull(.cachePath) {
                cachePath = nil
            } else {
                cachePath = try settings.decode(.cachePath, default: cachePath ?? "", where: { !$0.isEmpty }, "must name a file (or be null for no cache)")
            }
            busyTimeout = try settings.duration(.busyTimeout, default: busyTimeout, allowsZero: true)
            maxReaders = try settings.decode(.maxReaders, default: maxReaders, where: { $0 >= 1 }, "must be at least 1")
            checksIntegrityOnOpen = try settings.decode(.checksIntegrityOnOpen, default: checksIntegrityOnOpen)
            if let cachePath, cachePath == storePath {
                try settings.invalid(.cachePath, "the cache needs a file of its own (both are '\(storePath)')")
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
        if let cachePath, DatabaseFile.isSameFile(storePath, cachePath) {
            throw SameFile(storePath: storePath, cachePath: cachePath)
        }
        let store = try SQLiteDocumentStore(path: storePath, configuration: configuration)
        let cache: SQLiteEntityCache?
        do {
            cache = try cachePath.map { try SQLiteEntityCache(path: $0, configuration: configuration) }
        } catch {
            try? store.close()
            throw error
        }
        let closer = ShutdownAction("SQLite files") {
            try store.close()
        }
        let summary = "SQLite: store \(storePath)" + (cachePath.map { ", cache \($0)" } ?? ", no cache")
        return PersistenceComponent(documents: store, entityCache: cache, lifecycle: closer, summary: summary)
    }
}

/// `store_path` and `cache_path` name one file (the same path written two ways, a symbolic or a hard link).
struct SameFile: Error, CustomStringConvertible {
    let storePath: String
    let cachePath: String

    var description: String {
        "cache_path (\(cachePath)) is the same file as store_path (\(storePath)); the cache needs a file of its own"
    }
}
