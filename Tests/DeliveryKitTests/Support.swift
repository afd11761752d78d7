import DeliveryKit
import Foundation
import Synchronization
import TetherConcurrency

/// Counts live payload objects: incremented in init, decremented in deinit; tracks the high-water mark.
final class LiveCounter: Sendable {
    private let live = Atomic<Int>(0)

    var count: Int { live.load(ordering: .sequentiallyConsistent) }

    func up() { live.add(1, ordering: .sequentiallyConsistent) }
    func down() { live.subtract(1, ordering: .sequentiallyConsistent) }
}

/// A payload whose instances are counted, standing for a large snapshot.
final class Snapshot: Sendable, CustomStringConvertible {
    let value: Int
    let counter: LiveCounter?

    init(_ value: Int, counter: LiveCounter? = nil) {
        self.value = value
        self.counter = counter
        counter?.up()
    }

    deinit { counter?.down() }

    var description: String { "#\(value)" }
}

/// A thread-safe list for what handlers see.
final class Log<Element: Sendable>: Sendable {
    private let items = LockedValue<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
    var last: Element? { items.withLock { $0.last } }
    var count: Int { items.withLock { $0.count } }
    /// Empties the list, returning what it held (released by the caller, outside the lock).
    func takeAll() -> [Element] {
        items.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }
}

/// A serial queue kept busy until ``release()``: work given to it meanwhile waits, in order.
final class BlockedQueue: Sendable {
    let queue = DispatchQueue(label: "blocked")
    private let gate = DispatchSemaphore(value: 0)

    init() {
        queue.async { [gate] in gate.wait() }
    }

    /// Lets the queue run, and returns once everything given to it so far has run.
    func release() {
        gate.signal()
        queue.sync {}
    }
}

/// Holds the signal of the delivery in progress, for tests that signal later or from elsewhere.
final class SignalBox: Sendable {
    private let signal = LockedValue<SignalNext?>(nil)
    func keep(_ next: SignalNext) { signal.withLock { $0 = next } }
    func fire() {
        let next = signal.withLock { $0.take() }
        next?()
    }
    var isHolding: Bool { signal.withLock { $0 != nil } }
}

/// A recorder double: counts what a lane reports.
final class CountingRecorder: DeliveryRecorder {
    let deliveries = Atomic<Int>(0)
    let coalesced = Atomic<Int>(0)
    let skipped = Atomic<Int>(0)
    let maxHeld = Atomic<Int>(0)

    func recordDelivery() { deliveries.add(1, ordering: .relaxed) }
    func recordCoalesced() { coalesced.add(1, ordering: .relaxed) }
    func recordSkippedUnchanged() { skipped.add(1, ordering: .relaxed) }
    func recordHeld(_ count: Int) {
        var current = maxHeld.load(ordering: .relaxed)
        while count > current {
            let (exchanged, original) = maxHeld.compareExchange(
                expected: current, desired: count, ordering: .relaxed)
            if exchanged { break }
            current = original
        }
    }
}
