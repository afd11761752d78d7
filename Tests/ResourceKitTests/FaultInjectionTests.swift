import Foundation
import ResourceKit
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

/// Fault injection: a transport that drops, resets, delays and corrupts at random, under concurrent loads and
/// observer churn. Nothing crashes, every failure arrives as a typed error (and an error event), failures keep the
/// data, and once the transport heals every resource ends on the server's latest version.
@Suite("Fault injection: a misbehaving transport", .leakChecked)
struct FaultInjectionTests {
    @Test(
        "Drops, resets, delays and corrupt bodies under concurrent loads and observer churn",
        arguments: [UInt64(7), 2026])
    func faultyTransport(seed: UInt64) async throws {
        let version = LockedValue(0)
        let base = InMemoryTransport()
        base.respond { request in
            let current = version.withLock { $0 }
            return .json(
                #"{"path": "\#(request.url.path)", "version": \#(current)}"#, headers: ["ETag": "\"v\(current)\""])
        }
        let faulty = FaultyTransport(
            base: base, faults: .init(drop: 0.15, reset: 0.15, delay: 0.3, corrupt: 0.2, maxDelay: .milliseconds(5)),
            seed: seed)
        let service = Service(baseURL: "https://api.test", transport: faulty)
        let paths = (0..<16).map { "/items/\($0)" }
        let errorEvents = LockedValue(0)
        let owners = (0..<4).map { _ in Owner() }
        for (index, path) in paths.enumerated() {
            service.resource(path).addObserver(owner: owners[index % owners.count]) { _, event in
                if case .error = event { errorEvents.withLock { $0 += 1 } }
            }
        }

        let failures = LockedValue<[ResourceError.Kind]>([])
        let loaded = LockedValue<Set<String>>([])
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var random = SeededRandom(seed: seed &+ UInt64(worker))
                    for step in 0..<60 {
                        let resource = service.resource(paths[Int(random.nextWord() % UInt64(paths.count))])
                        if step % 10 == 0 { version.withLock { $0 += 1 } }
                        let request =
                            random.next() < 0.5 ? resource.load() : (resource.loadIfNeeded() ?? resource.load())
                        let outcome = await request.outcome
                        switch outcome {
                        case .failure(let error): failures.withLock { $0.append(error.kind) }
                        default: loaded.withLock { _ = $0.insert(resource.url!.path) }
                        }
                        if step % 15 == 0 {
                            let churn = Owner()
                            resource.addObserver(owner: churn) { _, _ in }
                            await resource.removeObservers(ownedBy: churn)
                        }
                    }
                }
            }
        }
        let counts = faulty.counts
        #expect(
            counts.dropped > 0 && counts.reset > 0 && counts.corrupted > 0 && counts.delayed > 0,
            "every fault happened: \(counts)")
        let seen = failures.withLock { $0 }
        #expect(!seen.isEmpty)
        for kind in seen {
            let expected =
                kind == .transport(.connectionRefused) || kind == .transport(.connectionFailed)
                || kind.failedStage != nil
            if !expected { Issue.record("an unexpected failure: \(kind)") }
        }
        #expect(errorEvents.withLock { $0 } > 0, "failures reached the observers as error events")
        for path in loaded.withLock({ $0 }) {
            #expect(service.resource(path).latestData != nil, "\(path) had data: no later failure erased it")
        }

        // Healed: every resource ends on the server's latest version.
        faulty.faults = .none
        let final = version.withLock {
            $0 += 1
            return $0
        }
        for path in paths {
            let outcome = await service.resource(path).load().outcome
            #expect(
                outcome.entity?.typedContent(as: JSONValue.self)?["version"] == .number(Double(final)),
                "\(path) is on the latest version")
            #expect(service.resource(path).latestError == nil, "\(path)'s error is cleared by the new data")
        }
        withExtendedLifetime(owners) {}
    }
}
