import Foundation
import ResourceKit
import Testing
import TetherClock
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

/// Mutations: the optimistic update shown at once, the server's data in its place on success, and on failure the
/// content as if the mutation had never been applied — other mutations' layers and newer server data kept.
@Suite("Resource: mutations, optimistic and rolled back", .leakChecked)
struct MutationTests {
    @Test("The optimistic content is shown before mutate returns; the response replaces it in one step")
    func optimisticThenResponse() async throws {
        await withFixture { fixture in
            fixture.route("/items/1", .text("old"))
            fixture.route("/items/1", .text("stored", delay: .seconds(1)), method: .put)
            let item = fixture.service.resource("/items/1")
            _ = await item.load().outcome
            let seen = ContentLog(item)

            let mutation = item.mutate(
                .put, text: "new", optimistic: .replacing(with: "new"), onSuccess: .useResponse)
            #expect(item.text == "new", "shown before mutate returns")
            #expect(seen.entries == [.init(.newData(.optimistic), "new")])
            #expect(item.latestData?.timestamp == Date(timeIntervalSince1970: 1000), "the confirmed data's timestamp")
            #expect(item.isRequesting && !item.isLoading)

            #expect(await fixture.clock.waitForSleepers(1))
            fixture.clock.advance(by: .seconds(1))
            let outcome = await mutation.outcome
            #expect(outcome.entity?.typedContent(as: String.self) == "stored")
            #expect(item.text == "stored")
            #expect(
                seen.entries == [.init(.newData(.optimistic), "new"), .init(.newData(.network), "stored")],
                "the response replaces the optimistic content with nothing in between")
            #expect(!item.isRequesting && item.isUpToDate)
            #expect(fixture.requestCount("/items/1", method: .get) == 1, "the response saved a reload")
            #expect(fixture.transport.requests.last?.body == Data("new".utf8))
        }
    }

    @Test("A failed mutation is rolled back: the content as before, a rollback event, the error to the caller")
    func failureRollsBack() async throws {
        await withFixture { fixture in
            fixture.route("/items/1", .text("old"))
            fixture.route("/items/1", .text("conflict", status: 409), method: .put)
            let item = fixture.service.resource("/items/1")
            _ = await item.load().outcome
            let seen = ContentLog(item)

            let outcome = await item.mutate(.put, text: "new", optimistic: .replacing(with: "new")).outcome
            #expect(outcome.error?.httpStatusCode == 409)
            #expect(item.text == "old")
            #expect(seen.entries == [.init(.newData(.optimistic), "new"), .init(.newData(.rollback), "old")])
            #expect(item.latestError == nil, "a mutation's failure is the caller's, not the resource's load error")
            #expect(item.isUpToDate, "the data is as it was: not stale")
            #expect(fixture.requestCount("/items/1", method: .get) == 1)
        }
    }

    @Test("Reload (the default): the optimistic content stays until the reload's data replaces it; then invalidated")
    func reloadKeepsLayerUntilData() async throws {
        await withFixture { fixture in
            fixture.enqueue("/items", .text("a"), .text("a,b", delay: .seconds(5)))
            fixture.route("/items", .text("created b", status: 201), method: .post)
            let items = fixture.service.resource("/items")
            _ = await items.load().outcome
            let seen = ContentLog(items)

            let outcome = await items.mutate(
                .post, text: "b", optimistic: .updating { (list: String?) in (list ?? "") + ",b" }
            ).outcome
            #expect(outcome.entity?.typedContent(as: String.self) == "created b")
            #expect(items.text == "a,b", "the optimistic content stays while the reload is in flight")
            #expect(items.isLoading)
            #expect(await fixture.clock.waitForSleepers(1))
            fixture.clock.advance(by: .seconds(5))
            _ = await items.loadRequests.first?.outcome
            #expect(items.text == "a,b")
            #expect(
                seen.entries == [
                    .init(.newData(.optimistic), "a,b"), .init(.requested, "a,b"), .init(.newData(.network), "a,b"),
                ], "never the content from before the mutation")
            #expect(fixture.requestCount("/items", method: .get) == 2)
        }
    }

    @Test("A failed reload keeps the layer; the next load that brings data takes it away")
    func failedReloadKeepsLayer() async throws {
        await withFixture { fixture in
            fixture.enqueue("/items", .text("a"), .failure(.connectionFailed), .text("a,b"))
            fixture.route("/items", .status(204), method: .post)
            let items = fixture.service.resource("/items")
            _ = await items.load().outcome
            _ = await items.mutate(.post, text: "b", optimistic: .updating { (list: String?) in (list ?? "") + ",b" })
                .outcome
            _ = await items.loadRequests.first?.outcome
            #expect(items.latestError != nil)
            #expect(items.text == "a,b", "the server accepted it: its content stays over the error")
            _ = await items.load().outcome
            #expect(items.text == "a,b" && items.latestError == nil)
            // The layer is gone: a local override shows exactly what it says.
            items.overrideLocalContent(with: "z")
            #expect(items.text == "z")
        }
    }

    @Test("useResponse with 204 No Content reloads instead")
    func noContentReloads() async throws {
        await withFixture { fixture in
            fixture.enqueue("/items/1", .text("old"), .text("new"))
            fixture.route("/items/1", .status(204), method: .put)
            let item = fixture.service.resource("/items/1")
            _ = await item.load().outcome
            _ = await item.mutate(.put, text: "new", optimistic: .replacing(with: "new"), onSuccess: .useResponse)
                .outcome
            #expect(item.text == "new")
            _ = await item.loadRequests.first?.outcome
            #expect(item.text == "new")
            #expect(fixture.requestCount("/items/1", method: .get) == 2)
        }
    }

    @Test("New server data beneath a pending mutation: observers see it with the optimistic update on top")
    func newDataBeneathLayer() async throws {
        await withFixture { fixture in
            fixture.enqueue("/items", .text("a"), .text("a,x"))
            fixture.route("/items", .text("no", status: 500, delay: .seconds(1)), method: .post)
            let items = fixture.service.resource("/items")
            _ = await items.load().outcome
            let mutation = items.mutate(
                .post, text: "b", optimistic: .updating { (list: String?) in (list ?? "") + ",b" })
            #expect(items.text == "a,b")
            _ = await items.load().outcome
            #expect(items.text == "a,x,b", "the newer data, and the pending update over it")
            #expect(await fixture.clock.waitForSleepers(1))
            fixture.clock.advance(by: .seconds(1))
            _ = await mutation.outcome
            #expect(items.text == "a,x", "rolled back over the newer data, not to the data it began on")
        }
    }

    @Test("Cancelling a mutation rolls it back; a wipe cancels it and drops its layer")
    func cancelAndWipe() async throws {
        await withFixture { fixture in
            fixture.route("/items/1", .text("old"))
            fixture.route("/items/1", .never, method: .put)
            // Unanswered, so that only the wipe can end it (a DELETE with no route could fail before the wipe).
            fixture.route("/items/1", .never, method: .delete)
            let item = fixture.service.resource("/items/1")
            _ = await item.load().outcome
            let mutation = item.mutate(.put, text: "new", optimistic: .replacing(with: "new"))
            mutation.cancel()
            #expect(item.text == "old")
            #expect(mutation.completedOutcome?.error?.kind == .cancelled)

            let seen = ContentLog(item)
            let second = item.mutate(.delete, optimistic: .removing)
            #expect(item.latestData == nil)
            item.wipe()
            #expect(second.completedOutcome?.error?.kind == .cancelled)
            #expect(item.latestData == nil && !item.isRequesting)
            #expect(seen.entries.map(\.event) == [.newData(.optimistic), .newData(.wipe)], "no rollback after a wipe")
        }
    }

    @Test("Each mutation carries its own idempotency key, the same when repeated; the header is configurable")
    func idempotencyKeys() async throws {
        await withFixture { fixture in
            fixture.route("/items", .status(204), method: .post)
            let items = fixture.service.resource("/items")
            let first = items.mutate(.post, text: "a")
            _ = await first.outcome
            _ = await items.mutate(.post, text: "b").outcome
            _ = await first.repeated().start().outcome
            _ = await items.mutate(.post, text: "c", headers: ["Idempotency-Key": "mine"]).outcome
            let keys = fixture.transport.requests.map { $0.headers["Idempotency-Key"] }
            #expect(keys.count == 4 && keys.allSatisfy { $0 != nil })
            #expect(keys[0] != keys[1], "one key per mutation")
            #expect(keys[2] == keys[0], "a repeat is the same mutation")
            #expect(keys[3] == "mine")
            #expect(keys[0].flatMap(UUID.init(uuidString:)) != nil)

            fixture.service.configure("/items") { $0.idempotencyKeyHeader = "X-Request-Key" }
            _ = await items.mutate(.post, text: "d").outcome
            #expect(fixture.transport.requests.last?.headers["X-Request-Key"] != nil)
            #expect(fixture.transport.requests.last?.headers["Idempotency-Key"] == nil)
            fixture.service.configure("/items") { $0.idempotencyKeyHeader = nil }
            _ = await items.mutate(.post, text: "e").outcome
            #expect(fixture.transport.requests.last?.headers["X-Request-Key"] == nil)
        }
    }

    @Test("Past maxPendingMutations a mutation fails at once: nothing sent, nothing shown; room again once one settles")
    func pendingLimit() async throws {
        try await withFixture { fixture in
            fixture.route("/items", .text("a"))
            fixture.route("/items", .status(204, delay: .seconds(1)), method: .post)
            let items = fixture.service.resource("/items")
            _ = await items.load().outcome
            fixture.service.maxPendingMutations = 2
            let held = (0..<2).map { _ in items.mutate(.post, text: "x", optimistic: .replacing(with: "held")) }
            #expect(fixture.service.pendingMutationCount == 2)
            let refused = items.mutate(.post, text: "y", optimistic: .replacing(with: "refused"))
            let error = try #require(refused.completedOutcome?.error)
            #expect(error.kind == .tooManyPendingMutations)
            #expect(error.message.contains("2 mutations are pending"))
            #expect(items.text == "held")
            #expect(await fixture.clock.waitForSleepers(2))
            #expect(fixture.requestCount("/items", method: .post) == 2, "the refused one was not sent")
            held[0].cancel()
            #expect(fixture.service.pendingMutationCount == 1)
            #expect(items.mutate(.post, text: "z").completedOutcome == nil, "room again")
            fixture.service.maxPendingMutations = 0
            #expect(fixture.service.maxPendingMutations == 1, "at least one")
        }
    }

    @Test(
        "A server that applies a mutation and drops the connection before answering: retried with its key, applied once"
    )
    func droppedAnswerRetried() async throws {
        await withFixture { fixture in
            // The server keeps the answer to each key it has applied, and gives it again to a repeat.
            let answers = LockedValue<[String: String]>([:])
            let attempts = LockedValue(0)
            fixture.transport.respond { request in
                guard request.method == .post, let key = request.headers["Idempotency-Key"] else { return .text("a") }
                attempts.withLock { $0 += 1 }
                if let answer = answers.withLock({ $0[key] }) { return .text(answer) }
                answers.withLock { $0[key] = "a,b" }
                return .failure(.connectionFailed)  // applied; the answer never arrives
            }
            let retrying = RetryingTransport(
                fixture.transport, policy: RetryPolicy(maxAttempts: 3, initialBackoff: .zero), timeSource: fixture.clock
            )
            let service = Service(baseURL: base, transport: retrying, timeSource: fixture.clock)
            let list = service.resource("/list")
            _ = await list.load().outcome
            let outcome = await list.mutate(
                .post, text: "b", optimistic: .updating { (list: String?) in (list ?? "") + ",b" },
                onSuccess: .useResponse
            ).outcome
            #expect(outcome.entity?.typedContent(as: String.self) == "a,b")
            #expect(attempts.withLock { $0 } == 2, "a POST with a key is retried")
            #expect(answers.withLock { $0.count } == 1, "applied once")
            #expect(list.text == "a,b")
        }
    }

    @Test("A response the pipeline rejects fails the mutation, naming the stage, and rolls it back")
    func responseRejectedByPipeline() async throws {
        try await withFixture { fixture in
            fixture.route("/items/1", .json(#"{"name": "old"}"#))
            fixture.route("/items/1", .json("{not json"), method: .put)
            let item = fixture.service.resource("/items/1")
            _ = await item.load().outcome
            let outcome = await item.mutate(
                .put, json: ["name": "new"], optimistic: .replacing(with: ["name": "new"] as JSONValue),
                onSuccess: .useResponse
            ).outcome
            let error = try #require(outcome.error)
            #expect(error.kind.failedStage != nil, "\(error.kind)")
            #expect(error.method == .put && error.url.hasSuffix("/items/1"))
            #expect(item.json == ["name": "old"])
            #expect(item.latestError == nil)
        }
    }

    @Test("A body that does not encode fails at once: nothing sent, nothing shown")
    func unencodableBody() async throws {
        try await withFixture { fixture in
            fixture.route("/items/1", .text("old"))
            let item = fixture.service.resource("/items/1")
            _ = await item.load().outcome
            let seen = ContentLog(item)
            let mutation = item.mutate(.put, json: Double.nan, optimistic: .replacing(with: "new"))
            let error = try #require(mutation.completedOutcome?.error)
            #expect(error.kind == .invalidRequestBody)
            #expect(error.message.contains("Double"))
            #expect(item.text == "old" && seen.entries.isEmpty && !item.isRequesting)
            #expect(fixture.transport.requests.count == 1)
        }
    }

    @Test("invalidates: matching resources go stale, the observed ones reload; others are untouched")
    func invalidatesPatterns() async throws {
        await withFixture { fixture in
            for path in ["/stores/a/items", "/stores/b/items", "/stores/a/name"] { fixture.route(path, .text(path)) }
            fixture.route("/stores/a/items/1", .status(204), method: .delete)
            let observed = fixture.service.resource("/stores/a/items")
            let unobserved = fixture.service.resource("/stores/b/items")
            let other = fixture.service.resource("/stores/a/name")
            for resource in [observed, unobserved, other] { _ = await resource.load().outcome }
            let owner = Owner()
            observed.addObserver(owner: owner) { _, _ in }

            _ = await fixture.service.resource("/stores/a/items/1")
                .mutate(.delete, invalidates: ["/stores/*/items"]).outcome
            #expect(!unobserved.isUpToDate && !unobserved.isLoading, "stale, loaded when next needed")
            #expect(other.isUpToDate)
            _ = await observed.loadRequests.first?.outcome
            #expect(fixture.requestCount("/stores/a/items") == 2, "on screen: reloaded")
            #expect(fixture.requestCount("/stores/b/items") == 1)
            withExtendedLifetime(owner) {}
        }
    }

    /// Three mutations of one list, each adding its letter, overlapping: they begin in order, then end in every
    /// order, each succeeding or failing. After every step, the resource shows the server's list with the pending
    /// mutations' letters after it, in the order they began; observers only ever see such states.
    @Test(
        "Three overlapping mutations end in every order, succeeding and failing: each step shows what a fresh reckoning does",
        arguments: [MutationSuccess.useResponse, .reload])
    func overlappingMutations(onSuccess: MutationSuccess) async throws {
        let letters = ["b", "c", "d"]
        for order in permutations([0, 1, 2]) {
            for outcomes in 0..<8 {
                let succeeds = (0..<3).map { outcomes & (1 << $0) != 0 }
                await withFixture { fixture in
                    // The server's list when each mutation is answered: the letters that succeeded by then.
                    let answered = LockedValue<[Int]>([])
                    let server: @Sendable () -> String = {
                        (["a"] + answered.withLock { $0 }.filter { succeeds[$0] }.map { letters[$0] })
                            .joined(separator: ",")
                    }
                    fixture.transport.respond { request in
                        if request.method == .get { return .text(server()) }
                        let index = letters.firstIndex(of: String(decoding: request.body ?? Data(), as: UTF8.self))!
                        let rank = order.firstIndex(of: index)!
                        let delay = Duration.seconds(rank + 1)
                        guard succeeds[index] else { return .text("refused", status: 422, delay: delay) }
                        let list = (["a"] + order[...rank].filter { succeeds[$0] }.map { letters[$0] })
                        return .text(list.joined(separator: ","), delay: delay)
                    }
                    let list = fixture.service.resource("/list")
                    _ = await list.load().outcome
                    let seen = ContentLog(list)
                    var expected: [String] = ["a"]

                    var mutations: [Request] = []
                    for letter in letters {
                        mutations.append(
                            list.mutate(
                                .post, text: letter,
                                optimistic: .updating { (list: String?) in (list ?? "") + "," + letter },
                                onSuccess: onSuccess))
                        expected.append(list.text)
                    }
                    #expect(list.text == "a,b,c,d")
                    #expect(await fixture.clock.waitForSleepers(3))
                    var pending = [0, 1, 2]
                    for index in order {
                        answered.withLock { $0.append(index) }
                        pending.removeAll { $0 == index }
                        fixture.clock.advance(by: .seconds(1))
                        _ = await mutations[index].outcome
                        _ = await list.loadRequests.first?.outcome
                        let reckoned = ([server()] + pending.map { letters[$0] }).joined(separator: ",")
                        #expect(
                            list.text == reckoned,
                            "order \(order), succeeding \(succeeds), after mutation \(letters[index]) ended")
                        expected.append(reckoned)
                    }
                    // The last event may still be on its way to the observer from the thread that posted it.
                    let final = list.text
                    try? await eventually(within: .seconds(10)) { seen.entries.last?.content == final }
                    let shown = seen.entries.map(\.content).removingRepeats()
                    #expect(
                        shown.isSubsequence(of: expected.removingRepeats()),
                        "order \(order), succeeding \(succeeds): observers saw \(shown), steps were \(expected)")
                    #expect(shown.last == expected.last)
                }
            }
        }
    }
}

/// What an observer saw: each event, and the resource's text at that moment.
private final class ContentLog: Sendable {
    struct Entry: Equatable, Sendable {
        let event: ResourceEvent
        let content: String

        init(_ event: ResourceEvent, _ content: String) {
            self.event = event
            self.content = content
        }
    }

    private let log = LockedValue<[Entry]>([])
    private let owner = Owner()

    init(_ resource: Resource) {
        resource.addObserver(owner: owner) { [log] resource, event in
            guard event != .observerAdded else { return }
            log.withLock { $0.append(Entry(event, resource.text)) }
        }
    }

    var entries: [Entry] { log.withLock { $0 } }
}

private func permutations(_ items: [Int]) -> [[Int]] {
    guard items.count > 1 else { return [items] }
    return items.flatMap { first in permutations(items.filter { $0 != first }).map { [first] + $0 } }
}
