import Foundation

/// The error ``eventually(within:file:line:_:)`` and ``blockUntil(within:file:line:_:)`` throw when their condition
/// never held.
public struct EventuallyTimedOut: Error, CustomStringConvertible {
    /// Where the wait was written.
    public let file: StaticString
    /// The line of the wait.
    public let line: UInt
    /// The deadline as written (the wait was ``DeadlineScale/factor`` times as long).
    public let deadline: Duration

    /// Says where, and for how long.
    public var description: String {
        let scale = DeadlineScale.factor
        return "\(file):\(line): the condition did not hold within \(deadline)"
            + (scale == 1 ? "" : " × \(scale) (\(DeadlineScale.setting.variable))")
    }
}

/// Blocks the calling thread until `condition` holds — a positive event, never "nothing happened" — looking again
/// every millisecond. `deadline` is a correctness deadline for a debug build on a loaded machine, not a speed target;
/// ``DeadlineScale`` lengthens it under a sanitizer. For blocking tests on a thread of their own
/// (`.onDedicatedThread`); async tests use ``eventually(within:file:line:_:)``.
///
/// - Throws: ``EventuallyTimedOut`` when the deadline passes first.
public func blockUntil(
    within deadline: Duration = .seconds(30), file: StaticString = #filePath, line: UInt = #line,
    _ condition: () throws -> Bool
) throws {
    let clock = ContinuousClock()
    let end = clock.now + DeadlineScale.scaled(deadline)
    while try !condition() {
        guard clock.now < end else { throw EventuallyTimedOut(file: file, line: line, deadline: deadline) }
        usleep(1000)
    }
}

/// Suspends until `condition` holds — a positive event, never "nothing happened" — looking again every
/// millisecond. `deadline` is a correctness deadline for a debug build on a loaded machine, not a speed target;
/// ``DeadlineScale`` lengthens it under a sanitizer.
///
/// - Throws: ``EventuallyTimedOut`` when the deadline passes first.
public func eventually(
    within deadline: Duration = .seconds(30), file: StaticString = #filePath, line: UInt = #line,
    _ condition: @Sendable () async throws -> Bool
) async throws {
    let clock = ContinuousClock()
    let end = clock.now + DeadlineScale.scaled(deadline)
    while try await !condition() {
        guard clock.now < end else { throw EventuallyTimedOut(file: file, line: line, deadline: deadline) }
        try await Task.sleep(for: .milliseconds(1))
    }
}
