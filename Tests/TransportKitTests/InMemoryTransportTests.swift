import Foundation
import Testing
import TetherClock
import TetherConcurrency
import TetherTesting
import TransportKit

@Suite("InMemoryTransport")
struct InMemoryTransportTests {
    let url = URL(string: "https://api.example.com/items")!

    @Test("A route answers every request; queued replies come first, one each; the log keeps every request")
    func routesAndQueues() async throws {
        let transport = InMemoryTransport()
        transport.route(.get, url.absoluteString, reply: .json(#"{"n": 1}"#, headers: ["ETag": "\"v1\""]))
        transport.enqueue(.get, url.absoluteString, .status(503), .text("second"))

        let first = try await transport.send(TransportRequest(url: url))
        let second = try await transport.send(TransportRequest(url: url))
        let third = try await transport.send(TransportRequest(url: url, headers: ["If-None-Match": "\"v1\""]))
        #expect(first.status == 503)
        #expect(String(decoding: second.body, as: UTF8.self) == "second")
        #expect(second.headers["content-type"] == "text/plain; charset=utf-8")
        #expect(third.status == 200 && third.headers["etag"] == "\"v1\"")
        #expect(transport.requestCount(to: url.absoluteString) == 3)
        #expect(transport.requests.last?.headers["If-None-Match"] == "\"v1\"")
    }

    @Test("A route for a method wins over a route for any method; other methods fall back")
    func methodRoutes() async throws {
        let transport = InMemoryTransport()
        transport.route(url.absoluteString, reply: .status(204))
        transport.route(.post, url.absoluteString, reply: .status(201))
        #expect(try await transport.send(TransportRequest(method: .post, url: url)).status == 201)
        #expect(try await transport.send(TransportRequest(method: .delete, url: url)).status == 204)
    }

    @Test("No route is a typed error naming the request")
    func noRoute() async {
        let transport = InMemoryTransport()
        await #expect {
            try await transport.send(TransportRequest(method: .put, url: url))
        } throws: { error in
            guard let error = error as? TransportError else { return false }
            return error.kind == .noRoute && error.method == .put && error.url == url
                && "\(error)".contains("PUT https://api.example.com/items")
        }
    }

    @Test("Scripted failures throw their kind")
    func failures() async {
        let transport = InMemoryTransport()
        transport.route(url.absoluteString, reply: .failure(.connectionFailed))
        await #expect {
            try await transport.send(TransportRequest(url: url))
        } throws: { ($0 as? TransportError)?.kind == .connectionFailed }
    }

    @Test("Delays run on the injected clock, and cancelling the task cancels the exchange")
    func delaysAndCancellation() async throws {
        let clock = ManualTimeSource()
        let transport = InMemoryTransport(timeSource: clock)
        transport.route(url.absoluteString, reply: .text("late", delay: .seconds(5)))

        let answered = Task { try await transport.send(TransportRequest(url: url)) }
        #expect(await clock.waitForSleepers(1))
        #expect(transport.inFlightCount == 1)
        clock.advance(by: .seconds(4))
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .seconds(1))
        #expect(try await answered.value.status == 200)

        let cancelled = Task { try await transport.send(TransportRequest(url: url)) }
        #expect(await clock.waitForSleepers(1))
        cancelled.cancel()
        await #expect { try await cancelled.value } throws: { ($0 as? TransportError)?.kind == .cancelled }
        #expect(transport.inFlightCount == 0)
    }
}

@Suite("ManualTimeSource")
struct ManualTimeSourceTests {
    @Test("Sleepers wake in deadline order when the clock reaches them; the clock never goes back")
    func ordering() async throws {
        let clock = ManualTimeSource(now: Date(timeIntervalSince1970: 1000))
        let woken = WakeLog()
        let long = Task {
            try await clock.sleep(for: .seconds(10))
            woken.append(10)
        }
        #expect(await clock.waitForSleepers(1))
        let short = Task {
            try await clock.sleep(for: .seconds(2))
            woken.append(2)
        }
        #expect(await clock.waitForSleepers(2))
        clock.advance(by: .seconds(2))
        try await short.value
        #expect(woken.values == [2])
        clock.set(to: Date(timeIntervalSince1970: 500))
        #expect(clock.now == Date(timeIntervalSince1970: 1002))
        clock.advance(by: .seconds(8))
        try await long.value
        #expect(woken.values == [2, 10])
    }

    @Test("A zero sleep returns at once; cancellation before or during a sleep throws")
    func cancellation() async {
        let clock = ManualTimeSource()
        await #expect(throws: Never.self) { try await clock.sleep(for: .zero) }
        let task = Task { try await clock.sleep(for: .seconds(1)) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }
}

final class WakeLog: Sendable {
    private let storage = LockedValue<[Int]>([])
    func append(_ value: Int) { storage.withLock { $0.append(value) } }
    var values: [Int] { storage.withLock { $0 } }
}
