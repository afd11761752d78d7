import DocumentStoreKit
import LiveQueryKit
import Testing
import TetherConcurrency
import TetherJSON
import TetherTesting

/// A read of the changed documents that lands after later commits — a writer went on while the engine worked — is
/// brought up to the read's commit from those commits' changes, which wait in the engine's inbox, instead of
/// running the query again.
@Suite("Live queries: a read after later commits catches up from their changes")
struct LaterCommitsTests {
    static func item(_ id: String, group: String = "a") -> JSONValue {
        ["_id": .string(id), "group": .string(group), "name": .string(id)]
    }

    @Test("Commits made while the engine's read is held reach the result without a rerun", arguments: TestStores.kinds)
    func caughtUpFromInbox(kind: String) async throws {
        let documents = GatedDocumentStore(base: try TestStores.documents(kind))
        let store = Store(documents)
        let items = store.collection("items")
        try await store.write { transaction in
            for id in ["a1", "a2", "a3", "b1"] {
                try transaction.collection("items").upsert(Self.item(id, group: id.hasPrefix("a") ? "a" : "b"))
            }
        }
        let received = Received()
        let query = items.find("group == 'a'").sort("name").limit(3)
        let liveQuery = try query.observeLocal { received.append($0, $1) }
        try await received.wait { $0.last == ["a1", "a2", "a3"] }
        await store.waitForLiveQueries()
        let before = store.statistics

        // The engine's read for this commit is held…
        let gate = documents.holdNextRead()
        _ = try await items.upsert(Self.item("a0"))
        try await eventually { gate.isReached }
        // …while three more commits land: one the result must take, one it must drop, one beside it.
        _ = try await items.upsert(Self.item("a00"))
        _ = try await items.remove(id: "a2")
        _ = try await items.upsert(Self.item("b2", group: "b"))
        let final = try await query.exec().map(\.id)
        #expect(final == ["a0", "a00", "a1"])
        gate.open()
        await store.waitForLiveQueries()
        try await received.wait { $0.last == final }

        let statistics = store.statistics
        #expect(statistics.reruns.total == before.reruns.total, "no rerun: \(statistics.reruns)")
        #expect(statistics.evaluations == before.evaluations, "the query never ran again")
        #expect(statistics.incrementalUpdates > before.incrementalUpdates)
        // Nothing in between: the held read already saw the last commit, so the first result after it is the final.
        #expect(received.all.dropFirst().map(\.ids) == [final], "deliveries: \(received.all.map(\.ids))")
        await liveQuery.stop()
    }

    @Test(
        "A window that must be refilled after later commits is run again once, and ends right",
        arguments: TestStores.kinds)
    func refillAfterLaterCommits(kind: String) async throws {
        let documents = GatedDocumentStore(base: try TestStores.documents(kind))
        let store = Store(documents)
        let items = store.collection("items")
        try await store.write { transaction in
            for id in ["a1", "a2", "a3", "a4"] { try transaction.collection("items").upsert(Self.item(id)) }
        }
        let received = Received()
        let query = items.find("group == 'a'").sort("name").limit(2)
        let liveQuery = try query.observeLocal { received.append($0, $1) }
        try await received.wait { $0.last == ["a1", "a2"] }
        await store.waitForLiveQueries()
        let before = store.statistics

        let gate = documents.holdNextRead()
        _ = try await items.remove(id: "a1")
        try await eventually { gate.isReached }
        _ = try await items.remove(id: "a2")
        gate.open()
        await store.waitForLiveQueries()
        try await received.wait { $0.last == ["a3", "a4"] }
        let reruns = store.statistics.reruns
        #expect(reruns.windowRefill - before.reruns.windowRefill == 1, "\(reruns)")
        #expect(reruns.laterCommit == before.reruns.laterCommit)
        await liveQuery.stop()
    }

    @Test(
        "Changes that reach the engine after a result computed past them do not take the result back",
        arguments: TestStores.kinds)
    func changesBehindTheResult(kind: String) async throws {
        let documents = GatedDocumentStore(base: try TestStores.documents(kind), relaysDocuments: true)
        let store = Store(documents)
        let items = store.collection("items")
        try await store.write { transaction in
            for id in ["a1", "a2"] { try transaction.collection("items").upsert(Self.item(id)) }
        }
        let received = Received()
        let query = items.find("group == 'a'").sort("name").limit(1)
        let liveQuery = try query.observeLocal { received.append($0, $1) }
        try await received.wait { $0.last == ["a1"] }
        await store.waitForLiveQueries()

        // The window's document goes: the query runs again, and its read is held…
        let gate = documents.holdNextRead()
        _ = try await items.remove(id: "a1")
        try await eventually { gate.isReached }
        // …while two commits land whose changes reach the feed only later (a writer slow to publish): a0 comes
        // into the window, then leaves it.
        documents.holdChanges()
        _ = try await items.upsert(Self.item("a0"))
        _ = try await items.upsert(Self.item("a0", group: "b"))
        gate.open()
        // The held read saw both commits: its result is already the final one.
        try await received.wait { $0.last == ["a2"] }
        // The first commit's changes arrive alone — the documents as it left them — then the second's: the result
        // has both already, and goes back to neither.
        documents.releaseChanges(1)
        await store.waitForLiveQueries()
        documents.releaseChanges()
        await store.waitForLiveQueries()
        #expect(received.all.map(\.ids) == [["a1"], ["a2"]])
        #expect(try await query.exec().map(\.id) == ["a2"])
        await liveQuery.stop()
    }

    @Test(
        "A commit that comes while a round runs and is kept once every query is held back counts as held back once",
        arguments: TestStores.kinds)
    func keptAfterTheRound(kind: String) async throws {
        let documents = GatedDocumentStore(base: try TestStores.documents(kind))
        let store = Store(documents, configuration: .init(anticipatesSignals: false))
        let items = store.collection("items")
        _ = try await items.upsert(Self.item("a0"))
        let slow = HeldBackTests.SlowObserver()
        let query = items.find("group == 'a'").sort("name")
        let liveQuery = try await slow.observeUntilBusy(query)
        let before = store.statistics

        // Busy: the first commit is held back.
        _ = try await items.upsert(Self.item("a1"))
        try await eventually { store.statistics.deferrals == before.deferrals + 1 }
        // The signal's round reads the held-back changes; the read is held while the second commit comes. The
        // query is awake: the commit goes into the inbox uncounted. The round catches up from a copy of it, and the
        // commit itself stays in the inbox.
        let gate = documents.holdNextRead()
        slow.signalNext()
        try await eventually { gate.isReached }
        _ = try await items.upsert(Self.item("a2"))
        gate.open()
        // The round hands the result out — the observer is busy again, every query held back — and the second
        // commit stays in the inbox, kept with those that come from now on: the third, held back as it comes.
        try await slow.received.wait { $0.count == 2 }
        try await eventually { slow.isHoldingSignal }
        _ = try await items.upsert(Self.item("a3"))
        // Three commits held back, the second counted when the consumer decides to keep it (with the third, if that
        // came before the round ended). Uncounted, this times out.
        try await eventually(within: .seconds(10)) { store.statistics.deferrals == before.deferrals + 3 }
        let final = try await query.exec().map(\.id)
        #expect(try await slow.signalAndReceive() == final)

        // The signal's round applies the kept commits to the query it wakes: counted once, not again.
        let statistics = store.statistics
        #expect(statistics.deferrals - before.deferrals == 3, "\(statistics)")
        #expect(statistics.reruns.total == before.reruns.total, "no rerun: \(statistics.reruns)")
        #expect(slow.received.all.map(\.ids) == [["a0"], ["a0", "a1", "a2"], final])
        await liveQuery.stop()
    }

    @Test("Commits made in this process carry their documents: nothing is read back", arguments: TestStores.kinds)
    func carriedDocuments(kind: String) async throws {
        let store = try TestStores.make(kind)
        let items = store.collection("items")
        let received = Received()
        let liveQuery = try items.find("group == 'a'").sort("name").limit(2).observeLocal { received.append($0, $1) }
        try await received.wait { $0.count == 1 }
        for id in ["a3", "a1", "b1", "a2"] {
            _ = try await items.upsert(Self.item(id, group: id.hasPrefix("a") ? "a" : "b"))
        }
        _ = try await items.remove(id: "a3")
        await store.waitForLiveQueries()
        try await received.wait { $0.last == ["a1", "a2"] }
        let statistics = store.statistics
        #expect(statistics.changedDocumentReads == 0, "\(statistics)")
        #expect(statistics.evaluations == 1, "only the first result ran the query")
        await liveQuery.stop()
    }

    @Test("Another process's commits carry no documents: one read per round brings every query up to date")
    func foreignCommitsRead() async throws {
        let store = Store(GatedDocumentStore(base: InMemoryDocumentStore()))
        let items = store.collection("items")
        // Called inline, in the engine's round: never busy when the commit's round comes, so nothing is held back
        // and read again when they are ready.
        let first = try items.find("group == 'a'").observeLocal(deliverOn: .inline) { _, _ in }
        let second = try items.find("group == 'b'").observeLocal(deliverOn: .inline) { _, _ in }
        await store.waitForLiveQueries()
        let before = store.statistics
        _ = try await items.upsert(Self.item("a1"))
        await store.waitForLiveQueries()
        let after = store.statistics
        #expect(after.changedDocumentReads - before.changedDocumentReads == 1, "one read for both queries")
        #expect(after.incrementalUpdates - before.incrementalUpdates == 1)
        #expect(after.skippedIrrelevant - before.skippedIrrelevant == 1)
        await first.stop()
        await second.stop()
    }
}
