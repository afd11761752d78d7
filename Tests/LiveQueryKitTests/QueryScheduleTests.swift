import DeliveryKit
import DocumentStoreKit
import Foundation
import OwnershipKit
import Testing
import TetherTestingTraits

@testable import LiveQueryKit

/// The query's schedule is pure: its decisions are checked here without a clock, a lock or a thread.
@Suite("A query's schedule, step by step", .leakChecked)
struct QueryScheduleTests {
    /// A registration for the schedule to hold: its lane is never used.
    static func registration(in store: Store) throws -> Registration {
        let query = try store.collection("items").find("g == 1").compiled()
        return Registration(
            query: query, text: "g == 1", kind: .handler,
            lane: DeliveryLane<Snapshot>.nextSignal(deliverOn: .inline) { _, _ in }, binding: ObserverBinding(),
            delivered: DeliveredResult(), engine: store.engine)
    }

    static func result(commit: UInt64, content: UInt64) -> Snapshot {
        .documents([], commit: commit, content: content)
    }

    /// An observer that joined idle, in a schedule of its own, with the store its registration needs.
    static func joined() throws -> (store: Store, registration: Registration, schedule: QuerySchedule) {
        let store = Store.inMemory()
        let registration = try registration(in: store)
        var schedule = QuerySchedule()
        schedule.join(registration, idle: true, at: nil)
        return (store, registration, schedule)
    }

    /// What the observer takes when it signals and nothing waits in its lane; nil when it waits instead.
    static func takenAtIdleSignal(_ schedule: inout QuerySchedule, _ id: ObjectIdentifier) -> Snapshot? {
        guard case .take(let taken) = schedule.becameIdle(id, commitsKept: false, at: nil) else { return nil }
        return taken
    }

    @Test(
        "A result handed out, then withdrawn at the signal as out of date, leaves the observer behind: it takes the latest"
    )
    func withdrawnHandOut() throws {
        var (store, registration, schedule) = try Self.joined()
        let id = ObjectIdentifier(registration)
        let first = Self.result(commit: 5, content: 1)
        let publication = schedule.publish(first, date: Date(), at: nil)
        #expect(publication.ready.count == 1, "handed to the idle observer")
        // It waited in the lane behind another delivery; at the signal a later commit has come, not yet applied.
        let isCurrent = schedule.isStagedCurrent(first, for: id, received: 6, applied: 5, at: nil)
        #expect(!isCurrent)
        // The withdrawn result was never taken: the observer's idle signal takes the latest, rather than waiting for
        // a result the later commit may never bring (it may not touch the query).
        #expect(Self.takenAtIdleSignal(&schedule, id) == first, "the observer takes the latest result")
        withExtendedLifetime(store) {}
    }

    @Test("A staged result withdrawn at the signal leaves the observer as before it was staged")
    func withdrawnStaged() throws {
        var (store, registration, schedule) = try Self.joined()
        let id = ObjectIdentifier(registration)
        _ = schedule.publish(Self.result(commit: 5, content: 1), date: Date(), at: nil)  // taken: it is busy with it
        let second = Self.result(commit: 6, content: 2)
        let staged = schedule.publish(second, date: Date(), at: nil).staged
        #expect(staged.count == 1, "staged: no observer is idle")
        let isCurrent = schedule.isStagedCurrent(second, for: id, received: 7, applied: 6, at: nil)
        #expect(!isCurrent)
        #expect(Self.takenAtIdleSignal(&schedule, id) == second, "the observer takes the latest result")
        withExtendedLifetime(store) {}
    }
}
