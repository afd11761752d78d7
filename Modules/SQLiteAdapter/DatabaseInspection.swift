import Foundation
import GRDB
import PersistenceKit

/// What is at a path, found without writing a byte to it: before a `DatabasePool` opens a file (which sets WAL mode
/// and so writes its header), a read-only connection checks that it is an SQLite database, that its schema is
/// Tether's (or empty), and — when asked — that `PRAGMA quick_check` passes.
enum DatabaseInspection: Equatable {
    /// No file, or an empty one Tether made: a new database.
    case new
    /// An SQLite database with Tether's tables (or none yet), sound as far as was checked.
    case tether
    /// Not an SQLite database at all (its first 16 bytes are not SQLite's header).
    case notSQLite
    /// An SQLite database holding tables that are not Tether's: another program's.
    case foreign(tables: [String])
    /// An SQLite database with Tether's tables, damaged: its schema names them, but reading fails.
    case damaged(String)
    /// An SQLite database whose schema cannot be read at all: whose it is cannot be told.
    case unreadable(String)
    /// Something other than a regular file: a directory, a named pipe, a device, a socket (what it is, in words).
    case notAFile(String)
    /// An empty file with other permissions than the 0600 Tether makes its files with: someone else's.
    case emptyNotOurs(mode: Int)
    /// A file SQLite may not open, or not as it needs to — a read-only mount, a folder or a `-wal`/`-shm` file it may
    /// not write: nothing is known of its content, so it is neither damaged nor another program's.
    case inaccessible(readOnly: Bool, String)

    /// The header every SQLite 3 database file starts with.
    static let header = Array("SQLite format 3\0".utf8)

    /// The error for a file that must not be opened as `role` ("store", "cache"), or nil when it may be.
    func refusal(_ path: String, role: String) -> PersistenceError? {
        switch self {
        case .new, .tether:
            return nil
        case .notSQLite:
            return PersistenceError(
                .corrupt, "the file is not an SQLite database; it is left as it is (a \(role) needs a file of its own)",
                file: path)
        case .foreign(let tables):
            return PersistenceError(
                .foreignFile,
                "the file is another database (tables \(tables.prefix(5).joined(separator: ", "))), not a Tether \(role); it is left as it is — choose another path",
                file: path)
        case .damaged(let report):
            return PersistenceError(.corrupt, "the file is damaged: \(report); it is left as it is", file: path)
        case .unreadable(let reason):
            return PersistenceError(
                .corrupt, "the file cannot be read as a database (\(reason)); it is left as it is", file: path)
        case .inaccessible(let readOnly, let reason):
            return PersistenceError(
                readOnly ? .readOnly : .cannotOpen,
                "the file cannot be opened (\(reason))\(readOnly ? ": it, its folder or its -wal and -shm files cannot be written" : ""); it is left as it is",
                file: path)
        case .emptyNotOurs(let mode):
            return PersistenceError(
                .foreignFile,
                "the file is empty but not one Tether made (mode \(String(mode, radix: 8)); Tether makes its files 0600); it is left as it is — delete it, and the \(role) is made there",
                file: path)
        case .notAFile(let what):
            return PersistenceError(
                .foreignFile,
                "the path is \(what), not a file: a \(role) needs a regular file of its own; it is left as it is",
                file: path)
        }
    }

    /// Inspects `path` as a file of `schema`.
    /// What is there is told by `stat` before anything opens it: opening a named pipe to read waits for a writer, for
    /// ever, and a device is no place for a database (SQLite would create its journal beside it).
    static func inspect(_ path: String, as schema: any TetherSchema.Type, quickCheck: Bool) -> DatabaseInspection {
        if let what = nonFile(at: path) { return .notAFile(what) }
        guard let handle = FileHandle(forReadingAtPath: path) else { return .new }
        let start = (try? handle.read(upToCount: header.count)) ?? nil
        try? handle.close()
        guard let start, !start.isEmpty else {
            // Empty: one Tether made (0600, before SQLite wrote its first page — a crash in between leaves it so), or
            // someone else's, which is not ours to fill.
            if let mode = DatabaseFile.permissions(of: path), mode != 0o600 { return .emptyNotOurs(mode: mode) }
            return .new
        }
        guard Array(start) == header else { return .notSQLite }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "tether.sqlite.inspection"
        let tables: [String]
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            let applicationID: Int32
            (tables, applicationID) = try queue.read { db in
                (
                    try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"),
                    try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                )
            }
            // Another program's id — or none, and a table that is not ours: someone else's file.
            guard applicationID == schema.applicationID || (applicationID == 0 && schema.tables.isSuperset(of: tables))
            else { return .foreign(tables: tables) }
            guard quickCheck else { return .tether }
            let report = try queue.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
            return report == ["ok"]
                ? .tether : .damaged("quick_check reported \(report.prefix(3).joined(separator: "; "))")
        } catch {
            // Not allowed to open it — permissions, a read-only mount: that says nothing of the content.
            if let error = error as? DatabaseError,
                [.SQLITE_CANTOPEN, .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_AUTH].contains(error.resultCode)
            {
                return .inaccessible(readOnly: !isWritable(path), "\(error)")
            }
            // SQLite refuses the file (a cut file is "malformed" before the schema can be read). The schema is
            // plain text in the first page, which says whose the file is, even so.
            return firstPage(of: path, contains: "CREATE TABLE \(schema.table)")
                ? .damaged("\(error)") : .unreadable("\(error)")
        }
    }

    /// What `path` names, in words, when it exists and is not a regular file (a symbolic link is followed); nil for a
    /// regular file or nothing at all.
    static func nonFile(at path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & mode_t(S_IFMT) {
        case mode_t(S_IFREG): return nil
        case mode_t(S_IFDIR): return "a directory"
        case mode_t(S_IFIFO): return "a named pipe (FIFO)"
        case mode_t(S_IFCHR): return "a character device"
        case mode_t(S_IFBLK): return "a block device"
        case mode_t(S_IFSOCK): return "a socket"
        default: return "not a regular file"
        }
    }

    /// Whether the file, its folder and its `-wal` and `-shm` files (those that exist) can be written.
    static func isWritable(_ path: String) -> Bool {
        let directory = (path as NSString).deletingLastPathComponent
        let companions = ["-wal", "-shm"].map { path + $0 }.filter { FileManager.default.fileExists(atPath: $0) }
        return ([path, directory.isEmpty ? "." : directory] + companions).allSatisfy { access($0, W_OK) == 0 }
    }

    /// Whether the first page (at most 64 KiB, SQLite's largest page) holds `text`.
    static func firstPage(of path: String, contains text: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let page = try? handle.read(upToCount: 65_536) else { return false }
        return page.range(of: Data(text.utf8)) != nil
    }
}
