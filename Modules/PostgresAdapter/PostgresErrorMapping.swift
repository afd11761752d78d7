import PersistenceKit
import PostgresNIO

extension PersistenceError {
    /// A PostgreSQL or connection error as a `PersistenceError`, with the server's message and SQLSTATE, and the
    /// store (`file`: its URL without password) as context. A `PersistenceError` gains the context it lacked; any
    /// other error — a `CancellationError`, what a transaction's body threw — passes through unchanged.
    static func mappingPostgres(
        _ error: any Error, store: String, collection: String? = nil, id: String? = nil
    ) -> any Error {
        if let error = error as? PersistenceError { return error.adding(file: store, collection: collection, id: id) }
        guard let error = error as? PSQLError else { return error }
        let (kind, message) = describe(error)
        return PersistenceError(kind, message, file: store, collection: collection, id: id, cause: error)
    }

    private static func describe(_ error: PSQLError) -> (Kind, String) {
        switch error.code {
        case .server:
            let state = error.serverInfo?[.sqlState] ?? "?????"
            let text = error.serverInfo?[.message] ?? "no message"
            let message = "PostgreSQL refused: \(text) (SQLSTATE \(state))"
            return (kind(forSQLState: state), message)
        case .queryCancelled:
            return (.other, "PostgreSQL cancelled the statement")
        case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
            return (.ioError, "the connection to PostgreSQL was lost (\(error.code)); a write in flight was not made")
        case .connectionError, .poolClosed:
            return (.cannotOpen, "cannot reach PostgreSQL: \(error.underlying.map { "\($0)" } ?? "\(error.code)")")
        default:
            return (.other, "PostgreSQL: \(error.code)")
        }
    }

    /// The persistence kind of a SQLSTATE (appendix A of PostgreSQL's manual).
    static func kind(forSQLState state: String) -> Kind {
        switch state {
        case "40001", "40P01", "55P03", "57014": .busy  // serialization, deadlock, lock not available, cancelled
        case "53100": .diskFull
        case "22P05", "22021", "22P02", "54001": .invalidDocument  // untranslatable, bad encoding, bad JSON, too deep
        case "25006": .readOnly  // a read-only transaction or a standby
        case "57P01", "57P02", "57P03", "08000", "08003", "08006": .ioError  // shutting down, connection failures
        case "28000", "28P01", "3D000", "42501": .cannotOpen  // authentication, no such database, no privilege
        case "XX001", "XX002": .corrupt
        default: .other
        }
    }
}
