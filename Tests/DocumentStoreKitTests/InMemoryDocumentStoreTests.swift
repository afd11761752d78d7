import DocumentStoreKit
import Testing
import TetherTesting
import TetherTestingTraits

@Suite("InMemoryDocumentStore: the document-store conformance suite", .timeLimit(minutes: 1), .leakChecked)
struct InMemoryDocumentStoreTests {
    @Test("Conformance", arguments: DocumentStoreConformance.checks)
    func conformance(_ check: DocumentStoreCheck) async throws {
        try await check.run(on: InMemoryDocumentStore())
    }
}
