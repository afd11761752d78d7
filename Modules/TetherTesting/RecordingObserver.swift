public import OwnershipKit
import TetherConcurrency

/// A class observer that records every notice it receives, thread-safely; a double for any table's observers.
///
/// Optionally runs `reaction` after recording, on the delivering thread: the hook for re-entrancy tests
/// (adding, removing or notifying from inside a callback).
public final class RecordingObserver<Event: Sendable>: Sendable {
    /// A name for diagnostics.
    public let name: String
    private let recorded = LockedValue<[ObserverNotice<Event>]>([])
    private let reaction: (@Sendable (ObserverNotice<Event>) -> Void)?

    /// Makes an observer that records what it receives and then runs `reaction`, if any.
    public init(_ name: String = "observer", reaction: (@Sendable (ObserverNotice<Event>) -> Void)? = nil) {
        self.name = name
        self.reaction = reaction
    }

    /// Records `notice`, then runs the reaction.
    public func receive(_ notice: ObserverNotice<Event>) {
        recorded.withLock { $0.append(notice) }
        reaction?(notice)
    }

    /// Every notice received, in order.
    public var notices: [ObserverNotice<Event>] {
        recorded.withLock { $0 }
    }

    /// The events received, in order.
    public var events: [Event] {
        notices.compactMap { notice in
            if case .event(let event) = notice { return event }
            return nil
        }
    }

    /// How many added notices were received.
    public var addedCount: Int {
        notices.count { if case .added = $0 { true } else { false } }
    }

    /// How many stopped notices were received.
    public var stoppedCount: Int {
        notices.count { if case .stopped = $0 { true } else { false } }
    }

    /// Forgets everything received so far.
    public func reset() {
        recorded.withLock { $0.removeAll() }
    }
}
