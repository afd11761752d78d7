import Foundation
import PropertyBased
import ResourceKit
import Testing
import TetherClock
import TetherConcurrency
import TetherTesting
import TetherTestingTraits
import TransportKit

/// The mutation contract, checked by a model: random sequences of mutations (succeeding or refused, taking the
/// response or reloading, answered in any order), cancellations, wipes, and changes on the server loaded meanwhile,
/// against a brute-force reference. After every step the resource shows the reference's reckoning — the confirmed
/// data with every pending mutation's update applied in the order the mutations began — and observers have only
/// ever seen such reckonings, in order.
///
/// A failure prints the sequence and the seed; `.fixedSeed("…")` on the test replays it.
/// `TETHER_MUTATION_SEQUENCES` sets how many sequences run.
@Suite("Mutations against a model: random operations, every step reckoned", .leakChecked)
struct MutationModelTests {
    static let sequences = TestSetting(variable: "TETHER_MUTATION_SEQUENCES", range: 1...10_000_000, default: 1_000)

    @Test("Random sequences of mutations, cancellations, wipes and server changes", .timeLimit(minutes: 10))
    func randomSequences() async {
        await propertyCheck(count: Self.sequences.value(), input: Gen.int(in: 0...999_999).array(of: 2...30)) {
            seeds in
            let steps = seeds.map(MutationStep.init)
            await withFixture { fixture in
                let run = MutationModelRun(fixture)
                let problems = await run.run(steps)
                recordModelProblems(
                    problems, model: "mutation model", steps: steps,
                    context: "trace:\n  " + run.trace.joined(separator: "\n  "))
            }
        }
    }
}

enum MutationStep: CustomStringConvertible, Sendable {
    /// A mutation that adds its own name to the list, answered `due` seconds from now (or as soon after as no
    /// other answer is due).
    case mutate(refused: Bool, useResponse: Bool, due: Int)
    /// The earliest answer arrives: its mutation settles, and any reload it starts ends.
    case answerNext
    /// Someone else adds to the list on the server, and the resource loads.
    case changeOnServer
    case cancel(Int)
    case wipe

    init(_ seed: Int) {
        switch seed % 100 {
        case 0..<40: self = .mutate(refused: seed / 100 % 3 == 0, useResponse: seed / 300 % 2 == 0, due: seed / 600 % 8)
        case 40..<75: self = .answerNext
        case 75..<88: self = .changeOnServer
        case 88..<96: self = .cancel(seed / 100)
        default: self = .wipe
        }
    }

    var description: String {
        switch self {
        case .mutate(let refused, let useResponse, let due):
            "mutate\(refused ? " refused" : "")\(useResponse ? " useResponse" : " reload") due \(due)"
        case .answerNext: "answer next"
        case .changeOnServer: "change on server"
        case .cancel(let index): "cancel #\(index)"
        case .wipe: "wipe"
        }
    }
}

/// One sequence: the list's server, the resource, an observer, and the reference.
final class MutationModelRun {
    struct Pending {
        let name: String
        let due: Int
        let request: Request
        let useResponse: Bool
    }

    let fixture: Fixture
    let list: Resource
    /// The server's list.
    let server = LockedValue<[String]>(["a"])
    /// What the observer saw, in order.
    let seen = LockedValue<[String?]>([])
    let events = LockedValue<[String]>([])
    let owner = Owner()
    /// The reference: the confirmed list, and the pending mutations in the order they began.
    var confirmed: String?
    var pending: [Pending] = []
    /// Every reckoning the resource went through, in order, from no data.
    var reckonings: [String?] = [nil]
    var problems: [String] = []
    var trace: [String] = []
    var made = 0
    var changes = 0
    /// Seconds since the start, on the fixture's clock.
    var now = 0

    init(_ fixture: Fixture) {
        self.fixture = fixture
        list = fixture.service.resource("/list")
        let server = server
        let clock = fixture.clock
        let start = clock.now
        fixture.transport.respond { request in
            let joined = server.withLock { $0.joined(separator: ",") }
            guard request.method == .post else { return .text(joined) }
            // The body is "name refused|accepted due": the server applies an accepted one as it arrives.
            let words = String(decoding: request.body ?? Data(), as: UTF8.self).split(separator: " ").map(String.init)
            let due = Duration.seconds(Int(words[2])!) - .seconds(clock.now.timeIntervalSince(start))
            guard words[1] == "accepted" else { return .text("refused", status: 422, delay: due) }
            let list = server.withLock { list in
                list.append(words[0])
                return list.joined(separator: ",")
            }
            return .text(list, delay: due)
        }
    }

    func run(_ steps: [MutationStep]) async -> [String] {
        list.addObserver(owner: owner) { [seen, events] resource, event in
            guard event != .observerAdded else { return }
            let text = resource.latestData?.typedContent(as: String.self)
            seen.withLock { $0.append(text) }
            events.withLock { $0.append("\(event) \(text ?? "nil") loading \(resource.isLoading)") }
        }
        _ = await list.load().outcome
        confirmed = "a"
        check("the first load")
        for (index, step) in steps.enumerated() {
            await perform(step)
            check("step \(index): \(step)")
            guard problems.isEmpty else { return problems }
        }
        while !pending.isEmpty {
            await perform(.answerNext)
            check("the answers at the end")
        }
        if list.isRequesting { problems.append("requests left in flight: \(list.allRequests)") }
        let shown = seen.withLock { $0 }.removingRepeats()
        if !shown.isSubsequence(of: reckonings.removingRepeats()) {
            problems.append("observers saw \(shown); the reckonings were \(reckonings.removingRepeats())")
        }
        return problems
    }

    private func perform(_ step: MutationStep) async {
        switch step {
        case .mutate(let refused, let useResponse, let due):
            made += 1
            let name = "m\(made)"
            var at = now + 1 + due
            while pending.contains(where: { $0.due == at }) { at += 1 }
            let request = list.mutate(
                .post, text: "\(name) \(refused ? "refused" : "accepted") \(at)",
                optimistic: .updating { (list: String?) in Self.adding(name, to: list) },
                onSuccess: useResponse ? .useResponse : .reload)
            pending.append(Pending(name: name, due: at, request: request, useResponse: useResponse))
            await asleep()
        case .answerNext:
            guard let next = pending.min(by: { $0.due < $1.due }) else { return }
            fixture.clock.advance(by: .seconds(next.due - now))
            now = next.due
            let outcome = await next.request.outcome
            trace.append("answered \(next.name): \(outcome); loads \(list.loadRequests); shows \(list.text)")
            trace.append(
                contentsOf: events.withLock { events in
                    defer { events = [] }
                    return events
                })
            await loadsEnded()
            trace.append("loads ended; shows \(list.text); server \(serverList)")
            pending.removeAll { $0.request === next.request }
            if outcome.error == nil {
                confirmed = next.useResponse ? outcome.entity?.typedContent(as: String.self) : serverList
            }
        case .changeOnServer:
            changes += 1
            server.withLock { $0.append("x\(changes)") }
            _ = await list.load().outcome
            confirmed = serverList
        case .cancel(let index):
            guard !pending.isEmpty else { return }
            let cancelled = pending.remove(at: index % pending.count)
            cancelled.request.cancel()
            await asleep()
        case .wipe:
            list.wipe()
            pending.removeAll()
            confirmed = nil
            await asleep()
        }
    }

    /// Waits until each pending mutation, and nothing else, waits for its answer on the clock: the clock is
    /// advanced only then, so that every answer arrives at the second it is due.
    private func asleep() async {
        for _ in 0..<100_000 {
            if fixture.clock.sleeperCount == pending.count { return }
            await Task.yield()
        }
        problems.append("\(fixture.clock.sleeperCount) waiting on the clock, \(pending.count) mutations pending")
    }

    /// Waits for every load in flight, a mutation's reload among them.
    private func loadsEnded() async {
        for load in list.loadRequests { _ = await load.outcome }
    }

    private var serverList: String {
        server.withLock { $0.joined(separator: ",") }
    }

    /// The reference's reckoning: every pending update, in the order the mutations began, over the confirmed data.
    private var reckoned: String? {
        pending.reduce(confirmed) { Self.adding($1.name, to: $0) }
    }

    private func check(_ when: String) {
        let expected = reckoned
        reckonings.append(expected)
        let shown = list.latestData?.typedContent(as: String.self)
        if shown != expected {
            problems.append("after \(when): shows \(shown ?? "nil"), reckoned \(expected ?? "nil")")
        }
        let counted = fixture.service.pendingMutationCount
        if counted != pending.count {
            problems.append("after \(when): \(counted) counted pending, \(pending.count) are")
        }
    }

    /// Adds `name` to the list unless it is there already: the server may have applied a mutation that a load
    /// brought before the mutation's own answer, and an update that adds twice would show it twice.
    static func adding(_ name: String, to list: String?) -> String {
        guard let list else { return name }
        return list.split(separator: ",").contains(Substring(name)) ? list : list + "," + name
    }
}
