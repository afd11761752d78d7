/// What an ``ObserverTable`` tells one of its observers.
///
/// Every observer entry sees exactly one ``added`` notice first, then zero or more ``event(_:)``
/// notices in the order they were posted, then at most one ``stopped`` notice last.
public enum ObserverNotice<Event: Sendable>: Sendable {
    /// The observer was added. Sent once per entry; adding the same object again adds owners, not a notice.
    case added
    /// An event posted with ``ObserverTable/notify(_:)``.
    case event(Event)
    /// The entry ended: its owners are gone or were removed. Sent exactly once, after the entry's last event —
    /// except to a self-owned observer that was itself deallocated, for there is no one left to tell.
    case stopped
}

extension ObserverNotice: Equatable where Event: Equatable {}
