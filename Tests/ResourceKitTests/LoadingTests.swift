import EntityCacheKit
import Foundation
import ResourceKit
import Testing
import TetherClock
import TetherTesting
import TetherTestingTraits
import TransportKit

@Suite("Resource: loading, expiry, revalidation", .leakChecked)
struct LoadingTests {
    @Test("A load: requested (already loading), then newData (no longer loading), and the entity's details")
    func load() async throws {
        try await withFixture { fixture in
            fixture.route(
                "/items",
                .json(
                    #"{"items": [1, 2]}"#,
                    headers: ["etag": "\"v1\"", "Content-Type": "application/json; charset=utf-8"]))
            let items = fixture.service.resource("/items")
            let log = EventLog()
            let owner = Owner()
            items.addObserver(log, owner: owner)

            let outcome = await items.load().outcome
            #expect(outcome.entity != nil)
            #expect(
                log.log == [
                    .init(event: .observerAdded, isLoading: false), .init(event: .requested, isLoading: true),
                    .init(event: .newData(.network), isLoading: false),
                ])
            let data = try #require(items.latestData)
            #expect(data.etag == "\"v1\"")
            #expect(data.header("ETAG") == "\"v1\"")
            #expect(data.mimeType == "application/json")
            #expect(data.charset == "utf-8")
            #expect(data.timestamp == Date(timeIntervalSince1970: 1000))
            #expect(items.json?["items"]?[1]?.intValue == 2)
            #expect(items.latestError == nil && !items.isLoading && !items.isRequesting && items.isUpToDate)
            withExtendedLifetime(owner) {}
        }
    }

    @Test("loadIfNeeded from 100 concurrent callers causes one request, and all get the same one")
    func deduplication() async {
        await withFixture { fixture in
            fixture.route("/items", .json("[]", delay: .seconds(1)))
            let items = fixture.service.resource("/items")
            let requests = await withTaskGroup(of: ObjectIdentifier?.self) { group in
                for _ in 0..<100 { group.addTask { items.loadIfNeeded().map(ObjectIdentifier.init) } }
                var all: Set<ObjectIdentifier?> = []
                for await request in group { all.insert(request) }
                return all
            }
            #expect(requests.count == 1 && requests.first! != nil)
            // The load's task sends on its own time: its reply's delay, asleep on the clock, says it has.
            #expect(await fixture.clock.waitForSleepers(1))
            #expect(fixture.requestCount("/items") == 1)
            fixture.clock.advance(by: .seconds(1))
            _ = await items.loadIfNeeded()?.outcome
            #expect(items.loadIfNeeded() == nil)
            #expect(fixture.requestCount("/items") == 1)
        }
    }

    @Test("Expiry: data at t=1000 is not reloaded at 1010 but is at 2000; with expirationTime 1, at 1002")
    func expiry() async {
        await withFixture { fixture in
            fixture.route("/items", .json("[]"))
            let items = fixture.service.resource("/items")
            _ = await items.loadIfNeeded()?.outcome
            fixture.clock.set(to: Date(timeIntervalSince1970: 1010))
            #expect(items.loadIfNeeded() == nil)
            fixture.clock.set(to: Date(timeIntervalSince1970: 2000))
            _ = await items.loadIfNeeded()?.outcome
            #expect(fixture.requestCount("/items") == 2)

            let fast = fixture.service.resource("/fast")
            fixture.service.configure("/fast") { $0.expirationTime = .seconds(1) }
            fixture.route("/fast", .json("[]"))
            _ = await fast.loadIfNeeded()?.outcome  // t = 2000
            fixture.clock.advance(by: .seconds(1))
            #expect(fast.loadIfNeeded() == nil, "exactly the expiration time old is still up to date")
            fixture.clock.advance(by: .seconds(1))
            _ = await fast.loadIfNeeded()?.outcome
            #expect(fixture.requestCount("/fast") == 2)
        }
    }

    @Test("Retry: after an error at t=1000, no retry within retryTime (default 1 s), a retry after it")
    func retry() async {
        await withFixture { fixture in
            fixture.route("/flaky", .status(500))
            let flaky = fixture.service.resource("/flaky")
            _ = await flaky.loadIfNeeded()?.outcome
            #expect(flaky.latestError?.httpStatusCode == 500)
            fixture.clock.advance(by: .milliseconds(500))
            #expect(flaky.loadIfNeeded() == nil)
            fixture.clock.advance(by: .milliseconds(1500))
            _ = await flaky.loadIfNeeded()?.outcome
            #expect(fixture.requestCount("/flaky") == 2)

            fixture.service.configure("/slow-retry") { $0.retryTime = .seconds(10) }
            fixture.route("/slow-retry", .failure(.connectionFailed))
            let slow = fixture.service.resource("/slow-retry")
            _ = await slow.loadIfNeeded()?.outcome
            #expect(slow.latestError?.kind == .transport(.connectionFailed))
            fixture.clock.advance(by: .seconds(9))
            #expect(slow.loadIfNeeded() == nil)
            fixture.clock.advance(by: .seconds(2))
            #expect(slow.loadIfNeeded() != nil)
        }
    }

    @Test(
        "A wall clock stepped back an hour: data still expires after its expiration time, and retries are not held off")
    func wallClockStepsBack() async {
        await withFixture { fixture in
            fixture.route("/items", .json("[]"))
            let items = fixture.service.resource("/items")
            _ = await items.loadIfNeeded()?.outcome
            fixture.clock.stepWallClock(by: .seconds(-3_600))
            #expect(items.loadIfNeeded() == nil, "10 s after loading, still up to date")
            fixture.clock.advance(by: .seconds(31))
            #expect(!items.isUpToDate, "30 s data is stale 31 s after loading, whatever the wall clock says")
            _ = await items.loadIfNeeded()?.outcome
            #expect(fixture.requestCount("/items") == 2)

            fixture.route("/flaky", .status(500))
            let flaky = fixture.service.resource("/flaky")
            _ = await flaky.loadIfNeeded()?.outcome
            fixture.clock.stepWallClock(by: .seconds(-3_600))
            fixture.clock.advance(by: .seconds(2))
            _ = await flaky.loadIfNeeded()?.outcome
            #expect(fixture.requestCount("/flaky") == 2, "the retry comes after retryTime, not an hour later")
        }
    }

    @Test("A wall clock stepped forward: in-process ages do not jump (no reload before the expiration time)")
    func wallClockStepsForward() async {
        await withFixture { fixture in
            fixture.route("/items", .json("[]"))
            let items = fixture.service.resource("/items")
            _ = await items.loadIfNeeded()?.outcome
            fixture.clock.stepWallClock(by: .seconds(86_400))
            #expect(items.isUpToDate)
            #expect(items.loadIfNeeded() == nil)
        }
    }

    @Test(
        "Cached data stamped in the future is stale: it is shown, and loaded again at once (it was once served forever)"
    )
    func futureTimestampFromCache() async throws {
        await withFixture { fixture in
            let storage = InMemoryEntityCache()
            let cache = PersistentCache(storage)
            fixture.service.configure { $0.persistentCache = cache }
            fixture.route("/items", .json("[1]"))
            let items = fixture.service.resource("/items")
            let aYearAhead = fixture.clock.now.addingTimeInterval(365 * 86_400)
            try? storage.writeEntity(
                CachedEntity(body: Data("[0]".utf8), headers: [], timestamp: aYearAhead),
                forKey: items.url!.absoluteString)
            _ = await items.loadIfNeeded()?.outcome
            #expect(fixture.requestCount("/items") == 1, "the future-stamped entry did not count as up to date")
        }
    }

    @Test("ETag: If-None-Match is sent; 304 keeps the data, touches its timestamp and sends notModified")
    func notModified() async {
        await withFixture { fixture in
            fixture.enqueue("/items", .json("[1]", headers: ["ETag": "\"v1\""]), .status(304))
            let items = fixture.service.resource("/items")
            let log = EventLog()
            let owner = Owner()
            items.addObserver(log, owner: owner)
            _ = await items.load().outcome
            fixture.clock.advance(by: .seconds(60))
            let outcome = await items.load().outcome
            guard case .notModified(let entity?) = outcome else {
                Issue.record("expected notModified with the data, got \(outcome)")
                return
            }
            #expect(entity.timestamp == Date(timeIntervalSince1970: 1060))
            #expect(fixture.transport.requests.first?.headers["If-None-Match"] == nil)
            #expect(fixture.transport.requests.last?.headers["if-none-match"] == "\"v1\"")
            #expect(items.latestData?.timestamp == Date(timeIntervalSince1970: 1060))
            #expect(items.json == .array([.number(1)]))
            #expect(log.events.suffix(2) == [.requested, .notModified])
            withExtendedLifetime(owner) {}
        }
    }

    @Test("304 with no data is an error")
    func notModifiedWithoutData() async {
        await withFixture { fixture in
            fixture.route("/items", .status(304))
            let items = fixture.service.resource("/items")
            let error = await items.load().outcome.error
            #expect(error?.kind == .notModifiedWithoutData)
            #expect(items.latestError?.kind == .notModifiedWithoutData)
            #expect(items.latestData == nil)
        }
    }

    @Test("The last valid data survives errors; the server's error body is kept; success clears the error")
    func errorsKeepData() async throws {
        try await withFixture { fixture in
            fixture.enqueue(
                "/items", .json("[1]"), .text("down for maintenance", status: 503), .json("[2]"))
            let items = fixture.service.resource("/items")
            _ = await items.load().outcome
            let error = try #require(await items.load().outcome.error)
            #expect(error.httpStatusCode == 503)
            #expect(error.message == "HTTP 503 (Service Unavailable)")
            #expect(error.entity?.typedContent(as: String.self) == "down for maintenance")
            #expect(error.url == base + "/items" && error.method == .get)
            #expect(items.json == .array([.number(1)]))
            _ = await items.load().outcome
            #expect(items.latestError == nil)
            #expect(items.json == .array([.number(2)]))
        }
    }

    @Test("Cancelling a load changes nothing but isLoading, and sends requestCancelled")
    func cancellation() async {
        await withFixture { fixture in
            fixture.enqueue("/items", .json("[1]"), .json("[2]", delay: .seconds(5)))
            let items = fixture.service.resource("/items")
            _ = await items.load().outcome
            let log = EventLog()
            let owner = Owner()
            items.addObserver(log, owner: owner)
            let request: Request = items.load()
            #expect(items.isLoading)
            request.cancel()
            #expect(!items.isLoading)
            #expect(await request.outcome.error?.isCancellation == true)
            #expect(log.events == [.observerAdded, .requested, .requestCancelled])
            #expect(items.json == .array([.number(1)]) && items.latestError == nil)
            fixture.clock.advance(by: .seconds(5))
            #expect(items.json == .array([.number(1)]), "a cancelled response never lands")
            withExtendedLifetime(owner) {}
        }
    }

    @Test("Wipe during a load: the load is cancelled and never touches the state; newData(wipe) is sent")
    func wipeDuringLoad() async {
        await withFixture { fixture in
            fixture.enqueue("/items", .json("[1]"), .json("[2]", delay: .seconds(5)))
            let items = fixture.service.resource("/items")
            _ = await items.load().outcome
            items.invalidate()
            let log = EventLog()
            let owner = Owner()
            items.addObserver(log, owner: owner)
            let request: Request = items.load()
            #expect(await fixture.clock.waitForSleepers(1))
            items.wipe()
            #expect(items.latestData == nil && items.latestError == nil && !items.isLoading && !items.isRequesting)
            #expect(!items.isUpToDate)
            fixture.clock.advance(by: .seconds(5))
            #expect(await request.outcome.error?.isCancellation == true)
            #expect(items.latestData == nil)
            #expect(log.events == [.observerAdded, .requested, .newData(.wipe)])
            withExtendedLifetime(owner) {}
        }
    }

    @Test("A local override after invalidate counts as fresh data from its timestamp: loadIfNeeded does not load")
    func overrideClearsInvalidation() async {
        await withFixture { fixture in
            fixture.route("/items", .json("[1]"))
            let items = fixture.service.resource("/items")
            _ = await items.load().outcome
            items.invalidate()
            #expect(!items.isUpToDate)
            items.overrideLocalContent(with: [2])
            #expect(items.isUpToDate, "fresh from its timestamp")
            #expect(items.loadIfNeeded() == nil)
            #expect(fixture.requestCount("/items") == 1)
            fixture.clock.advance(by: .seconds(31))
            #expect(items.loadIfNeeded() != nil, "and it expires like any data")
        }
    }

    @Test("invalidate makes loadIfNeeded load; a load in flight at the invalidation brings stale data")
    func invalidation() async {
        await withFixture { fixture in
            fixture.route("/items", .json("[]", delay: .seconds(1)))
            let items = fixture.service.resource("/items")
            let first: Request = items.load()
            #expect(await fixture.clock.waitForSleepers(1))
            items.invalidate()
            fixture.clock.advance(by: .seconds(1))
            _ = await first.outcome
            #expect(!items.isUpToDate, "invalidated while loading: the data is already stale")
            let second = items.loadIfNeeded()
            #expect(second != nil)
            #expect(await fixture.clock.waitForSleepers(1))
            fixture.clock.advance(by: .seconds(1))
            _ = await second?.outcome
            #expect(items.isUpToDate)
            #expect(items.loadIfNeeded() == nil)
        }
    }

    @Test("load supersedes a load in flight: the older outcome does not touch the state")
    func supersede() async {
        await withFixture { fixture in
            fixture.enqueue("/items", .json("[\"old\"]", delay: .seconds(5)), .json("[\"new\"]", delay: .seconds(1)))
            let items = fixture.service.resource("/items")
            let old: Request = items.load()
            #expect(await fixture.clock.waitForSleepers(1))
            let new: Request = items.load()
            #expect(await fixture.clock.waitForSleepers(2))
            fixture.clock.advance(by: .seconds(1))
            _ = await new.outcome
            fixture.clock.advance(by: .seconds(4))
            #expect(await old.outcome.entity != nil, "the older request still completes for its caller")
            #expect(items.json == .array([.string("new")]))
        }
    }

    @Test("overrideLocalData replaces the data, clears the error, and sends newData(localOverride)")
    func localOverride() async {
        await withFixture { fixture in
            fixture.route("/items", .status(500))
            let items = fixture.service.resource("/items")
            _ = await items.load().outcome
            let log = EventLog()
            let owner = Owner()
            items.addObserver(log, owner: owner)
            items.overrideLocalContent(with: "draft")
            #expect(items.text == "draft" && items.latestError == nil)
            #expect(log.events == [.observerAdded, .newData(.localOverride)])
            withExtendedLifetime(owner) {}
        }
    }

    @Test("request(method:body:) sends with the body and never touches state or observers")
    func plainRequests() async throws {
        try await withFixture { fixture in
            fixture.route("/items", .json(#"{"id": 7}"#, status: 201, delay: .seconds(1)), method: .post)
            let items = fixture.service.resource("/items")
            let log = EventLog()
            let owner = Owner()
            items.addObserver(log, owner: owner)
            struct Draft: Encodable { let name: String }
            let request = items.request(.post, json: Draft(name: "pen"))
            #expect(items.isRequesting && !items.isLoading)
            #expect(await fixture.clock.waitForSleepers(1))
            fixture.clock.advance(by: .seconds(1))
            let entity = try #require(await request.outcome.entity)
            #expect(entity.typedContent(as: JSONValue.self)?["id"]?.intValue == 7)
            let sent = try #require(fixture.transport.requests.last)
            #expect(sent.method == .post && sent.headers["content-type"] == "application/json")
            #expect(String(decoding: sent.body ?? Data(), as: UTF8.self) == #"{"name":"pen"}"#)
            #expect(items.latestData == nil && !items.isRequesting)
            #expect(log.events == [.observerAdded])
            withExtendedLifetime(owner) {}
        }
    }

    @Test("A body that does not encode fails the request without sending, saying why")
    func badBody() async throws {
        try await withFixture { fixture in
            let error = try #require(
                await fixture.service.resource("/n").request(.put, json: ["x": Double.nan]).outcome.error)
            #expect(error.kind == .invalidRequestBody)
            #expect(error.message.contains("does not encode"))
            #expect(fixture.transport.requests.isEmpty)
        }
    }

    @Test("cancelLoadIfUnobserved cancels only when nobody observes, after the delay")
    func cancelIfUnobserved() async {
        await withFixture { fixture in
            fixture.route("/items", .json("[]", delay: .seconds(10)))
            let items = fixture.service.resource("/items")
            let watched: Request = items.load()
            let owner = Owner()
            items.addObserver(owner: owner) { _, _ in }
            items.cancelLoadIfUnobserved()
            #expect(items.isLoading)
            await items.removeObservers(ownedBy: owner)
            items.cancelLoadIfUnobserved(afterDelay: .seconds(2))
            #expect(await fixture.clock.waitForSleepers(2))
            #expect(items.isLoading, "not before the delay")
            fixture.clock.advance(by: .seconds(2))
            #expect(await watched.outcome.error?.isCancellation == true)
            #expect(!items.isLoading)
        }
    }
}
