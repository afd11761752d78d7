import Foundation
import ResourceKit
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

@Suite("Resource: 8 threads at once", .leakChecked)
struct ConcurrencyTests {
    /// An observer that fails the test if it hears anything after its removal returned.
    final class Watcher: ResourceObserver {
        let removed = LockedValue(false)
        let violations: LockedValue<Int>

        init(violations: LockedValue<Int>) {
            self.violations = violations
        }

        func resourceChanged(_ resource: Resource, event: ResourceEvent) {
            if removed.withLock({ $0 }) { violations.withLock { $0 += 1 } }
        }
    }

    @Test("Lookups, observers, loads, owner deaths and flushes: one instance per URL, no late events, no leaks")
    func hammer() async throws {
        try await withFixture(cacheCountLimit: 16) { fixture in
            let paths = (0..<20).map { "/items/\($0)" }
            for path in paths { fixture.route(path, .json("[]")) }
            fixture.service.configure { $0.expirationTime = .zero }
            let service = fixture.service
            let canonical = LockedValue<[String: WeakResource]>([:])
            let identityViolations = LockedValue(0)
            let lateEvents = LockedValue(0)
            let threads = 8
            let iterations = 2000
            let done = DispatchGroupBox(count: threads)
            for thread in 0..<threads {
                let worker = Thread {
                    var generator = SystemRandomNumberGenerator()
                    for iteration in 0..<iterations {
                        let path = paths.randomElement(using: &generator)!
                        let resource = service.resource(path)
                        let conflict = canonical.withLock { map -> Bool in
                            if let known = map[path]?.resource, known !== resource { return true }
                            map[path] = WeakResource(resource)
                            return false
                        }
                        if conflict { identityViolations.withLock { $0 += 1 } }
                        switch (iteration + thread) % 5 {
                        case 0:
                            let owner = Owner()
                            let watcher = Watcher(violations: lateEvents)
                            resource.addObserver(watcher, owner: owner)
                            resource.loadIfNeeded()
                            resource.removeObservers(ownedBy: owner)
                            watcher.removed.withLock { $0 = true }
                            resource.overrideLocalContent(with: iteration)
                        case 1:
                            do {
                                let owner = Owner()
                                resource.addObserver(owner: owner) { _, _ in }
                            }  // the owner dies here, without a word
                            resource.loadIfNeeded()
                        case 2:
                            service.flushUnused()
                        case 3:
                            resource.load()
                        default:
                            resource.invalidate()
                            _ = resource.latestData
                        }
                    }
                    done.leave()
                }
                worker.stackSize = 1 << 20
                worker.start()
            }
            try await done.wait()
            while fixture.transport.inFlightCount > 0 { await Task.yield() }
            #expect(identityViolations.withLock { $0 } == 0)
            #expect(lateEvents.withLock { $0 } == 0)
            canonical.withLock { $0.removeAll() }
        }
    }
}

final class WeakResource: Sendable {
    weak let resource: Resource?
    init(_ resource: Resource) { self.resource = resource }
}

/// Counts threads down, and lets a task wait for all of them.
final class DispatchGroupBox: Sendable {
    private let remaining: LockedValue<Int>

    init(count: Int) {
        remaining = LockedValue(count)
    }

    func leave() {
        remaining.withLock { $0 -= 1 }
    }

    func wait() async throws {
        try await eventually { remaining.withLock { $0 } == 0 }
    }
}
