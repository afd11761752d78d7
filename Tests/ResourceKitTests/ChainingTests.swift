import Foundation
import ResourceKit
import Testing
import TetherClock
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

/// An app's token store: one refresh at a time, shared by every request that needs it.
final class TokenRefresher: Sendable {
    let service: Service
    let token = LockedValue("old")
    let inFlight = LockedValue<Request?>(nil)
    /// How many callers asked for a refresh.
    let asks = LockedValue(0)

    init(service: Service) {
        self.service = service
    }

    /// The refresh in flight, or a new one: on success it stores the token and makes every resource read it.
    func refresh() -> Request {
        asks.withLock { $0 += 1 }
        return inFlight.withLock { current in
            if let current, !current.isCompleted { return current }
            let refresh = service.resource("/token").request(.post, text: "refresh")
            refresh.onSuccess { [token, service] entity in
                token.withLock { $0 = (entity.content as? String) ?? "?" }
                service.invalidateConfiguration()
            }
            current = refresh
            return refresh
        }
    }

    /// Sends the token on every request to /items, and on a 401 refreshes once and sends the request again. The
    /// service keeps these closures, and this refresher keeps the service: each captures it weakly.
    func install() {
        service.configure("/items/**") { [weak self] configuration in
            guard let self else { return }
            configuration.headers["Authorization"] = "Bearer " + token.withLock { $0 }
            configuration.decorateRequests { [weak self] _, request in
                request.chained { [weak self] outcome in
                    guard outcome.error?.httpStatusCode == 401, let self else { return .useThisResponse }
                    return .passTo(
                        refresh().chained { refreshed in
                            refreshed.error == nil ? .passTo(request.repeated()) : .useThisResponse
                        })
                }
            }
        }
    }
}

@Suite("Requests: chaining, decoration, repeat, load(using:)", .leakChecked, .timeLimit(minutes: 2))
struct ChainingTests {
    /// Answers /items/N with 200 for the new token and 401 for any other; /token with "new" after a second.
    func serveWithTokens(_ fixture: Fixture) {
        fixture.transport.respond { request in
            let path = request.url.path
            if path.hasSuffix("/token") { return .text("new", delay: .seconds(1)) }
            guard request.headers["Authorization"] == "Bearer new" else { return .status(401) }
            return .json(#"{"path": "\#(path)"}"#)
        }
    }

    @Test("A token refresh shared by 10 concurrent 401s: one refresh request, each original request sent again once")
    func sharedTokenRefresh() async throws {
        try await withFixture { fixture in
            serveWithTokens(fixture)
            let refresher = TokenRefresher(service: fixture.service)
            refresher.install()
            let items = (0..<10).map { fixture.service.resource("/items/\($0)") }
            let loads = items.map { $0.load() }

            // Every load got its 401 and asked for the refresh, which waits on the clock.
            try await eventually { refresher.asks.withLock { $0 } == 10 }
            // Waited for by a deadline, not a number of yields: advanced before the refresh sleeps, the clock would
            // never wake it (under ThreadSanitizer on a loaded machine, 100,000 yields were once not enough).
            try await eventually { fixture.clock.sleeperCount >= 1 }
            #expect(loads.allSatisfy { !$0.isCompleted })
            fixture.clock.advance(by: .seconds(1))

            for load in loads { #expect(await load.outcome.error == nil) }
            for (index, resource) in items.enumerated() {
                #expect(resource.json?["path"]?.stringValue == "/v1/items/\(index)")
                #expect(resource.latestError == nil && !resource.isLoading)
            }
            let sent = fixture.transport.requests
            #expect(sent.count { $0.url.path.hasSuffix("/token") } == 1, "exactly one refresh")
            for index in 0..<10 {
                let tries = sent.filter { $0.url.path == "/v1/items/\(index)" }.map { $0.headers["Authorization"] }
                #expect(tries == ["Bearer old", "Bearer new"], "/items/\(index): sent once, then once again")
            }
        }
    }

    @Test("Decorators apply to requests as well as loads; a failed refresh ends the chain with its own failure")
    func decoratedRequestAndFailedRefresh() async {
        await withFixture { fixture in
            fixture.transport.respond { request in
                request.url.path.hasSuffix("/token") ? .status(503) : .status(401)
            }
            let refresher = TokenRefresher(service: fixture.service)
            refresher.install()
            let post = fixture.service.resource("/items/1").request(.post, text: "new item")
            let outcome = await post.outcome
            #expect(outcome.error?.httpStatusCode == 503, "the refresh's failure is the outcome")
            #expect(fixture.transport.requests.map(\.method) == [.post, .post], "the item, then the token")
            #expect(refresher.token.withLock { $0 } == "old")
        }
    }

    @Test("Cancelling a chain cancels the request it waits on and stops it: whenCompleted never runs")
    func cancelWhileWaitingOnFirst() async {
        await withFixture { fixture in
            fixture.route("/slow", .json("[]", delay: .seconds(10)))
            let called = LockedValue(false)
            let first = fixture.service.resource("/slow").request(.get)
            let chain = first.chained { _ in
                called.withLock { $0 = true }
                return .useThisResponse
            }
            #expect(chain.isStarted, "chained to a started request, the chain starts at once")
            #expect(await fixture.clock.waitForSleepers(1))
            chain.cancel()
            #expect(chain.completedOutcome?.error?.isCancellation == true)
            #expect(await first.outcome.error?.isCancellation == true, "the request waited on is cancelled")
            #expect(!called.withLock { $0 })
        }
    }

    @Test("Cancelling a chain that has passed on cancels the request it passed to")
    func cancelWhilePassedOn() async throws {
        try await withFixture { fixture in
            fixture.route("/first", .json("1"))
            fixture.route("/second", .json("2", delay: .seconds(10)))
            let second = LockedValue<Request?>(nil)
            let chain = fixture.service.resource("/first").request(.get).chained { [service = fixture.service] _ in
                let next = service.resource("/second").request(.get)
                second.withLock { $0 = next }
                return .passTo(next)
            }
            #expect(await fixture.clock.waitForSleepers(1))
            let passedTo = try #require(second.withLock { $0 })
            chain.cancel()
            #expect(await passedTo.outcome.error?.isCancellation == true)
        }
    }

    @Test("A request shared by two chains survives one chain's cancellation, and serves the other")
    func sharedRequestSurvivesOneCancellation() async {
        await withFixture { fixture in
            fixture.route("/shared", .json("[1]", delay: .seconds(1)))
            let shared = fixture.service.resource("/shared").request(.get)
            let a = shared.chained { _ in .useThisResponse }
            let b = shared.chained { _ in .useThisResponse }
            #expect(await fixture.clock.waitForSleepers(1))
            a.cancel()
            #expect(!shared.isCompleted, "b still follows it")
            fixture.clock.advance(by: .seconds(1))
            #expect(await b.outcome.entity != nil)
            #expect(a.completedOutcome?.error?.isCancellation == true)
        }
    }

    @Test("useResponse ends the chain with the outcome given")
    func useResponse() async {
        await withFixture { fixture in
            fixture.route("/missing", .status(404))
            let fallback = Entity(content: "fallback", timestamp: Date(timeIntervalSince1970: 0))
            let chain = fixture.service.resource("/missing").request(.get).chained { outcome in
                outcome.error?.httpStatusCode == 404 ? .useResponse(.newData(fallback)) : .useThisResponse
            }
            #expect(await chain.outcome.entity?.content as? String == "fallback")
        }
    }

    @Test("repeated() sends the same method and body with the headers as configured now, once started")
    func repeated() async {
        await withFixture { fixture in
            fixture.transport.route(.put, base + "/items/1", reply: .status(204))
            let version = LockedValue(1)
            fixture.service.configure { configuration in
                configuration.headers["X-Version"] = "\(version.withLock { $0 })"
            }
            let put = fixture.service.resource("/items/1").request(.put, text: "body")
            _ = await put.outcome
            version.withLock { $0 = 2 }
            fixture.service.invalidateConfiguration()
            let again = put.repeated()
            #expect(!again.isStarted && fixture.transport.requests.count == 1, "not sent until started")
            _ = await again.start().outcome
            let sent = fixture.transport.requests
            #expect(sent.count == 2 && sent[1].method == .put)
            #expect(sent[1].body == Data("body".utf8))
            #expect(sent.map { $0.headers["X-Version"] } == ["1", "2"])
        }
    }

    @Test("repeated() on a chain repeats the request and runs the chain again")
    func repeatedChain() async {
        await withFixture { fixture in
            fixture.enqueue("/items", .status(500), .json("[1]"))
            let runs = LockedValue(0)
            let chain = fixture.service.resource("/items").request(.get).chained { _ in
                runs.withLock { $0 += 1 }
                return .useThisResponse
            }
            #expect(await chain.outcome.error?.httpStatusCode == 500)
            #expect(await chain.repeated().start().outcome.entity != nil)
            #expect(runs.withLock { $0 } == 2)
            #expect(fixture.transport.requests.count == 2)
        }
    }

    @Test("load(using:) makes a request's outcome the resource's: state updated, observers told, in order")
    func loadUsing() async {
        await withFixture { fixture in
            // The reply waits for the manual clock: answered at once, the request could complete before the check
            // that the resource is loading (it did, once, under ThreadSanitizer).
            fixture.transport.route(.put, base + "/profile", reply: .json(#"{"name": "Ada"}"#, delay: .seconds(1)))
            let profile = fixture.service.resource("/profile")
            let log = EventLog()
            let owner = Owner()
            profile.addObserver(log, owner: owner)
            let put = profile.request(.put, text: #"{"name": "Ada"}"#)
            let load = profile.load(using: put)
            #expect(profile.isLoading && profile.loadRequests == [load])
            #expect(await fixture.clock.waitForSleepers(1))
            fixture.clock.advance(by: .seconds(1))
            let outcome = await load.outcome
            #expect(outcome.entity != nil)
            #expect(profile.json?["name"]?.stringValue == "Ada")
            #expect(
                log.log == [
                    .init(event: .observerAdded, isLoading: false), .init(event: .requested, isLoading: true),
                    .init(event: .newData(.network), isLoading: false),
                ])
            #expect(fixture.transport.requests.map(\.method) == [.put], "the load sent nothing of its own")
            withExtendedLifetime(owner) {}
        }
    }

    @Test("load(using:) with a failing request sets the error; cancelling the load cancels the request")
    func loadUsingFailureAndCancellation() async {
        await withFixture { fixture in
            fixture.transport.route(.post, base + "/items", reply: .status(422))
            let items = fixture.service.resource("/items")
            _ = await items.load(using: items.request(.post, text: "bad")).outcome
            #expect(items.latestError?.httpStatusCode == 422)

            fixture.transport.route(.post, base + "/items", reply: .status(201, delay: .seconds(10)))
            let slow = items.request(.post, text: "slow")
            let load = items.load(using: slow)
            #expect(await fixture.clock.waitForSleepers(1))
            load.cancel()
            #expect(await slow.outcome.error?.isCancellation == true)
            #expect(!items.isLoading && items.latestError?.httpStatusCode == 422, "cancellation changes nothing")
        }
    }
}
