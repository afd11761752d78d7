import Foundation
import LiveQueryKit
import MirrorKit
import ResourceKit
import SQLiteAdapter
import TetherClock
import TetherJSON
import TetherTesting
import TransportKit

let base = "https://api.example.com"

/// A service on an in-memory transport and a manual clock, and a store of either kind (in memory, or a SQLite file
/// in a folder of its own).
struct MirrorFixture {
    let clock: ManualTimeSource
    let transport: InMemoryTransport
    let service: Service
    let store: Store

    init(_ kind: String, clock: ManualTimeSource = ManualTimeSource(now: Date(timeIntervalSince1970: 1000))) throws {
        self.clock = clock
        transport = InMemoryTransport(timeSource: clock)
        service = Service(baseURL: base, transport: transport, timeSource: clock)
        store = kind == "sqlite" ? Store(try SQLiteDocumentStore(path: try Self.temporaryPath())) : Store.inMemory()
    }

    init(store: Store, clock: ManualTimeSource = ManualTimeSource(now: Date(timeIntervalSince1970: 1000))) {
        self.clock = clock
        transport = InMemoryTransport(timeSource: clock)
        service = Service(baseURL: base, transport: transport, timeSource: clock)
        self.store = store
    }

    /// Both kinds, for parameterized tests.
    static let kinds = ["memory", "sqlite"]

    /// A path for a new SQLite file in a directory of its own, removed when the process ends.
    static func temporaryPath() throws -> String {
        try TemporaryFiles.shared.directory("tether-mirror-") + "/store.sqlite"
    }

    /// Answers the next GET of `path` with `json` (and `headers`), loads it, and waits until `mirror` has finished
    /// one more write than before.
    func respond(
        _ path: String, _ json: String, status: Int = 200, headers: HTTPHeaders = [:], mirror: ResourceMirror,
        within deadline: Duration = .seconds(30)
    ) async throws {
        let before = mirror.completedWrites
        transport.enqueue(.get, base + path, .json(json, status: status, headers: headers))
        _ = await service.resource(path).load().outcome
        try await eventually(within: deadline) { mirror.completedWrites > before }
    }

    /// The documents of `collection`, by `_id`.
    func documents(_ collection: String) async throws -> [String: JSONValue] {
        let documents = try await store.collection(collection).findAll().exec()
        return Dictionary(uniqueKeysWithValues: documents.map { ($0.id, $0.value) })
    }

    /// The mirror's state in the store.
    func state(_ mirror: ResourceMirror) async throws -> MirrorState? {
        try await mirror.state.exec().flatMap(MirrorState.init)
    }
}

/// A JSON array of `{"id": …, "store_id": …, "name": …}` documents.
func itemsJSON(_ items: [(id: String, store: String, name: String)]) -> String {
    "[" + items.map { #"{"id":"\#($0.id)","store_id":"\#($0.store)","name":"\#($0.name)"}"# }.joined(separator: ",")
        + "]"
}
