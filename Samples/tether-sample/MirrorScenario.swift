import Foundation
import LiveQueryKit
import MirrorKit
import PipelineKit
import ResourceKit

/// Scenario 6 — remote data, queried locally: the demo API's catalogs are mirrored into one collection (a mirror per
/// store, each with its scope), and a screen shows a live query over it — filtered, sorted, on an index — under
/// next-signal. The API changes the first store's catalog behind the sample's back, and after each refresh:
/// - the collection holds exactly what the server answered, and the other stores' documents stay as they were;
/// - the screen shows exactly the query over the store, having rendered once if its result changed and not at all
///   if it did not (a 304, which writes nothing; another store's change).
///
/// Then the catalog changes `mirror_burst` times while the screen is busy with one result: it takes only the latest.
/// Last the API goes down: the screen keeps its items, and the mirror's state in the store says "offline, last
/// updated …" until the API answers again.
struct MirrorScenario {
    /// One step: what the server did, what the refresh got, what the screen showed.
    struct Round: Sendable {
        var label: String
        /// What changed on the server, or "–".
        var serverChange = "–"
        /// "200 OK", "304 Not Modified" or "failed (…)".
        var answer = ""
        /// Commits the refresh made in the store.
        var commits = 0
        /// Results the screen rendered.
        var rendered = 0
        /// Items on the screen afterwards.
        var shown = 0
        /// Documents in the first mirror's scope afterwards.
        var mirrored = 0
        /// From the refresh to the screen showing its outcome.
        var milliseconds = 0.0
        /// Whether every promise of the step held.
        var right = true
    }

    struct Result: Sendable {
        /// Why it did not run, when it did not.
        var skipped: String?
        /// The screen's live query: its collection and query.
        var query = ""
        /// Items the screen showed at start, from the store, before any request; and how long ago the last run
        /// synced them.
        var shownAtStart = 0
        var syncedSecondsAgo: Double?
        var rounds: [Round] = []
        /// The burst: changes made while the screen was busy, and results it rendered for them.
        var burstChanges = 0
        var burstRendered = 0
        /// The status line while the API was down, from the mirror's state alone.
        var offlineStatus = ""
    }

    let pipeline: AssembledPipeline
    let settings: SampleSettings
    let server: DemoServer?
    let console: Console

    func run() async throws -> Result {
        guard let server else {
            return Result(
                skipped: "the demo API is not the embedded one, so nothing changes it behind the sample's back")
        }
        guard let firstName = settings.mirrors.first else {
            return Result(skipped: "no mirror named in sample.mirrors")
        }
        let query = try pipeline.liveQuery(named: settings.mirrorLiveQuery).query
        let screen = CatalogScreen()
        let liveQuery = try query.observeLocalWithNextSignal(handler: screen.handler())
        var mirrors: [ResourceMirror] = []
        do {
            var result = Result(query: query.text)
            try await showStored(on: screen, query: query, mirror: firstName, into: &result)
            // Each mirror loads when it starts: the first sync counts what the server answered from here.
            let served = server.statistics
            mirrors = try settings.mirrors.map { try pipeline.startMirror(named: $0) }
            result.query = "\(settings.mirrorLiveQuery) (\(mirrors[0].collection.name): \(query.text))"
            try await Run(
                pipeline: pipeline, server: server, console: console, mirrors: mirrors, query: query,
                settings: settings, screen: screen
            ).run(into: &result, servedSince: served)
            await stop(liveQuery, mirrors)
            return result
        } catch {
            await stop(liveQuery, mirrors)
            throw error
        }
    }

    /// Offline first: before any mirror starts (so before any request), the screen shows what the last run
    /// mirrored, from the store alone; and the mirror's state says when that was.
    private func showStored(
        on screen: CatalogScreen, query: PendingQuery, mirror name: String, into result: inout Result
    ) async throws {
        let start = ContinuousClock.now
        let stored = try await query.exec()
        try await waitUntil(timeout: .seconds(10)) { screen.shows(stored) }
        let milliseconds = (ContinuousClock.now - start).milliseconds
        result.shownAtStart = screen.documents.count
        let state = try await pipeline.store.collection(MirrorState.collection).findByID(name).exec()
        if let synced = state.flatMap(MirrorState.init)?.syncedAt {
            result.syncedSecondsAgo = Date().timeIntervalSince(synced)
            console.line(
                String(
                    format: "at start, from the store alone: %d items on the screen after %.1f ms, mirrored %.0f s ago",
                    result.shownAtStart, milliseconds, result.syncedSecondsAgo ?? 0))
        } else {
            console.line("at start, the store holds no catalog yet (a first run): the screen shows it once mirrored")
        }
    }

    private func stop(_ liveQuery: LiveQuery, _ mirrors: [ResourceMirror]) async {
        await liveQuery.stop()
        for mirror in mirrors { await mirror.stop() }
    }
}

extension MirrorScenario {
    /// The scenario's steps once its mirrors have started.
    private struct Run {
        let pipeline: AssembledPipeline
        let server: DemoServer
        let console: Console
        let mirrors: [ResourceMirror]
        let query: PendingQuery
        let settings: SampleSettings
        let screen: CatalogScreen
        let clock = ContinuousClock()

        var first: ResourceMirror { mirrors[0] }

        func run(into result: inout Result, servedSince served: DemoServer.Statistics) async throws {
            // The load each mirror began when it started, then one more: the catalog as the server has it now,
            // though the cached copy may be fresh.
            for mirror in mirrors {
                if let started = mirror.resource.loadIfNeeded() { _ = await started.outcome }
            }
            let sync = try await step("first sync", refreshing: mirrors, servedSince: served)
            result.rounds.append(sync)
            console.line(
                String(
                    format: "first sync: %@ · the screen: %d items after %.1f ms", sync.answer, sync.shown,
                    sync.milliseconds))

            for number in 1...settings.mirrorRounds {
                result.rounds.append(try await round(number))
            }
            let (changes, rendered) = try await burst()
            result.burstChanges = changes
            result.burstRendered = rendered
            result.offlineStatus = try await offline(into: &result.rounds)

            console.check(
                result.rounds.allSatisfy(\.right),
                "after every refresh the collection held exactly the server's catalog and the screen the query over it")
            let changing = result.rounds.filter { $0.label.hasPrefix("round") && $0.serverChange != "none" }
            let reached = changing.filter { $0.rendered > 0 }.count
            console.check(
                reached > 0,
                "the API's changes reached the screen (in \(reached) of \(changing.count) rounds; the others changed nothing it shows)"
            )
            let unchanged = result.rounds.first { $0.label == "round 3" }
            console.check(
                unchanged.map { $0.answer == "304 Not Modified" && $0.commits == 0 && $0.rendered == 0 } ?? false,
                "a 304 wrote nothing: no commit, no result")
        }

        /// Round `number`: the server changes the first store's catalog, except in the third round (nothing
        /// changes: a 304) and the fourth (another store's catalog changes).
        private func round(_ number: Int) async throws -> Round {
            let stores = mirrors.map(Self.store)
            let round =
                switch number {
                case 3:
                    try await step("round 3", change: "none", refreshing: [first])
                case 4 where mirrors.count > 1:
                    try await step(
                        "round 4", change: "\(stores[1]): \(server.catalog.change(stores[1]))", refreshing: mirrors)
                default:
                    try await step(
                        "round \(number)", change: "\(stores[0]): \(server.catalog.change(stores[0]))",
                        refreshing: [first])
                }
            console.line(
                String(
                    format: "%@: %@ · %@, %d commit(s) · the screen: %d result(s), %d items, after %.1f ms%@",
                    round.label, round.serverChange, round.answer, round.commits, round.rendered, round.shown,
                    round.milliseconds, round.right ? "" : " — WRONG"))
            return round
        }

        /// `mirror_burst` changes and refreshes while the screen is busy with a result: it renders the one in hand,
        /// then only the latest.
        private func burst() async throws -> (changes: Int, rendered: Int) {
            let store = Self.store(first)
            let before = screen.rendered
            screen.hold()
            for _ in 0..<settings.mirrorBurst {
                server.catalog.change(store)
                _ = await first.resource.load().outcome
            }
            await first.waitForWrites()
            await pipeline.store.waitForLiveQueries()
            screen.release()
            let shows = try await showsStore(within: .seconds(10))
            let rendered = screen.rendered - before
            let matches = try await collectionMatchesServer()
            console.line(
                "burst: \(settings.mirrorBurst) changes while the screen was busy; it rendered \(rendered) result(s)")
            console.check(
                shows && matches && rendered <= 2,
                "under next-signal a busy screen took only the latest of \(settings.mirrorBurst) changes (\(rendered) results, at most 2)"
            )
            return (settings.mirrorBurst, rendered)
        }

        /// The API goes down, then comes back: the screen keeps its items, and the mirror's state says what a
        /// status line needs.
        private func offline(into rounds: inout [Round]) async throws -> String {
            server.baskets.isDown = true
            var down = try await step("API down", refreshing: [first])
            let failed = try await first.state.exec().flatMap(MirrorState.init)
            let status = Self.statusLine(failed, shown: screen.documents.count)
            down.right = down.right && failed?.error != nil && down.rendered == 0 && down.answer.hasPrefix("failed")
            rounds.append(down)
            console.line("API down: \(down.answer); the screen's status line, from the store alone: \(status)")

            server.baskets.isDown = false
            var back = try await step("API back", refreshing: [first])
            let recovered = try await first.state.exec().flatMap(MirrorState.init)
            back.right = back.right && recovered?.error == nil && back.rendered == 0
            rounds.append(back)
            console.line("API back: \(back.answer); the status line: \(Self.statusLine(recovered, shown: back.shown))")
            console.check(
                down.right && back.right,
                "with the API down the screen kept its items and the mirror's state said so; once it answered, the state showed no error"
            )
            return status
        }

        /// "offline: 11 items, last updated 3.0 s ago (the refresh 0.2 s ago failed)", or "up to date: 11 items,
        /// updated 3.0 s ago" — from the mirror's state alone.
        static func statusLine(_ state: MirrorState?, shown: Int) -> String {
            func ago(_ date: Date?) -> String {
                date.map { String(format: "%.1f s ago", Date().timeIntervalSince($0)) } ?? "never"
            }
            guard let state else { return "no state" }
            guard state.error != nil else { return "up to date: \(shown) items, updated \(ago(state.syncedAt))" }
            return
                "offline: \(shown) items, last updated \(ago(state.syncedAt)) (the refresh \(ago(state.errorAt)) failed)"
        }

        /// Loads `mirror`'s resource and waits for the mirror's write, adding what it did to `round`: the server's
        /// answers to the resource's path since `served` (a 200 if there was one, else a 304), or the failure.
        private func refresh(
            _ mirror: ResourceMirror, into round: inout Round, servedSince served: DemoServer.Statistics
        )
            async
        {
            let commit = pipeline.store.lastCommit
            let outcome = await mirror.resource.load().outcome
            await mirror.waitForWrites()
            round.commits += Int(pipeline.store.lastCommit - commit)
            let path = URL(string: mirror.resource.urlString)?.path ?? ""
            let now = server.statistics
            let notModified = (now.notModifiedByPath[path] ?? 0) - (served.notModifiedByPath[path] ?? 0)
            let ok = (now.servedByPath[path] ?? 0) - (served.servedByPath[path] ?? 0) - notModified
            let answer =
                if let error = outcome.error {
                    "failed (\(error.httpStatusCode.map { "HTTP \($0)" } ?? "\(error.kind)"))"
                } else if ok > 0 {
                    "200 OK"
                } else {
                    "304 Not Modified"
                }
            round.answer = round.answer.isEmpty ? answer : round.answer + ", " + answer
        }

        /// Refreshes `targets`, then waits for the screen to show the query over the store as it is now. Right when
        /// the screen shows it, having rendered once if that changed what it shows and not at all if not, and every
        /// mirror's scope holds exactly its catalog on the server.
        private func step(
            _ label: String, change: String = "–", refreshing targets: [ResourceMirror],
            servedSince served: DemoServer.Statistics? = nil
        ) async throws -> Round {
            var round = Round(label: label, serverChange: change)
            let served = served ?? server.statistics
            let renderedBefore = screen.rendered
            let shownBefore = screen.documents
            let start = clock.now
            for mirror in targets { await refresh(mirror, into: &round, servedSince: served) }
            await pipeline.store.waitForLiveQueries()
            let shows = try await showsStore(within: .seconds(10))
            round.milliseconds = (clock.now - start).milliseconds
            round.rendered = screen.rendered - renderedBefore
            round.shown = screen.documents.count
            round.mirrored = try await mirrored(first).count
            let changed = screen.documents != shownBefore
            round.right = try await collectionMatchesServer() && shows && round.rendered == (changed ? 1 : 0)
            return round
        }

        /// Whether the screen shows the query over the store, waiting up to `timeout` for it to.
        private func showsStore(within timeout: Duration) async throws -> Bool {
            let expected = try await query.exec()
            try await waitUntil(timeout: timeout) { screen.shows(expected) }
            return screen.shows(expected)
        }

        /// Whether each mirror's scope holds exactly its store's catalog on the server.
        private func collectionMatchesServer() async throws -> Bool {
            for mirror in mirrors {
                let stored = try await mirrored(mirror).compactMap { try? $0.decode(as: InventoryItem.self) }
                let served = server.catalog.items(in: Self.store(mirror))
                guard stored.sorted(by: { $0.id < $1.id }) == served.sorted(by: { $0.id < $1.id }) else { return false }
            }
            return true
        }

        private func mirrored(_ mirror: ResourceMirror) async throws -> [Document] {
            guard let scope = mirror.scope else { return try await mirror.collection.findAll().exec() }
            return try await mirror.collection.find(scope).exec()
        }

        /// The store a catalog mirror is of: its resource's last path segment (`/catalog/abc123`).
        static func store(_ mirror: ResourceMirror) -> String {
            String(mirror.resource.urlString.split(separator: "/").last ?? "")
        }
    }
}
