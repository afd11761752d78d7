import Foundation
import PipelineKit
import PipelinePlugins
import Testing
import TetherTestingTraits

/// Every kind of bad configuration fails before anything starts, with one message per problem that names the key
/// path and the line (and the column where it helps).
@Suite("Bad configuration", .leakChecked)
struct BadConfigurationTests {
    @Test("A YAML syntax error gives its line and column")
    func syntax() {
        let found = issues(
            """
            services:
              demo:
                base_url: [http://a
                transport: { type: urlsession }
            """)
        #expect(found.count == 1)
        #expect(found.first?.kind == .syntax)
        #expect(found.first?.line == 4)
        #expect(found.first?.column != nil)
        #expect(found.first?.message.hasPrefix("YAML syntax:") == true)
    }

    @Test(
        "Layout mistakes are named as such: a tab says tab and where, a misaligned key says indentation and by how much"
    )
    func layout() {
        let tab = issues("services:\n  demo:\n\tbase_url: http://a.example\n")
        #expect(tab.count == 1)
        #expect(tab.first?.line == 3)
        #expect(
            tab.first?.message.contains("line 3 is indented with a tab (column 1): YAML indents with spaces only")
                == true, "\(tab)")
        let misaligned = issues(
            "services:\n  demo:\n    base_url: http://a.example\n   transport: { type: in-memory }\n")
        #expect(misaligned.count == 1)
        #expect(misaligned.first?.line == 4)
        #expect(
            misaligned.first?.message.contains(
                "check the indentation: line 4 is indented 3 spaces, the line before it 4") == true, "\(misaligned)")
        let fine = issues("services:\n  demo:\n    base_url: [http://a\n")
        #expect(
            fine.first?.message.contains("indent") == false, "no layout hint where layout is not the problem: \(fine)")
    }

    @Test("Settings where a part takes none: the message says so, instead of listing no keys")
    func noSettings() {
        let found = issues(
            "persistence: { type: memory, bogus: 1 }\nmemory_pressure: { source: { type: manual, foo: 1 } }\n")
        #expect(found.map(\.path) == ["persistence.bogus", "memory_pressure.source.foo"])
        #expect(
            found.allSatisfy { $0.message == "unknown key; this part takes no settings besides 'type'" }, "\(found)")
    }

    @Test(
        "A live query's name used twice points at the second name; a bad sort path is refused at load, at its element")
    func liveQueryNamesAndSorts() {
        let found = issues(
            """
            live_queries:
              - { name: a, collection: items, query: "x == 1" }
              - name: a
                collection: items
                sort: [name, "-..bad"]
            """)
        #expect(found.map(\.path) == ["live_queries[1].name", "live_queries[1].sort[1]"], "\(found)")
        #expect(found.map(\.line) == [3, 5])
        #expect(
            found.first?.message == "the name 'a' is already used by live_queries[0]; each live query needs its own")
        #expect(found.last?.message.hasPrefix("'-..bad' is not a sort field path") == true)
    }

    @Test("CONTAINS written as an operator gets a hint toward contains(field, value)")
    func containsHint() {
        let found = issues("live_queries:\n  - { name: a, collection: items, query: \"tags CONTAINS 'x'\" }\n")
        #expect(found.count == 1)
        #expect(found.first?.message.contains("write contains(tags, value)") == true, "\(found)")
    }

    @Test("CRLF and CR line endings count lines as LF does (a fuzzer's find: the line is YAML's, not a count of \\n)")
    func lineEndings() {
        let lf = "memory_pressure:\n  count_limit: 0\nservices:\n  demo:\n    expiry: soon\n"
        for ending in ["\n", "\r\n", "\r"] {
            let found = issues(lf.replacingOccurrences(of: "\n", with: ending))
            #expect(found.map(\.line) == [2, 5], "with \(ending.debugDescription) line endings")
            #expect(found.map(\.column) == [16, 13], "with \(ending.debugDescription) line endings")
        }
    }

    @Test("A syntax error at the end of a file without a final newline points at the last line (a fuzzer's find)")
    func syntaxAtEnd() {
        let found = issues("a: [1, {b: &x 2}, *x]\n---- ")
        #expect(found.count == 1)
        #expect(found.first?.line == 2)
        #expect(found.first?.column == 6)
        #expect(found.first?.message.hasSuffix("(at the end of the file)") == true)
    }

    @Test("An empty document (---) is an empty configuration; a problem at the end of the text points at its last line")
    func emptyDocumentAndEnd() throws {
        #expect(try load("\n---").services.isEmpty)
        #expect(try load("--- ~\n").services.isEmpty)
        let found = issues("live_queries:\n  -")
        #expect(!found.isEmpty)
        #expect(found.allSatisfy { ($0.line ?? 0) <= 2 }, "\(found)")
    }

    @Test("A duplicate key is a syntax error at the duplicate's line, naming the first")
    func duplicateKey() {
        let found = issues(
            """
            services:
              demo:
                base_url: http://a.example
                base_url: http://b.example
            """)
        #expect(found.map(\.kind) == [.syntax])
        #expect(found.first?.message.contains("duplicate key 'base_url'") == true)
        // At the duplicate, where the fix belongs, naming the first (Yams alone reported the first).
        #expect(found.first?.line == 4, "\(found)")
        #expect(found.first?.path == "services.demo", "\(found)")
        #expect(found.first?.message.contains("first at line 3") == true, "\(found)")
    }

    @Test("An unknown type: lists the known ones, with a did-you-mean")
    func unknownType() {
        let found = issues(
            """
            services:
              demo:
                base_url: http://localhost:8080
                transport:
                  type: urlsesion
            """)
        #expect(found.count == 1)
        let issue = found[0]
        #expect(issue.kind == .unknownType)
        #expect(issue.path == "services.demo.transport.type")
        #expect(issue.line == 5)
        #expect(issue.column == 13)
        #expect(issue.message.contains("unknown transport type 'urlsesion'; did you mean 'urlsession'?"))
        #expect(issue.message.contains("Known types: async-http-client, in-memory, urlsession"))
    }

    @Test("An unknown key: its path, its line, and a did-you-mean")
    func unknownKey() {
        let found = issues(
            """
            services:
              demo:
                base_url: http://localhost:8080
                resources:
                  - pattern: /items
                    expirty: 10s
            """)
        #expect(found.count == 1)
        #expect(found[0].kind == .unknownKey)
        #expect(found[0].path == "services.demo.resources[0].expirty")
        #expect(found[0].line == 6)
        #expect(found[0].column == 9)
        #expect(found[0].message == "unknown key; did you mean 'expiry'?")
    }

    @Test("A resource rule's regex that does not compile, and one with both pattern and regex, at their lines")
    func badRegexRules() {
        let found = issues(
            """
            services:
              demo:
                base_url: http://localhost:8080
                resources:
                  - regex: "/items/(["
                    expiry: 10s
                  - pattern: /a
                    regex: /b
            """)
        #expect(found.map(\.path) == ["services.demo.resources[0].regex", "services.demo.resources[1].regex"])
        #expect(found.map(\.line) == [5, 8])
        #expect(found.first?.message.contains("invalid regular expression \"/items/([\"") == true)
        #expect(found.last?.message == "a rule matches by `pattern` or by `regex`, not both")
    }

    @Test("indexes: a bad collection, a field that is not a path, a field named twice, none at all — each at its line")
    func badIndexes() {
        let found = issues(
            """
            indexes:
              - collection: 1items
                fields: [name]
              - collection: items
                fields: [store_id, "store id", store_id]
              - collection: items
                fields: []
            """)
        #expect(
            found.map(\.path) == [
                "indexes[0].collection", "indexes[1].fields[1]", "indexes[1].fields[2]", "indexes[2].fields",
            ])
        #expect(found.map(\.line) == [2, 5, 5, 7])
        #expect(found[1].message.contains("'store id' is not a field path"))
        #expect(found[2].message == "'store_id' is named twice in the index")
    }

    @Test("An unknown key with nothing close lists the known keys")
    func unknownKeyWithoutSuggestion() {
        let found = issues("memory_pressure:\n  zebra: 1\n")
        #expect(found.first?.message == "unknown key; known keys here: count_limit, source")
        #expect(found.first?.line == 2)
    }

    @Test("An unknown key inside a plugin's settings is reported by the plugin's settings")
    func unknownPluginKey() {
        let found = issues(
            """
            persistence:
              type: sqlite
              store_pth: x.sqlite
            """)
        #expect(found.map(\.path) == ["persistence.store_pth"])
        #expect(found.first?.message == "unknown key; did you mean 'store_path'?")
        #expect(found.first?.line == 3)
    }

    @Test("A value of the wrong type: what was expected and what was found")
    func wrongType() {
        let found = issues(
            """
            memory_pressure:
              count_limit: lots
            services:
              demo:
                standard_stages: maybe
                resources: { pattern: /x }
            """)
        #expect(found.count == 3)
        #expect(found[0].path == "memory_pressure.count_limit")
        #expect(found[0].line == 2)
        #expect(found[0].message == "expected a whole number, found 'lots'")
        #expect(found[1].path == "services.demo.standard_stages")
        #expect(found[1].message == "expected true or false, found 'maybe'")
        #expect(found[2].path == "services.demo.resources")
        #expect(found[2].message == "expected a list, found a mapping")
    }

    @Test("Out-of-range values: a negative timeout, a zero limit, a jitter above 1, a bad duration")
    func outOfRange() {
        let found = issues(
            """
            services:
              demo:
                base_url: http://localhost:1
                request_timeout: -5
                retry:
                  attempts: 0
                  jitter: 1.5
                expiry: soon
            memory_pressure:
              count_limit: 0
            """)
        let byPath = Dictionary(uniqueKeysWithValues: found.map { ($0.path, $0) })
        #expect(found.count == 5)
        #expect(byPath["services.demo.request_timeout"]?.message == "must be more than zero (found -5.0 seconds)")
        #expect(byPath["services.demo.request_timeout"]?.line == 4)
        #expect(byPath["services.demo.retry.attempts"]?.message == "must be at least 1 (found 0)")
        #expect(byPath["services.demo.retry.jitter"]?.message == "must be from 0 to 1 (found 1.5)")
        #expect(byPath["services.demo.expiry"]?.message.hasPrefix("not a duration") == true)
        #expect(byPath["services.demo.expiry"]?.line == 8)
        #expect(byPath["memory_pressure.count_limit"]?.message == "must be at least 1 (found 0)")
        #expect(byPath["memory_pressure.count_limit"]?.line == 10)
    }

    @Test("A sensitive header name that is not a header field name is refused at its line")
    func badSensitiveHeader() {
        let found = issues(
            """
            services:
              demo:
                sensitive_headers: [X-Fine, "X Secret:"]
            """)
        #expect(found.map(\.path) == ["services.demo.sensitive_headers"])
        #expect(found.first?.line == 3)
        #expect(found.first?.message.contains("item 1 ('X Secret:') is not a header field name") == true)
    }

    @Test(
        "Mutations: a bad idempotency header name, a zero max_pending, an unknown order, a backoff cap below the backoff, durable not a Boolean: each refused at its line"
    )
    func badMutationSettings() {
        let found = issues(
            """
            services:
              demo:
                mutations:
                  idempotency_header: "Idempotency Key"
                  max_pending: 0
                  order: by-date
                  durable: sometimes
                  retry_backoff: 10s
                  max_retry_backoff: 1s
            """)
        let prefix = "services.demo.mutations."
        #expect(
            found.map(\.path)
                == ["idempotency_header", "max_pending", "order", "durable", "max_retry_backoff"].map { prefix + $0 },
            "\(found)")
        #expect(found.map(\.line) == [4, 5, 6, 7, 9])
        #expect(found.first?.message.contains("'Idempotency Key' is not a header field name") == true)
        #expect(found[1].message == "must be at least 1 (found 0)")
        #expect(found[2].message == "'by-date' is not an order: per-resource or per-service")
        #expect(found[3].message == "expected true or false, found 'sometimes'")
        #expect(found[4].message.contains("must be at least retry_backoff") == true)
    }

    @Test("Durable mutations with persistence that keeps no outbox: refused at assembly, at mutations.durable's line")
    func durableWithoutOutbox() async throws {
        try await withTemporaryDirectory { directory in
            let configuration = try load(
                """
                persistence: { type: sqlite, outbox_path: null }
                services:
                  demo:
                    transport: { type: in-memory }
                    mutations:
                      durable: true
                """, baseDirectory: directory)
            do {
                _ = try AssembledPipeline.assembleQuietly(configuration)
                Issue.record("assembled durable mutations without an outbox")
            } catch let error as ConfigurationError {
                #expect(error.issues.first?.path == "services.demo.mutations.durable")
                #expect(error.issues.first?.line == 6)
                #expect(error.issues.first?.message.contains("keeps no outbox") == true, "\(error)")
            }
        }
    }

    @Test("Invalid base URLs, each with its reason")
    func invalidBaseURL() {
        let found = issues(
            """
            services:
              a: { base_url: "not a url" }
              b: { base_url: "ftp://files.example.com" }
              c: { base_url: "http://" }
              d: { base_url: "https://api.example.com/v1?x=1" }
            """)
        #expect(
            found.map(\.path) == [
                "services.a.base_url", "services.b.base_url", "services.c.base_url", "services.d.base_url",
            ])
        #expect(found.map(\.line) == [2, 3, 4, 5])
        #expect(found[0].message.hasPrefix("not a URL"))
        #expect(found[1].message.contains("must use http or https"))
        #expect(found[2].message.contains("has no host"))
        #expect(found[3].message.contains("query or fragment"))
    }

    @Test("An invalid base URL from the environment names the variable")
    func invalidBaseURLFromEnvironment() {
        let found = issues(
            "services:\n  demo:\n    base_url: http://localhost:8080\n",
            environment: ["TETHER_DEMO_BASE_URL": "localhost:8080"])
        #expect(found.count == 1)
        #expect(found.first?.environmentVariable == "TETHER_DEMO_BASE_URL")
        #expect(found.first?.line == nil)
        #expect(found.first?.description.contains("(set by environment variable TETHER_DEMO_BASE_URL)") == true)
    }

    @Test("A missing required key, at its mapping's line")
    func missingKey() {
        let found = issues(
            """
            live_queries:
              - name: abc
                query: "store_id == 'abc'"
            """)
        #expect(found.count == 1)
        #expect(found[0].kind == .missingKey)
        #expect(found[0].path == "live_queries[0]")
        #expect(found[0].message == "missing key 'collection'")
        #expect(found[0].line == 2)
    }

    @Test("A missing type: names the choices")
    func missingType() {
        let found = issues("persistence:\n  store_path: x.sqlite\n")
        #expect(found.first?.kind == .missingKey)
        #expect(found.first?.message == "missing key 'type': name a persistence, one of memory, postgres, sqlite")
    }

    @Test("A bad live query points at the column inside the query")
    func badQuery() {
        let found = issues(
            """
            live_queries:
              - name: abc
                collection: items
                query: "store_id === 'abc'"
              - name: bad-collection
                collection: "1items"
            """)
        #expect(found.count == 2)
        #expect(found[0].path == "live_queries[0].query")
        #expect(found[0].line == 4)
        // The value starts at column 12 (the quote), so the query's column c is the file's column 12 + c; the
        // query's column 12 is the third '='.
        #expect(found[0].message.contains("(at column 12 of the query)"))
        #expect(found[0].column == 12 + 12)
        #expect(found[1].path == "live_queries[1].collection")
    }

    @Test("3,000 nested parentheses in a configured query: a located error, not a crash of the loader")
    func deepQuery() {
        let query = String(repeating: "(", count: 3_000) + "a == 1" + String(repeating: ")", count: 3_000)
        let found = issues("live_queries:\n  - name: deep\n    collection: items\n    query: \"\(query)\"\n")
        #expect(found.count == 1)
        #expect(found.first?.path == "live_queries[0].query")
        #expect(found.first?.line == 4)
        #expect(found.first?.message.contains("deeper than 15 levels") == true, "\(found)")
        #expect(found.first?.message.contains("(at column 16 of the query)") == true, "\(found)")
    }

    @Test("Every problem in a file is reported in one run, in file order")
    func manyProblems() {
        let found = issues(
            """
            services:
              demo:
                transport: { type: curl }
                retry: { attempts: -1 }
                timeout: 3s
            delivery:
              default: { type: next-signal, queue: "" }
            persistence: { type: memory, path: x }
            """)
        #expect(found.map(\.line) == [3, 4, 5, 7, 8])
        #expect(found.map(\.kind) == [.unknownType, .invalidValue, .unknownKey, .invalidValue, .unknownKey])
    }

    @Test("A key that is a list or a mapping is reported at its line, not silently dropped with its settings")
    func complexKeys() {
        let found = issues(
            """
            services:
              demo: {}
              [other]: { base_url: "https://example.com" }
              ? { a: 1 }
              : {}
            """)
        #expect(found.map(\.path) == ["services", "services"])
        #expect(found.map(\.line) == [3, 4])
        #expect(found.first?.message == "a key must be text, found a list; the settings under it would be ignored")
        #expect(found.last?.message.contains("found a mapping") == true)
    }

    @Test("A number YAML reads in base 60 that overflows 64 bits is refused at its line, not a crash (a fuzzer's find)")
    func baseSixtyOverflow() throws {
        let found = issues(
            """
            live_queries:
              - { name: q, collection: Op, sort: [-a], limit: 388888888888888888:8888888888888:8888888888888:8 }
            services:
              demo: { retry: { statuses: [1:0:0:0:0:0:0:0:0:0:0:0] } }
            """)
        #expect(found.map(\.line) == [2, 4], "\(found)")
        #expect(found.first?.message.contains("too large a number: YAML reads a:b:c as base 60") == true)
        // Within 64 bits base 60 still reads as YAML says (1:30 is 90 — refused here as a status, but not a crash).
        #expect(
            issues("services: { demo: { retry: { statuses: [1:30] } } }").first?.message.contains("base 60") == false)
    }

    @Test("A NUL or another control character is located by line and column")
    func controlCharacters() {
        for (character, name) in [("\u{0}", "NUL"), ("\u{7}", "U+0007")] {
            let found = issues("services:\n  a: {}\n  \(character)b: {}\n")
            #expect(found.count == 1)
            #expect(found.first?.line == 3, "\(found)")
            #expect(found.first?.column == 3)
            #expect(found.first?.message.contains("(\(name))") == true, "\(found)")
        }
    }

    @Test("A missing file, a folder and a non-UTF-8 file")
    func unreadableFiles() async throws {
        try await withTemporaryDirectory { directory in
            let loader = ConfigurationLoader(registry: .standard, environment: [:])
            let missing = directory.appendingPathComponent("nope.yaml").path
            #expect(throws: ConfigurationError.self) { try loader.load(file: missing) }
            do {
                _ = try loader.load(file: missing)
            } catch let error as ConfigurationError {
                #expect(error.file == missing)
                #expect(error.issues.first?.kind == .unreadableFile)
                #expect(error.description.contains("no configuration file at"))
            }
            do {
                _ = try loader.load(file: directory.path)
                Issue.record("a folder loaded")
            } catch let error as ConfigurationError {
                #expect(error.issues.first?.message == "this is a folder, not a configuration file")
            }
            let binary = directory.appendingPathComponent("binary.yaml")
            var bytes = Array("services:\n  démo: {}\n  bad: {}\n".utf8)
            bytes[bytes.firstIndex(of: UInt8(ascii: "a"))! + 0] = 0xFF  // the "a" of "bad", line 3 column 4
            try Data(bytes).write(to: binary)
            do {
                _ = try loader.load(file: binary.path)
                Issue.record("a binary file loaded")
            } catch let error as ConfigurationError {
                #expect(
                    error.issues.first?.message.hasPrefix("the file is not UTF-8 text (byte 25") == true, "\(error)")
                #expect(error.issues.first?.line == 3)
                #expect(error.issues.first?.column == 4)
            }
        }
    }

    @Test("The error prints like a compiler's: file:line:column: path: message")
    func printedForm() {
        do {
            _ = try load("memory_pressure:\n  count_limit: 0\n")
            Issue.record("loaded")
        } catch {
            #expect(error.description == "test.yaml:2:16: memory_pressure.count_limit: must be at least 1 (found 0)")
        }
    }

    @Test("A part that cannot be made fails assembly at its line, and stops nothing already stored")
    func assemblyFailure() async throws {
        try await withTemporaryDirectory { directory in
            let configuration = try load(
                """
                persistence:
                  type: sqlite
                  store_path: no-such-folder/store.sqlite
                """, baseDirectory: directory)
            do {
                _ = try AssembledPipeline.assembleQuietly(configuration)
                Issue.record("assembled")
            } catch let error as ConfigurationError {
                #expect(error.issues.first?.kind == .assemblyFailed)
                #expect(error.issues.first?.path == "persistence")
                #expect(error.issues.first?.line == 1)
                #expect(error.issues.first?.message.contains("no-such-folder") == true)
            }
        }
    }

    @Test(
        "store_path and cache_path naming one file — written two ways, through a symbolic link, or a hard link — fail assembly, and the file is untouched"
    )
    func sameFile() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
            let store = directory.appendingPathComponent("data/x.sqlite").path
            try Data("not yet a database".utf8).write(to: URL(fileURLWithPath: store))
            try FileManager.default.createSymbolicLink(
                atPath: directory.appendingPathComponent("link.sqlite").path, withDestinationPath: store)
            try FileManager.default.linkItem(
                atPath: store, toPath: directory.appendingPathComponent("hard.sqlite").path)
            for cachePath in ["./data/x.sqlite", "data/../data/x.sqlite", "link.sqlite", "hard.sqlite"] {
                let configuration = try load(
                    """
                    persistence:
                      type: sqlite
                      store_path: data/x.sqlite
                      cache_path: \(cachePath)
                    """, baseDirectory: directory)
                do {
                    _ = try AssembledPipeline.assembleQuietly(configuration)
                    Issue.record("assembled with cache_path \(cachePath)")
                } catch let error as ConfigurationError {
                    #expect(error.issues.first?.kind == .assemblyFailed)
                    #expect(
                        error.issues.first?.message.contains("cache_path (") == true
                            && error.issues.first?.message.contains("is the same file as store_path") == true,
                        "\(error)")
                }
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == Data("not yet a database".utf8))
        }
    }
}
