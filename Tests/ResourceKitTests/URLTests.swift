import Foundation
import ResourceKit
import Testing
import TetherTesting
import TetherTestingTraits
import TransportKit

@Suite("Service: one resource per URL, and URLs that never escape the base", .leakChecked)
struct URLTests {
    @Test("The same URL gives the same instance, however it is spelled")
    func identity() async {
        await withFixture { fixture in
            let service = fixture.service
            let items = service.resource("/items/1")
            #expect(service.resource("/items/1") === items)
            #expect(service.resource("items/1") === items)
            #expect(service.resource(absoluteURL: base + "/items/1") === items)
            #expect(service.resource(absoluteURL: URL(string: base + "/items/1")) === items)
            #expect(service.resource(absoluteURL: base + "/items/./1") === items)
            #expect(items.url?.absoluteString == base + "/items/1")
            #expect(service.resource("/items/1/") !== items)
            #expect(service.resource(absoluteURL: base) !== service.resource("/"))
        }
    }

    @Test(
        "A resource made first from a URL value — relative to another, or with dot segments — is the one its text finds"
    )
    func madeFromURLValue() async {
        await withFixture { fixture in
            let service = fixture.service
            let relative = URL(string: "items/2?page=1", relativeTo: URL(string: base + "/"))
            let fromRelative = service.resource(absoluteURL: relative)
            #expect(fromRelative.url?.absoluteString == base + "/items/2?page=1")
            #expect(fromRelative.url?.baseURL == nil, "made absolute")
            #expect(service.resource(absoluteURL: base + "/items/2?page=1") === fromRelative)
            let dotted = service.resource(absoluteURL: URL(string: base + "/items/x/../3"))
            #expect(dotted === service.resource("/items/3"))
            #expect(dotted.url?.absoluteString == base + "/items/3")
            let plain = service.resource(absoluteURL: URL(string: base + "/items/4"))
            #expect(plain === service.resource("/items/4"))
        }
    }

    @Test("A spelling looked up again is the same resource; after a flush, a fresh or revived one — never a gone one")
    func absoluteLookupsAcrossFlushes() async {
        await withFixture { fixture in
            let service = fixture.service
            let spelling = base + "/items/./7"
            weak var first: Resource?
            do {
                let resource = service.resource(absoluteURL: spelling)
                first = resource
                #expect(service.resource(absoluteURL: spelling) === resource, "the second lookup takes the alias")
                #expect(service.resource("/items/7") === resource)
            }
            service.flushUnused()
            #expect(first == nil, "unreferenced: gone at the flush")
            let second = service.resource(absoluteURL: spelling)
            #expect(second.urlString == base + "/items/7", "a new resource for the same URL")
            service.flushUnused()  // referenced from outside: demoted, still canonical
            #expect(service.resource(absoluteURL: spelling) === second)
            #expect(service.resource("/items/7") === second)
            service.flushUnused()
            #expect(service.cachedResourceCount == 1, "held again by the lookup, and still referenced")
        }
    }

    @Test("optionalRelative follows a link that is there, and gives nil for one that is not")
    func optionalRelative() async {
        await withFixture { fixture in
            let items = fixture.service.resource("/items/1")
            #expect(items.optionalRelative("2") === fixture.service.resource("/items/2"))
            #expect(items.optionalRelative(nil) == nil)
        }
    }

    @Test("A base URL's query is kept on every resource below it, after the path; its fragment is dropped")
    func baseWithQuery() {
        let service = Service(baseURL: "https://api.example.com/v1?key=abc#top", transport: InMemoryTransport())
        let foo = service.resource("/foo")
        #expect(foo.urlString == "https://api.example.com/v1/foo?key=abc")
        #expect(service.resource("foo") === foo)
        #expect(
            service.resource(absoluteURL: "https://api.example.com/v1/foo?key=abc") === foo, "one URL, one resource")
        #expect(service.resource("/bar").urlString == "https://api.example.com/v1/bar?key=abc")
        #expect(foo.withParam("page", "2").urlString == "https://api.example.com/v1/foo?key=abc&page=2")
        let slashed = Service(baseURL: "https://api.example.com/v1/?key=a%20b", transport: InMemoryTransport())
        #expect(slashed.resource("/x").urlString == "https://api.example.com/v1/x?key=a%20b", "encoding kept")
        let encoded = Service(baseURL: "https://api.example.com/v%201", transport: InMemoryTransport())
        #expect(encoded.resource("/x").urlString == "https://api.example.com/v%201/x")
        let emptyQuery = Service(baseURL: "https://api.example.com/v1?", transport: InMemoryTransport())
        #expect(emptyQuery.resource("/x").urlString == "https://api.example.com/v1/x")
    }

    @Test("A path is always appended: it never changes the host and never leaves the base path")
    func pathsStayBelowTheBase() async throws {
        await withFixture { fixture in
            let service = fixture.service
            #expect(service.resource("https://evil.example.com/x").url?.host == "api.example.com")
            #expect(service.resource("//evil.example.com/x").urlString == base + "/evil.example.com/x")
            #expect(service.resource("/search?q=1#top").urlString == base + "/search%3Fq=1%23top")
            #expect(service.resource("/a b").urlString == base + "/a%20b")
            #expect(service.resource("/a%20b") === service.resource("/a b"))
            #expect(service.resource("/caf\u{E9}").urlString == base + "/caf%C3%A9")
            for escape in ["/../secret", "..", "/items/../../x", "/./x", "/%2e%2E/x"] {
                let resource = service.resource(escape)
                #expect(resource.url == nil, "\(escape) must not make a URL")
            }
        }
    }

    @Test("child appends; relative follows href rules; withParam sorts, replaces and removes")
    func navigation() async {
        await withFixture { fixture in
            let service = fixture.service
            let items = service.resource("/items")
            #expect(items.child("42") === service.resource("/items/42"))
            #expect(items.child("/42") === service.resource("/items/42"))
            #expect(items.child("../x").url == nil)
            #expect(service.resource("/items/42").relative("7") === service.resource("/items/7"))
            #expect(service.resource("/items/42").relative("../users/1") === service.resource("/users/1"))
            #expect(items.relative("https://other.example.com/a").urlString == "https://other.example.com/a")

            let sorted = items.withParam("b", "2").withParam("a", "1")
            #expect(sorted === items.withParam("a", "1").withParam("b", "2"))
            #expect(sorted.urlString == base + "/items?a=1&b=2")
            #expect(sorted.withParam("a", "3").urlString == base + "/items?a=3&b=2")
            #expect(sorted.withParam("a", nil).withParam("b", nil) === items)
            #expect(items.withParam("q", "a+b c").urlString == base + "/items?q=a%2Bb%20c")
            #expect(items.withParams(["x": "1", "y": nil]) === items.withParam("x", "1"))
        }
    }

    @Test("Invalid URLs give a resource whose loads fail saying what was wrong — never a crash")
    func invalidURLs() async throws {
        try await withFixture { fixture in
            let service = fixture.service
            let notAURL = service.resource(absoluteURL: "http://[::1")
            #expect(notAURL.url == nil)
            #expect(notAURL === service.resource(absoluteURL: "http://[::1"))
            let log = EventLog()
            let owner = Owner()
            notAURL.addObserver(log, owner: owner)
            let outcome = await notAURL.load().outcome
            let error = try #require(outcome.error)
            #expect(error.kind == .invalidURL)
            #expect(error.url == "http://[::1")
            #expect(error.message.contains("http://[::1"))
            #expect(notAURL.latestError?.kind == .invalidURL)
            #expect(log.events == [.observerAdded, .requested, .error])
            #expect(notAURL.loadIfNeeded() == nil, "the error counts for the retry time")

            let relative = service.resource(absoluteURL: "/items")
            #expect(relative.url == nil)
            #expect(await relative.load().outcome.error?.message.contains("no scheme") == true)
            #expect(service.resource(absoluteURL: nil as String?).url == nil)
            #expect(fixture.transport.requests.isEmpty)
            withExtendedLifetime(owner) {}
        }
    }

    @Test("Navigation from bad input gives invalid resources that name the input")
    func badNavigation() async throws {
        try await withFixture { fixture in
            let items = fixture.service.resource("/items")
            let href = items.relative("http://[::1")
            #expect(href.url == nil)
            let error = try #require(await href.load().outcome.error)
            #expect(error.kind == .invalidURL && error.message.contains("\"http://[::1\" is not a valid relative URL"))
            let fromInvalid = fixture.service.resource("/..").withParam("a", "1")
            #expect(fromInvalid.url == nil)
            #expect(await fromInvalid.load().outcome.error?.message.contains("\"..\" segment") == true)
        }
    }

    @Test("A service with an unusable base URL makes invalid resources that say why")
    func badBase() async throws {
        let transport = InMemoryTransport()
        for base in ["not a url", "/relative/path", "https://"] {
            let service = Service(baseURL: base, transport: transport)
            let resource = service.resource("/items")
            #expect(resource.url == nil)
            let error = try #require(await resource.load().outcome.error)
            #expect(error.kind == .invalidURL)
            #expect(error.message.contains("base URL"), "\(error.message)")
        }
        let noBase = Service(baseURL: nil as String?, transport: transport)
        #expect(await noBase.resource("/x").load().outcome.error?.message.contains("absoluteURL") == true)
        #expect(noBase.resource(absoluteURL: "https://example.com/x").url != nil)
    }
}
