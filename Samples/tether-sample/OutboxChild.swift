import ArgumentParser
import Foundation
import PipelineKit
import ResourceKit
import ServiceLifecycle
import TetherJSON
import TransportKit

/// The mutations scenario's other process (`tether-sample --outbox-phase …`), started and killed by
/// ``MutationsScenario``: the screens of an app that changes baskets, on the same configuration — the same outbox,
/// the same persistent cache — as the sample that started it. It writes what it does to standard output, a line at a
/// time, fields split by tabs.
///
/// | Phase | What it does | Lines |
/// |---|---|---|
/// | `offline` | makes every screen's changes (durable, optimistic), then waits to be killed | `queued`, `shown`, `ready` |
/// | `resume` | resumes the outbox (every screen shows its pending changes again), then waits to be killed | `resumed`, `shown`, `ready` |
/// | `drain` | resumes the outbox, waits until it is empty, reloads every screen and exits | `resumed`, `drained`, `final` |
struct OutboxChild: ServiceLifecycle.Service {
    enum Phase: String, ExpressibleByArgument, CaseIterable, Sendable {
        case offline, resume, drain
    }

    /// The optimistic update every change shows: its line appended to the basket. Defined by name, so that a
    /// resumed change shows it again.
    static let appendLine = "append-line"

    let pipeline: AssembledPipeline
    let settings: SampleSettings
    let phase: Phase
    /// The scenario's run: its baskets are `/baskets/{run}/{screen}`.
    let run: String

    /// An owner for a screen's observer.
    final class Screen: Sendable {}

    func run() async throws {
        try await cancelWhenGracefulShutdown { try await self.act() }
    }

    private func act() async throws {
        let service = try pipeline.service(named: settings.service)
        service.defineOptimisticUpdate(Self.appendLine) { body in
            let line = try JSONDecoder().decode(String.self, from: body ?? Data())
            return .updating { (lines: JSONValue?) in .array((lines?.arrayValue ?? []) + [.string(line)]) }
        }
        let baskets = (0..<settings.mutationScreens).map { service.resource("/baskets/\(run)/\($0)") }
        let screens = baskets.map { _ in Screen() }
        for (basket, screen) in zip(baskets, screens) {
            basket.addObserver(owner: screen) { _, _ in }
            basket.loadIfNeeded()
        }
        try await showCached(baskets)
        switch phase {
        case .offline:
            try change(baskets)
            Self.write(["ready"])
            try await Task.sleep(for: .seconds(3600))
        case .resume:
            Self.write(["resumed", "\(try service.resumeMutations().count)"])
            show(baskets)
            Self.write(["ready"])
            try await refreshUntilCancelled(baskets[0])
        case .drain:
            Self.write(["resumed", "\(try service.resumeMutations().count)"])
            for await snapshot in service.mutations where snapshot.pending.isEmpty { break }
            Self.write([
                "drained", "\(try await service.pendingMutations().count)",
                "\(try await service.failedMutations().count)",
            ])
            for (index, basket) in baskets.enumerated() {
                _ = await basket.load().outcome
                Self.write(["final", "\(index)", Self.lines(of: basket).jsonText])
            }
        }
        withExtendedLifetime(screens) {}
    }

    /// Waits, briefly, for the screens to show what the persistent cache holds: the API is down.
    private func showCached(_ baskets: [Resource]) async throws {
        try await waitUntil(timeout: .seconds(2)) { baskets.allSatisfy { $0.latestData != nil } }
    }

    /// Makes every screen's changes, each durable and shown at once, and says so as soon as `mutate` returns.
    private func change(_ baskets: [Resource]) throws {
        for (screen, basket) in baskets.enumerated() {
            for change in 0..<settings.mutationsPerScreen {
                let line = "screen \(screen + 1) · change \(change + 1)"
                let mutation = basket.mutate(
                    .post, json: line, optimistic: .named(Self.appendLine), onSuccess: .useResponse, durable: true)
                if let error = mutation.completedOutcome?.error {
                    throw SampleError("a change was not queued: \(error)")
                }
                Self.write(["queued", "\(screen)", line])
            }
        }
        show(baskets)
    }

    /// Writes what each screen shows.
    private func show(_ baskets: [Resource]) {
        for (index, basket) in baskets.enumerated() {
            Self.write(["shown", "\(index)", Self.lines(of: basket).jsonText])
        }
    }

    /// Reloads a screen now and then, as an app refreshes what it shows: the first answer after the API comes back
    /// ends the outbox's wait before its next attempt.
    private func refreshUntilCancelled(_ basket: Resource) async throws {
        while true {
            try await Task.sleep(for: .milliseconds(250))
            _ = await basket.load().outcome
        }
    }

    private static func lines(of basket: Resource) -> JSONValue {
        basket.latestData?.typedContent(as: JSONValue.self) ?? .array([])
    }

    /// One line on standard output, written at once (not buffered), so that it survives a `SIGKILL` that follows.
    static func write(_ fields: [String]) {
        FileHandle.standardOutput.write(Data((fields.joined(separator: "\t") + "\n").utf8))
    }
}
