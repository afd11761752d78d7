import Foundation
import LiveQueryKit
import MirrorKit
import PipelineKit
import Testing
import TetherTesting
import TetherTestingTraits

@Suite("mirrors: a resource mirrored into a collection, from the configuration", .timeLimit(minutes: 1))
struct MirrorConfigurationTests {
    @Test("A configured mirror writes its resource's list into its collection")
    func startsAndWrites() async throws {
        let configuration = try load(
            """
            persistence: { type: memory }
            services:
              shop:
                base_url: https://shop.example/api
                transport:
                  type: in-memory
                  routes:
                    - url: https://shop.example/api/stores/abc/items
                      content_type: application/json
                      body: '{"data": {"items": [{"id": "a1", "store_id": "abc", "name": "Pear"}]}}'
            mirrors:
              - name: abc-items
                resource: /stores/abc/items
                collection: items
                id: id
                scope: store_id == 'abc'
                path: data.items
            """)
        try await withPipeline(configuration) { pipeline, _ in
            let mirror = try pipeline.startMirror(named: "abc-items")
            try await eventually { mirror.completedWrites >= 1 }
            #expect(mirror.lastError == nil, "\(String(describing: mirror.lastError))")
            let documents = try await pipeline.store.collection("items").findAll().exec()
            #expect(documents.map(\.id) == ["a1"])
            #expect(try await mirror.state.exec().flatMap(MirrorState.init)?.name == "abc-items")
            #expect(throws: ConfigurationError.self) { try pipeline.startMirror(named: "nope") }
            await mirror.stop()
        }
    }

    @Test("A scope that is not a query, an unknown service, an empty id and a repeated name: located errors")
    func badMirrors() {
        let found = issues(
            """
            services:
              shop: { base_url: https://shop.example, transport: { type: in-memory } }
              other: { base_url: https://other.example, transport: { type: in-memory } }
            mirrors:
              - name: abc
                service: shop
                resource: /items
                collection: items
                scope: "store_id === 'abc'"
              - name: abc
                service: nowhere
                resource: /items
                collection: items
                id: ""
              - name: which
                resource: /items
                collection: items
            """)
        #expect(
            found.map(\.path) == [
                "mirrors[0].scope", "mirrors[1].name", "mirrors[1].service", "mirrors[1].id", "mirrors[2]",
            ], "in file order: \(found)")
        #expect(found.first?.line == 9)
        #expect(found.first?.message.contains("(at column 12 of the scope)") == true, "\(found)")
        #expect(found.first?.column == 12 + 12)
        #expect(found.dropFirst(2).first?.message.contains("no service named 'nowhere'") == true)
        #expect(found.last?.message.contains("say which service") == true)
    }
}
