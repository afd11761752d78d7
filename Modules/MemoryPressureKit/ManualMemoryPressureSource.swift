import TetherConcurrency

/// A source you trigger yourself: for tests, and for applications that learn of pressure some other way.
public final class ManualMemoryPressureSource: MemoryPressureSource {
    /// "manual".
    public let name = "manual"
    private let handlers = LockedValue<[UInt64: @Sendable (MemoryPressureEvent) -> Void]>([:])
    private let nextID = LockedValue<UInt64>(0)

    /// Makes a source that reports only what ``signal(_:reason:)`` says.
    public init() {}

    /// Reports an event to every running watcher; returns how many it reached.
    @discardableResult
    public func signal(_ level: MemoryPressureLevel = .warning, reason: String = "signalled by hand") -> Int {
        let current = handlers.withLock { Array($0.values) }
        let event = MemoryPressureEvent(level: level, reason: reason)
        for handler in current { handler(event) }
        return current.count
    }

    /// How many watchers are running (for tests that must wait until one is).
    public var watcherCount: Int {
        handlers.withLock { $0.count }
    }

    /// Watches until cancelled.
    public func run(onPressure: @escaping @Sendable (MemoryPressureEvent) -> Void) async {
        let id = nextID.withLock { id in
            id += 1
            return id
        }
        handlers.withLock { $0[id] = onPressure }
        await waitForCancellation()
        handlers.withLock { $0[id] = nil }
    }
}
