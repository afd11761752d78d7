import Foundation
import MutationOutboxKit
import ResourceKit
import Testing
import TetherClock
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

/// `service.mutations`: snapshots of what the service's mutations are doing, latest only.
@Suite("Service: mutations as snapshots", .timeLimit(.minutes(1)), .leakChecked)
struct MutationSnapshotTests {
    @Test("The current snapshot at once; then each change: made, waiting its turn, sending, retrying, settled, refused")
    func phases() async throws {
        try await withFixture { fixture throws in
            _ = fixture.useOutbox()
            fixture.transport.enqueue(.put, base + "/items/1", .failure(.connectionRefused), .text("ok"))
            fixture.transport.enqueue(.put, base + "/items/1", .text("no", status: 409))
            var snapshots = fixture.service.mutations.makeAsyncIterator()
            #expect(await snapshots.next() == .empty, "the current snapshot, at once")

            let item = fixture.service.resource("/items/1")
            let first = item.mutate(.put, text: "a", durable: true)
            let second = item.mutate(.put, text: "b", durable: true)
            #expect(await fixture.clock.waitForSleepers(1), "the first waits to be tried again")
            let waiting = try #require(await snapshots.next(), "the latest: not every step on the way")
            #expect(waiting.pending.map(\.phase) == [.retrying(failures: 1), .waiting])
            #expect(waiting.pending.map(\.isDurable) == [true, true])
            #expect(waiting.pending.first?.url == base + "/items/1" && waiting.pending.first?.method == .put)

            fixture.clock.advance(by: .seconds(1))
            #expect(await first.outcome.error == nil)
            #expect(await second.outcome.error?.httpStatusCode == 409)
            var last = MutationsSnapshot.empty
            while let snapshot = await snapshots.next() {
                last = snapshot
                if snapshot.pending.isEmpty { break }
            }
            #expect(last.failed.map { String(decoding: $0.body ?? Data(), as: UTF8.self) } == ["b"])
            #expect(last.failed.first?.failure?.contains("409") == true)

            try await fixture.service.clearFailedMutations()
            #expect(await snapshots.next()?.failed.isEmpty == true)
        }
    }

    @Test("A reader that falls behind gets the newest snapshot, never a queue; cancelling its task ends the sequence")
    func latestOnly() async throws {
        await withFixture { fixture in
            fixture.route("/items", .text("ok", delay: .seconds(1)), method: .post)
            let items = fixture.service.resource("/items")
            var snapshots = fixture.service.mutations.makeAsyncIterator()
            _ = await snapshots.next()
            let made = (0..<50).map { items.mutate(.post, text: "\($0)") }
            let next = await snapshots.next()
            #expect(next?.pending.count == 50, "fifty changes, one snapshot: the newest")
            #expect(next?.pending.allSatisfy { !$0.isDurable && $0.phase == .sending } == true)

            let reader = Task {
                var iterator = fixture.service.mutations.makeAsyncIterator()
                _ = await iterator.next()
                return await iterator.next()
            }
            reader.cancel()
            #expect(await reader.value == nil, "a cancelled reader's sequence ends")
            #expect(await fixture.clock.waitForSleepers(50))
            fixture.clock.advance(by: .seconds(1))
            for mutation in made { _ = await mutation.outcome }
            #expect(await snapshots.next()?.pending.isEmpty == true)
        }
    }
}
