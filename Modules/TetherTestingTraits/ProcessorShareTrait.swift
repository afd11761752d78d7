import Foundation
public import Testing
import TetherConcurrency

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
///
/// A test that holds up something every test shares — ``Testing/Trait/holdsUp(_:)`` — is of the first kind, and also
/// never runs beside another test holding up the same thing: it takes that resource after its turn, so two such tests
/// wait for each other, never for a turn the other holds.
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

    /// What the test holds up that no other test holding it up may run beside, if anything.
    public let resource: SharedResource?

    /// Applies to every test in a suite, one turn per test function.
    public var isRecursive: Bool { true }

    /// A test function's scope, around all its cases and outside their time limits; none for a suite (its tests
    /// take their own turns, so that the other kind gets one between them) or for a single case.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite || testCase != nil ? nil : self
    }

    /// Makes the trait; see ``Testing/Trait/loadsEveryCore``, ``Testing/Trait/needsProcessorTime`` and
    /// ``Testing/Trait/holdsUp(_:)``.
    public init(_ share: Share, holdingUp resource: SharedResource? = nil) {
        self.share = share
        self.resource = resource
    }

    /// Runs the test once its kind has the turn.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // The trait on a suite and on one of its tests: one turn is enough. (Under the other kind's turn, the outer
        // turn decides: waiting for our own would wait for ourselves.)
        guard Self.current == nil else { return try await holdingUp(function) }
        await Self.gate.enter(share)
        defer { Self.gate.leave(share) }
        try await Self.$current.withValue(share) { try await holdingUp(function) }
    }

    /// Runs `function` once no other test holds up this trait's resource, if it has one. Always inside a turn, so
    /// that every test takes the two in the same order.
    private func holdingUp(_ function: @Sendable () async throws -> Void) async throws {
        // The same resource on a suite and on one of its tests: taken once.
        guard let resource, !Self.heldUp.contains(resource) else { return try await function() }
        let slot = Self.slots.withLock { slots in
            if let slot = slots[resource] { return slot }
            let slot = AsyncSlots(count: 1)
            slots[resource] = slot
            return slot
        }
        await slot.acquire()
        defer { slot.release() }
        try await Self.$heldUp.withValue(Self.heldUp.union([resource])) { try await function() }
    }

    /// The turn the current task holds, if any.
    @TaskLocal static var current: Share?

    /// The resources the current task holds up.
    @TaskLocal static var heldUp: Set<SharedResource> = []

    /// Shared by every test in the process.
    static let gate = PhaseGate<Share>()

    /// One slot per resource held up so far, shared by every test in the process.
    static let slots = LockedValue<[SharedResource: AsyncSlots]>([:])
}

extension Trait where Self == ProcessorShareTrait {
    /// Keeps every core busy on purpose — or holds up something every test shares (see ``holdsUp(_:)``): never runs
    /// beside a test marked ``needsProcessorTime``.
    public static var loadsEveryCore: Self { ProcessorShareTrait(.loadsEveryCore) }

    /// Has deadlines that assume a fair share of the processor: never runs beside a test marked ``loadsEveryCore``.
    public static var needsProcessorTime: Self { ProcessorShareTrait(.needsProcessorTime) }

    /// Holds up `resource` for seconds, which every test shares (FoundationNetworking's queue under a 256 MiB gzip
    /// bomb): ``loadsEveryCore``, and never beside another test holding up the same resource.
    public static func holdsUp(_ resource: SharedResource) -> Self {
        ProcessorShareTrait(.loadsEveryCore, holdingUp: resource)
    }
}
