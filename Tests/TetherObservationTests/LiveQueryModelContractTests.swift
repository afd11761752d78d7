import Dispatch
import LiveQueryKit
import PropertyBased
import Testing
import TetherConcurrency
import TetherJSON
import TetherObservation
import TetherTesting
import TetherTestingTraits

/// `LiveQueryModel`'s contract, checked by a model: random writes, removals and reads against a brute-force
/// reference. At every read, made on the model's queue so that no result is taken during it:
/// - since the last read, the model took at most one result (`.whenRead`), never one equal to the last it took;
/// - what it shows is the query's result at some commit no older than the last one it showed;
/// and once the writes stop, a read brings it to the query's result over the final documents.
///
/// A failure prints the steps and the seed; `.fixedSeed("…")` on the test replays it.
/// `TETHER_OBSERVATION_SEQUENCES` sets how many sequences each pacing runs.
@Suite("LiveQueryModel against a model: random writes and reads", .timeLimit(minutes: 10), .leakChecked)
struct LiveQueryModelContractTests {
    static let sequences = TestSetting(
        variable: "TETHER_OBSERVATION_SEQUENCES", range: 1...1_000_000, default: 200)

    @Test("Random writes and reads, every read checked", arguments: [LiveQueryModel.Pacing.whenRead, .immediately])
    func randomSequences(pacing: LiveQueryModel.Pacing) async {
        await propertyCheck(count: Self.sequences.value(), input: Gen.int(in: 0...999_999).array(of: 4...40)) {
            seeds in
            let steps = seeds.map(ModelStep.init)
            do {
                recordModelProblems(
                    try await ModelContractRun(pacing: pacing).run(steps), model: "LiveQueryModel \(pacing)",
                    steps: steps)
            } catch {
                Issue.record("\(error)\nsteps: \(steps)")
            }
        }
    }
}

/// One step of a sequence.
enum ModelStep: CustomStringConvertible {
    case upsert(id: String, matches: Bool, value: Int)
    case remove(id: String)
    case read

    init(_ seed: Int) {
        let id = "d\(seed % 6)"
        switch seed / 6 % 5 {
        case 0, 1: self = .upsert(id: id, matches: seed / 30 % 2 == 0, value: seed / 60 % 4)
        case 2: self = .remove(id: id)
        default: self = .read
        }
    }

    var description: String {
        switch self {
        case .upsert(let id, let matches, let value): "upsert \(id) a=\(matches ? 1 : 0) v=\(value)"
        case .remove(let id): "remove \(id)"
        case .read: "read"
        }
    }
}

/// One sequence: an in-memory store, a model of `a == 1` sorted by `_id`, and the reference.
final class ModelContractRun {
    let store = Store.inMemory()
    let queue = DispatchQueue(label: "tether.observation-model")
    let pacing: LiveQueryModel.Pacing
    let model: LiveQueryModel
    /// The documents the store holds, by id: `a` and `v`.
    var documents: [String: (a: Int, v: Int)] = [:]
    /// The query's result after each commit, oldest first (the empty store's first).
    var history: [[String]] = [[]]
    /// What the last read saw: how many results the model had taken, what it showed, and where that is in history.
    var last = (count: 0, shown: [String](), index: 0)

    init(pacing: LiveQueryModel.Pacing) throws {
        self.pacing = pacing
        model = try LiveQueryModel(
            store.collection("items").find("a == 1").sort("_id"), deliverOn: .queue(queue), pacing: pacing)
    }

    /// The query's result over `documents`, brute force: each match as `id:v`, by id.
    var expected: [String] {
        documents.filter { $0.value.a == 1 }.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value.v)" }
    }

    func run(_ steps: [ModelStep]) async throws -> [String] {
        let items = store.collection("items")
        for (index, step) in steps.enumerated() {
            switch step {
            case .upsert(let id, let matches, let value):
                try await items.upsert(["_id": .string(id), "a": matches ? 1 : 0, "v": .number(Double(value))])
                documents[id] = (matches ? 1 : 0, value)
                history.append(expected)
            case .remove(let id):
                try await items.remove(id: id)
                documents[id] = nil
                history.append(expected)
            case .read:
                if let problem = await check() { return ["at step \(index) (read): \(problem)"] }
            }
        }
        // Settled: reads bring the model to the final result.
        let final = expected
        let (store, model, queue) = (store, model, queue)
        do {
            try await eventually(within: .seconds(30)) {
                await store.waitForLiveQueries()
                return await Self.read(model, on: queue).shown == final
            }
        } catch {
            return ["after the last step: the model shows \(await read().shown), the query's result is \(final)"]
        }
        await model.stop()
        return []
    }

    /// Reads the model on its queue: no result is taken while the job runs, and the read's signal runs after it.
    func read() async -> (count: Int, shown: [String]) {
        await Self.read(model, on: queue)
    }

    static func read(_ model: LiveQueryModel, on queue: DispatchQueue) async -> (count: Int, shown: [String]) {
        await withCheckedContinuation { continuation in
            queue.async {
                let count = model.resultCount
                let shown = model.documents.map { "\($0.id):\($0.int("v") ?? -1)" }
                continuation.resume(returning: (count, shown))
            }
        }
    }

    /// Reads, and checks the read against the last one and the history; the problem, if any.
    func check() async -> String? {
        let (count, shown) = await read()
        defer { last.count = count }
        let taken = count - last.count
        if pacing == .whenRead, taken > 1 {
            return "\(taken) results were taken since the last read; at most one is taken per read"
        }
        if taken == 0, shown != last.shown {
            return "no result was taken, yet the model shows \(shown) instead of \(last.shown)"
        }
        if taken == 1, count > 1, shown == last.shown, last.count > 0 {
            return "the result taken, \(shown), equals the one before it"
        }
        guard let index = history[last.index...].firstIndex(of: shown) else {
            return "the model shows \(shown), the query's result at no commit since the last read (\(last.shown))"
        }
        last.shown = shown
        last.index = index
        return nil
    }
}
