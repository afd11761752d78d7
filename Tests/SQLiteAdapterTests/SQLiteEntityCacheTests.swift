import SQLiteAdapter
import Testing
import TetherTesting
import TetherTestingTraits

@Suite("SQLiteEntityCache: the entity-cache conformance suite on a real file", .leakChecked)
struct SQLiteEntityCacheTests {
    @Test("Conformance", arguments: EntityCacheConformance.checks)
    func conformance(_ check: EntityCacheCheck) async throws {
        try await TemporaryDirectory.with { directory in
            try await check.run(on: try SQLiteEntityCache(path: directory.file("cache.sqlite")))
        }
    }
}
