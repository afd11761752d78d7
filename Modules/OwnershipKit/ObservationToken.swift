public import TetherConcurrency

/// Ends an observation on `cancel()` or when it is deinitialized, whichever comes first.
///
/// Modelled on GRDB's `AnyDatabaseCancellable`. Keep the token for as long as you want to observe:
///
/// ```swift
/// final class Dashboard {
///     private var tokens: Set<ObservationToken> = []
///     func start(_ table: ObserverTable<Reading, Temperature>) {
///         table.observe(Reading(label: "outside")).store(in: &tokens)
///     }
/// }
/// ```
///
/// Cancelling is idempotent and thread-safe; the cancel action runs exactly once.
///
/// A token lives exactly as long as what holds it: nothing in Tether keeps one alive. The observation it ends is
/// owned by an object only the token holds, and the table keeps that object alive through a call in progress, as it
/// keeps any owner — never the token. So letting go of the token ends the observation there and then, on the thread
/// that let go, even while a call of the observer is running elsewhere; that call finishes, and none begins after.
public final class ObservationToken: ObservationCancellable, Hashable {
    /// The cancel action; it returns what is left to wait for, which only ``cancel()`` waits out.
    private let onCancel: LockedValue<(@Sendable () -> Settling?)?>

    /// What a table records as the owner of the token's observation: held by the token alone.
    @usableFromInline let lifeline = Lifeline()

    /// The owner of a token's observation. Calls keep it alive while they run, as they keep any owner alive;
    /// the token stays free to go.
    @usableFromInline
    final class Lifeline: Sendable {
        @usableFromInline init() {}
    }

    /// Makes a token that runs `onCancel` once, on the first `cancel()` or at deinit.
    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = LockedValue({
            onCancel()
            return nil
        })
    }

    /// A token whose action is set right after it is made (the token must exist before it can be an owner).
    @usableFromInline
    init() {
        self.onCancel = LockedValue(nil)
    }

    @usableFromInline
    func arm(_ action: @escaping @Sendable () -> Settling?) {
        onCancel.withLock { $0 = action }
    }

    /// Ends the observation without waiting: no call of the observer begins afterwards (ownership is checked at
    /// the moment of every call), and one already running elsewhere finishes undisturbed.
    deinit {
        _ = onCancel.withLock { $0.take() }?()
    }

    /// Ends the observation. When this returns, the observer receives nothing further and no call of it is running
    /// (see `ObserverTable.removeObservers(ownedBy:)` for the one exception, inside callbacks). It may block for
    /// as long as a call in progress on another thread takes: from Swift concurrency's threads, prefer
    /// the `async` form.
    public func cancel() {
        onCancel.withLock { $0.take() }?()?.wait()
    }

    /// ``cancel()``, suspending instead of blocking while a call in progress finishes.
    public func cancel() async {
        await onCancel.withLock { $0.take() }?()?.wait()
    }

    /// Whether `cancel()` has run (or the observation was never armed).
    public var isCancelled: Bool {
        onCancel.withLock { $0 == nil }
    }

    /// Keeps this token in `set`; the observation lasts until the set lets go of it.
    public func store(in set: inout Set<ObservationToken>) {
        set.insert(self)
    }

    /// Keeps this token in `array`; the observation lasts until the array lets go of it.
    public func store(in array: inout [ObservationToken]) {
        array.append(self)
    }

    /// Tokens are equal when they are the same token.
    public static func == (lhs: ObservationToken, rhs: ObservationToken) -> Bool { lhs === rhs }

    /// Hashes the token's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
