import Foundation
import ResourceKit
import Testing
import TetherClock
import TetherTesting
import TetherTestingTraits
import TransportKit

@Suite("Resource: async forms", .leakChecked)
struct AsyncTests {
    @Test("try await loadedData() returns the entity, or throws the typed error; load() stays the Request")
    func asyncLoad() async throws {
        try await withFixture { fixture in
            fixture.enqueue("/items", .json("[1]"), .status(404))
            let items = fixture.service.resource("/items")
            let entity = try await items.loadedData()
            #expect(entity.typedContent(as: JSONValue.self) == .array([.number(1)]))
            do throws(ResourceError) {
                _ = try await items.loadedData()
                Issue.record("expected a 404")
            } catch {
                #expect(error.httpStatusCode == 404)
            }
            #expect(try await items.upToDateData().typedContent(as: JSONValue.self) == .array([.number(1)]))
            // In async code, `load()` is still the Request-returning one.
            fixture.enqueue("/items", .json("[2]"))
            let request = items.load()
            #expect(await request.outcome.entity?.typedContent(as: JSONValue.self) == .array([.number(2)]))
        }
    }

    @Test("Cancelling the awaiting task cancels the load")
    func cancellation() async {
        await withFixture { fixture in
            fixture.route("/slow", .json("[]", delay: .seconds(60)))
            let slow = fixture.service.resource("/slow")
            let task = Task { try await slow.loadedData() }
            #expect(await fixture.clock.waitForSleepers(1))
            task.cancel()
            let result = await task.result
            #expect((try? result.get()) == nil)
            #expect(!slow.isLoading && slow.latestError == nil)
        }
    }

    @Test("events: observerAdded first, then the resource's events; the observer ends with the iteration")
    func events() async {
        await withFixture { fixture in
            fixture.route("/items", .json("[]"))
            let items = fixture.service.resource("/items")
            let reader = Task {
                var seen: [ResourceEvent] = []
                for await event in items.events {
                    seen.append(event)
                    if event == .newData(.network) { break }
                }
                return seen
            }
            while !items.hasObservers { await Task.yield() }
            _ = await items.load().outcome
            let seen = await reader.value
            #expect(seen.first == .observerAdded)
            #expect(seen.last == .newData(.network))
            #expect(!items.hasObservers, "the iterator is gone, and so is its observer")
        }
    }
}
