public import EntityCacheKit
public import LiveQueryKit
public import PersistenceKit

extension Store {
    /// A live-query store on a SQLite file (created 0600 if it does not exist; see ``SQLiteDocumentStore``).
    ///
    /// ```swift
    /// let store = try Store.sqlite(path: "\(dataDirectory)/documents.sqlite")
    /// ```
    ///
    /// - Throws: `PersistenceError` naming the file (a missing or read-only directory, a damaged file).
    public static func sqlite(
        path: String, configuration: SQLiteConfiguration = SQLiteConfiguration(),
        liveQueries: Store.Configuration = Store.Configuration()
    ) throws(PersistenceKit.PersistenceError) -> Store {
        Store(
            try SQLiteDocumentStore(path: path, configuration: configuration), configuration: liveQueries,
            logger: configuration.logger)
    }
}

extension PersistentCache {
    /// A persistent resource cache on a SQLite file (a damaged file is moved aside; see ``SQLiteEntityCache``).
    ///
    /// ```swift
    /// service.configure { $0.persistentCache = try? .sqlite(path: "\(cachesDirectory)/resources.sqlite") }
    /// ```
    ///
    /// - Throws: `PersistenceError` when the file cannot be opened or created at all.
    public static func sqlite(
        path: String, configuration: SQLiteConfiguration = SQLiteConfiguration()
    ) throws(PersistenceKit.PersistenceError) -> PersistentCache {
        PersistentCache(try SQLiteEntityCache(path: path, configuration: configuration), logger: configuration.logger)
    }
}
