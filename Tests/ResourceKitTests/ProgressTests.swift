import Foundation
import ResourceKit
import Testing
import TetherClock
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

/// An observer that records events and progress in one list, in the order it is told.
final class ProgressLog: ResourceObserver {
    let entries = LockedValue<[String]>([])

    func resourceChanged(_ resource: Resource, event: ResourceEvent) {
        entries.withLock { $0.append("\(event)") }
    }

    func resourceRequestProgress(for resource: Resource, progress: Double) {
        entries.withLock { $0.append("progress \(progress)") }
    }

    var list: [String] { entries.withLock { $0 } }
}

@Suite("Requests: progress", .leakChecked)
struct ProgressTests {
    /// Drives the clock in `step`s until `request` completes.
    func run(_ request: Request, clock: ManualTimeSource, step: Duration) async {
        while !request.isCompleted {
            guard await clock.waitForSleepers(1) else { break }
            clock.advance(by: step)
            await Task.yield()
        }
        _ = await request.outcome
    }

    @Test("Progress grows, at most once per 50 ms, and ends at exactly 1 before the completion callbacks")
    func downloadProgress() async {
        await withFixture { fixture in
            let body = String(repeating: "x", count: 1000)
            fixture.route("/big", .text(body, delay: .seconds(1)).arriving(in: 10, every: .milliseconds(20)))
            let seen = LockedValue<[String]>([])
            let request = fixture.service.resource("/big").load()
                .onProgress { value in seen.withLock { $0.append("\(value)") } }
                .onCompletion { _ in seen.withLock { $0.append("completed") } }
            await run(request, clock: fixture.clock, step: .milliseconds(20))
            // Pieces at 1.00, 1.02, …, 1.18 s: 0.1 at once, then only those 50 ms or more after the last report;
            // the transport's own 1.0 waits for completion, which reports exactly 1.
            #expect(seen.withLock { $0 } == ["0.1", "0.4", "0.7", "1.0", "completed"])
            #expect(request.progress == 1)
        }
    }

    @Test("With a body, sending is the first half; the interval is configurable")
    func uploadProgress() async {
        await withFixture { fixture in
            fixture.service.configure { $0.progressReportingInterval = .zero }
            fixture.transport.route(
                .post, base + "/upload", reply: .text("ok", delay: .seconds(1)).arriving(in: 2, every: .seconds(1)))
            let seen = LockedValue<[Double]>([])
            let request = fixture.service.resource("/upload").request(.post, body: Data(count: 1000))
                .onProgress { value in seen.withLock { $0.append(value) } }
            await run(request, clock: fixture.clock, step: .seconds(1))
            #expect(seen.withLock { $0 } == [0.5, 0.75, 1])
        }
    }

    @Test("Observers get a load's progress between requested and its outcome, ending at 1; closures do not")
    func observersGetProgress() async {
        await withFixture { fixture in
            fixture.service.configure { $0.progressReportingInterval = .zero }
            fixture.route("/items", .json("[1, 2, 3, 4]", delay: .seconds(1)).arriving(in: 4, every: .seconds(1)))
            let items = fixture.service.resource("/items")
            let log = ProgressLog()
            let closureCalls = LockedValue<[ResourceEvent]>([])
            let owner = Owner()
            items.addObserver(log, owner: owner)
            items.addObserver(owner: owner) { _, event in closureCalls.withLock { $0.append(event) } }
            await run(items.load(), clock: fixture.clock, step: .seconds(1))
            #expect(
                log.list == [
                    "observerAdded", "requested", "progress 0.25", "progress 0.5", "progress 0.75", "progress 1.0",
                    "newData(network)",
                ])
            #expect(closureCalls.withLock { $0 } == [.observerAdded, .requested, .newData(.network)])
            withExtendedLifetime(owner) {}
        }
    }

    @Test("A superseded load's progress does not reach the observers")
    func supersededLoadIsQuiet() async {
        await withFixture { fixture in
            fixture.service.configure { $0.progressReportingInterval = .zero }
            fixture.enqueue(
                "/items", .json("[1, 2]", delay: .seconds(1)).arriving(in: 2, every: .seconds(1)), .json("[3]"))
            let items = fixture.service.resource("/items")
            let log = ProgressLog()
            let owner = Owner()
            items.addObserver(log, owner: owner)
            let first = items.load()
            // At the transport, with the first reply, before the second load starts (a release run hung once when
            // the second got there first, with the delayed reply, and waited for a clock nobody advanced).
            #expect(await fixture.clock.waitForSleepers(1))
            _ = await items.load().outcome  // supersedes the first
            await run(first, clock: fixture.clock, step: .seconds(1))
            #expect(first.progress == 1)
            #expect(
                log.list == ["observerAdded", "requested", "requested", "progress 1.0", "newData(network)"],
                "only the second load's final progress")
            withExtendedLifetime(owner) {}
        }
    }

    @Test("A cancelled or failed request ends at 1 too; a callback added after completion gets 1 at once")
    func endsAtOneHoweverItEnds() async {
        await withFixture { fixture in
            fixture.route("/slow", .never)
            fixture.route("/missing", .status(404))
            let seen = LockedValue<[Double]>([])
            let slow = fixture.service.resource("/slow").load().onProgress { value in seen.withLock { $0.append(value) }
            }
            slow.cancel()
            #expect(seen.withLock { $0 } == [1])
            let missing = fixture.service.resource("/missing").load()
            _ = await missing.outcome
            let late = LockedValue<[Double]>([])
            missing.onProgress { value in late.withLock { $0.append(value) } }
            #expect(late.withLock { $0 } == [1] && missing.progress == 1)
        }
    }

    @Test("A chain's progress follows the request it waits on, and ends at 1 with the chain")
    func chainProgress() async {
        await withFixture { fixture in
            fixture.service.configure { $0.progressReportingInterval = .zero }
            fixture.route("/a", .text("aaaa", delay: .seconds(1)).arriving(in: 4, every: .seconds(1)))
            let seen = LockedValue<[Double]>([])
            let chain = fixture.service.resource("/a").request(.get).chained { _ in .useThisResponse }
                .onProgress { value in seen.withLock { $0.append(value) } }
            await run(chain, clock: fixture.clock, step: .seconds(1))
            #expect(seen.withLock { $0 } == [0.25, 0.5, 0.75, 1])
        }
    }
}
