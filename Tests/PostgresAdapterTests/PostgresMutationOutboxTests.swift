import Foundation
import MutationOutboxKit
import PersistenceKit
import PostgresAdapter
import ResourceKit
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

@Suite(
    "PostgresMutationOutbox: the outbox conformance suite, and one outbox shared by instances",
    PostgresTestServer.required, .needsProcessorTime, .timeLimit(minutes: 2))
struct PostgresMutationOutboxTests {
    @Test("Conformance", arguments: MutationOutboxConformance.checks)
    func conformance(_ check: MutationOutboxCheck) async throws {
        let configuration = try PostgresTestServer.freshConfiguration()
        let outbox = try PostgresMutationOutbox(configuration: configuration)
        try await check.run(on: outbox)
        outbox.close()
        try await PostgresTestServer.dropSchema(of: configuration)
    }

    @Test(
        "Two instances resume one outbox at once: every mutation is sent once, by one of them; what a closed instance held, the other takes"
    )
    func sharedByInstances() async throws {
        let configuration = try PostgresTestServer.freshConfiguration()
        // What an instance that ended left: 40 mutations of 4 lists.
        let writer = try PostgresMutationOutbox(configuration: configuration)
        try await onQueue {
            for index in 0..<40 {
                let url = "https://api.test/lists/\(index % 4)"
                _ = try writer.enqueue(
                    OutboxEntry(
                        key: "k\(index)", lane: url, method: "POST", url: url,
                        headers: [.init(name: "Idempotency-Key", value: "k\(index)")], body: Data("\(index)".utf8),
                        optimisticUpdate: nil, usesResponse: false, invalidates: [], enqueued: Date()))
            }
        }
        let other = try PostgresMutationOutbox(configuration: configuration)
        #expect(try await onQueue { try other.takePending() }.isEmpty, "the writer holds them while it lives")
        writer.close()

        let instances = try (0..<2).map { _ in
            let transport = InMemoryTransport()
            for list in 0..<4 { transport.route(.post, "https://api.test/lists/\(list)", reply: .text("ok")) }
            let service = Service(baseURL: "https://api.test", transport: transport)
            service.mutationConfiguration.outbox = try PostgresMutationOutbox(configuration: configuration)
            return (service, transport)
        }
        let resumed = try await withThrowingTaskGroup(of: [Request].self) { group in
            for (service, _) in instances {
                group.addTask { try await onQueue { try service.resumeMutations() } }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        for request in resumed { #expect(await request.outcome.error == nil) }
        let sent = instances.flatMap { $0.1.requests.compactMap { $0.headers["Idempotency-Key"] } }
        #expect(sent.count == 40 && Set(sent).count == 40, "each of 40 once: \(sent.sorted())")
        _ = try await instances[1].0.pendingMutations()  // its removals written
        #expect(try await instances[0].0.pendingMutations().isEmpty)
        for (service, _) in instances {
            (service.mutationConfiguration.outbox as? PostgresMutationOutbox)?.close()
        }
        other.close()
        try await PostgresTestServer.dropSchema(of: configuration)
    }
}

/// Runs `body` on a dispatch queue: the outbox waits for the server there, as ResourceKit's queue does.
private func onQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue(label: "tether.tests.outbox").async { continuation.resume(with: Result { try body() }) }
    }
}
