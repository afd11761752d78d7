/// How pressing a memory-pressure event is.
public enum MemoryPressureLevel: Sendable, Equatable {
    /// Memory is getting short: drop what can be rebuilt.
    case warning
    /// Memory is critically short.
    case critical
}

/// One memory-pressure event: how pressing, and what the source saw.
public struct MemoryPressureEvent: Sendable, Equatable {
    /// How pressing it is.
    public var level: MemoryPressureLevel
    /// What the source saw, for logs (for example "PSI trigger fired" or "resident 812 MB > limit 800 MB").
    public var reason: String

    /// Makes an event.
    public init(level: MemoryPressureLevel, reason: String) {
        self.level = level
        self.reason = reason
    }
}

/// Where memory-pressure events come from: the extension point for pressure sources.
///
/// `run(onPressure:)` watches until its task is cancelled, calling `onPressure` for each event. A source that
/// cannot work here (a file missing, permission denied) says so once in its log and then waits for cancellation
/// without reporting anything, so whatever depends on it keeps working — it just is never told of pressure.
public protocol MemoryPressureSource: Sendable {
    /// A short name for logs.
    var name: String { get }

    /// Watches until cancelled, calling `onPressure` for each event.
    func run(onPressure: @escaping @Sendable (MemoryPressureEvent) -> Void) async
}
