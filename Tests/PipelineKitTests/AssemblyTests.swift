import DeliveryKit
import DocumentStoreKit
import EntityCacheKit
import Foundation
import LiveQueryKit
import Logging
import MemoryPressureKit
import MutationOutboxKit
import PersistenceKit
import PipelineKit
import PipelinePlugins
import RegistryKit
import ResourceKit
import SQLiteAdapter
import ServiceLifecycle
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits
import TransportConformance
import TransportKit

/// Configurations assembled into working pipelines: real HTTP on loopback, real SQLite files, live queries, the
/// memory-pressure path and the lifecycle.
@Suite("Assembly", .needsProcessorTime, .leakChecked)
struct AssemblyTests {
    final class Owner: Sendable {}

    struct Item: Decodable, Sendable, Equatable {
        let name: String
        let quantity: Int
    }

    @Test("Routes, service headers, rule settings and a user-registered model stage all apply")
    func inMemoryService() async throws {
        let registry = PluginRegistry.standard
        registry.register(DecodableStagePlugin<[Item]>(type: "item-list"))
        let configuration = try load(
            """
            persistence: { type: memory }
            services:
              shop:
                base_url: https://shop.example/api
                transport:
                  type: in-memory
                  routes:
                    - url: https://shop.example/api/items
                      content_type: application/json
                      body: '[{"name": "pear", "quantity": 3}]'
                headers: { X-Client: tether-tests }
                expiry: 45s
                retry: { attempts: 1 }
                mutations: { idempotency_header: X-Request-Key, max_pending: 7, durable: true, order: per-service }
                resources:
                  - pattern: /items
                    expiry: 5s
                    stages: [{ type: item-list }]
                  - regex: "/v[0-9]+/"
                    timeout: 7s
            """, registry: registry)
        try await withPipeline(configuration) { pipeline, tracker in
            let service = try pipeline.service(named: "shop")
            let items = tracker.track(service.resource("/items"), "resource /items")
            #expect(items.configuration().expirationTime == .seconds(5))
            let versioned = tracker.track(service.resource("/v2/orders"), "resource /v2/orders")
            #expect(versioned.configuration().timeout == .seconds(7), "the regex rule matches anywhere in the URL")
            #expect(items.configuration().timeout != .seconds(7))
            #expect(service.resource("/other").configuration().expirationTime == .seconds(45))
            let outcome = await items.load().outcome
            #expect(outcome.entity?.typedContent(as: [Item].self) == [Item(name: "pear", quantity: 3)])
            let transport = try #require(service.transport as? InMemoryTransport)
            #expect(transport.requests.first?.headers["X-Client"] == "tether-tests")
            #expect(service.maxPendingMutations == 7)
            #expect(service.mutationConfiguration.outbox is InMemoryMutationOutbox, "the persistence's outbox")
            #expect(service.mutationConfiguration.isDurable && service.mutationConfiguration.order == .perService)
            #expect(items.configuration(for: .post).idempotencyKeyHeader == "X-Request-Key")
        }
    }

    @Test("Retries from configuration wrap the transport")
    func retries() async throws {
        try await LoopbackHTTPServer.with { server in
            let configuration = try load(
                """
                persistence: { type: memory }
                services:
                  api:
                    base_url: \(server.baseURL.absoluteString)
                    transport: { type: urlsession }
                    retry: { attempts: 3, initial_backoff: 10ms, jitter: 0 }
                """)
            let pipeline = try AssembledPipeline.assembleQuietly(configuration)
            let resource = try pipeline.service(named: "api").resource("/flaky/pipeline/2/503")
            let outcome = await resource.load().outcome
            #expect(outcome.entity?.typedContent(as: String.self) == "attempt 3")
        }
    }

    @Test(
        "SQLite over real HTTP: a second pipeline on the same files shows the cached data first, then revalidates with a 304 — even on another port, with relative keys"
    )
    func persistentCacheAcrossPipelines() async throws {
        try await withTemporaryDirectory { directory in
            let yaml = { (base: URL) in
                """
                persistence: { type: sqlite, store_path: store.sqlite, cache_path: cache.sqlite }
                services:
                  api:
                    base_url: \(base.absoluteString)
                    transport: { type: async-http-client }
                    cache: { key: relative }
                """
            }
            try await LoopbackHTTPServer.with { server in
                let pipeline = try AssembledPipeline.assembleQuietly(
                    try load(yaml(server.baseURL), baseDirectory: directory))
                let outcome = await (try pipeline.service(named: "api")).resource("/etag/v7").load().outcome
                #expect(outcome.entity?.typedContent(as: String.self) == "version v7")
                await pipeline.persistentCache?.flush()
                try await shutDown(pipeline)
            }
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("cache.sqlite").path))
            try await LoopbackHTTPServer.with { server in
                let pipeline = try AssembledPipeline.assembleQuietly(
                    try load(yaml(server.baseURL), baseDirectory: directory))
                let resource = try pipeline.service(named: "api").resource("/etag/v7")
                let events = LockedValue<[ResourceEvent]>([])
                let owner = Owner()
                resource.addObserver(owner: owner) { _, event in events.withLock { $0.append(event) } }
                let outcome = await resource.load().outcome
                #expect(outcome.entity?.typedContent(as: String.self) == "version v7")
                let seen = events.withLock { $0 }
                #expect(seen.firstIndex(of: .newData(.cache)) != nil, "\(seen)")
                #expect(seen.last == .notModified, "\(seen)")
                withExtendedLifetime(owner) {}
                try await shutDown(pipeline)
            }
        }
    }

    @Test("Configured live queries deliver with their policy; next-signal holds until signalled")
    func liveQueries() async throws {
        let configuration = try load(
            """
            persistence: { type: memory }
            live_queries:
              - name: abc
                collection: items
                query: store_id == $args.store
                args: { store: abc123 }
                sort: [name]
                delivery: { type: next-signal }
              - name: all
                collection: items
                delivery: { type: deliver-on-queue, queue: tests }
            """)
        try await withPipeline(configuration) { pipeline, tracker in
            let items = pipeline.store.collection("items")
            _ = try await items.upsert(["_id": "1", "store_id": "abc123", "name": "b"])
            _ = try await items.upsert(["_id": "2", "store_id": "other", "name": "a"])

            let held = LockedValue<[[String]]>([])
            let signals = LockedValue<[SignalNext]>([])
            let abc = try pipeline.liveQuery(named: "abc").observe { documents, _, signalNext in
                held.withLock { $0.append(documents.map(\.id)) }
                signals.withLock { $0.append(signalNext) }
            }
            let everything = LockedValue<[Int]>([])
            let all = try pipeline.liveQuery(named: "all").observe { documents, _, _ in
                everything.withLock { $0.append(documents.count) }
            }
            try await eventually { held.withLock { $0 } == [["1"]] && everything.withLock { $0.last } == 2 }
            _ = try await items.upsert(["_id": "3", "store_id": "abc123", "name": "a"])
            _ = try await items.upsert(["_id": "4", "store_id": "abc123", "name": "c"])
            try await eventually { everything.withLock { $0.last } == 4 }
            #expect(held.withLock { $0 } == [["1"]], "nothing more until signalNext")
            signals.withLock { $0.removeFirst() }()
            try await eventually { held.withLock { $0.count } == 2 }
            #expect(held.withLock { $0.last } == ["3", "1", "4"], "the latest result, in one delivery")
            await abc.stop()
            await all.stop()
            tracker.track(abc, "live query abc")
            tracker.track(all, "live query all")
        }
    }

    @Test("indexes: are built by the pipeline — when its service group starts, or on request — once each")
    func declaredIndexes() async throws {
        let configuration = try load(
            """
            persistence: { type: memory }
            indexes:
              - collection: items
                fields: [store_id, name]
              - collection: orders
                fields: [customer.id]
            """)
        try await withPipeline(configuration) { pipeline, _ in
            #expect(try await pipeline.store.documents.declaredIndexes().isEmpty, "nothing built at assembly")
            #expect(
                pipeline.lifecycleServices.first.map { "\($0)" }
                    == "indexes (items(store_id, name), orders(customer.id))")
            // The group builds them when it starts: the application sees them built, then lets the group end.
            let documents = pipeline.store.documents
            let app = ApplicationService { try await eventually { try await documents.declaredIndexes().count == 2 } }
            try await pipeline.serviceGroup(running: app, logger: Logger(label: "test")).run()
            try await pipeline.createDeclaredIndexes()
            #expect(
                try await pipeline.store.documents.declaredIndexes().map(\.description) == [
                    "items(store_id, name)", "orders(customer.id)",
                ])
        }
    }

    @Test(
        "A shutdown requested before the service group runs stops the index builder before the database closes: no error, nothing stored lost, and the next start builds the rest"
    )
    func shutdownWhileBuildingIndexes() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("store.sqlite").path
            // Enough documents that an index takes a while to build, so the database's part is asked to close
            // while the first one is building.
            let stored = try SQLiteDocumentStore(path: path)
            try await stored.write { transaction in
                for index in 0..<5_000 {
                    _ = try transaction.upsert(
                        [
                            "_id": .string("d\(index)"), "store_id": .string("s\(index % 7)"),
                            "name": .string("n\(index)"),
                            "price": .number(Double(index % 100)),
                        ],
                        into: "items")
                }
            }
            try stored.close()
            let configuration = try load(
                """
                persistence: { type: sqlite, store_path: store.sqlite, cache_path: null }
                indexes:
                  - { collection: items, fields: [store_id, name] }
                  - { collection: items, fields: [price] }
                  - { collection: items, fields: [name] }
                """, baseDirectory: directory)
            let configured = ["items(store_id, name)", "items(price)", "items(name)"]
            let pipeline = try AssembledPipeline.assembleQuietly(configuration)
            try await pipeline.shutdown()

            let reopened = try SQLiteDocumentStore(path: path)
            let built = try await reopened.declaredIndexes().map(\.description)
            #expect(Array(configured.prefix(built.count)) == built, "indexes are built in order, each whole")
            #expect(try await reopened.read { try $0.count(matching: DocumentQuery(collection: "items")) } == 5_000)
            #expect(try await reopened.integrityCheck() == ["ok"])
            try reopened.close()

            let next = try AssembledPipeline.assembleQuietly(configuration)
            let documents = next.store.documents
            let app = ApplicationService { try await eventually { try await documents.declaredIndexes().count == 3 } }
            try await next.serviceGroup(running: app, logger: Logger(label: "test")).run()
        }
    }

    @Test("Memory pressure lets go of unobserved resources in every service, and keeps observed ones")
    func memoryPressure() async throws {
        let configuration = try load(
            """
            persistence: { type: memory }
            memory_pressure: { source: { type: manual } }
            services:
              a: { base_url: "https://a.example", transport: { type: in-memory } }
              b: { base_url: "https://b.example", transport: { type: in-memory } }
            """)
        try await withPipeline(configuration) { pipeline, _ in
            let owner = Owner()
            let a = try pipeline.service(named: "a")
            let b = try pipeline.service(named: "b")
            a.resource("/kept").addObserver(owner: owner) { _, _ in }
            for index in 0..<10 {
                _ = a.resource("/\(index)")
                _ = b.resource("/\(index)")
            }
            #expect(a.cachedResourceCount + b.cachedResourceCount == 21)
            #expect(pipeline.simulateMemoryPressure() == 20)
            #expect(a.cachedResourceCount == 1)
            #expect(pipeline.memoryPressureStatistics.events == 1)
            #expect(pipeline.memoryPressureStatistics.resourcesReleased == 20)
            #expect(pipeline.memoryPressureSource.name == "manual")
            withExtendedLifetime(owner) {}
        }
    }

    @Test("The service group starts the parts, runs the application, then shuts down in reverse: the database last")
    func lifecycle() async throws {
        try await withTemporaryDirectory { directory in
            let (configuration, order) = try recordingConfiguration(in: directory)
            let pipeline = try AssembledPipeline.assembleQuietly(configuration)
            #expect(pipeline.lifecycleServices.count == 3)
            let app = ApplicationService {
                _ = try await pipeline.store.collection("items").upsert(["_id": "1"])
                order.withLock { $0.append("application ran") }
            }
            try await pipeline.serviceGroup(running: app, logger: Logger(label: "test")).run()
            #expect(order.withLock { $0 } == ["application ran", "transport shut down", "database closed"])
            await #expect(throws: PersistenceError.self) {
                _ = try await pipeline.store.collection("items").upsert(["_id": "2"])
            }
        }
    }

    @Test(
        "As the service group shuts down, a write waiting for another process's lock (busy_timeout: 1h) fails with closed, and the group stops at once"
    )
    func shutdownEndsLockWait() async throws {
        try await withTemporaryDirectory { directory in
            let configuration = try load(
                "persistence: { type: sqlite, store_path: store.sqlite, cache_path: null, busy_timeout: 1h }",
                baseDirectory: directory)
            let pipeline = try AssembledPipeline.assembleQuietly(configuration)
            let sqlite = try #require(pipeline.store.documents as? SQLiteDocumentStore)
            // Another connection to the file keeps the write lock, inside its transaction, until released.
            let holder = try SQLiteDocumentStore(path: directory.appendingPathComponent("store.sqlite").path)
            let lock = try await WriteLockHolder.hold(holder)
            let failure = LockedValue<(any Error)?>(nil)
            let app = ApplicationService {
                do {
                    _ = try await pipeline.store.collection("items").upsert(["_id": "waited"])
                } catch {
                    failure.withLock { $0 = error }
                }
            }
            let group = pipeline.serviceGroup(running: app, logger: Logger(label: "test"))
            let running = Task { try await group.run() }
            try await eventually(within: .seconds(10)) { sqlite.busyWait.waits > 0 }
            await group.triggerGracefulShutdown()
            do {
                try await eventually(within: .seconds(10)) { failure.withLock { $0 } != nil }
            } catch {
                Issue.record("the waiting write did not end within 10 s of the shutdown")
            }
            try await lock.release()
            try await running.value
            let error = try #require(failure.withLock { $0 } as? PersistenceError)
            #expect(error.kind == .closed, "\(error)")
            try holder.close()
        }
    }

    @Test("An empty configuration assembles with persistence in memory, and writes no file in its folder")
    func emptyConfigurationWritesNothing() async throws {
        try await withTemporaryDirectory { directory in
            let pipeline = try AssembledPipeline.assembleQuietly(try load("", baseDirectory: directory))
            _ = try await pipeline.store.collection("items").upsert(["_id": "1"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
            try await pipeline.shutdown()
        }
    }

    @Test(
        "shutdown() without a service group: parts shut down in reverse, the database last; a second call, or one after the group, shuts nothing down twice"
    )
    func shutdownWithoutGroup() async throws {
        try await withTemporaryDirectory { directory in
            let (configuration, order) = try recordingConfiguration(in: directory)
            let pipeline = try AssembledPipeline.assembleQuietly(configuration)
            _ = try await pipeline.store.collection("items").upsert(["_id": "1"])
            try await pipeline.shutdown()
            #expect(order.withLock { $0 } == ["transport shut down", "database closed"])
            await #expect(throws: PersistenceError.self) {
                _ = try await pipeline.store.collection("items").upsert(["_id": "2"])
            }
            // Again: a ShutdownAction acts once; closing the closed store again is harmless (the recording wrapper
            // around it notes each run).
            try await pipeline.shutdown()
            #expect(order.withLock { $0 } == ["transport shut down", "database closed", "database closed"])

            // After a service group has shut the parts down, shutdown() shuts nothing down twice either.
            order.withLock { $0 = [] }
            let grouped = try AssembledPipeline.assembleQuietly(configuration)
            try await grouped.serviceGroup(running: ApplicationService {}, logger: Logger(label: "test")).run()
            try await grouped.shutdown()
            #expect(order.withLock { $0 } == ["transport shut down", "database closed", "database closed"])
        }
    }

    @Test(
        "follow_other_processes: a live query in the pipeline hears another writer of the SQLite file; shutdown stops the follower and closes the file"
    )
    func followsOtherProcesses() async throws {
        try await withTemporaryDirectory { directory in
            let configuration = try load(
                """
                persistence: { type: sqlite, store_path: store.sqlite, cache_path: null, follow_other_processes: true, follow_interval: 5ms }
                """, baseDirectory: directory)
            let pipeline = try AssembledPipeline.assembleQuietly(configuration)
            let other = try SQLiteDocumentStore(path: directory.appendingPathComponent("store.sqlite").path)
            let delivered = LockedValue<Int>(0)
            let app = ApplicationService {
                let liveQuery = try pipeline.store.collection("items").findAll().observeLocal { documents, _ in
                    delivered.withLock { $0 = documents.count }
                }
                for index in 0..<20 { try await other.upsert(["_id": .string("d\(index)")], into: "items") }
                try await eventually(within: .seconds(60)) { delivered.withLock { $0 } == 20 }
                await liveQuery.stop()
            }
            try await pipeline.serviceGroup(running: app, logger: Logger(label: "test")).run()
            #expect(delivered.withLock { $0 } == 20)
            await #expect(throws: PersistenceError.self) {
                _ = try await pipeline.store.collection("items").upsert(["_id": "late"])
            }
            try other.close()
        }
    }

    @Test("Assembly gives the parts the environment the loader was given, not the process's")
    func environmentReachesParts() async throws {
        let seen = LockedValue<[String: String]?>(nil)
        let registry = PluginRegistry.standard
        registry.register(EnvironmentTransportPlugin(seen: seen))
        let configuration = try load(
            "services: { api: { base_url: \"https://api.example\", transport: { type: environment } } }",
            registry: registry, environment: ["TETHER_TEST_TOKEN": "from-the-loader"])
        #expect(configuration.environment == ["TETHER_TEST_TOKEN": "from-the-loader"])
        let pipeline = try AssembledPipeline.assembleQuietly(configuration)
        #expect(seen.withLock { $0 } == ["TETHER_TEST_TOKEN": "from-the-loader"])
        try await pipeline.shutdown()
    }

    /// A transport plugin that records the environment assembly gave it.
    struct EnvironmentTransportPlugin: PipelinePlugin {
        let type = "environment"
        let seen: LockedValue<[String: String]?>
        var defaultSettings: MemoryPersistencePlugin.Settings { .init() }
        func make(_ settings: MemoryPersistencePlugin.Settings, context: AssemblyContext) throws -> TransportComponent {
            seen.withLock { $0 = context.environment }
            return TransportComponent(InMemoryTransport())
        }
    }

    /// A configuration whose transport and SQLite store record, in order, when they are shut down.
    func recordingConfiguration(in directory: URL) throws -> (PipelineConfiguration, LockedValue<[String]>) {
        let order = LockedValue<[String]>([])
        let registry = PluginRegistry.standard
        registry.register(RecordingTransportPlugin(order: order))
        registry.register(RecordingSQLitePlugin(order: order))
        let configuration = try load(
            """
            persistence: { type: recording-sqlite, store_path: store.sqlite, cache_path: null }
            memory_pressure: { source: { type: manual } }
            services:
              api: { base_url: "https://api.example", transport: { type: recording } }
            """, registry: registry, baseDirectory: directory)
        return (configuration, order)
    }

    /// A transport plugin of the test's own, registered like any user's, that records its shutdown.
    struct RecordingTransportPlugin: PipelinePlugin {
        let type = "recording"
        let order: LockedValue<[String]>
        var defaultSettings: MemoryPersistencePlugin.Settings { .init() }
        func make(_ settings: MemoryPersistencePlugin.Settings, context: AssemblyContext) throws -> TransportComponent {
            let order = order
            return TransportComponent(
                InMemoryTransport(),
                lifecycle: ShutdownAction("recording transport") {
                    order.withLock { $0.append("transport shut down") }
                })
        }
    }

    /// SQLite persistence whose closing is recorded.
    struct RecordingSQLitePlugin: PipelinePlugin {
        let type = "recording-sqlite"
        let order: LockedValue<[String]>
        var defaultSettings: SQLitePersistencePlugin.Settings { .init() }
        func make(_ settings: SQLitePersistencePlugin.Settings, context: AssemblyContext) throws -> PersistenceComponent
        {
            var component = try SQLitePersistencePlugin().make(settings, context: context)
            let closer = component.lifecycle
            let order = order
            component.lifecycle = ApplicationService {
                try await closer?.run()
                order.withLock { $0.append("database closed") }
            }
            return component
        }
    }

    struct ApplicationService: ServiceLifecycle.Service {
        let body: @Sendable () async throws -> Void
        func run() async throws { try await body() }
    }

    func shutDown(_ pipeline: AssembledPipeline) async throws {
        try await pipeline.serviceGroup(running: ApplicationService {}, logger: Logger(label: "test")).run()
    }
}
