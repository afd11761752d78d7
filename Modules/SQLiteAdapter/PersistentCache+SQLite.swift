public import EntityCacheKit
public import PersistenceKit

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
