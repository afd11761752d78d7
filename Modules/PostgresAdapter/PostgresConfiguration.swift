import Foundation
public import Logging
public import PersistenceKit

/// Where a PostgreSQL store or cache connects, and how. Build it from a URL or from its parts; the password never
/// appears in ``description``, in logs or in errors.
///
/// ```swift
/// var configuration = try PostgresConfiguration(url: "postgres://app@db.internal:5432/tether?sslmode=verify-full")
/// configuration.password = ProcessInfo.processInfo.environment["TETHER_DB_PASSWORD"]
/// let store = PostgresDocumentStore(configuration: configuration)
/// ```
public struct PostgresConfiguration: Sendable, CustomStringConvertible {
    /// How the connection is protected.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Plain TCP (loopback, or a private network you trust).
        case disable
        /// TLS, without checking the server's certificate (it protects against listeners, not impostors).
        case require
        /// TLS, with the server's certificate checked against the system's roots and the host name.
        case verifyFull = "verify-full"
    }

    /// The server's host name or address.
    public var host: String
    /// The server's port. Default 5432.
    public var port: Int = 5432
    /// The database to use.
    public var database: String
    /// The user to connect as.
    public var user: String
    /// The password, if the server asks for one. Read it from an environment variable or a file; never write it in
    /// a configuration file.
    public var password: String?
    /// TLS. Default `.disable` for a loopback host, `.verifyFull` otherwise.
    public var tls: TLSMode
    /// The schema that holds Tether's tables (created when missing). Different schemas in one database are
    /// different stores. Default `public`.
    public var schema = "public"
    /// The most connections the store opens for reads and writes (the listener has one more). Default 8.
    public var poolSize = 8
    /// How long opening a connection may take. Default 10 seconds.
    public var connectTimeout: Duration = .seconds(10)
    /// How long an operation made while the store starts waits for its `run()` — connecting, waiting for another
    /// process that is creating the same schema, creating the tables, loading the declared indexes — before it
    /// fails with `cannotOpen`, saying what `run()` is still doing (or that nothing runs the store). Default 30
    /// seconds: starting takes several statements and connections, each of which may take ``connectTimeout``.
    public var startTimeout: Duration = .seconds(30)
    /// How long one statement may wait for the server's answer before it fails (`ioError`) and its connection is
    /// closed. Default 60 seconds: a bound on a hung connection, not a query budget (PostgreSQL's own
    /// `statement_timeout` is that).
    public var statementTimeout: Duration = .seconds(60)
    /// How long the listener waits before its first attempt to reconnect; each failure doubles it, up to
    /// ``maximumReconnectDelay``. Default 100 ms.
    public var reconnectDelay: Duration = .milliseconds(100)
    /// The longest wait between two attempts to reconnect. Default 5 seconds.
    public var maximumReconnectDelay: Duration = .seconds(5)
    /// How often the listener reads the change log even when no notification came — the safety net under `NOTIFY`,
    /// which a disconnected listener misses. Default 1 second.
    public var catchUpInterval: Duration = .seconds(1)
    /// How long a listener may go unseen before change-log entries are no longer kept for it. Default 10 minutes.
    public var changeLogRetention: Duration = .seconds(600)
    /// How long every change-log entry is kept at least, so that a process that has just connected finds every
    /// commit since. Default 5 seconds.
    public var changeLogMinimumAge: Duration = .seconds(5)
    /// Where connection trouble and recoveries are logged.
    public var logger = Logger(label: "tether.persistence.postgres")

    /// Makes a configuration from its parts.
    public init(host: String, port: Int = 5432, database: String, user: String, password: String? = nil) {
        self.host = host
        self.port = port
        self.database = database
        self.user = user
        self.password = password
        self.tls = Self.isLoopback(host) ? .disable : .verifyFull
    }

    /// Makes a configuration from a URL: `postgres://user[:password]@host[:port]/database[?sslmode=…&schema=…]`
    /// (`postgresql://` too). `sslmode` is `disable`, `require` or `verify-full`.
    ///
    /// - Throws: `PersistenceError.Kind.cannotOpen` saying which part of the URL is wrong (the password is never
    ///   repeated).
    public init(url text: String) throws(PersistenceError) {
        guard let components = URLComponents(string: text),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme.lowercased())
        else {
            throw Self.badURL(text, "it is not a postgres:// URL")
        }
        guard let host = components.host, !host.isEmpty else { throw Self.badURL(text, "it has no host") }
        guard let user = components.user, !user.isEmpty else { throw Self.badURL(text, "it has no user") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw Self.badURL(text, "its path is not one database name")
        }
        self.init(host: host, port: components.port ?? 5432, database: database, user: user)
        password = components.password
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = TLSMode(rawValue: item.value ?? "") else {
                    throw Self.badURL(
                        text, "sslmode '\(item.value ?? "")' is not one of disable, require, verify-full")
                }
                tls = mode
            case "schema":
                schema = item.value ?? ""
            default:
                throw Self.badURL(text, "'\(item.name)' is not a parameter Tether knows (sslmode, schema)")
            }
        }
        try validate()
    }

    /// Checks what a server would otherwise refuse late and obscurely.
    ///
    /// - Throws: `PersistenceError.Kind.cannotOpen` naming the setting.
    public func validate() throws(PersistenceError) {
        guard PostgresIdentifier.isValid(schema) else {
            throw PersistenceError(
                .cannotOpen,
                "schema '\(schema)' is not a schema name Tether uses: 1 to 40 lowercase letters, digits and '_', starting with a letter or '_'",
                file: description)
        }
        guard poolSize >= 1 else {
            throw PersistenceError(.cannotOpen, "poolSize must be 1 or more, not \(poolSize)", file: description)
        }
        guard (1...65_535).contains(port) else {
            throw PersistenceError(.cannotOpen, "port must be 1 to 65535, not \(port)", file: description)
        }
    }

    /// `postgres://user@host:port/database?schema=…` — never the password.
    public var description: String {
        "postgres://\(user)@\(host):\(port)/\(database)" + (schema == "public" ? "" : "?schema=\(schema)")
    }

    /// Whether `name` is a schema name Tether uses: 1 to 40 lowercase letters, digits and `_`, starting with a letter
    /// or `_` (written into SQL as it is, so never quoted, never user text).
    public static func isSchemaName(_ name: String) -> Bool {
        PostgresIdentifier.isValid(name)
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    private static func badURL(_ text: String, _ why: String) -> PersistenceError {
        PersistenceError(.cannotOpen, "the PostgreSQL URL \(redacted(text)) cannot be used: \(why)")
    }

    /// The URL with any password replaced by `***`.
    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? "(unreadable URL)"
    }
}

/// The names Tether writes into SQL text itself (schemas, channels, index names): a deliberately small alphabet,
/// so that no quoting is ever needed.
enum PostgresIdentifier {
    static func isValid(_ name: String) -> Bool {
        guard let first = name.utf8.first, (1...40).contains(name.utf8.count) else { return false }
        let lowercase = UInt8(ascii: "a")...UInt8(ascii: "z")
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard lowercase.contains(first) || first == UInt8(ascii: "_") else { return false }
        return name.utf8.allSatisfy { lowercase.contains($0) || digits.contains($0) || $0 == UInt8(ascii: "_") }
    }
}
