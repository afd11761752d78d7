import Foundation
import MutationOutboxKit
import PersistenceKit
import ResourceKit
import Testing
import TetherClock
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

/// Durable mutations: in the outbox when `mutate` returns, sent in order, tried again while the server cannot be
/// reached, rolled back and kept in the failed list when it refuses, and resumed — layers and all — after a restart.
@Suite("Resource: durable mutations and the outbox", .leakChecked)
struct DurableMutationTests {
    @Test("In the outbox when mutate returns, under its idempotency key; gone once the server accepts it")
    func enqueuedThenRemoved() async throws {
        try await withFixture { fixture in
            let outbox = fixture.useOutbox()
            fixture.route("/items/1", .text("stored", delay: .seconds(1)), method: .put)
            let item = fixture.service.resource("/items/1")

            let mutation = item.mutate(.put, text: "new", optimistic: .named("text"), durable: true)
            let pending = try? outbox.pendingEntries()
            #expect(pending?.count == 1)
            let entry = try #require(pending?.first)
            #expect(entry.method == "PUT" && entry.url == base + "/items/1" && entry.body == Data("new".utf8))
            #expect(entry.optimisticUpdate == "text")
            #expect(item.text == "new", "the named update is shown at once")

            #expect(await fixture.clock.waitForSleepers(1))
            fixture.clock.advance(by: .seconds(1))
            #expect(await mutation.outcome.error == nil)
            #expect(fixture.transport.requests.first?.headers["Idempotency-Key"] == entry.key)
            #expect(try await fixture.service.pendingMutations().isEmpty, "removed once accepted")
            #expect(try await fixture.service.failedMutations().isEmpty)
        }
    }

    @Test("A transient failure keeps the layer and tries again after the backoff, with the same key; no rollback")
    func transientFailuresRetried() async throws {
        await withFixture { fixture in
            _ = fixture.useOutbox()
            fixture.route("/items/1", .text("old"))
            fixture.transport.enqueue(
                .put, base + "/items/1", .failure(.connectionRefused), .status(503), .status(429),
                .text("stored"))
            let item = fixture.service.resource("/items/1")
            _ = await item.load().outcome
            var events: [ResourceEvent] = []
            let owner = Owner()
            let log = LockedValue<[ResourceEvent]>([])
            item.addObserver(owner: owner) { _, event in log.withLock { $0.append(event) } }

            let mutation = item.mutate(
                .put, text: "new", optimistic: .named("text"), onSuccess: .useResponse, durable: true)
            for wait in [1, 2, 4] {
                #expect(await fixture.clock.waitForSleepers(1), "waits \(wait) s")
                #expect(item.text == "new" && !mutation.isCompleted, "still pending, still shown")
                fixture.clock.advance(by: .seconds(wait))
            }
            #expect(await mutation.outcome.entity?.typedContent(as: String.self) == "stored")
            #expect(item.text == "stored")
            let keys = fixture.transport.requests.filter { $0.method == .put }.map { $0.headers["Idempotency-Key"] }
            #expect(keys.count == 4 && Set(keys).count == 1 && keys[0] != nil, "one key for every attempt: \(keys)")
            events = log.withLock { $0 }
            #expect(!events.contains(.newData(.rollback)), "a transient failure rolls nothing back: \(events)")
            withExtendedLifetime(owner) {}
        }
    }

    @Test("The server answering another request ends the wait at once")
    func serverAnswerEndsWait() async throws {
        await withFixture { fixture in
            _ = fixture.useOutbox()
            fixture.transport.enqueue(.post, base + "/items", .failure(.connectionRefused), .text("created"))
            fixture.route("/other", .text("up"))
            let items = fixture.service.resource("/items")
            fixture.service.mutationConfiguration.retryBackoff = .seconds(3600)

            let mutation = items.mutate(.post, text: "b", durable: true)
            #expect(await fixture.clock.waitForSleepers(1))
            _ = await fixture.service.resource("/other").load().outcome
            #expect(await mutation.outcome.error == nil, "tried again without the hour's wait")
            #expect(fixture.requestCount("/items", method: .post) == 2)
        }
    }

    @Test("A refusal (409) rolls back, logs the key, and keeps the entry in the failed list until cleared")
    func refusalKeptInFailedList() async throws {
        try await withFixture { fixture in
            _ = fixture.useOutbox()
            fixture.route("/items/1", .text("old"))
            fixture.route("/items/1", .text("conflict", status: 409), method: .put)
            let item = fixture.service.resource("/items/1")
            _ = await item.load().outcome

            let outcome = await item.mutate(.put, text: "new", optimistic: .named("text"), durable: true).outcome
            #expect(outcome.error?.httpStatusCode == 409)
            #expect(item.text == "old", "rolled back")
            let failed = try await fixture.service.failedMutations()
            #expect(failed.count == 1)
            #expect(failed.first?.failure?.contains("409") == true, "\(String(describing: failed.first?.failure))")
            #expect(try await fixture.service.pendingMutations().isEmpty)
            try await fixture.service.clearFailedMutations()
            #expect(try await fixture.service.failedMutations().isEmpty)
            #expect(fixture.requestCount("/items/1", method: .put) == 1, "a refusal is not tried again")
        }
    }

    @Test("Cancelling a durable mutation rolls it back and takes it out of the outbox")
    func cancelRemoves() async throws {
        try await withFixture { fixture throws in
            _ = fixture.useOutbox()
            fixture.route("/items/1", .failure(.connectionRefused), method: .put)
            let item = fixture.service.resource("/items/1")
            let mutation = item.mutate(.put, text: "new", optimistic: .removing, durable: true)
            #expect(await fixture.clock.waitForSleepers(1))
            mutation.cancel()
            #expect(mutation.completedOutcome?.error?.isCancellation == true)
            #expect(try await fixture.service.pendingMutations().isEmpty)
            #expect(try await fixture.service.failedMutations().isEmpty, "a cancellation is not a refusal")
        }
    }

    @Test(
        "A mutation cancelled while it waits its turn is never sent, and the one after it still waits for the one before"
    )
    func cancelWhileWaiting() async throws {
        for thirdAfterCancel in [false, true] {
            try await cancelWhileWaiting(thirdMadeAfterTheCancel: thirdAfterCancel)
        }
    }

    /// m1 in flight, m2 waiting, m2 cancelled; m3 made before the cancel or after it (when m2 is the lane's last).
    private func cancelWhileWaiting(thirdMadeAfterTheCancel: Bool) async throws {
        try await withFixture { fixture throws in
            _ = fixture.useOutbox()
            fixture.route("/items/1", .text("ok", delay: .seconds(1)), method: .put)
            let item = fixture.service.resource("/items/1")
            let first = item.mutate(.put, text: "m1", durable: true)
            let second = item.mutate(.put, text: "m2", durable: true)
            var third = thirdMadeAfterTheCancel ? nil : item.mutate(.put, text: "m3", durable: true)
            #expect(await fixture.clock.waitForSleepers(1))
            second.cancel()
            if third == nil { third = item.mutate(.put, text: "m3", durable: true) }
            let last = try #require(third)
            let snapshot = await fixture.service.mutations.first { _ in true }
            #expect(snapshot?.pending.last?.phase == .waiting, "m3 waits for m1: \(String(describing: snapshot))")
            fixture.clock.advance(by: .seconds(1))
            #expect(await first.outcome.error == nil)
            #expect(await fixture.clock.waitForSleepers(1), "m3 is sent after m1 is answered, not beside it")
            fixture.clock.advance(by: .seconds(1))
            #expect(await last.outcome.error == nil)
            let sent = fixture.transport.requests.map { String(decoding: $0.body ?? Data(), as: UTF8.self) }
            #expect(sent == ["m1", "m3"], "made after the cancel: \(thirdMadeAfterTheCancel)")
            #expect(try await fixture.service.pendingMutations().isEmpty)
        }
    }

    @Test(
        "Order: a resource's durable mutations are sent one at a time, in order; other resources' go side by side; per-service orders all",
        arguments: [MutationConfiguration.Order.perResource, .perService])
    func order(_ order: MutationConfiguration.Order) async throws {
        await withFixture { fixture in
            _ = fixture.useOutbox()
            fixture.service.mutationConfiguration.order = order
            fixture.route("/a", .text("ok", delay: .seconds(1)), method: .post)
            fixture.route("/b", .text("ok", delay: .seconds(1)), method: .post)
            let (a, b) = (fixture.service.resource("/a"), fixture.service.resource("/b"))
            let mutations = [
                a.mutate(.post, text: "a1", durable: true), a.mutate(.post, text: "a2", durable: true),
                b.mutate(.post, text: "b1", durable: true),
            ]
            // Per resource, a1 and b1 go together, then a2; per service, one at a time in the order made.
            let steps: [[Int]] = order == .perResource ? [[0, 2], [1]] : [[0], [1], [2]]
            for step in steps {
                #expect(await fixture.clock.waitForSleepers(step.count))
                #expect(fixture.transport.inFlightCount == step.count, "step \(step)")
                fixture.clock.advance(by: .seconds(1))
                for index in step { #expect(await mutations[index].outcome.error == nil) }
            }
            let sentToA = fixture.transport.requests.filter { $0.url.path.hasSuffix("/a") }
            #expect(sentToA.map { String(decoding: $0.body ?? Data(), as: UTF8.self) } == ["a1", "a2"])
        }
    }

    @Test("Resumed after a restart: the layers shown again at once, sent in order; resuming twice sends nothing twice")
    func resume() async throws {
        try await withFixture { fixture throws in
            let outbox = fixture.useOutbox()
            // What a process that died left: two mutations of one list, one of an item.
            for (key, url, body) in [("k1", "/items", "b"), ("k2", "/items", "c"), ("k3", "/items/1", "x")] {
                _ = try? outbox.enqueue(
                    OutboxEntry(
                        key: key, lane: base + url, method: "POST", url: base + url,
                        headers: [.init(name: "Idempotency-Key", value: key)], body: Data(body.utf8),
                        optimisticUpdate: url == "/items" ? "append" : "missing", usesResponse: false,
                        invalidates: [], enqueued: Date(timeIntervalSince1970: 900)))
            }
            fixture.service.defineOptimisticUpdate("append") { body in
                let added = String(decoding: body ?? Data(), as: UTF8.self)
                return .updating { (list: String?) in (list ?? "a") + "," + added }
            }
            fixture.route("/items", .text("a"))
            fixture.route("/items", .text("created", delay: .seconds(1)), method: .post)
            fixture.route("/items/1", .text("created", delay: .seconds(1)), method: .post)
            let items = fixture.service.resource("/items")
            _ = await items.load().outcome

            let resumed = (try? fixture.service.resumeMutations()) ?? []
            #expect(resumed.count == 3)
            #expect(items.text == "a,b,c", "both layers shown again, in order")
            #expect((try? fixture.service.resumeMutations())?.isEmpty == true, "those in flight are not sent again")
            #expect(await fixture.clock.waitForSleepers(2))
            let posts = fixture.transport.requests.filter { $0.method == .post }
            #expect(posts.map { $0.headers["Idempotency-Key"] } == ["k1", "k3"], "k2 waits for k1")
            fixture.clock.advance(by: .seconds(1))
            #expect(await resumed[0].outcome.error == nil)
            #expect(await fixture.clock.waitForSleepers(1), "k2 is sent once k1 is settled")
            #expect(fixture.transport.requests.filter { $0.method == .post }.last?.headers["Idempotency-Key"] == "k2")
            fixture.clock.advance(by: .seconds(1))
            for request in resumed { #expect(await request.outcome.error == nil) }
            #expect(try await fixture.service.pendingMutations().isEmpty)
        }
    }

    @Test(
        "Not queued, failing at once with nothing sent, shown or stored: no outbox, a function update, a predicate, an unknown name, a definition that throws, a write that fails"
    )
    func notQueued() async throws {
        try await withFixture { fixture throws in
            fixture.route("/items/1", .text("old"))
            let item = fixture.service.resource("/items/1")
            _ = await item.load().outcome
            func expectNotQueued(
                _ mutation: Request, _ words: String, sourceLocation: SourceLocation = #_sourceLocation
            ) {
                let error = mutation.completedOutcome?.error
                #expect(
                    error?.kind == .mutationNotQueued, "\(String(describing: error))", sourceLocation: sourceLocation)
                #expect(
                    error?.message.contains(words) == true, "\(String(describing: error))",
                    sourceLocation: sourceLocation)
                #expect(item.text == "old", sourceLocation: sourceLocation)
            }
            expectNotQueued(item.mutate(.put, text: "x", optimistic: .removing, durable: true), "no outbox")
            let outbox = fixture.useOutbox()
            expectNotQueued(
                item.mutate(.put, text: "x", optimistic: .replacing(with: "x"), durable: true), "a function cannot")
            expectNotQueued(
                item.mutate(.put, text: "x", invalidates: [.matching { _ in true }], durable: true), "a predicate")
            expectNotQueued(item.mutate(.put, text: "x", optimistic: .named("nope"), durable: true), "\"nope\"")
            fixture.service.defineOptimisticUpdate("picky") { _ in throw CocoaError(.coderReadCorrupt) }
            expectNotQueued(item.mutate(.put, text: "x", optimistic: .named("picky")), "cannot be made from the body")
            fixture.service.mutationConfiguration.outbox = FullOutbox()
            let full = item.mutate(.put, text: "x", optimistic: .named("text"), durable: true)
            expectNotQueued(full, "could not be written to the outbox")
            let cause = full.completedOutcome?.error?.cause as? PersistenceError
            #expect(cause?.kind == .diskFull)
            #expect(fixture.requestCount("/items/1", method: .put) == 0)
            #expect(try outbox.pendingEntries().isEmpty)
            #expect(fixture.service.pendingMutationCount == 0)
        }
    }

    @Test("A resource without a valid URL fails a mutation at once: nothing shown, sent, counted or stored")
    func invalidURL() async throws {
        try await withFixture { fixture throws in
            let outbox = fixture.useOutbox()
            let invalid = fixture.service.resource(absoluteURL: "not a url")
            let seen = LockedValue<[ResourceEvent]>([])
            let owner = Owner()
            invalid.addObserver(owner: owner) { _, event in seen.withLock { $0.append(event) } }
            for durable in [false, true] {
                let mutation = invalid.mutate(.put, text: "x", optimistic: .named("text"), durable: durable)
                #expect(mutation.completedOutcome?.error?.kind == .invalidURL)
            }
            #expect(seen.withLock { $0 } == [.observerAdded], "no optimistic update, no rollback")
            #expect(fixture.transport.requests.isEmpty)
            #expect(try outbox.pendingEntries().isEmpty)
            #expect(fixture.service.pendingMutationCount == 0)
            withExtendedLifetime(owner) {}
        }
    }

    @Test("isDurable makes every mutation durable unless it says otherwise")
    func durableByDefault() async throws {
        try await withFixture { fixture throws in
            let outbox = fixture.useOutbox()
            fixture.service.mutationConfiguration.isDurable = true
            fixture.route("/items", .text("ok", delay: .seconds(1)), method: .post)
            let items = fixture.service.resource("/items")
            let durable = items.mutate(.post, text: "a")
            let plain = items.mutate(.post, text: "b", durable: false)
            #expect(try outbox.pendingEntries().map(\.body) == [Data("a".utf8)])
            #expect(await fixture.clock.waitForSleepers(2))
            fixture.clock.advance(by: .seconds(1))
            #expect(await durable.outcome.error == nil)
            #expect(await plain.outcome.error == nil)
        }
    }
}

extension Fixture {
    /// Gives the service an in-memory outbox and the update "text" (the body as text), and returns the outbox.
    func useOutbox() -> InMemoryMutationOutbox {
        let outbox = InMemoryMutationOutbox()
        service.mutationConfiguration.outbox = outbox
        service.defineOptimisticUpdate("text") { body in
            .replacing(with: String(decoding: body ?? Data(), as: UTF8.self))
        }
        return outbox
    }
}

/// An outbox on a full disk: every write fails, as SQLite's does.
private final class FullOutbox: MutationOutbox {
    func enqueue(_ entry: OutboxEntry) throws(PersistenceError) -> Int64 {
        throw PersistenceError(.diskFull, "database or disk is full", file: "/full/outbox.sqlite")
    }
    func pendingEntries() throws(PersistenceError) -> [OutboxEntry] { [] }
    func takePending() throws(PersistenceError) -> [OutboxEntry] { [] }
    func failedEntries() throws(PersistenceError) -> [OutboxEntry] { [] }
    func remove(key: String) throws(PersistenceError) {}
    func markFailed(key: String, reason: String) throws(PersistenceError) {}
    func removeFailedEntries() throws(PersistenceError) {}
}
