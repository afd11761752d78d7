import Foundation
import ResourceKit
import Testing
import TetherClock
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

@Suite("Request: outcome hooks and introspection", .leakChecked)
struct RequestHookTests {
    /// Which hooks a request called, in order.
    final class Hooks: Sendable {
        let calls = LockedValue<[String]>([])

        func attach(to request: Request) {
            request
                .onNewData { [calls] _ in calls.withLock { $0.append("newData") } }
                .onNotModified { [calls] in calls.withLock { $0.append("notModified") } }
                .onSuccess { [calls] _ in calls.withLock { $0.append("success") } }
                .onFailure { [calls] _ in calls.withLock { $0.append("failure") } }
                .onCompletion { [calls] _ in calls.withLock { $0.append("completion") } }
        }

        var list: [String] { calls.withLock { $0 } }
    }

    @Test("onNewData fires for new data only, onNotModified for a 304 only, each beside onSuccess")
    func newDataAndNotModified() async {
        await withFixture { fixture in
            fixture.enqueue("/items", .json("[1]", headers: ["ETag": "\"v1\""]), .status(304))
            let items = fixture.service.resource("/items")

            let first = Hooks()
            let load = items.load()
            first.attach(to: load)
            _ = await load.outcome
            #expect(first.list == ["newData", "success", "completion"])

            let second = Hooks()
            let revalidation = items.load()
            second.attach(to: revalidation)
            _ = await revalidation.outcome
            #expect(second.list == ["notModified", "success", "completion"])
            #expect(fixture.transport.requests.last?.headers["If-None-Match"] == "\"v1\"")

            let third = Hooks()
            fixture.enqueue("/items", .status(500))
            let failing = items.load()
            third.attach(to: failing)
            _ = await failing.outcome
            #expect(third.list == ["failure", "completion"])
        }
    }

    @Test("A hook added to a completed request runs at once, with the outcome it had")
    func hookAfterCompletion() async {
        await withFixture { fixture in
            fixture.route("/items", .json("[1]"))
            let load = fixture.service.resource("/items").load()
            _ = await load.outcome
            let hooks = Hooks()
            hooks.attach(to: load)
            #expect(hooks.list == ["newData", "success", "completion"])
        }
    }

    @Test("allRequests and loadRequests list what is in flight, oldest first; each leaves as it ends")
    func introspection() async {
        await withFixture { fixture in
            fixture.enqueue("/items", .json("[1]", delay: .seconds(3)), .json("[2]", delay: .seconds(1)))
            fixture.transport.route(.post, base + "/items", reply: .status(201, delay: .seconds(2)))
            let items = fixture.service.resource("/items")
            #expect(items.allRequests.isEmpty && items.loadRequests.isEmpty)

            // Each reaches the transport before the next starts: queued replies go in the order requests arrive.
            let first = items.load()
            #expect(await fixture.clock.waitForSleepers(1))
            let post = items.request(.post, text: "new")
            #expect(await fixture.clock.waitForSleepers(2))
            let second = items.load()  // supersedes the first, which stays in flight until it ends
            #expect(items.allRequests == [first, post, second])
            #expect(items.loadRequests == [first, second])
            #expect(items.isLoading && items.isRequesting)

            #expect(await fixture.clock.waitForSleepers(3))
            fixture.clock.advance(by: .seconds(1))  // the second load's reply
            _ = await second.outcome
            #expect(items.allRequests == [first, post])
            #expect(items.loadRequests == [first])
            #expect(!items.isLoading, "a superseded load in flight is not the resource loading")

            fixture.clock.advance(by: .seconds(1))  // the post's reply
            _ = await post.outcome
            #expect(items.allRequests == [first])

            first.cancel()
            #expect(items.allRequests.isEmpty && items.loadRequests.isEmpty && !items.isRequesting)
            #expect(items.json?[0]?.intValue == 2, "the superseded load changed nothing")
        }
    }

    @Test("request(urlEncoded:) sends a form body, names sorted and percent-encoded")
    func urlEncodedBody() async {
        await withFixture { fixture in
            fixture.transport.route(.post, base + "/token", reply: .json(#"{"access_token": "t"}"#))
            let fields = ["grant_type": "password", "username": "ada lovelace", "password": "p&ss=wörd"]
            _ = await fixture.service.resource("/token").request(.post, urlEncoded: fields).outcome
            let sent = fixture.transport.requests.first
            #expect(sent?.headers["Content-Type"] == "application/x-www-form-urlencoded")
            #expect(
                sent?.body.map { String(decoding: $0, as: UTF8.self) }
                    == "grant_type=password&password=p%26ss%3Dw%C3%B6rd&username=ada%20lovelace")
        }
    }

    @Test("timestamp is the newer of the data's and the error's, nil with neither")
    func timestamp() async {
        await withFixture { fixture in
            fixture.enqueue("/items", .json("[1]"), .status(500))
            let items = fixture.service.resource("/items")
            #expect(items.timestamp == nil)
            _ = await items.load().outcome
            #expect(items.timestamp == Date(timeIntervalSince1970: 1000))
            fixture.clock.advance(by: .seconds(5))
            _ = await items.load().outcome
            #expect(items.latestError != nil && items.timestamp == Date(timeIntervalSince1970: 1005))
        }
    }

    @Test("wipe() cancels every request in flight and empties the lists")
    func wipeEmptiesTheLists() async {
        await withFixture { fixture in
            // Every method unanswered: only the wipe ends them (a PUT with no route could fail before it).
            fixture.route("/items", .never, method: nil)
            let items = fixture.service.resource("/items")
            let load = items.load()
            let put = items.request(.put, text: "x")
            #expect(items.allRequests == [load, put])
            items.wipe()
            #expect(items.allRequests.isEmpty)
            #expect(load.completedOutcome?.error?.isCancellation == true)
            #expect(put.completedOutcome?.error?.isCancellation == true)
        }
    }
}
