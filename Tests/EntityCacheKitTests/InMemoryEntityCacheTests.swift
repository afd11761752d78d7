import EntityCacheKit
import Testing
import TetherTesting

@Suite("InMemoryEntityCache: the entity-cache conformance suite")
struct InMemoryEntityCacheTests {
    @Test("Conformance", arguments: EntityCacheConformance.checks)
    func conformance(_ check: EntityCacheCheck) async throws {
        try await check.run(on: InMemoryEntityCache())
    }
}
