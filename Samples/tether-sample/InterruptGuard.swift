import Foundation
import ServiceLifecycle
import TetherConcurrency
import UnixSignals

/// SIGINT and SIGTERM from the sample's start. The service group traps them only once it runs; a signal before
/// that would otherwise kill the process outright, or — once trapped — wait for whatever runs to finish.
///
/// - While the configuration loads, nothing has started that needs stopping: a signal ends the process at once
///   (exit 130 for SIGINT, 143 for SIGTERM), however long the load would take (a file on a hung mount, a pipe).
/// - From ``startingServices()`` on — the demo API starting, the pipeline assembling — it is remembered, and handed
///   to the group as a graceful shutdown as soon as there is a group.
final class InterruptGuard: Sendable {
    private struct State {
        var signal: UnixSignal?
        var group: ServiceGroup?
        var isStartingServices = false
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
            await receive(signal, reason: "\(signal)")
        }
    }

    /// With `--exit-with-parent`: until cancelled, checks four times a second whether the process that started the
    /// sample is still its parent, and acts as on SIGTERM once it is not. A test runner that dies (a crash, SIGKILL)
    /// then leaves no sample running behind it.
    func watchParent() async {
        let parent = getppid()
        while (try? await Task.sleep(for: .milliseconds(250))) != nil {
            if getppid() != parent {
                FileHandle.standardError.write(Data("stopping: the parent process \(parent) exited\n".utf8))
                await receive(.sigterm, reason: "parent process \(parent) exited")
                return
            }
        }
    }

    private func receive(_ signal: UnixSignal, reason: String) async {
        let (group, loading) = state.withLock { state in
            state.signal = state.signal ?? signal
            return (state.group, !state.isStartingServices)
        }
        if loading {
            FileHandle.standardError.write(Data("interrupted (\(reason)) while loading the configuration\n".utf8))
            exit(128 + signal.rawValue)
        }
        await group?.triggerGracefulShutdown()
    }

    /// The configuration has loaded and services are about to start: a signal from now on stops them gracefully.
    func startingServices() {
        state.withLock { $0.isStartingServices = true }
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
