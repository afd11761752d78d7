import MutationOutboxKit
import Testing
import TetherTesting

@Suite("InMemoryMutationOutbox")
struct InMemoryMutationOutboxTests {
    @Test("Conformance", arguments: MutationOutboxConformance.checks)
    func conformance(_ check: MutationOutboxCheck) async throws {
        try await check.run(on: InMemoryMutationOutbox())
    }
}
