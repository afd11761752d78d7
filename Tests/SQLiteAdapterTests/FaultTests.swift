import DocumentStoreKit
import EntityCacheKit
import Foundation
import InMemoryLogging
import Logging
import PersistenceKit
import SQLiteAdapter
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting
import TetherTestingTraits

@Suite(
    "Faults and bad files: typed errors with the file, nothing lost", .serialized, .timeLimit(minutes: 1), .leakChecked
)
struct FaultTests {
    static let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) })

    /// A store file with documents in it, then cut to `bytes`.
    static func truncatedStore(at path: String, keeping bytes: Int) async throws {
        try await filledStore(at: path)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(bytes))
        try handle.close()
    }

    /// A store file with 2,000 documents in it, every page in the main file (no WAL).
    static func filledStore(at path: String) async throws {
        let store = try SQLiteDocumentStore(path: path)
        try await store.write { transaction in
            for index in 0..<2000 {
                try transaction.upsert(
                    ["_id": .string("d\(index)"), "pad": .string(String(repeating: "x", count: 300))], into: "items")
            }
        }
        try store.close()
        // Move every page into the main file, so that cutting it loses committed pages.
        try checkpoint(path)
    }

    @Test("A corrupt document store (garbage, or truncated) is never moved or changed: opening fails naming the file")
    func corruptStore() async throws {
        try await TemporaryDirectory.with { directory in
            let garbage = directory.file("garbage.sqlite")
            try Self.garbage.write(to: URL(fileURLWithPath: garbage))
            let error = try #require(throws: PersistenceError.self) { try SQLiteDocumentStore(path: garbage) }
            #expect(error.kind == .corrupt)
            #expect(error.file == garbage)
            #expect("\(error)".contains(garbage))
            #expect(try Data(contentsOf: URL(fileURLWithPath: garbage)) == Self.garbage, "the file must be untouched")

            let truncated = directory.file("truncated.sqlite")
            try await Self.truncatedStore(at: truncated, keeping: 200_000)
            let before = try Data(contentsOf: URL(fileURLWithPath: truncated))
            let cut = try #require(throws: PersistenceError.self) { try SQLiteDocumentStore(path: truncated) }
            #expect(cut.kind == .corrupt)
            #expect(try Data(contentsOf: URL(fileURLWithPath: truncated)) == before, "the file must be untouched")
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(!names.contains { $0.contains("corrupt") }, "nothing may be moved aside: \(names)")
        }
    }

    @Test("A damaged cache (truncated) is moved aside with a warning, and a new one works")
    func corruptCache() async throws {
        try await TemporaryDirectory.with { directory in
            let logs = InMemoryLogHandler()
            var configuration = SQLiteConfiguration()
            configuration.logger = Logger(label: "test") { _ in logs }
            let truncated = directory.file("truncated-cache.sqlite")
            do {
                let full = try SQLiteEntityCache(path: truncated)
                for index in 0..<500 {
                    try full.writeEntity(
                        CachedEntity(body: Data(repeating: 7, count: 1000), headers: [], timestamp: Date()),
                        forKey: "k\(index)")
                }
            }
            try checkpoint(truncated)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: truncated))
            try handle.truncate(atOffset: 100_000)
            try handle.close()
            let damaged = try Data(contentsOf: URL(fileURLWithPath: truncated))
            let reopened = try SQLiteEntityCache(path: truncated, configuration: configuration)
            let moved = try #require(reopened.movedAsideFiles.first)
            #expect(reopened.movedAsideFiles.count == 1)
            #expect(moved.hasPrefix(truncated + ".corrupt-"))
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: moved)) == damaged, "the damaged file is kept aside, whole")
            #expect(try reopened.count() == 0)
            try reopened.writeEntity(CachedEntity(body: Data("x".utf8), headers: [], timestamp: Date()), forKey: "k")
            #expect(try reopened.readEntity(forKey: "k")?.body == Data("x".utf8))
            #expect(logs.entries.contains { $0.level == .warning && "\($0.metadata)".contains(truncated) })
        }
    }

    @Test(
        "At the cache's path, anything not recognisably a Tether cache — garbage, text, another program's database, the document store — is refused and left byte for byte"
    )
    func foreignFileAtCachePath() async throws {
        try await TemporaryDirectory.with { directory in
            let garbage = directory.file("garbage.sqlite")
            try Self.garbage.write(to: URL(fileURLWithPath: garbage))
            let text = directory.file("passwd")
            try Data("root:x:0:0:root:/root:/bin/bash\n".utf8).write(to: URL(fileURLWithPath: text))
            let other = directory.file("other.sqlite")
            try makeOtherProgramsDatabase(other)
            let storePath = directory.file("store.sqlite")
            try await SQLiteDocumentStore(path: storePath).upsert(["_id": "a"], into: "items")
            for path in [garbage, text, other, storePath] {
                let before = try Data(contentsOf: URL(fileURLWithPath: path))
                let error = try #require(throws: PersistenceError.self, "\(path)") { try SQLiteEntityCache(path: path) }
                #expect(error.kind == .foreignFile, "\(path): \(error)")
                #expect(error.file == path)
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "\(path) must be untouched")
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(!names.contains { $0.contains("corrupt") }, "nothing may be moved aside: \(names)")
            // The other way round: a store opened on another program's database or on a cache refuses it too.
            let cachePath = directory.file("cache.sqlite")
            try SQLiteEntityCache(path: cachePath).writeEntity(
                CachedEntity(body: Data("x".utf8), headers: [], timestamp: Date()), forKey: "k")
            for path in [other, cachePath] {
                let before = try Data(contentsOf: URL(fileURLWithPath: path))
                let error = try #require(throws: PersistenceError.self) { try SQLiteDocumentStore(path: path) }
                #expect(error.kind == .foreignFile, "\(path): \(error)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "\(path) must be untouched")
            }
        }
    }

    @Test(
        "A path that is not a file — a named pipe, a directory, a character device — is refused at once as a store and as a cache, and nothing is made beside it"
    )
    func pathThatIsNotAFile() async throws {
        try await TemporaryDirectory.with { directory in
            let fifo = directory.file("pipe.sqlite")
            #expect(mkfifo(fifo, 0o600) == 0, "mkfifo: \(String(cString: strerror(errno)))")
            let folder = directory.file("folder.sqlite")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            for (path, what) in [(fifo, "a named pipe"), (folder, "a directory"), ("/dev/null", "a character device")] {
                for role in ["store", "cache"] {
                    let error = try await Self.refusal(opening: role, at: path)
                    #expect(error?.kind == .foreignFile, "a \(role) at \(path): \(String(describing: error))")
                    #expect(error?.file == path)
                    #expect(error?.message.contains(what) == true, "\(String(describing: error))")
                }
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            #expect(names == ["folder.sqlite", "pipe.sqlite"], "nothing may be made beside them: \(names)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        }
    }

    @Test(
        "A write waiting for another connection's lock, with a busy timeout of an hour, fails with closed as soon as its store closes (a stop does not wait out the timeout)"
    )
    func closeEndsBusyWait() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("store.sqlite")
            let holder = try SQLiteDocumentStore(path: path)
            var patient = SQLiteConfiguration()
            patient.busyTimeout = .seconds(3600)
            let waiter = try SQLiteDocumentStore(path: path, configuration: patient)
            let lock = try await WriteLockHolder.hold(holder)
            let waited = Task { try await waiter.upsert(["_id": "waited"], into: "items") }
            try await eventually(within: .seconds(10)) { waiter.busyWait.waits > 0 }
            let closed = LockedValue(false)
            Thread.detachNewThread {
                try? waiter.close()
                closed.withLock { $0 = true }
            }
            do {
                try await eventually(within: .seconds(10)) { closed.withLock { $0 } }
            } catch {
                Issue.record("close() did not return within 10 s while a write waited for the lock")
            }
            try await lock.release()
            let error = await #expect(throws: PersistenceError.self) { try await waited.value }
            #expect(error?.kind == .closed, "\(String(describing: error))")
            #expect(error?.file == path)
            #expect(try await holder.document(id: "held", in: "items") != nil)
            #expect(try await holder.document(id: "waited", in: "items") == nil, "the write that gave up wrote nothing")
            try holder.close()
        }
    }

    /// Opens a `role` ("store" or "cache") at `path` on a thread of its own, and returns what it threw: nil when it
    /// opened. Records an issue when the open has not returned within 10 s (a named pipe opened to be read waits for
    /// a writer, for ever): that thread is left waiting, and the test goes on.
    static func refusal(opening role: String, at path: String) async throws -> PersistenceError? {
        let outcome = LockedValue<Result<Void, PersistenceError>?>(nil)
        Thread {
            let result = Result<Void, PersistenceError> { () throws(PersistenceError) in
                if role == "store" {
                    _ = try SQLiteDocumentStore(path: path)
                } else {
                    _ = try SQLiteEntityCache(path: path)
                }
            }
            outcome.withLock { $0 = result }
        }.start()
        do {
            try await eventually(within: .seconds(10)) { outcome.withLock { $0 != nil } }
        } catch {
            Issue.record("opening a \(role) at \(path) did not return within 10 s")
            return nil
        }
        guard case .failure(let error) = outcome.withLock({ $0 }) else { return nil }
        return error
    }

    @Test(
        "Another program's database with a table named like ours, or an application id of its own, or an empty file of its own, is refused and left byte for byte; a store from before the id opens and gets it"
    )
    func foreignDatabaseWithOurTableName() async throws {
        try await TemporaryDirectory.with { directory in
            // Our table's name beside one of its own: someone else's file, whatever the names say.
            let lookalike = directory.file("lookalike.sqlite")
            try executeSQL(
                at: lookalike,
                "CREATE TABLE tether_documents (rowid INTEGER PRIMARY KEY, body TEXT)",
                "CREATE TABLE accounts (id INTEGER PRIMARY KEY)")
            // Only our table, but the header names another application.
            let claimed = directory.file("claimed.sqlite")
            try executeSQL(
                at: claimed, "CREATE TABLE tether_entities (key TEXT PRIMARY KEY, body BLOB)",
                "PRAGMA application_id = 42")
            for (path, open) in [
                (lookalike, { _ = try SQLiteDocumentStore(path: lookalike) }),
                (claimed, { _ = try SQLiteEntityCache(path: claimed) }),
            ] as [(String, () throws -> Void)] {
                let before = try Data(contentsOf: URL(fileURLWithPath: path))
                let error = try #require(throws: PersistenceError.self, "\(path)") { try open() }
                #expect(error.kind == .foreignFile, "\(path): \(error)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "\(path) must be untouched")
            }
            // An empty file someone else made (a `touch`: mode 0644) is not ours to fill; an empty one of ours (0600,
            // left by a crash before SQLite's first write) is.
            let touched = directory.file("touched.sqlite")
            #expect(
                FileManager.default.createFile(atPath: touched, contents: nil, attributes: [.posixPermissions: 0o644]))
            let error = try #require(throws: PersistenceError.self) { try SQLiteEntityCache(path: touched) }
            #expect(error.kind == .foreignFile, "\(error)")
            #expect(error.message.contains("mode 644"), "\(error)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: touched)).isEmpty, "the empty file stays empty")
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            #expect(names == ["claimed.sqlite", "lookalike.sqlite", "touched.sqlite"], "nothing beside them: \(names)")
            let ours = directory.file("ours.sqlite")
            #expect(FileManager.default.createFile(atPath: ours, contents: nil, attributes: [.posixPermissions: 0o600]))
            try SQLiteEntityCache(path: ours).writeEntity(
                CachedEntity(body: Data("x".utf8), headers: [], timestamp: Date()), forKey: "k")
            // A store written before the application id: it holds only our tables, opens, and is marked.
            let older = directory.file("older.sqlite")
            let store = try SQLiteDocumentStore(path: older)
            try await store.upsert(["_id": "a"], into: "items")
            try store.close()
            try executeSQL(
                at: older, "PRAGMA application_id = 0",
                "DELETE FROM grdb_migrations WHERE identifier = 'v5: application id'")
            let reopened = try SQLiteDocumentStore(path: older)
            #expect(try await reopened.document(id: "a", in: "items") != nil)
            try reopened.close()
            #expect(try applicationID(of: older) == 0x5445_5444)
        }
    }

    @Test(
        "Twelve ways to damage a store: opening refuses with corrupt, and leaves the file byte for byte (GRDB's setup once wrote to it)"
    )
    func damagedStoreUntouched() async throws {
        try await TemporaryDirectory.with { directory in
            let pristine = directory.file("pristine.sqlite")
            try await Self.filledStore(at: pristine)
            let original = try Data(contentsOf: URL(fileURLWithPath: pristine))
            let pageSize = 4096
            var patterns: [(String, (inout Data) -> Void)] = []
            for pages in [1, 2, 10, 100] {
                patterns.append(("cut to \(pages) pages", { $0 = $0.prefix(pages * pageSize) }))
            }
            for offset in [100, 1_000, 4_096, 8_192, 20_000, 100_000] {
                patterns.append(
                    (
                        "256 bytes zeroed at \(offset)",
                        { data in
                            let end = min(data.count, offset + 256)
                            data.replaceSubrange(offset..<end, with: Data(count: end - offset))
                        }
                    ))
            }
            patterns.append(
                (
                    "header's page size garbled",
                    {
                        $0[16] = 0x7F
                        $0[17] = 0x01
                    }
                ))
            patterns.append(
                (
                    "header's write and read versions garbled",
                    {
                        $0[18] = 9
                        $0[19] = 9
                    }
                ))
            var refused = 0
            for (index, (name, damage)) in patterns.enumerated() {
                var data = original
                damage(&data)
                let path = directory.file("damaged-\(index).sqlite")
                try data.write(to: URL(fileURLWithPath: path))
                do {
                    let store = try SQLiteDocumentStore(path: path)
                    try store.close()  // the damage missed everything quick_check reads: the file is sound for SQLite
                } catch let error as PersistenceError {
                    refused += 1
                    #expect(error.kind == .corrupt, "\(name): \(error)")
                    #expect(
                        try Data(contentsOf: URL(fileURLWithPath: path)) == data, "\(name): the file must be untouched")
                    let wal = (try? Data(contentsOf: URL(fileURLWithPath: path + "-wal"))) ?? Data()
                    #expect(wal.isEmpty, "\(name): no WAL content written")
                }
            }
            #expect(
                refused >= 8, "most patterns damage what quick_check reads: \(refused) of \(patterns.count) refused")
        }
    }

    @Test(
        "A stored row that no longer reads as a document (600 levels deep, written by another program) is left out of queries and logged once; the rest reads; removing it repairs"
    )
    func unreadableRow() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("store.sqlite")
            let logs = InMemoryLogHandler()
            var configuration = SQLiteConfiguration()
            configuration.logger = Logger(label: "test") { _ in logs }
            let store = try SQLiteDocumentStore(path: path, configuration: configuration)
            try await store.upsert(["_id": "good", "v": 1], into: "items")
            let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
            try insertRawDocument(path, collection: "items", id: "deep", body: #"{"_id":"deep","v":2,"nest":\#(deep)}"#)
            let everything = try DocumentQuery(collection: "items")
            let filtered = try DocumentQuery(
                collection: "items", predicate: .compare(DocumentPath("v"), .greaterOrEqual, .number(1)))
            for query in [everything, filtered, everything] {
                let found = try await store.documents(matching: query)
                #expect(found.map(\.id) == ["good"], "the readable document, and only it")
            }
            #expect(store.unreadableDocumentCount == 1)
            #expect(logs.entries.count == 1, "logged once however often it is met: \(logs.entries.map(\.message))")
            #expect(logs.entries.first?.metadata["id"]?.description == "deep")
            await #expect { _ = try await store.document(id: "deep", in: "items") } throws: {
                ($0 as? PersistenceError)?.kind == .corrupt && ($0 as? PersistenceError)?.id == "deep"
            }
            #expect(try await store.remove(id: "deep", from: "items"))
            #expect(try await store.documents(matching: everything).map(\.id) == ["good"])
            try store.close()
        }
    }

    @Test("A missing directory: missingDirectory naming the path; nothing is created")
    func missingDirectory() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("no/such/dir/store.sqlite")
            let error = try #require(throws: PersistenceError.self) { try SQLiteDocumentStore(path: path) }
            #expect(error.kind == .missingDirectory)
            #expect(error.file == path)
            #expect(error.message.contains(directory.file("no/such/dir")))
            #expect(throws: PersistenceError.self) { try SQLiteEntityCache(path: path) }
        }
    }

    @Test("A symbolic link to a file in a folder that does not exist: cannotOpen naming the target, not readOnly")
    func danglingSymlink() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("store.sqlite")
            let target = directory.file("gone/store.sqlite")
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            for open in [{ _ = try SQLiteDocumentStore(path: path) }, { _ = try SQLiteEntityCache(path: path) }] {
                let error = try #require(throws: PersistenceError.self) { try open() }
                #expect(error.kind == .cannotOpen, "\(error)")
                #expect(error.message.contains(target), "\(error)")
            }
        }
    }

    @Test(
        "A disk with 0 to 192 KB left at the first open: the store opens, or fails with diskFull — never ioError (a 1 MB tmpfs where the machine allows)"
    )
    func nearlyFullAtOpen() async throws {
        try await TemporaryDirectory.with { directory in
            try await ScratchMount.with(at: directory.file("small"), options: "size=1m") { mounted in
                guard mounted else {
                    print("FaultTests: this machine refuses a tmpfs mount; a nearly full disk at open is not checked")
                    return
                }
                let folder = directory.file("small")
                let path = folder + "/store.sqlite"
                var kinds: [Int: String] = [:]
                for leftKB in [0, 4, 8, 12, 16, 24, 32, 40, 48, 64, 96, 128, 192] {
                    // Another file takes all but `leftKB` of the disk: the database, its WAL and its shared-memory
                    // index each run out of space at some size.
                    let free = try #require(
                        try FileManager.default.attributesOfFileSystem(forPath: folder)[.systemFreeSize] as? Int)
                    let filler = URL(fileURLWithPath: folder + "/filler")
                    try Data(count: max(free - leftKB * 1024, 0)).write(to: filler)
                    do {
                        let store = try SQLiteDocumentStore(path: path)
                        try store.close()
                        kinds[leftKB] = "opened"
                    } catch let error as PersistenceError {
                        kinds[leftKB] = "\(error.kind)"
                        #expect(error.kind == .diskFull, "\(leftKB) KB left: \(error)")
                    }
                    for file in ["filler", "store.sqlite", "store.sqlite-wal", "store.sqlite-shm"] {
                        try? FileManager.default.removeItem(atPath: folder + "/" + file)
                    }
                }
                #expect(kinds.values.contains("diskFull"), "some sizes must be too small: \(kinds)")
            }
        }
    }

    @Test("A read-only directory: readOnly naming the file (a read-only tmpfs where the machine allows, else chmod)")
    func readOnlyDirectory() async throws {
        try await TemporaryDirectory.with { directory in
            let mountPoint = directory.file("ro")
            try await ScratchMount.with(at: mountPoint, options: "ro,size=1m") { mounted in
                if !mounted {
                    guard getuid() != 0 else {
                        // Root ignores permission bits, and this machine refuses the mount: nothing can be read-only.
                        print("FaultTests: no read-only directory can exist here (root, mount refused); not checked")
                        return
                    }
                    chmod(mountPoint, 0o500)
                }
                defer { chmod(mountPoint, 0o700) }
                let path = mountPoint + "/store.sqlite"
                let error = try #require(throws: PersistenceError.self) { try SQLiteDocumentStore(path: path) }
                #expect(error.kind == .readOnly)
                #expect(error.file == path)
            }
        }
    }

    @Test(
        "A healthy store and cache on a mount made read-only: readOnly naming the file, never corrupt; nothing moved aside or changed (a tmpfs where the machine allows)"
    )
    func healthyFilesOnReadOnlyMount() async throws {
        try await TemporaryDirectory.with { directory in
            let mountPoint = directory.file("mount")
            try await ScratchMount.with(at: mountPoint, options: "size=4m") { mounted in
                guard mounted else {
                    print("FaultTests: this machine refuses a tmpfs mount; a read-only mount is not checked")
                    return
                }
                let storePath = mountPoint + "/store.sqlite"
                let cachePath = mountPoint + "/cache.sqlite"
                let store = try SQLiteDocumentStore(path: storePath)
                try await store.upsert(["_id": "a"], into: "items")
                try store.close()
                try SQLiteEntityCache(path: cachePath).writeEntity(
                    CachedEntity(body: Data("x".utf8), headers: [], timestamp: Date()), forKey: "k")
                #expect(ScratchMount.run("/bin/mount", ["-o", "remount,ro", mountPoint]), "remount read-only")
                defer { _ = ScratchMount.run("/bin/mount", ["-o", "remount,rw", mountPoint]) }
                let names = try FileManager.default.contentsOfDirectory(atPath: mountPoint).sorted()
                let contents = try names.map { try Data(contentsOf: URL(fileURLWithPath: mountPoint + "/" + $0)) }
                let storeError = try #require(throws: PersistenceError.self) {
                    try SQLiteDocumentStore(path: storePath)
                }
                #expect(storeError.kind == .readOnly, "\(storeError)")
                #expect(storeError.file == storePath)
                let cacheError = try #require(throws: PersistenceError.self) { try SQLiteEntityCache(path: cachePath) }
                #expect(cacheError.kind == .readOnly, "\(cacheError)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint).sorted() == names)
                #expect(
                    try names.map { try Data(contentsOf: URL(fileURLWithPath: mountPoint + "/" + $0)) } == contents,
                    "the files are untouched")
            }
        }
    }

    @Test(
        "Disk full (a 1 MB tmpfs where the machine allows, and SQLite's page limit always): diskFull; earlier data kept; the store still works"
    )
    func diskFull() async throws {
        try await TemporaryDirectory.with { directory in
            try await ScratchMount.with(at: directory.file("small"), options: "size=1m") { mounted in
                let path = mounted ? directory.file("small/store.sqlite") : directory.file("store.sqlite")
                // Other files fill most of the disk; freeing them later is how a full disk recovers.
                let filler = directory.file("small/filler")
                if mounted { try Data(count: 600 * 1024).write(to: URL(fileURLWithPath: filler)) }
                let store = try SQLiteDocumentStore(path: path)
                if !mounted { try await store.limitSize(toPages: 64) }
                try await store.upsert(["_id": "keep", "v": 1], into: "items")
                let big = String(repeating: "y", count: 64 * 1024)
                var error: PersistenceError?
                for index in 0..<64 where error == nil {
                    do {
                        try await store.upsert(["_id": .string("big\(index)"), "pad": .string(big)], into: "items")
                    } catch let failure as PersistenceError {
                        error = failure
                    }
                }
                let full = try #require(error, "64 × 64 KB must not fit")
                #expect(full.kind == .diskFull, "\(full)")
                #expect(full.file == path)
                // Reads go on; what was committed is there.
                #expect(try await store.document(id: "keep", in: "items")?.body["v"] == 1)
                let written = try await store.read { try $0.count(matching: DocumentQuery(collection: "items")) }
                #expect(written >= 1)
                // Space comes back; writes go on, on the same store object.
                if mounted {
                    try FileManager.default.removeItem(atPath: filler)
                } else {
                    try await store.limitSize(toPages: 100_000)
                }
                try await store.upsert(["_id": "after", "v": 2], into: "items")
                #expect(try await store.document(id: "after", in: "items") != nil)
                #expect(try await store.integrityCheck() == ["ok"])
                try store.close()
            }
            // The page limit is a real SQLITE_FULL on any machine: check it too when the tmpfs was used.
            let capped = try SQLiteDocumentStore(path: directory.file("capped.sqlite"))
            try await capped.limitSize(toPages: 32)
            await #expect {
                try await capped.upsert(
                    ["_id": "x", "pad": .string(String(repeating: "z", count: 200_000))], into: "items")
            } throws: {
                ($0 as? PersistenceError)?.kind == .diskFull
            }
            try capped.close()
        }
    }

    @Test("Many writers and readers on one file with the busy timeout: no 'database is locked' failures")
    func twoStoresOneFile() async throws {
        try await TemporaryDirectory.with { directory in
            let path = directory.file("shared.sqlite")
            // Two pools on one file compete for the write lock, as two processes would.
            let first = try SQLiteDocumentStore(path: path)
            let second = try SQLiteDocumentStore(path: path)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, store) in [first, second, first, second].enumerated() {
                    group.addTask {
                        for item in 0..<150 {
                            _ = try await store.write { transaction in
                                try transaction.upsert(["_id": .string("w\(index)-\(item)")], into: "items")
                            }
                            _ = try await store.read { try $0.count(matching: DocumentQuery(collection: "items")) }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let count = try await first.read { try $0.count(matching: DocumentQuery(collection: "items")) }
            #expect(count == 600)
            try first.close()
            try second.close()
        }
    }
}
