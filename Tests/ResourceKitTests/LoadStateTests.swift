import ResourceKit
import Testing
import TransportKit

/// Every transition of a resource's load state machine, and the ones it refuses.
@Suite("Load state")
struct LoadStateTests {
    /// Distinct requests to put in the machine (never sent: the transport has no route, and nobody waits).
    let requests: [Request] = {
        let service = Service(baseURL: "https://api.example", transport: InMemoryTransport())
        return (0..<3).map { service.resource("/r\($0)").load() }
    }()

    @Test("Without a cache: unread, then idle; a load makes it loading, its outcome idle again")
    func withoutCache() {
        var state = LoadState()
        #expect(!state.isCacheChecked)
        #expect(state.startCacheCheck(hasCache: false) == false)
        #expect(state.isCacheChecked && state.load == nil)
        #expect(state.startCacheCheck(hasCache: true) == false, "the read happens once")
        state.begin(.init(request: requests[0], invalidations: 0))
        #expect(state.load?.request === requests[0])
        #expect(state.resolve(requests[1]) == nil, "not the load in flight")
        #expect(state.resolve(requests[0])?.request === requests[0])
        #expect(state.load == nil && state.isCacheChecked)
    }

    @Test("With a cache: waiters and the deferred request live during the read; a forced load survives its end")
    func withCache() {
        var state = LoadState()
        let mustRead = state.startCacheCheck(hasCache: true)
        #expect(mustRead)
        #expect(state.isReadingCache && !state.isCacheChecked)
        let added = state.addCacheWaiter {}
        #expect(added)
        state.setDeferred(requests[0])
        #expect(state.deferred === requests[0])
        state.begin(.init(request: requests[1], invalidations: 3))
        #expect(state.load?.invalidations == 3)
        let waiters = state.finishCacheCheck()
        #expect(waiters.count == 1)
        #expect(state.isCacheChecked && state.deferred == nil)
        #expect(state.load?.request === requests[1], "the forced load is now the load in flight")
        let addedAfter = state.addCacheWaiter {}
        #expect(!addedAfter, "no waiting once the read is over")
        let none = state.finishCacheCheck()
        #expect(none.isEmpty)
    }

    @Test("A newer load supersedes; a wipe forgets the load but not the read")
    func supersedeAndWipe() {
        var state = LoadState()
        _ = state.startCacheCheck(hasCache: true)
        state.begin(.init(request: requests[0], invalidations: 0))
        state.begin(.init(request: requests[1], invalidations: 0))
        #expect(state.resolve(requests[0]) == nil, "superseded")
        state.endLoad()
        #expect(state.load == nil && state.isReadingCache)
        _ = state.finishCacheCheck()
        state.setDeferred(requests[2])
        #expect(state.deferred == nil, "no deferred request outside the read")
    }
}
