import Foundation
import MemoryPressureKit
import PipelineKit
import PipelinePlugins
import PostgresPipelinePlugin
import RegistryKit
import Testing
import TetherJSON
import TetherTestingTraits
import TransportKit

/// Every built-in plugin, decoded from YAML with its settings, and the defaults when configuration says nothing.
@Suite("Plugin decoding", .leakChecked)
struct PluginDecodingTests {
    @Test("The registries know their plugins and defaults")
    func registries() {
        let core = PluginRegistry.core
        #expect(core.types(for: TransportComponent.self) == ["in-memory"])
        #expect(core.types(for: PersistenceComponent.self) == ["memory"])
        #expect(core.types(for: MemoryPressureComponent.self) == ["linux-psi", "manual", "resident-limit"])
        #expect(core.types(for: ObservationDelivery.self) == ["deliver-on-queue", "immediate", "next-signal"])
        #expect(core.types(for: ResponseStage.self) == ["json", "text"])
        #expect(core.defaultType(for: TransportComponent.self) == nil)
        let standard = PluginRegistry.standard
        #expect(standard.types(for: TransportComponent.self) == ["async-http-client", "in-memory", "urlsession"])
        #expect(standard.types(for: PersistenceComponent.self) == ["memory", "sqlite"])
        #expect(standard.defaultType(for: TransportComponent.self) == "async-http-client")
        #expect(standard.defaultType(for: PersistenceComponent.self) == "sqlite")
        // Registering on one registry changes no other.
        standard.register(DecodableStagePlugin<[String]>(type: "names"))
        #expect(PluginRegistry.standard.types(for: ResponseStage.self) == ["json", "text"])
        let withPostgres = PluginRegistry.standard.withPostgres()
        #expect(withPostgres.types(for: PersistenceComponent.self) == ["memory", "postgres", "sqlite"])
        #expect(withPostgres.defaultType(for: PersistenceComponent.self) == "sqlite")
    }

    @Test("Without PostgreSQL's plugin, `type: postgres` is an unknown type at its line, listing the types there are")
    func postgresNotRegistered() {
        let found = issues(
            """
            persistence:
              type: postgres
              url: postgres://app@db/app
            """, registry: .standard)
        #expect(found.count == 1, "\(found)")
        #expect(found.first?.kind == .unknownType && found.first?.path == "persistence.type")
        #expect(found.first?.line == 2)
        #expect(found.first?.message == "unknown persistence type 'postgres'; known types: memory, sqlite")
    }

    @Test("An empty file is every default, and writes no file: persistence is in memory unless a section asks")
    func emptyFile() throws {
        let configuration = try load("")
        #expect(configuration.services.isEmpty)
        #expect(configuration.persistence?.type == "memory")
        #expect(configuration.persistenceIsImplicit)
        #expect(!(try load("persistence: { type: sqlite }")).persistenceIsImplicit)
        #expect(configuration.memoryPressure.source?.type == "linux-psi")
        #expect(configuration.memoryPressure.countLimit == 2048)
        #expect(configuration.delivery.default?.type == "next-signal")
        #expect(configuration.delivery.resources?.type == "next-signal")
        #expect(configuration.liveQueries.isEmpty)
    }

    @Test("A service with every key")
    func fullService() throws {
        let configuration = try load(
            """
            services:
              api:
                base_url: https://api.example.com/v1
                transport: { type: urlsession, connect_timeout: 3s, redirects: 0, max_response_size: 1MiB, max_connections_per_host: 2 }
                retry: { attempts: 5, initial_backoff: 100ms, max_backoff: 2s, max_total_time: 1m, backoff_multiplier: 3, jitter: 0, statuses: [503], honors_retry_after: false, max_retry_after: 5s }
                mutations: { idempotency_header: X-Request-Key, max_pending: 50, durable: true, order: per-service, retry_backoff: 250ms, max_retry_backoff: 30s }
                request_timeout: 15
                expiry: 2.5
                retry_after: 500ms
                headers: { X-Client: tether }
                sensitive_headers: [X-Tenant-Secret]
                standard_stages: false
                cache: { enabled: false, key: relative }
                resources:
                  - pattern: /stores/*/items
                    methods: [get]
                    expiry: 0
                    timeout: 1h
                    headers: { Accept: application/json }
                    cache: true
                    stages: [{ type: json, content_types: ["application/json"] }, { type: text }]
              other:
                transport: { type: async-http-client }
                mutations: { idempotency_header: none }
            """)
        #expect(configuration.services.map(\.name) == ["api", "other"])
        let api = try #require(configuration.service(named: "api"))
        #expect(api.baseURL == "https://api.example.com/v1")
        #expect(api.transport?.type == "urlsession")
        #expect(api.retry.policy.maxAttempts == 5)
        #expect(api.retry.policy.initialBackoff == .milliseconds(100))
        #expect(api.retry.policy.maxBackoff == .seconds(2))
        #expect(api.retry.policy.maxTotalTime == .seconds(60))
        #expect(api.retry.policy.backoffMultiplier == 3)
        #expect(api.retry.policy.jitter == 0)
        #expect(api.retry.policy.statuses == [503])
        #expect(api.retry.policy.honorsRetryAfter == false)
        var mutations = MutationSettings(idempotencyHeader: "X-Request-Key", maxPending: 50)
        mutations.durable = true
        mutations.orderedPerService = true
        mutations.retryBackoff = .milliseconds(250)
        mutations.maxRetryBackoff = .seconds(30)
        #expect(api.mutations == mutations)
        #expect(configuration.service(named: "other")?.mutations == MutationSettings(idempotencyHeader: nil))
        #expect(api.requestTimeout == .seconds(15))
        #expect(api.expiry == .milliseconds(2500))
        #expect(api.retryAfter == .milliseconds(500))
        #expect(api.headers == ["X-Client": "tether"])
        #expect(api.sensitiveHeaders == ["X-Tenant-Secret"])
        #expect(api.standardStages == false)
        #expect(api.cache == CacheSettings(enabled: false, key: .relative))
        let rule = try #require(api.resources.first)
        #expect(rule.pattern == "/stores/*/items")
        #expect(rule.methods == [.get])
        #expect(rule.expiry == .zero)
        #expect(rule.timeout == .seconds(3600))
        #expect(rule.cache == true)
        #expect(rule.stages.map(\.type) == ["json", "text"])
        #expect(configuration.service(named: "other")?.transport?.type == "async-http-client")
    }

    @Test("Persistence: sqlite with its settings, memory, and the default")
    func persistence() throws {
        let sqlite = try load(
            """
            persistence: { type: sqlite, store_path: a.sqlite, cache_path: null, busy_timeout: 0, max_readers: 2, integrity_check_on_open: false }
            """)
        #expect(sqlite.persistence?.type == "sqlite")
        #expect(try load("persistence: { type: memory }").persistence?.type == "memory")
        #expect(try load("persistence: { type: memory }", registry: .core).persistence?.type == "memory")
        #expect(try load("", registry: .core).persistence?.type == "memory")
        #expect(
            issues("persistence: { type: sqlite, store_path: a.sqlite, cache_path: a.sqlite }").first?.message
                == "the cache needs a file of its own (both are 'a.sqlite')")
        let outbox = issues("persistence: { type: sqlite, cache_path: c.sqlite, outbox_path: c.sqlite }").first
        #expect(outbox?.path == "persistence.outbox_path")
        #expect(outbox?.message == "the outbox needs a file of its own ('c.sqlite' is taken)")
        #expect(
            issues("persistence: { type: sqlite, outbox_path: '' }").first?.message
                == "must name a file (or be null for no outbox) (found )")
        #expect(
            issues("persistence: { type: sqlite, max_readers: 0 }").first?.message == "must be at least 1 (found 0)")
    }

    @Test("Memory pressure: each source with its settings")
    func memoryPressure() throws {
        for source in [
            "{ type: manual }",
            "{ type: linux-psi, stall: 100ms, window: 1s, uses_trigger: false, polling_interval: 500ms, avg10_threshold: 20, path: /proc/pressure/memory }",
            "{ type: resident-limit, resident: 512MB, interval: 2s }",
            "{ type: resident-limit, cgroup_fraction: 0.8 }",
        ] {
            let configuration = try load("memory_pressure:\n  source: \(source)\n  count_limit: 10\n")
            #expect(configuration.memoryPressure.countLimit == 10)
            #expect(configuration.memoryPressure.source.map { source.contains($0.type) } == true)
        }
        #expect(
            issues("memory_pressure: { source: { type: linux-psi, window: 30s } }").first?.message
                == "the kernel accepts a window of 500ms to 10s (found 30.0 seconds)")
        #expect(
            issues("memory_pressure: { source: { type: resident-limit, resident: 1GB, cgroup_fraction: 0.5 } }").first?
                .message
                == "give either 'resident' or 'cgroup_fraction', not both")
        #expect(
            issues("memory_pressure: { source: { type: resident-limit, resident: lots } }").first?.message.hasPrefix(
                "not a size") == true)
    }

    @Test("Delivery: each policy, a shared queue, and per-query overrides")
    func delivery() throws {
        let configuration = try load(
            """
            persistence: { type: memory }
            delivery:
              default: { type: deliver-on-queue, queue: ui }
              resources: { type: immediate }
            live_queries:
              - { name: a, collection: items }
              - { name: b, collection: items, query: "qty > 0", delivery: { type: next-signal } }
            """)
        #expect(configuration.delivery.default?.type == "deliver-on-queue")
        #expect(configuration.delivery.resources?.type == "immediate")
        #expect(configuration.liveQueries.map { $0.delivery?.type } == ["deliver-on-queue", "next-signal"])
        let pipeline = try AssembledPipeline.assembleQuietly(configuration)
        #expect(pipeline.delivery.mode == .deliverOnQueue)
        #expect(pipeline.delivery.queue?.label == "tether.pipeline.ui")
        #expect(pipeline.resourceDelivery.mode == .immediate)
        #expect(try pipeline.liveQuery(named: "b").delivery.mode == .nextSignal)
        #expect(try pipeline.liveQuery(named: "a").delivery.queue === pipeline.delivery.queue)
    }

    @Test("Live queries: sort, limit, offset and args")
    func liveQueries() throws {
        let configuration = try load(
            """
            live_queries:
              - name: cheap
                collection: items
                query: store_id == $args.store && price < $args.max
                args: { store: abc123, max: 10 }
                sort: [name, -price]
                limit: 5
                offset: 1
            """)
        let query = try #require(configuration.liveQueries.first)
        #expect(query.args == ["store": "abc123", "max": 10])
        #expect(query.sort == ["name", "-price"])
        #expect(query.limit == 5)
        #expect(query.offset == 1)
        #expect(
            issues("live_queries: [{ name: a, collection: items, limit: 0 }]").first?.message
                == "must be at least 1 (found 0)")
        #expect(
            issues("live_queries: [{ name: a, collection: items }, { name: a, collection: items }]").first?.message
                == "the name 'a' is already used by live_queries[0]; each live query needs its own")
    }

    @Test("Environment overrides replace the base URL and the file paths")
    func environmentOverrides() throws {
        let yaml = """
            services:
              demo: { base_url: "http://localhost:1" }
              demo-two: { base_url: "http://localhost:2" }
            persistence: { type: sqlite, store_path: a.sqlite, cache_path: b.sqlite }
            """
        let overridden = try load(
            yaml,
            environment: [
                "TETHER_BASE_URL": "http://everyone.example", "TETHER_DEMO_TWO_BASE_URL": "http://two.example",
                "TETHER_STORE_PATH": "/tmp/s.sqlite", "TETHER_CACHE_PATH": "",
            ])
        #expect(overridden.service(named: "demo")?.baseURL == "http://everyone.example")
        #expect(overridden.service(named: "demo-two")?.baseURL == "http://two.example")
        #expect(EnvironmentOverrides.baseURLVariable(forService: "demo-two") == "TETHER_DEMO_TWO_BASE_URL")
        let untouched = try load(yaml, environment: [:])
        #expect(untouched.service(named: "demo")?.baseURL == "http://localhost:1")
    }

    @Test("A plugin decoded outside the loader throws at its first problem")
    func outsideTheLoader() throws {
        let decoder = JSONDecoder()
        let settings = try decoder.decode(HTTPTransportSettings.self, from: Data(#"{"connect_timeout": "2s"}"#.utf8))
        #expect(settings.connectTimeout == .seconds(2))
        #expect(throws: (any Error).self) {
            try decoder.decode(HTTPTransportSettings.self, from: Data(#"{"connect_timout": "2s"}"#.utf8))
        }
    }

    @Test("Durations and sizes in their written forms")
    func writtenForms() {
        #expect(DurationSetting.parse("250ms") == .milliseconds(250))
        #expect(DurationSetting.parse("2 s") == .seconds(2))
        #expect(DurationSetting.parse("1.5m") == .seconds(90))
        #expect(DurationSetting.parse("1h") == .seconds(3600))
        #expect(DurationSetting.parse("soon") == nil)
        #expect(DurationSetting.parse("ms") == nil)
        // Beyond 100 years, or not finite, is refused rather than trapping (a fuzzer's find: "1e300h").
        #expect(DurationSetting.parse("1e300h") == nil)
        #expect(DurationSetting.parse("-1e300s") == nil)
        #expect(DurationSetting.parse("infs") == nil)
        #expect(DurationSetting.parse("101000000m") == nil)
        #expect(
            issues("services: { demo: { retry: { max_backoff: 1e300h }, expiry: 1e300 } }").map(\.path)
                == ["services.demo.retry.max_backoff", "services.demo.expiry"])
        #expect(ByteCountSetting.parse("512MB") == 512_000_000)
        #expect(ByteCountSetting.parse("2GiB") == 2 << 30)
        #expect(ByteCountSetting.parse("100 B") == 100)
        #expect(ByteCountSetting.parse("KB") == nil)
        #expect(ByteCountSetting.parse("-1e300GB") == nil)
        #expect(ByteCountSetting.parse("1e300GB") == nil)
    }
}
