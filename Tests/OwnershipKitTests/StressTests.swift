import Foundation
import OwnershipKit
import Synchronization
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits

/// Rule 8 under load: 8 threads × N random operations on one table, with the invariants checked at every
/// delivery and at the end. N is 100,000 by default; `TETHER_STRESS_OPS` overrides it.
@Suite("Concurrency stress", .loadsEveryCore, .onDedicatedThread)
struct StressTests {
    static let threadCount = 8
    static let operationsPerThread =
        StressLoad.operationsPerThread(default: 100_000)

    @Test("8 threads add, remove, drop owners and notify at random: every invariant holds, nothing leaks")
    func randomOperations() {
        let census = Census()
        let table = ObserverTable<StressObserver, Post> { observer, notice in observer.receive(notice) }
        let done = DispatchGroup()
        for worker in 0..<Self.threadCount {
            done.enter()
            let thread = Thread {
                var driver = Driver(worker: worker, table: table, census: census)
                driver.run(operations: Self.operationsPerThread)
                driver.dropEverything()
                done.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        done.wait()
        table.sweep()
        let untold = census.checkDeferredEnds()
        #expect(untold.isEmpty, "tokens let go of whose observers were never told: \(untold.prefix(5))")

        #expect(census.violations.isEmpty, "\(census.violations.count) violations, e.g. \(census.violations.prefix(5))")
        #expect(census.deliveries > 0)
        #expect(table.observerCount == 0)
        #expect(census.liveObservers == 0, "observers leaked")
        #expect(census.liveOwners == 0, "owners leaked")
        #expect(
            census.endedWithoutStop.isEmpty,
            "\(census.endedWithoutStop.count) ended by removal yet never told, e.g. \(census.endedWithoutStop.prefix(5))"
        )
    }
}

/// One event: who posted it and its position in that poster's sequence.
struct Post: Sendable {
    let poster: Int
    let sequence: Int
}

/// Counts and violations, shared by all threads.
final class Census: Sendable {
    let observersAlive = Atomic<Int>(0)
    let ownersAlive = Atomic<Int>(0)
    let deliveryCount = Atomic<Int>(0)
    private let found = LockedValue<[String]>([])
    private let unstopped = LockedValue<[Int]>([])
    private let deferred = LockedValue<[StressObserver]>([])

    func deferredEnd(_ observer: StressObserver) { deferred.withLock { $0.append(observer) } }
    /// Observers whose token was released last by a delivery; once everything is quiet, each must have been told.
    func checkDeferredEnds() -> [Int] {
        let observers = deferred.withLock { list in
            defer { list.removeAll() }
            return list
        }
        return observers.filter { $0.stopCount != 1 }.map(\.id)
    }

    func violation(_ text: String) { found.withLock { if $0.count < 100 { $0.append(text) } } }
    func endedWithoutStop(_ id: Int) { unstopped.withLock { $0.append(id) } }
    var violations: [String] { found.withLock { $0 } }
    var endedWithoutStop: [Int] { unstopped.withLock { $0 } }
    var liveObservers: Int { observersAlive.load(ordering: .sequentiallyConsistent) }
    var liveOwners: Int { ownersAlive.load(ordering: .sequentiallyConsistent) }
    var deliveries: Int { deliveryCount.load(ordering: .relaxed) }
}

/// An observer that checks the table's promises at every delivery.
final class StressObserver: Sendable {
    let id: Int
    let census: Census
    /// Set by the test once a removal of this observer has returned: nothing may arrive afterwards.
    let removed = Atomic<Bool>(false)
    /// Set by the last owner's deinit: nothing may arrive afterwards.
    let ownerless = Atomic<Bool>(false)
    let liveOwners = Atomic<Int>(0)
    private let inCallback = Atomic<Bool>(false)
    private let stopped = Atomic<Int>(0)
    private let lastSequence = LockedValue<[Int]>(Array(repeating: -1, count: StressTests.threadCount))

    init(id: Int, census: Census) {
        self.id = id
        self.census = census
        census.observersAlive.add(1, ordering: .relaxed)
    }

    deinit { census.observersAlive.subtract(1, ordering: .relaxed) }

    var stopCount: Int { stopped.load(ordering: .acquiring) }

    func receive(_ notice: ObserverNotice<Post>) {
        if inCallback.exchange(true, ordering: .acquiringAndReleasing) {
            census.violation("observer \(id): called concurrently with itself")
        }
        defer { inCallback.store(false, ordering: .releasing) }
        if stopped.load(ordering: .acquiring) > 0 { census.violation("observer \(id): \(notice) after stopped") }
        switch notice {
        case .added:
            break
        case .event(let post):
            census.deliveryCount.add(1, ordering: .relaxed)
            if removed.load(ordering: .acquiring) {
                census.violation("observer \(id): event after its removal returned")
            }
            if ownerless.load(ordering: .acquiring) { census.violation("observer \(id): event after its owners died") }
            lastSequence.withLock { last in
                if post.sequence <= last[post.poster] {
                    census.violation(
                        "observer \(id): poster \(post.poster) #\(post.sequence) after #\(last[post.poster])")
                }
                last[post.poster] = post.sequence
            }
        case .stopped:
            if stopped.add(1, ordering: .acquiringAndReleasing).newValue > 1 {
                census.violation("observer \(id): second stopped")
            }
        }
    }
}

/// An owner whose death, when it is the last of an observer's owners, makes that observer ownerless.
final class StressOwner: Sendable {
    let observer: StressObserver
    let census: Census

    init(of observer: StressObserver, census: Census) {
        self.observer = observer
        self.census = census
        observer.liveOwners.add(1, ordering: .relaxed)
        census.ownersAlive.add(1, ordering: .relaxed)
    }

    deinit {
        if observer.liveOwners.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
            observer.ownerless.store(true, ordering: .releasing)
        }
        census.ownersAlive.subtract(1, ordering: .relaxed)
    }
}

/// One thread's observers and the random operations it applies to them.
struct Driver {
    enum Slot {
        case selfOwned(StressObserver)
        case owned(StressObserver, owners: [StressOwner])
        case token(StressObserver, TokenBox)
    }

    /// Holds a token so that letting go of it is one deterministic release, not a pattern-match temporary.
    final class TokenBox {
        var token: ObservationToken?
        init(_ token: ObservationToken) { self.token = token }
    }

    let worker: Int
    let table: ObserverTable<StressObserver, Post>
    let census: Census
    var slots: [Slot] = []
    var random: SplitMix64
    var sequence = 0
    var nextID: Int

    init(worker: Int, table: ObserverTable<StressObserver, Post>, census: Census) {
        self.worker = worker
        self.table = table
        self.census = census
        self.random = SplitMix64(seed: UInt64(worker) &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        self.nextID = worker * 10_000_000
    }

    mutating func run(operations: Int) {
        for _ in 0..<operations {
            let roll = random.next(below: 100)
            if slots.isEmpty || (roll < 25 && slots.count < 8) {
                add()
            } else if roll < 40 {
                remove(at: random.next(below: slots.count))
            } else if roll < 55 {
                drop(at: random.next(below: slots.count))
            } else if roll < 65 {
                addOwner(at: random.next(below: slots.count))
            } else {
                sequence += 1
                table.notify(Post(poster: worker, sequence: sequence))
            }
        }
    }

    mutating func add() {
        nextID += 1
        let observer = StressObserver(id: nextID, census: census)
        switch random.next(below: 3) {
        case 0:
            table.add(observer)
            slots.append(.selfOwned(observer))
        case 1:
            let owner = StressOwner(of: observer, census: census)
            table.add(observer, owner: owner)
            slots.append(.owned(observer, owners: [owner]))
        default:
            slots.append(.token(observer, TokenBox(table.observe(observer))))
        }
    }

    /// Explicit removal: once it returns, the observer must receive nothing, and must have been told.
    mutating func remove(at index: Int) {
        let slot = slots.remove(at: index)
        let observer: StressObserver
        switch slot {
        case .selfOwned(let selfOwned):
            observer = selfOwned
            table.removeObservers(ownedBy: observer)
        case .owned(let owned, let owners):
            observer = owned
            for owner in owners { table.removeObservers(ownedBy: owner) }
        case .token(let tokened, let box):
            observer = tokened
            box.token?.cancel()
        }
        observer.removed.store(true, ordering: .releasing)
        if observer.stopCount != 1 { census.endedWithoutStop(observer.id) }
    }

    /// Letting go: of the observer itself (self-owned), of every owner, or of the token.
    mutating func drop(at index: Int) {
        let slot = slots.remove(at: index)
        if case .token(let observer, let box) = slot {
            // The token's deinit ends the observation here, at once (nothing else holds a token), but a delivery
            // in flight on another thread may be the one to hand the observer its stopped notice, after its
            // callback. So the notice is checked once everything is quiet; the synchronous promise is checked for
            // `cancel()` in `remove(at:)`.
            box.token = nil
            census.deferredEnd(observer)
        }
    }

    mutating func addOwner(at index: Int) {
        guard case .owned(let observer, var owners) = slots[index], owners.count < 3 else { return }
        let owner = StressOwner(of: observer, census: census)
        table.add(observer, owner: owner)
        owners.append(owner)
        slots[index] = .owned(observer, owners: owners)
    }

    mutating func dropEverything() {
        while !slots.isEmpty { drop(at: slots.count - 1) }
    }
}

/// A small, fast, seedable generator: each thread's sequence of operations is reproducible.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
