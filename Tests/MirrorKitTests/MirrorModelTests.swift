import Foundation
import LiveQueryKit
import MirrorKit
import PropertyBased
import ResourceKit
import SQLiteAdapter
import Testing
import TetherClock
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits
import TransportKit

/// The mirror's contract, checked by a model: random sequences of responses — lists for two stores' scoped mirrors
/// into one collection, details of single documents, 304s, responses refused (a duplicate id, a missing id) — on a
/// manual clock. After every step the collection must equal a brute-force reference: each list replaces what its
/// scope held, a detail updates its one document, a refusal and a 304 change nothing.
///
/// A failure prints the steps and the seed; `.fixedSeed("…")` on the test replays it.
/// `TETHER_MIRROR_SEQUENCES` sets how many sequences each store runs.
@Suite("Mirrors against a model: random responses, the collection checked after each", .timeLimit(minutes: 10))
struct MirrorModelTests {
    static let sequences = TestSetting(variable: "TETHER_MIRROR_SEQUENCES", range: 1...1_000_000, default: 100)

    @Test("Random sequences of responses, the collection checked after each", arguments: MirrorFixture.kinds)
    func randomSequences(kind: String) async {
        await propertyCheck(
            count: Self.sequences.value(), input: Gen.int(in: 0...999_999).array(of: 1...24)
        ) { seeds in
            let steps = seeds.map(MirrorStep.init)
            do {
                recordModelProblems(
                    try await MirrorModelRun(kind: kind).run(steps), model: "mirror model", steps: steps)
            } catch {
                Issue.record("\(error)\nsteps: \(steps)")
            }
        }
    }
}

/// One step: what the server answers, and to which mirror.
struct MirrorStep: CustomStringConvertible {
    enum Action {
        /// A list for the store's mirror: these ids, each with this name.
        case list(store: String, items: [(id: String, name: String)])
        /// One document for the detail mirror.
        case detail(id: String, name: String)
        /// A list that repeats an id.
        case duplicate(store: String)
        /// A list with an element that has no id.
        case missingID(store: String)
        /// 304 Not Modified for the store's list.
        case notModified(store: String)
        /// The store's list fails to load (HTTP 500).
        case serverError(store: String)
    }

    let action: Action

    init(_ seed: Int) {
        var bits = seed
        func take(_ count: Int) -> Int {
            defer { bits /= count }
            return bits % count
        }
        let store = ["abc", "xyz"][take(2)]
        let names = ["Pear", "Fig", "Kiwi"]
        switch take(9) {
        case 0...3:
            var items: [(id: String, name: String)] = []
            for index in 0..<4 where take(2) == 1 { items.append(("\(store)\(index)", names[take(3)])) }
            action = .list(store: store, items: items)
        case 4: action = .detail(id: "\(store)\(take(4))", name: names[take(3)])
        case 5: action = .duplicate(store: store)
        case 6: action = .missingID(store: store)
        case 7: action = .serverError(store: store)
        default: action = .notModified(store: store)
        }
    }

    var description: String {
        switch action {
        case .list(let store, let items): "list \(store): " + items.map { "\($0.id)=\($0.name)" }.joined(separator: ",")
        case .detail(let id, let name): "detail \(id)=\(name)"
        case .duplicate(let store): "duplicate \(store)"
        case .missingID(let store): "missing id \(store)"
        case .notModified(let store): "304 \(store)"
        case .serverError(let store): "500 \(store)"
        }
    }
}

/// One sequence: a fixture, the three mirrors, and the reference (`_id` → name).
struct MirrorModelRun {
    let fixture: MirrorFixture
    let lists: [String: ResourceMirror]
    let detail: ResourceMirror

    init(kind: String) throws {
        fixture = try MirrorFixture(kind)
        let items = fixture.store.collection("items")
        var lists: [String: ResourceMirror] = [:]
        for store in ["abc", "xyz"] {
            lists[store] = try fixture.service.resource("/stores/\(store)/items").mirror(
                into: items, id: "id", scope: "store_id == '\(store)'", loadingIfNeeded: false)
        }
        self.lists = lists
        detail = try fixture.service.resource("/item").mirror(into: items, id: "id", loadingIfNeeded: false)
    }

    func run(_ steps: [MirrorStep]) async throws -> [String] {
        var reference: [String: String] = [:]
        // Per store: whether its state records a failed load since its last sync, which a 304 answers by writing
        // the state again — without an error, unless the data the 304 confirms is a refused response.
        var failed: Set<String> = []
        var refused: Set<String> = []
        for (number, step) in steps.enumerated() {
            fixture.clock.advance(by: .seconds(1))
            switch step.action {
            case .list(let store, let items):
                let json = itemsJSON(items.map { ($0.id, store, $0.name) })
                try await fixture.respond("/stores/\(store)/items", json, mirror: lists[store]!)
                failed.remove(store)
                refused.remove(store)
                reference = reference.filter { !$0.key.hasPrefix(store) }
                for item in items { reference[item.id] = item.name }
            case .detail(let id, let name):
                let json = #"{"id":"\#(id)","store_id":"\#(id.prefix(3))","name":"\#(name)"}"#
                try await fixture.respond("/item", json, mirror: detail)
                reference[id] = name
            case .duplicate(let store):
                let json = itemsJSON([("\(store)0", store, "Pear"), ("\(store)0", store, "Fig")])
                try await fixture.respond("/stores/\(store)/items", json, mirror: lists[store]!)
                failed.remove(store)
                refused.insert(store)
            case .missingID(let store):
                try await fixture.respond(
                    "/stores/\(store)/items", #"[{"store_id":"\#(store)"}]"#, mirror: lists[store]!)
                failed.remove(store)
                refused.insert(store)
            case .serverError(let store):
                try await fixture.respond("/stores/\(store)/items", "down", status: 500, mirror: lists[store]!)
                failed.insert(store)
            case .notModified(let store):
                // A 304 means "what you have": only for a resource that has something.
                let resource = fixture.service.resource("/stores/\(store)/items")
                guard resource.latestData != nil else { continue }
                let mirror = lists[store]!
                let writes = mirror.completedWrites
                fixture.transport.enqueue(.get, base + "/stores/\(store)/items", .status(304))
                _ = await resource.load().outcome
                if failed.remove(store) != nil {
                    try await eventually { mirror.completedWrites > writes }
                    let error = try await fixture.state(mirror)?.error
                    if (error != nil) != refused.contains(store) {
                        return [
                            "after step \(number) (\(step)): the state's error is \(error ?? "none"), the data confirmed "
                                + (refused.contains(store) ? "refused" : "mirrored")
                        ]
                    }
                }
            }
            let stored = try await fixture.documents("items").mapValues { $0["name"]?.stringValue ?? "?" }
            if stored != reference {
                return [
                    "after step \(number) (\(step)): the collection holds \(stored.sorted { $0.key < $1.key }),"
                        + " the reference \(reference.sorted { $0.key < $1.key })"
                ]
            }
        }
        return []
    }
}
