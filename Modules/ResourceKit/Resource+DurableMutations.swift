import Logging
import MutationOutboxKit
import TetherClock
import TetherConcurrency
import TransportKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Durable mutations: written to the service's outbox before `mutate` returns, sent in order, tried again while
/// the server cannot be reached, and resumed after a restart.
extension Resource {
    /// `attempt` made durable: tried until it succeeds, fails for good (``isTransient(_:)`` says which failures are
    /// not), or is cancelled. It runs in its `turn` (started once the turn before is over, `waited` says whether
    /// there was one), which ends when it returns.
    func durableWork(
        _ attempt: @escaping Request.Work, id: UInt64, key: String, turn: LaneTurn, waited: Bool
    ) -> Request.Work {
        { [self] mutation in
            guard turn.begin() else { return .failure(mutation.cancellationError) }
            defer { turn.end() }
            if waited { core.tracker.phase(key, .sending) }
            // Cancelled as it began: its request has completed already, and nothing is sent.
            if mutation.isCompleted || Task.isCancelled { return .failure(mutation.cancellationError) }
            var failures = 0
            while true {
                let outcome = await attempt(mutation)
                guard let error = outcome.error, Self.isTransient(error), !Task.isCancelled else { return outcome }
                failures += 1
                core.logging.network.debug(
                    "durable mutation waits to be tried again",
                    metadata: ["url": "\(urlString)", "failures": "\(failures)", "error": "\(error.message)"])
                core.tracker.phase(key, .retrying(failures: failures))
                await core.durable.waitToRetry(after: failures, id: id, timeSource: core.timeSource)
                if Task.isCancelled { return outcome }
                core.tracker.phase(key, .sending)
            }
        }
    }

    /// Whether a durable mutation that failed with `error` is tried again: the server could not be reached, or
    /// answered `408`, `429` or a `5xx`. Any other answer — another `4xx`, a response the pipeline rejects — is
    /// final, as is a cancellation.
    static func isTransient(_ error: ResourceError) -> Bool {
        if error.isCancellation { return false }
        if error.kind.transportKind != nil { return true }
        guard let status = error.kind.httpStatus else { return false }
        return status == 408 || status == 429 || status >= 500
    }

    /// Shows `entry`'s layer again and sends it, as its `mutate` did; nil when this process sends it already.
    func resumeMutation(_ entry: OutboxEntry) -> Request? {
        guard core.durable.activate(entry.key) else { return nil }
        let method = HTTPMethod(rawValue: entry.method)
        var headers = HTTPHeaders()
        for header in entry.headers { headers.add(name: header.name, value: header.value) }
        var apply: OptimisticUpdate.Apply?
        if let name = entry.optimisticUpdate {
            do {
                apply = try OptimisticUpdate.named(name).resolved(body: entry.body, definitions: core.durable)
            } catch {
                core.logging.stateChanges.warning(
                    "a resumed mutation is sent without its optimistic update",
                    metadata: ["url": "\(entry.url)", "key": "\(entry.key)", "reason": "\(error.message)"])
            }
        }
        let invalidates = entry.invalidates.map(ConfigurationPattern.init(stored:))
        let plan = MutationPlan(
            key: entry.key, method: method, body: entry.body, headers: headers, apply: apply,
            onSuccess: entry.usesResponse ? .useResponse : .reload, invalidates: invalidates)
        core.mutations.withLock { $0.pending += 1 }
        return startMutation(plan, configuration: configuration(for: method), entry: entry)
    }
}
