import Foundation
import ResourceKit
import Testing
import TetherTesting
import TetherTestingTraits
import TransportKit

@Suite("Service cache: run-time count limit, wipes, simulated memory warnings", .leakChecked)
struct CacheLimitTests {
    @Test("Lowering the count limit below the count flushes at once; raising it flushes nothing")
    func countLimitAtRunTime() async {
        await withFixture(cacheCountLimit: 100) { fixture in
            let service = fixture.service
            let owner = Owner()
            service.resource("/observed").addObserver(owner: owner) { _, _ in }
            let kept = service.resource("/kept")
            for index in 0..<20 { _ = service.resource("/\(index)") }
            #expect(service.cachedResourceCount == 22)
            service.cacheCountLimit = 50
            #expect(service.cachedResourceCount == 22, "still under the limit: nothing flushed")
            service.cacheCountLimit = 10
            #expect(service.cacheCountLimit == 10)
            #expect(service.cachedResourceCount == 2, "the observed one and the one referenced from outside stay")
            #expect(service.resource("/kept") === kept)
            service.cacheCountLimit = 0
            #expect(service.cacheCountLimit == 1, "a non-positive limit is taken as 1")
            service.resource("/observed").removeObservers(ownedBy: owner)
        }
    }

    @Test("wipeResources(matching: resource) wipes that resource only")
    func wipeOneResource() async {
        await withFixture { fixture in
            fixture.route("/a", .json("[1]"))
            fixture.route("/b", .json("[2]"))
            let (a, b) = (fixture.service.resource("/a"), fixture.service.resource("/b"))
            _ = await a.load().outcome
            _ = await b.load().outcome
            fixture.service.wipeResources(matching: a)
            #expect(a.latestData == nil)
            #expect(b.latestData != nil)
        }
    }

    @Test("wipeResources(where:) and wipeResources(withURLsStartingWith:) choose what they wipe")
    func wipeByPredicateAndPrefix() async {
        await withFixture { fixture in
            let paths = ["/users/1", "/users/2", "/usersettings", "/items/1"]
            for path in paths { fixture.route(path, .json("{}")) }
            let resources = paths.map { fixture.service.resource($0) }
            for resource in resources { _ = await resource.load().outcome }

            fixture.service.wipeResources(withURLsStartingWith: "/users/")
            #expect(resources.map { $0.latestData != nil } == [false, false, true, true])

            fixture.service.wipeResources(withURLsStartingWith: base + "/items")
            #expect(resources[3].latestData == nil)

            fixture.service.wipeResources(where: { $0.urlString.hasSuffix("settings") })
            #expect(resources[2].latestData == nil)
        }
    }

    @Test("simulateMemoryWarning() lets go of unobserved, unreferenced resources, as a monitor would")
    func simulatedMemoryWarning() async {
        await withFixture { fixture in
            let service = fixture.service
            let owner = Owner()
            service.resource("/observed").addObserver(owner: owner) { _, _ in }
            weak var dropped: Resource?
            do {
                let resource = service.resource("/dropped")
                dropped = resource
            }
            #expect(dropped != nil, "held by the cache until a flush")
            #expect(service.simulateMemoryWarning(reason: "test") == 1)
            #expect(dropped == nil)
            #expect(service.cachedResourceCount == 1)
            service.resource("/observed").removeObservers(ownedBy: owner)
        }
    }
}
