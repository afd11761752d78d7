import DocumentStoreKit
import GRDB
import PersistenceKit

extension PersistenceError {
    /// A database error as a persistence error with context.
    static func mapping(
        _ error: any Error, file: String, collection: String? = nil, id: String? = nil
    ) -> PersistenceError {
        if let error = error as? PersistenceError { return error.adding(file: file, collection: collection, id: id) }
        guard let database = error as? DatabaseError else {
            return PersistenceError(
                .other, "\(error)", file: file, collection: collection, id: id, cause: SendableDescription(error))
        }
        let kind: Kind
        let message: String
        switch database.resultCode {
        case .SQLITE_FULL:
            kind = .diskFull
            message = "the disk or the database's size limit is full; nothing was written"
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            kind = .corrupt
            message = "the file is not a database or is damaged (\(database.message ?? "no detail"))"
        case .SQLITE_READONLY, .SQLITE_PERM:
            kind = .readOnly
            message = "the database cannot be written (\(database.message ?? "no detail"))"
        case .SQLITE_CANTOPEN:
            kind = .cannotOpen
            message = "the database cannot be opened (\(database.message ?? "no detail"))"
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            kind = .busy
            message = "the database stayed locked longer than the busy timeout"
        case .SQLITE_IOERR:
            // SQLite reports a write that found no space while it grows the WAL or the shared-memory file (at the
            // first open on a nearly full disk, say) as an I/O error; the file system says whether space ran out.
            if let free = DatabaseFile.availableBytes(near: file), free < 1 << 20 {
                kind = .diskFull
                message =
                    "the disk is full (\(free) bytes free); SQLite could not write (\(database.message ?? "no detail"))"
            } else {
                kind = .ioError
                message = "the operating system reported an I/O error (\(database.message ?? "no detail"))"
            }
        case .SQLITE_MISUSE where (database.message ?? "").contains("closed"):
            kind = .closed
            message = "the database is closed"
        default:
            kind = .other
            message = database.message ?? "\(database.resultCode)"
        }
        return PersistenceError(
            kind, message, file: file, collection: collection, id: id, cause: SendableDescription(database))
    }
}

/// An error's description, as a `Sendable` error (GRDB's errors carry statement arguments).
struct SendableDescription: Error, Sendable, CustomStringConvertible {
    let description: String

    init(_ error: any Error) {
        description = "\(error)"
    }
}
