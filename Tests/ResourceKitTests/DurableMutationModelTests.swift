import Foundation
import Logging
import MutationOutboxKit
import PersistenceKit
import PropertyBased
import ResourceKit
import Testing
import TetherClock
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

/// The outbox's contract, checked by a model: random sequences of durable mutations on three resources — accepted,
/// refused, or failing a few times first — with the network going down and up, clocks advancing, cancellations, and
/// the process killed and restarted (a new service resuming the same outbox, the old one cut off mid-flight). At the
/// end the network stays up until every mutation has settled, and against the reference:
///
/// - every mutation not cancelled or refused was applied by the server **exactly once** (never lost, never twice —
///   the server applies by key, and counts by mutation, so a mutation sent under two keys is caught);
/// - the server applied each resource's mutations in the order they were made;
/// - a refused one was applied never, and is in the failed list; a cancelled one at most once, and in neither list;
/// - the outbox holds nothing pending;
/// - after every restart, each resource shows the layers of its pending mutations again, in order, at once.
///
/// A failure prints the sequence and the seed; `.fixedSeed("…")` on the test replays it.
/// `TETHER_OUTBOX_SEQUENCES` sets how many sequences run.
@Suite("Durable mutations against a model: kills, outages, refusals and cancellations")
struct DurableMutationModelTests {
    static let sequences = TestSetting(variable: "TETHER_OUTBOX_SEQUENCES", range: 1...10_000_000, default: 300)

    @Test("Random sequences: every mutation applied once, in order, through kills and outages", .timeLimit(minutes: 10))
    func randomSequences() async {
        await propertyCheck(count: Self.sequences.value(), input: Gen.int(in: 0...999_999).array(of: 2...40)) {
            seeds in
            let steps = seeds.map(OutboxStep.init)
            recordModelProblems(await OutboxModelRun().run(steps), model: "outbox model", steps: steps)
        }
    }
}

/// What the server does with a mutation: its body says.
enum OutboxBehaviour: Sendable, Equatable, CustomStringConvertible {
    case accept
    case refuse
    /// Fails with a 503 this many times, then accepts.
    case flaky(Int)

    var description: String {
        switch self {
        case .accept: "accept"
        case .refuse: "refuse"
        case .flaky(let times): "flaky-\(times)"
        }
    }

    init?(_ text: some StringProtocol) {
        switch text {
        case "accept": self = .accept
        case "refuse": self = .refuse
        default:
            guard text.hasPrefix("flaky-"), let times = Int(text.dropFirst(6)) else { return nil }
            self = .flaky(times)
        }
    }
}

enum OutboxStep: CustomStringConvertible, Sendable {
    case mutate(resource: Int, OutboxBehaviour)
    /// The live process's clock moves on: waits for another attempt end.
    case advance(seconds: Int)
    case networkDown
    case networkUp
    /// The live process loads another resource (an answer ends the outbox's waits).
    case loadOther
    case cancel(Int)
    /// The process dies mid-flight, and a new one resumes the outbox.
    case kill

    init(_ seed: Int) {
        let detail = seed / 100
        switch seed % 100 {
        case 0..<40:
            let behaviour: OutboxBehaviour =
                switch detail % 20 {
                case 0..<10: .accept
                case 10..<13: .refuse
                default: .flaky(1 + detail / 20 % 3)
                }
            self = .mutate(resource: detail / 60 % 3, behaviour)
        case 40..<60: self = .advance(seconds: 1 + detail % 8)
        case 60..<67: self = .networkDown
        case 67..<76: self = .networkUp
        case 76..<82: self = .loadOther
        case 82..<90: self = .cancel(detail)
        default: self = .kill
        }
    }

    var description: String {
        switch self {
        case .mutate(let resource, let behaviour): "mutate r\(resource) \(behaviour)"
        case .advance(let seconds): "advance \(seconds) s"
        case .networkDown: "network down"
        case .networkUp: "network up"
        case .loadOther: "load another resource"
        case .cancel(let index): "cancel #\(index)"
        case .kill: "kill and restart"
        }
    }
}

/// The server every process talks to: applies a mutation once per key, and counts what it applied per mutation.
final class OutboxModelServer: Sendable {
    struct State {
        var isDown = false
        var attempts: [String: Int] = [:]
        var appliedKeys: Set<String> = []
        /// Applications by mutation name: more than one means a mutation was sent under two keys.
        var applications: [String: Int] = [:]
        /// Each resource's mutations, in the order applied.
        var order: [String: [String]] = [:]
    }

    let state = LockedValue(State())

    func reply(to request: TransportRequest) -> InMemoryTransport.Reply {
        let path = request.url.path
        return state.withLock { state -> InMemoryTransport.Reply in
            if state.isDown { return .failure(.connectionRefused) }
            guard request.method == .post else { return .text((state.order[path] ?? []).joined(separator: ",")) }
            let words = String(decoding: request.body ?? Data(), as: UTF8.self).split(separator: " ")
            guard words.count == 2, let behaviour = OutboxBehaviour(words[1]),
                let key = request.headers["Idempotency-Key"]
            else { return .text("bad request", status: 400) }
            let name = String(words[0])
            state.attempts[key, default: 0] += 1
            switch behaviour {
            case .refuse: return .text("refused", status: 422)
            case .flaky(let times) where state.attempts[key, default: 0] <= times: return .status(503)
            default: break
            }
            if state.appliedKeys.insert(key).inserted {
                state.applications[name, default: 0] += 1
                state.order[path, default: []].append(name)
            }
            return .text("ok")
        }
    }
}

/// An outbox as one process sees it: the shared one while the process lives, and nothing once it is killed — a
/// dead process writes nothing more.
final class ProcessOutbox: MutationOutbox {
    let shared: InMemoryMutationOutbox
    let alive = LockedValue(true)

    init(_ shared: InMemoryMutationOutbox) {
        self.shared = shared
    }

    private func live() throws(PersistenceError) {
        guard alive.withLock({ $0 }) else { throw PersistenceError(.closed, "the process was killed") }
    }

    func enqueue(_ entry: OutboxEntry) throws(PersistenceError) -> Int64 {
        try live()
        return try shared.enqueue(entry)
    }
    func pendingEntries() throws(PersistenceError) -> [OutboxEntry] {
        try live()
        return try shared.pendingEntries()
    }
    func takePending() throws(PersistenceError) -> [OutboxEntry] {
        try live()
        return try shared.takePending()
    }
    func failedEntries() throws(PersistenceError) -> [OutboxEntry] {
        try live()
        return try shared.failedEntries()
    }
    func remove(key: String) throws(PersistenceError) {
        try live()
        try shared.remove(key: key)
    }
    func markFailed(key: String, reason: String) throws(PersistenceError) {
        try live()
        try shared.markFailed(key: key, reason: reason)
    }
    func removeFailedEntries() throws(PersistenceError) {
        try live()
        try shared.removeFailedEntries()
    }
}

/// One process: a service with its own clock and transport, on the shared outbox and server.
final class OutboxModelProcess {
    static let base = "https://outbox.example"
    let clock = ManualTimeSource(now: Date(timeIntervalSince1970: 1000))
    let outbox: ProcessOutbox
    let service: Service
    /// The mutations this process made, by name, and the ones it resumed.
    var made: [(name: String, request: Request)] = []
    var resumed: [Request] = []

    init(server: OutboxModelServer, outbox shared: InMemoryMutationOutbox) {
        let transport = InMemoryTransport(timeSource: clock)
        let outbox = ProcessOutbox(shared)
        self.outbox = outbox
        transport.respond { [alive = outbox.alive] request in
            // A dead process sends nothing more.
            guard alive.withLock({ $0 }) else { return .failure(.connectionRefused) }
            return server.reply(to: request)
        }
        // Quiet: refusals and a dead process's failed writes are what the model makes, hundreds of times a run.
        var logging = ResourceLogging()
        logging.stateChanges = Logger(label: "outbox-model", factory: { _ in SwiftLogNoOpLogHandler() })
        service = Service(baseURL: Self.base, transport: transport, timeSource: clock, logging: logging)
        service.mutationConfiguration.outbox = outbox
        service.mutationConfiguration.retryBackoff = .seconds(1)
        service.mutationConfiguration.maxRetryBackoff = .seconds(8)
        service.defineOptimisticUpdate("append") { body in
            let name = String(decoding: body ?? Data(), as: UTF8.self).split(separator: " ").first.map(String.init)
            return .updating { (text: String?) in
                [text, name].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ",")
            }
        }
    }

    var requests: [Request] { made.map(\.request) + resumed }

    func resource(_ index: Int) -> Resource {
        service.resource("/r\(index)")
    }
}

/// One sequence against the reference.
final class OutboxModelRun {
    struct Mutation {
        let name: String
        let resource: Int
        let behaviour: OutboxBehaviour
        var cancelled = false
    }

    let server = OutboxModelServer()
    let outbox = InMemoryMutationOutbox()
    var process: OutboxModelProcess
    var dead: [OutboxModelProcess] = []
    var mutations: [Mutation] = []
    var problems: [String] = []

    init() {
        process = OutboxModelProcess(server: server, outbox: outbox)
    }

    func run(_ steps: [OutboxStep]) async -> [String] {
        for (index, step) in steps.enumerated() {
            await perform(step)
            checkNeverTwice("step \(index): \(step)")
        }
        await drain()
        checkNeverTwice("the drain")
        await checkSettled()
        await bury()
        return problems
    }

    private func perform(_ step: OutboxStep) async {
        switch step {
        case .mutate(let resource, let behaviour):
            let name = "m\(mutations.count + 1)"
            let request = process.resource(resource).mutate(
                .post, text: "\(name) \(behaviour)", optimistic: .named("append"), durable: true)
            if let error = request.completedOutcome?.error, error.kind == .mutationNotQueued {
                problems.append("\(name) was not queued: \(error)")
            }
            mutations.append(Mutation(name: name, resource: resource, behaviour: behaviour))
            process.made.append((name, request))
            await settle()
        case .advance(let seconds):
            process.clock.advance(by: .seconds(seconds))
            await settle()
        case .networkDown:
            server.state.withLock { $0.isDown = true }
        case .networkUp:
            server.state.withLock { $0.isDown = false }
        case .loadOther:
            _ = await process.service.resource("/other").load().outcome
            await settle()
        case .cancel(let index):
            let open = process.made.filter { !$0.request.isCompleted }
            guard !open.isEmpty else { return }
            let chosen = open[index % open.count]
            chosen.request.cancel()
            // Cancelled, unless its answer came first: then it is what the answer made it.
            let cancelled = chosen.request.completedOutcome?.error?.isCancellation == true
            if cancelled, let at = mutations.firstIndex(where: { $0.name == chosen.name }) {
                mutations[at].cancelled = true
            }
            await settle()
        case .kill:
            process.outbox.alive.withLock { $0 = false }
            dead.append(process)
            process = OutboxModelProcess(server: server, outbox: outbox)
            await resume()
        }
    }

    /// A new process resumes the outbox: each resource shows its pending mutations again, in order, at once. The
    /// network is down meanwhile, so that no answer takes a layer away before it is looked at.
    private func resume() async {
        let wasDown = server.state.withLock { state in
            defer { state.isDown = true }
            return state.isDown
        }
        defer { server.state.withLock { $0.isDown = wasDown } }
        let pending: [OutboxEntry]
        do {
            pending = try outbox.pendingEntries()
            process.resumed = try process.service.resumeMutations()
        } catch {
            problems.append("resume failed: \(error)")
            return
        }
        for index in 0..<3 {
            let names = pending.filter { $0.url.hasSuffix("/r\(index)") }.map(Self.name)
            let shown = process.resource(index).latestData?.typedContent(as: String.self) ?? ""
            if shown != names.joined(separator: ",") {
                problems.append("after the restart r\(index) shows \"\(shown)\", not its pending \(names)")
            }
        }
        await settle()
    }

    /// Lets the process's tasks run until its clock has someone waiting or its requests are done.
    private func settle() async {
        for _ in 0..<200 {
            if process.requests.allSatisfy(\.isCompleted) || process.clock.sleeperCount > 0 { return }
            await Task.yield()
        }
    }

    /// The network stays up; the live process's clock moves on until every mutation it holds has settled.
    private func drain() async {
        server.state.withLock { $0.isDown = false }
        var rounds = 0
        while !process.requests.allSatisfy(\.isCompleted) {
            rounds += 1
            guard rounds < 100_000 else {
                problems.append("not drained: \(process.requests.filter { !$0.isCompleted }.count) mutations pending")
                return
            }
            if process.clock.sleeperCount > 0 { process.clock.advance(by: .seconds(8)) }
            await Task.yield()
        }
    }

    /// Nothing applied twice, at any moment.
    private func checkNeverTwice(_ when: String) {
        let twice = server.state.withLock { $0.applications.filter { $0.value > 1 } }
        if !twice.isEmpty { problems.append("\(when): applied more than once: \(twice)") }
    }

    private func checkSettled() async {
        let (applications, order) = server.state.withLock { ($0.applications, $0.order) }
        let failed: [OutboxEntry]
        let pending: [OutboxEntry]
        do {
            failed = try await process.service.failedMutations()
            pending = try await process.service.pendingMutations()
        } catch {
            problems.append("the outbox could not be read: \(error)")
            return
        }
        if !pending.isEmpty { problems.append("left pending: \(pending.map(Self.name))") }
        let failedNames = Set(failed.map(Self.name))
        if failedNames.count != failed.count { problems.append("the failed list repeats: \(failed.map(Self.name))") }
        for mutation in mutations {
            let applied = applications[mutation.name] ?? 0
            if mutation.cancelled {
                if applied > 1 { problems.append("\(mutation.name) (cancelled) applied \(applied) times") }
                if failedNames.contains(mutation.name) {
                    problems.append("\(mutation.name) (cancelled) is in the failed list")
                }
            } else if mutation.behaviour == .refuse {
                if applied != 0 { problems.append("\(mutation.name) (refused) applied \(applied) times") }
                if !failedNames.contains(mutation.name) {
                    problems.append("\(mutation.name) (refused) is not in the failed list \(failedNames.sorted())")
                }
            } else if applied != 1 {
                problems.append("\(mutation.name) (\(mutation.behaviour)) applied \(applied) times, not once")
            }
        }
        for index in 0..<3 {
            let made = mutations.filter { $0.resource == index }.map(\.name)
            let applied = order["/r\(index)"] ?? []
            if applied != made.filter({ applied.contains($0) }) {
                problems.append("r\(index): applied in the order \(applied), made in the order \(made)")
            }
        }
    }

    /// The mutation an entry holds: the first word of its body.
    static func name(_ entry: OutboxEntry) -> String {
        String(decoding: entry.body ?? Data(), as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
    }

    /// The dead processes' work ends: their waits run out against an outbox that takes nothing more.
    private func bury() async {
        for process in dead + [process] {
            for request in process.requests where !request.isCompleted { request.cancel() }
            process.clock.advance(by: .seconds(3600))
        }
        await Task.yield()
    }
}
