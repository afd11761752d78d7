import Foundation
import Logging
import PersistenceKit
public import PipelineKit
public import PostgresAdapter
import ServiceLifecycle

/// `type: postgres` — the document store and the entity cache in PostgreSQL, shared by every instance of the service
/// that uses the same database and schema: a write made by one instance reaches the live queries of all. The store
/// runs in the pipeline's `ServiceGroup` (its pool and its listener); on graceful shutdown it lets the writes in flight
/// finish.
///
/// The password is never written in the configuration: `password_env` names an environment variable that holds it,
/// `password_file` a file (a Docker or Kubernetes secret). A `password` key, or a password in `url`, is refused.
///
/// ```yaml
/// persistence:
///   type: postgres
///   url: postgres://app@db.internal:5432/app   # or host, port, database and user
///   password_env: TETHER_DB_PASSWORD            # or password_file: /run/secrets/db-password
///   tls: verify-full                            # disable | require | verify-full (default: disable on loopback)
///   schema: public                              # the schema that holds Tether's tables
///   pool_size: 8
///   connect_timeout: 10s
///   start_timeout: 30s                          # how long an operation waits for the store to finish starting
///   statement_timeout: 60s                      # a statement unanswered this long fails; its connection closes
///   reconnect_delay: 100ms                      # the listener's first wait after losing its connection
///   max_reconnect_delay: 5s
///   catch_up_interval: 1s                       # the listener reads the change log at least this often
///   log_retention: 10m                          # entries kept for a listener that has vanished
///   cache: true                                 # the resources' persistent cache here too (false: none)
///   outbox: true                                # durable mutations' outbox here too (false: none)
/// ```
public struct PostgresPersistencePlugin: PipelinePlugin {
    /// "postgres".
    public let type = "postgres"

    /// The settings.
    public struct Settings: Decodable, Sendable {
        /// `postgres://user@host:port/database`, when given as one URL.
        public var url: String?
        /// The server's host (when no `url`).
        public var host: String?
        /// The server's port. Default 5432.
        public var port: Int
        /// The database (when no `url`).
        public var database: String?
        /// The user (when no `url`).
        public var user: String?
        /// The environment variable that holds the password.
        public var passwordEnvironmentVariable: String?
        /// The file that holds the password.
        public var passwordFile: String?
        /// TLS; nil: PostgresAdapter's default for the host.
        public var tls: PostgresConfiguration.TLSMode?
        /// The schema.
        public var schema: String
        /// The most pooled connections.
        public var poolSize: Int
        /// How long opening a connection may take.
        public var connectTimeout: Duration
        /// How long an operation waits for the store's `run()` to finish starting.
        public var startTimeout: Duration
        /// How long a statement may wait for the server's answer.
        public var statementTimeout: Duration
        /// The listener's first wait after losing its connection.
        public var reconnectDelay: Duration
        /// The listener's longest wait between attempts.
        public var maximumReconnectDelay: Duration
        /// How often the listener reads the change log without a notification.
        public var catchUpInterval: Duration
        /// How long entries are kept for a listener that has not been seen.
        public var logRetention: Duration
        /// Whether the resources' persistent cache is kept in PostgreSQL too.
        public var cache: Bool
        /// Whether durable mutations' outbox is kept in PostgreSQL too.
        public var outbox: Bool

        /// The keys.
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case url, host, port, database, user, schema, cache, outbox, tls
            case password
            case passwordEnvironmentVariable = "password_env"
            case passwordFile = "password_file"
            case poolSize = "pool_size"
            case connectTimeout = "connect_timeout"
            case startTimeout = "start_timeout"
            case statementTimeout = "statement_timeout"
            case reconnectDelay = "reconnect_delay"
            case maximumReconnectDelay = "max_reconnect_delay"
            case catchUpInterval = "catch_up_interval"
            case logRetention = "log_retention"
        }

        /// PostgresAdapter's defaults, and no server: `url` or `host`, `database` and `user` must be given.
        public init() {
            let defaults = PostgresConfiguration(host: "localhost", database: "", user: "")
            port = defaults.port
            schema = defaults.schema
            poolSize = defaults.poolSize
            connectTimeout = defaults.connectTimeout
            startTimeout = defaults.startTimeout
            statementTimeout = defaults.statementTimeout
            reconnectDelay = defaults.reconnectDelay
            maximumReconnectDelay = defaults.maximumReconnectDelay
            catchUpInterval = defaults.catchUpInterval
            logRetention = defaults.changeLogRetention
            cache = true
            outbox = true
        }

        /// Decodes the settings.
        public init(from decoder: any Decoder) throws {
            self.init()
            let settings = try decoder.settings(CodingKeys.self)
            if settings.contains(.password) {
                try settings.invalid(
                    .password, "a password is never written in the configuration: use password_env or password_file")
            }
            url = try settings.decode(.url, as: String.self)
            if let url {
                do {
                    let parsed = try PostgresConfiguration(url: url)
                    if parsed.password != nil {
                        try settings.invalid(
                            .url, "the URL holds a password: remove it, and use password_env or password_file")
                    }
                } catch let error as PersistenceError {
                    try settings.invalid(.url, error.message)
                }
                for key in [CodingKeys.host, .database, .user] where settings.contains(key) {
                    try settings.invalid(key, "give either url or \(key.rawValue), not both")
                }
            } else {
                host = try settings.require(.host)
                database = try settings.require(.database)
                user = try settings.require(.user)
            }
            port = try settings.decode(.port, default: port, where: { (1...65_535).contains($0) }, "must be 1 to 65535")
            passwordEnvironmentVariable = try settings.decode(.passwordEnvironmentVariable, as: String.self)
            passwordFile = try settings.decode(.passwordFile, as: String.self)
            if passwordEnvironmentVariable != nil, passwordFile != nil {
                try settings.invalid(.passwordFile, "give either password_env or password_file, not both")
            }
            if let mode = try settings.decode(.tls, as: String.self) {
                tls = PostgresConfiguration.TLSMode(rawValue: mode)
                if tls == nil { try settings.invalid(.tls, "must be disable, require or verify-full (found \(mode))") }
            }
            schema = try settings.decode(
                .schema, default: schema, where: PostgresConfiguration.isSchemaName,
                "must be 1 to 40 lowercase letters, digits and '_', starting with a letter or '_'")
            poolSize = try settings.decode(.poolSize, default: poolSize, where: { $0 >= 1 }, "must be at least 1")
            connectTimeout = try settings.duration(.connectTimeout, default: connectTimeout)
            startTimeout = try settings.duration(.startTimeout, default: startTimeout)
            statementTimeout = try settings.duration(.statementTimeout, default: statementTimeout)
            reconnectDelay = try settings.duration(.reconnectDelay, default: reconnectDelay)
            maximumReconnectDelay = try settings.duration(.maximumReconnectDelay, default: maximumReconnectDelay)
            catchUpInterval = try settings.duration(.catchUpInterval, default: catchUpInterval)
            logRetention = try settings.duration(.logRetention, default: logRetention)
            cache = try settings.decode(.cache, default: cache)
            outbox = try settings.decode(.outbox, default: outbox)
        }
    }

    /// Makes the plugin.
    public init() {}

    /// No server is assumed: `url` or `host`, `database` and `user` must be given.
    public var defaultSettings: Settings { Settings() }

    /// Makes the store (and the cache); nothing connects until the pipeline's service group runs.
    ///
    /// - Throws: ``PostgresSettingsError`` naming the setting (a password variable that is not set, a password file
    ///   that cannot be read), or a `PersistenceError` naming the one PostgresAdapter refused.
    public func make(_ settings: Settings, context: AssemblyContext) throws -> PersistenceComponent {
        var configuration: PostgresConfiguration
        if let url = settings.url {
            configuration = try PostgresConfiguration(url: url)
        } else {
            configuration = PostgresConfiguration(
                host: settings.host ?? "", port: settings.port, database: settings.database ?? "",
                user: settings.user ?? "")
        }
        if let name = settings.passwordEnvironmentVariable {
            guard let password = context.environment[name] else {
                throw PostgresSettingsError(key: "password_env", "names \(name), which is not set")
            }
            configuration.password = password
        } else if let file = settings.passwordFile.map(context.resolve) {
            do {
                var text = try String(contentsOfFile: file, encoding: .utf8)
                while text.last?.isNewline == true { text.removeLast() }
                configuration.password = text
            } catch {
                throw PostgresSettingsError(key: "password_file", "cannot be read (\(file)): \(error)")
            }
        }
        if let tls = settings.tls { configuration.tls = tls }
        configuration.schema = settings.schema
        configuration.poolSize = settings.poolSize
        configuration.connectTimeout = settings.connectTimeout
        configuration.startTimeout = settings.startTimeout
        configuration.statementTimeout = settings.statementTimeout
        configuration.reconnectDelay = settings.reconnectDelay
        configuration.maximumReconnectDelay = settings.maximumReconnectDelay
        configuration.catchUpInterval = settings.catchUpInterval
        configuration.changeLogRetention = settings.logRetention
        var logger = context.logger
        logger[metadataKey: "part"] = "persistence.postgres"
        configuration.logger = logger
        let store = try PostgresDocumentStore(configuration: configuration)
        let cache = settings.cache ? try PostgresEntityCache(configuration: configuration) : nil
        let outbox = settings.outbox ? try PostgresMutationOutbox(configuration: configuration) : nil
        return PersistenceComponent(
            documents: store, entityCache: cache, mutationOutbox: outbox,
            lifecycle: PostgresService(store: store, cache: cache, outbox: outbox),
            summary: "PostgreSQL: \(configuration)" + (cache == nil ? ", no cache" : ", cache there too")
                + (outbox == nil ? ", no outbox" : ", outbox there too"))
    }
}

/// A setting of `type: postgres` that cannot be used, found when the pipeline is assembled.
public struct PostgresSettingsError: Error, CustomStringConvertible {
    /// The key under `persistence:`.
    public let key: String
    /// What is wrong with it.
    public let message: String

    init(key: String, _ message: String) {
        self.key = key
        self.message = message
    }

    /// `persistence.password_env names X, which is not set`.
    public var description: String { "persistence.\(key) \(message)" }
}

/// The store in the pipeline's service group: runs it (its pool and listener) until the group stops, then closes
/// the cache's connection.
struct PostgresService: ServiceLifecycle.Service, CustomStringConvertible {
    let store: PostgresDocumentStore
    let cache: PostgresEntityCache?
    let outbox: PostgresMutationOutbox?

    var description: String { "PostgreSQL \(store.configuration)" }

    func run() async throws {
        do {
            try await store.run()
        } catch {
            await closeConnections()
            throw error
        }
        await closeConnections()
    }

    /// Closes the cache's and the outbox's connections on a thread of their own: the outbox lets go of its entries
    /// with a statement it waits for, which no thread of Swift concurrency's may do.
    private func closeConnections() async {
        let (cache, outbox) = (cache, outbox)
        guard cache != nil || outbox != nil else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                cache?.close()
                outbox?.close()
                continuation.resume()
            }
        }
    }
}
