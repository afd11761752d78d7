import ResourceKit
import Testing
import TransportKit

/// Configuration patterns, Siesta's table: globs with `*`, `?`, `**` and `/**/`, regular expressions, predicates.
@Suite("Configuration patterns")
struct PatternTests {
    static let base = "https://api.example.com/v1"

    /// Whether `pattern` applies to the resource at `path` (or absolute URL).
    func applies(_ pattern: ConfigurationPattern, to path: String) -> Bool {
        let service = Service(baseURL: Self.base, transport: InMemoryTransport())
        service.configure(pattern) { $0.expirationTime = .seconds(12_345) }
        let resource = path.contains("://") ? service.resource(absoluteURL: path) : service.resource(path)
        return resource.configuration().expirationTime == .seconds(12_345)
    }

    @Test(
        "Globs match as Siesta's do",
        arguments: [
            ("/items/*", "/items/1", true), ("/items/*", "/items/1?sort=name", true),
            ("/items/*", "/items/1/tags", false), ("/items/*", "/items", false),
            ("/items/?", "/items/1", true), ("/items/?", "/items/12", false), ("/items/?", "/items/", false),
            ("/i?ems/1", "/items/1", true), ("/i?ems/1", "/i/ems/1", false),
            ("/items/**", "/items/1", true), ("/items/**", "/items/1/tags", true), ("/items/**", "/items", false),
            ("/users/**/avatar", "/users/avatar", true), ("/users/**/avatar", "/users/7/avatar", true),
            ("/users/**/avatar", "/users/7/a/avatar", true), ("/users/**/avatar", "/users/7/avatars", false),
            ("/users/**/avatar", "/usersavatar", false), ("/a/**/b/**/c", "/a/b/c", true),
            ("/a/**/b/**/c", "/a/x/b/y/z/c", true), ("/a/**/b/**/c", "/a/x/c", false),
            ("https://api.example.com/v1/**", "https://api.example.com/v1/anything/at/all", true),
            ("https://api.example.com/v1/**", "https://other.example.com/v1/x", false),
        ])
    func globs(pattern: String, path: String, expected: Bool) {
        #expect(applies(ConfigurationPattern(pattern), to: path) == expected, "\(pattern) ~ \(path)")
    }

    @Test("A regular expression matches anywhere in the absolute URL, query included")
    func regex() throws {
        #expect(applies(try .regex("/v[0-9]+/"), to: "/items"))
        #expect(applies(try .regex("sort=name$"), to: "https://api.example.com/v1/items?sort=name"))
        #expect(!applies(try .regex("^/items"), to: "/items"), "anchored at the absolute URL's start: no match")
        #expect(!applies(try .regex("/v[a-z]+/"), to: "/items"))
    }

    @Test("A regular expression that does not compile is a typed error naming it")
    func badRegex() {
        #expect {
            _ = try ConfigurationPattern.regex("/items/(")
        } throws: { error in
            guard let invalid = error as? ConfigurationPattern.InvalidRegex else { return false }
            return invalid.pattern == "/items/(" && "\(invalid)".contains("/items/(")
        }
    }
}
