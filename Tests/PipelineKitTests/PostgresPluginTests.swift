import EntityCacheKit
import Foundation
import LiveQueryKit
import Logging
import PipelineKit
import PipelinePlugins
import PostgresAdapter
import PostgresNIO
import PostgresPipelinePlugin
import ServiceLifecycle
import Testing
import TetherJSON

/// `persistence: type: postgres`: its settings, the password rules, and a pipeline on a real server.
@Suite("PostgreSQL persistence from configuration")
struct PostgresPluginTests {
    @Test(
        "Every setting reaches the store's configuration; a registry with PostgreSQL's plugin knows the type, and SQLite stays the default"
    )
    func settings() throws {
        let configuration = try load(
            """
            persistence:
              type: postgres
              host: db.internal
              port: 6432
              database: app
              user: tether
              password_env: TETHER_DB_PASSWORD
              tls: require
              schema: tenant_7
              pool_size: 4
              connect_timeout: 3s
              start_timeout: 45s
              statement_timeout: 20s
              reconnect_delay: 50ms
              max_reconnect_delay: 2s
              catch_up_interval: 500ms
              log_retention: 1h
              cache: false
            """, environment: ["TETHER_DB_PASSWORD": "from-the-environment"])
        #expect(configuration.persistence?.type == "postgres")
        // Assembling connects to nothing: the store connects when the pipeline's service group runs it.
        let pipeline = try AssembledPipeline.assembleQuietly(configuration)
        let store = try #require(pipeline.persistence.documents as? PostgresDocumentStore)
        let made = store.configuration
        #expect([made.host, made.database, made.user, made.schema] == ["db.internal", "app", "tether", "tenant_7"])
        #expect(made.port == 6432 && made.poolSize == 4 && made.tls == .require)
        #expect(made.password == "from-the-environment")
        #expect(made.connectTimeout == .seconds(3) && made.startTimeout == .seconds(45))
        #expect(made.statementTimeout == .seconds(20) && made.catchUpInterval == .milliseconds(500))
        #expect(made.reconnectDelay == .milliseconds(50) && made.maximumReconnectDelay == .seconds(2))
        #expect(made.changeLogRetention == .seconds(3600))
        #expect(pipeline.persistence.entityCache == nil)
        let registry = PluginRegistry.standard.withPostgres()
        #expect(registry.types(for: PersistenceComponent.self) == ["memory", "postgres", "sqlite"])
        #expect(registry.defaultType(for: PersistenceComponent.self) == "sqlite")
        #expect(
            try load("persistence: { type: postgres, url: 'postgres://app@127.0.0.1/app' }").persistence?.type
                == "postgres")
    }

    @Test("A password in the file is refused where it is written — as a key, or inside the URL")
    func passwordsAreRefused() {
        let key = issues(
            """
            persistence:
              type: postgres
              url: postgres://app@db/app
              password: hunter2
            """)
        #expect(key.first?.message.contains("never written in the configuration") == true, "\(key)")
        #expect(key.first?.line == 4, "\(key)")
        #expect(key.allSatisfy { !$0.description.contains("hunter2") }, "the password is not repeated")
        let url = issues("persistence: { type: postgres, url: 'postgres://app:hunter2@db/app' }")
        #expect(url.first?.message.contains("holds a password") == true, "\(url)")
        #expect(url.allSatisfy { !$0.description.contains("hunter2") }, "the password is not repeated")
    }

    @Test("Bad settings are reported with their key and line")
    func badSettings() {
        let cases: [(String, String)] = [
            ("{ type: postgres, url: 'mysql://db/app' }", "not a postgres:// URL"),
            ("{ type: postgres, url: 'postgres://app@db/app', host: other }", "either url or host"),
            ("{ type: postgres, url: 'postgres://app@db/app', tls: maybe }", "disable, require or verify-full"),
            ("{ type: postgres, url: 'postgres://app@db/app', schema: 'Bad-Name' }", "lowercase letters"),
            ("{ type: postgres, url: 'postgres://app@db/app', pool_size: 0 }", "at least 1"),
            ("{ type: postgres, url: 'postgres://app@db/app', start_timeout: 0s }", "must be more than zero"),
            (
                "{ type: postgres, url: 'postgres://app@db/app', password_env: A, password_file: b }",
                "either password_env or password_file"
            ),
            ("{ type: postgres, host: db, user: app }", "missing key 'database'"),
        ]
        for (section, expected) in cases {
            let found = issues("persistence: \(section)")
            #expect(found.contains { $0.message.contains(expected) }, "\(section): \(found)")
        }
    }

    @Test("A password variable that is not set fails the assembly, naming the key")
    func missingPasswordVariable() throws {
        let configuration = try load(
            "persistence: { type: postgres, url: 'postgres://app@127.0.0.1/app', password_env: TETHER_NOT_SET_ANYWHERE }"
        )
        #expect {
            _ = try AssembledPipeline.assembleQuietly(configuration)
        } throws: { error in
            "\(error)".contains("password_env names TETHER_NOT_SET_ANYWHERE, which is not set")
        }
    }

    @Test(
        "On a real server: the pipeline's service group runs the store; documents and cache entries land in PostgreSQL",
        .enabled(
            if: ProcessInfo.processInfo.environment["TETHER_POSTGRES_URL"] != nil,
            "TETHER_POSTGRES_URL is not set: run the PostgreSQL tests through Scripts/with-postgres.sh swift test"))
    func onARealServer() async throws {
        let url = try #require(ProcessInfo.processInfo.environment["TETHER_POSTGRES_URL"])
        let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(24)
        let configuration = try load(
            """
            persistence:
              type: postgres
              url: \(url)
              schema: \(schema)
              password_env: TETHER_TEST_PASSWORD
            """, environment: ["TETHER_TEST_PASSWORD": "unused-on-a-trust-cluster"])
        let pipeline = try AssembledPipeline.assembleQuietly(configuration)
        #expect(pipeline.persistence.summary.contains("PostgreSQL: postgres://"))
        #expect(!pipeline.persistence.summary.contains("unused-on-a-trust-cluster"))
        let (store, cache) = (pipeline.store, try #require(pipeline.persistentCache))
        let app = AssemblyTests.ApplicationService {
            try await store.collection("items").upsert(["_id": "a", "name": "Pear"])
            let entity = CachedEntity(body: Data("{}".utf8), headers: [], timestamp: Date(timeIntervalSince1970: 7))
            cache.write(entity, forKey: "https://example.com/a")
            #expect(await cache.read("https://example.com/a") == entity)
        }
        try await pipeline.serviceGroup(running: app, logger: Logger(label: "test")).run()
        let rows = try await Self.query(url, "SELECT body::text FROM \(schema).tether_documents")
        #expect(rows == [#"{"_id": "a", "name": "Pear"}"#])
        let entities = try await Self.query(url, "SELECT key FROM \(schema).tether_entities")
        #expect(entities == ["https://example.com/a"])
        _ = try await Self.query(url, "DROP SCHEMA \(schema) CASCADE")
    }

    /// The first column of each row, as text, on a connection of the test's own.
    static func query(_ url: String, _ sql: String) async throws -> [String] {
        let components = try #require(URLComponents(string: url))
        let logger = Logger(label: "test")
        let connection = try await PostgresConnection.connect(
            configuration: .init(
                host: try #require(components.host), port: components.port ?? 5432,
                username: try #require(components.user), password: nil,
                database: String(components.path.dropFirst()), tls: .disable),
            id: 1, logger: logger)
        var values: [String] = []
        do {
            for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) {
                values.append(try row.decode(String.self))
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        return values
    }
}
