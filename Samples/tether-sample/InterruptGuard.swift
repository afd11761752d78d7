import ServiceLifecycle
import TetherConcurrency
import UnixSignals

/// SIGINT and SIGTERM from the sample's start. The service group traps them only once it runs; a signal before
/// that, while the demo API starts or the pipeline is assembled, would otherwise kill the process outright. Here it
/// is remembered, and handed to the group as a graceful shutdown as soon as there is a group.
final class InterruptGuard: Sendable {
    private struct State {
        var signal: UnixSignal?
        var group: ServiceGroup?
    }

    private let state = LockedValue(State())
    private let signals: UnixSignalsSequence

    /// Traps the signals from now on; ``watch()`` must run for them to be acted on.
    init() async {
        signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
    }

    /// The signal received, if any.
    var received: UnixSignal? { state.withLock { $0.signal } }

    /// Remembers each signal and passes it on to the group, until cancelled.
    func watch() async {
        for await signal in signals {
            let group = state.withLock { state in
                state.signal = state.signal ?? signal
                return state.group
            }
            await group?.triggerGracefulShutdown()
        }
    }

    /// From now on a signal shuts `group` down gracefully; one that came before does so at once (the group starts
    /// its services and shuts them down in reverse, as for any signal).
    func hand(to group: ServiceGroup) async {
        let early = state.withLock { state in
            state.group = group
            return state.signal != nil
        }
        if early { await group.triggerGracefulShutdown() }
    }
}
