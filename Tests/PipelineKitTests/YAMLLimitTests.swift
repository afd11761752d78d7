import Foundation
import PipelineKit
import PipelinePlugins
import Testing
import TetherTestingTraits

/// Aliases expand: a few hundred bytes can stand for billions of nodes, and chained aliases nest deeper than libyaml
/// sees. The loader refuses both at once, with the line where the limit was exceeded (a fuzzer's and a probe's
/// finds: the first grew past 3 GB, the second overflowed the decoder's stack).
@Suite("YAML limits: alias bombs and deep chains are refused, in bounded time", .timeLimit(minutes: 1), .leakChecked)
struct YAMLLimitTests {
    /// The classic "billion laughs": nine levels of ten aliases each, 10^9 leaves, under 800 bytes.
    static let billionLaughs: String = {
        var lines = ["live_queries:", "  - collection: items", "    query: \"a == $args.x\"", "    args:"]
        lines.append("      l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]")
        for level in 1...9 {
            let previous = Array(repeating: "*l\(level - 1)", count: 10).joined(separator: ", ")
            lines.append("      l\(level): &l\(level) [\(previous)]")
        }
        lines.append("      x: *l9")
        return lines.joined(separator: "\n") + "\n"
    }()

    /// 2,000 aliases, each a list holding the previous: 2,000 levels deep once expanded, 1 level as written.
    static let chainedAliases: String = {
        var lines = ["chain:", "  a0: &a0 [end]"]
        for index in 1...2_000 { lines.append("  a\(index): &a\(index) [*a\(index - 1)]") }
        return lines.joined(separator: "\n") + "\n"
    }()

    @Test("A billion laughs in a live query's args: refused as too many nodes, at a line of the file")
    func billionLaughs() throws {
        #expect(Self.billionLaughs.utf8.count < 1_000)
        let found = issues(Self.billionLaughs)
        #expect(found.count == 1)
        let issue = try #require(found.first)
        #expect(issue.kind == .limitExceeded)
        #expect(issue.message.contains("more than 100000 nodes"), "\(issue)")
        #expect(issue.path.hasPrefix("live_queries[0].args"), "\(issue)")
        #expect((1...14).contains(issue.line ?? 0), "\(issue)")
    }

    @Test("2,000 chained aliases: refused as too deep, without overflowing the stack")
    func chainedAliases() throws {
        let found = issues(Self.chainedAliases)
        #expect(found.count == 1)
        let issue = try #require(found.first)
        #expect(issue.kind == .limitExceeded)
        #expect(issue.message.contains("deeper than 64 levels"), "\(issue)")
        #expect(issue.path.hasPrefix("chain.a"), "\(issue)")
        #expect(issue.line != nil && issue.column != nil)
    }

    @Test("An alias bomb hidden in a mapping key is counted too")
    func bombInAKey() throws {
        var yaml = "k0: &k0 [a, a, a, a, a, a, a, a, a, a]\n"
        for level in 1...7 {
            yaml +=
                "k\(level): &k\(level) [" + Array(repeating: "*k\(level - 1)", count: 10).joined(separator: ", ")
                + "]\n"
        }
        yaml += "? *k7\n: value\n"
        let found = issues(yaml)
        #expect(found.map(\.kind) == [.limitExceeded], "\(found)")
    }

    /// A live query whose `args` mapping holds `count` keys, from line 6 on.
    static func wideArgs(_ count: Int) -> String {
        var lines = [
            "live_queries:", "  - name: wide", "    collection: items", "    query: \"a == $args.k0\"", "    args:",
        ]
        for index in 0..<count { lines.append("      k\(index): \(index)") }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test(
        "A mapping of more than 256 keys is refused at the 257th, with its line and key path, before any decoding; 256 load, and 100,000 are refused too"
    )
    func wideMapping() throws {
        let found = issues(Self.wideArgs(257))
        #expect(found.count == 1)
        let issue = try #require(found.first)
        #expect(issue.kind == .limitExceeded)
        #expect(issue.message.contains("more than 256 keys"), "\(issue)")
        #expect(issue.path == "live_queries[0].args", "\(issue)")
        #expect(issue.line == 6 + 256, "\(issue)")
        let loaded = try load(Self.wideArgs(256))
        #expect(loaded.liveQueries.first?.args.count == 256)
        #expect(issues(Self.wideArgs(100_000)).map(\.kind) == [.limitExceeded])
        var loader = ConfigurationLoader(registry: .standard, environment: [:])
        loader.limits.maximumKeysPerMapping = 10
        #expect(throws: ConfigurationError.self) { try loader.load(yaml: Self.wideArgs(11)) }
    }

    @Test("Within the limits, aliases work as YAML says; the limits can be set")
    func withinLimits() throws {
        let yaml = """
            services:
              demo:
                base_url: &url http://127.0.0.1:1
                transport: &transport { type: urlsession }
              other:
                base_url: *url
                transport: *transport
            """
        let configuration = try load(yaml)
        #expect(configuration.services.count == 2)
        var loader = ConfigurationLoader(registry: .standard, environment: [:])
        loader.limits = YAMLLimits(maximumNodes: 5, maximumDepth: 64)
        #expect(throws: ConfigurationError.self) { try loader.load(yaml: yaml) }
        loader.limits = YAMLLimits(maximumNodes: 100_000, maximumDepth: 2)
        do {
            _ = try loader.load(yaml: yaml, file: "small.yaml")
            Issue.record("a depth of 2 should refuse it")
        } catch {
            #expect(error.issues.map(\.kind) == [.limitExceeded])
            #expect(error.description.contains("small.yaml:"), "\(error)")
        }
    }

    @Test("A file that never ends (/dev/zero) is refused at the size limit, not read into memory")
    func endlessFile() throws {
        do {
            _ = try ConfigurationLoader(registry: .standard, environment: [:]).load(file: "/dev/zero")
            Issue.record("/dev/zero loaded")
        } catch {
            #expect(error.issues.map(\.kind) == [.limitExceeded], "\(error)")
            #expect(error.description.contains("/dev/zero"), "\(error)")
        }
    }
}
