import Foundation
import HTTPTypes
import Hummingbird
import Logging
import LoopbackServer
import NIOCore
import TetherConcurrency

/// The embedded demo API: a store inventory on 127.0.0.1 (loopback only) and an ephemeral port, with ETags,
/// occasional slow responses and 503s.
///
/// | Path | Answer |
/// |---|---|
/// | `GET /stores` | the store ids |
/// | `GET /stores/{id}/items` | the store's items, with an ETag; `If-None-Match` gives 304 |
/// | `GET /stores/{id}/items/{item}` | one item, with an ETag |
/// | `GET /catalog/{id}` | the store's catalog as it is now, with an ETag; it changes behind the client's back (``DemoCatalog``) |
/// | `GET`, `POST /baskets/{run}/{screen}` | a basket of lines, changed once per idempotency key (``DemoBaskets``) |
final class DemoServer: Sendable {
    /// What the server saw.
    struct Statistics: Sendable {
        var requests = 0
        var notModified = 0
        var failed = 0
        var slow = 0
        var byPath: [String: Int] = [:]
        /// Successful answers (200 or 304) by path.
        var servedByPath: [String: Int] = [:]
        /// 304 answers by path.
        var notModifiedByPath: [String: Int] = [:]
    }

    private let server: LoopbackServer
    private let counters: LockedValue<Statistics>
    /// The writable part, and the switch that takes the whole API down.
    let baskets: DemoBaskets
    /// The part that changes on the server's side.
    let catalog: DemoCatalog

    private init(
        server: LoopbackServer, counters: LockedValue<Statistics>, baskets: DemoBaskets, catalog: DemoCatalog
    ) {
        self.server = server
        self.counters = counters
        self.baskets = baskets
        self.catalog = catalog
    }

    /// `http://127.0.0.1:{port}`.
    var baseURL: String { server.baseURL }

    var statistics: Statistics { counters.withLock { $0 } }

    /// How many requests to `path` were answered with data or a 304 (503s and 404s are not counted).
    func served(to path: String) -> Int {
        counters.withLock { $0.servedByPath[path] ?? 0 }
    }

    /// Starts the server; returns once it accepts connections.
    static func start(settings: ServerSettings) async throws -> DemoServer {
        let counters = LockedValue(Statistics())
        let baskets = DemoBaskets()
        let catalog = DemoCatalog()
        do {
            let server = try await LoopbackServer.start(
                serverName: "tether-demo",
                logger: Logger(label: "tether.sample.server", factory: { _ in SwiftLogNoOpLogHandler() })
            ) { request in
                try await respond(
                    to: request, settings: settings, counters: counters, baskets: baskets, catalog: catalog)
            }
            return DemoServer(server: server, counters: counters, baskets: baskets, catalog: catalog)
        } catch {
            throw SampleError(error.description)
        }
    }

    /// Stops the server and waits until its socket is closed.
    func stop() async {
        baskets.releaseHeldAnswers()
        await server.stop()
    }

    private static func respond(
        to request: Request, settings: ServerSettings, counters: LockedValue<Statistics>, baskets: DemoBaskets,
        catalog: DemoCatalog
    ) async throws -> Response {
        if let down = baskets.downAnswer() { return down }
        let path = request.uri.path
        let count = counters.withLock { statistics -> Int in
            statistics.requests += 1
            statistics.byPath[path, default: 0] += 1
            return statistics.requests
        }
        if settings.failEvery > 0, count % settings.failEvery == 0 {
            counters.withLock { $0.failed += 1 }
            return Response(
                status: .serviceUnavailable, headers: [.retryAfter: "0", .contentType: "text/plain"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "busy, try again")))
        }
        if settings.slowEvery > 0, count % settings.slowEvery == 0 {
            counters.withLock { $0.slow += 1 }
            try await Task.sleep(for: settings.slowDelay)
        }
        if let answer = try await baskets.respond(to: request) { return answer }
        guard request.method == .get, let body = body(for: path) ?? catalog.body(for: path) else {
            return Response(
                status: .notFound, body: ResponseBody(byteBuffer: ByteBuffer(string: "no such resource: \(path)")))
        }
        let tag = Inventory.etag(for: body)
        if let offered = request.headers[.ifNoneMatch],
            offered.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag })
        {
            counters.withLock {
                $0.notModified += 1
                $0.notModifiedByPath[path, default: 0] += 1
                $0.servedByPath[path, default: 0] += 1
            }
            return Response(status: .notModified, headers: [.eTag: tag])
        }
        counters.withLock { $0.servedByPath[path, default: 0] += 1 }
        return Response(
            status: .ok, headers: [.eTag: tag, .contentType: "application/json", .cacheControl: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The body for `path`, or nil when there is no such resource.
    static func body(for path: String) -> Data? {
        let segments = path.split(separator: "/").map(String.init)
        switch segments.count {
        case 1 where segments[0] == "stores":
            return Inventory.json(Inventory.stores)
        case 3 where segments[0] == "stores" && segments[2] == "items" && Inventory.stores.contains(segments[1]):
            return Inventory.json(Inventory.items(in: segments[1]))
        case 4 where segments[0] == "stores" && segments[2] == "items":
            return Inventory.items(in: segments[1]).first { $0.id == segments[3] }.map { Inventory.json($0) }
        default:
            return nil
        }
    }
}

/// A failure of the sample itself (not of configuration).
struct SampleError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
