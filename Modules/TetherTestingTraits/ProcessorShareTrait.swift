import Foundation
public import Testing

/// A Swift Testing trait that keeps tests which load every core on purpose apart from tests whose deadlines assume
/// a processor to run on.
///
/// The owner-churn stress tests run two dozen threads for 20 s; on a two-core machine, a transport conformance
/// check beside them — a loopback request through SwiftNIO, five redirects, a TLS handshake — could miss its 10 s
/// correctness deadline, or its request time out, through no fault of the transport (it happened in release builds,
/// where the workers spin fastest). Mark the first kind ``Testing/Trait/loadsEveryCore`` and the second
/// ``Testing/Trait/needsProcessorTime``: tests of one kind run beside each other and beside every unmarked test, never
/// beside the other kind. A test waiting for its turn is suspended before it starts, so neither its own deadlines nor
/// its `.timeLimit` count the wait: the turn is taken around a test function's cases, outside the time limit that
/// Swift Testing starts for each case before that case's own scope (a turn per case counted the wait, and under
/// ThreadSanitizer a test waited past its three minutes behind a stress suite that itself waited for a slow one).
///
/// ```swift
/// @Suite("Owners churning on 8 threads", .loadsEveryCore)
/// struct ChurnTests { … }
///
/// @Suite("Transport conformance", .needsProcessorTime)
/// struct ConformanceTests { … }
/// ```
public struct ProcessorShareTrait: TestTrait, SuiteTrait, TestScoping {
    /// What a test asks of the processor.
    public enum Share: Hashable, Sendable {
        /// Keeps every core busy on purpose (stress).
        case loadsEveryCore
        /// Has deadlines that assume a fair share of the processor (real sockets, child processes).
        case needsProcessorTime
    }

    /// This trait's kind of test.
    public let share: Share

    /// Applies to every test in a suite, one turn per test function.
    public var isRecursive: Bool { true }

    /// A test function's scope, around all its cases and outside their time limits; none for a suite (its tests
    /// take their own turns, so that the other kind gets one between them) or for a single case.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite || testCase != nil ? nil : self
    }

    /// Makes the trait; see ``Testing/Trait/loadsEveryCore`` and ``Testing/Trait/needsProcessorTime``.
    public init(_ share: Share) {
        self.share = share
    }

    /// Runs the test once its kind has the turn.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // The trait on a suite and on one of its tests: one turn is enough. (Under the other kind's turn, the outer
        // turn decides: waiting for our own would wait for ourselves.)
        guard Self.current == nil else { return try await function() }
        await Self.gate.enter(share)
        defer { Self.gate.leave(share) }
        try await Self.$current.withValue(share) { try await function() }
    }

    /// The turn the current task holds, if any.
    @TaskLocal static var current: Share?

    /// Shared by every test in the process.
    static let gate = PhaseGate<Share>()
}

extension Trait where Self == ProcessorShareTrait {
    /// Keeps every core busy on purpose — or holds up something else every test shares, such as FoundationNetworking's
    /// process-wide queue: never runs beside a test marked ``needsProcessorTime``.
    public static var loadsEveryCore: Self { ProcessorShareTrait(.loadsEveryCore) }

    /// Has deadlines that assume a fair share of the processor: never runs beside a test marked ``loadsEveryCore``.
    public static var needsProcessorTime: Self { ProcessorShareTrait(.needsProcessorTime) }
}
