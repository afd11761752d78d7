import Foundation
import RegistryKit
import Synchronization
import Testing
import TetherConcurrency
import TetherTesting
import TetherTestingTraits

/// An instance with a serial number (addresses are reused, serial numbers are not) and a per-key census.
final class Item: Sendable {
    static let serials = Atomic<Int>(0)
    let key: String
    let serial = Item.serials.add(1, ordering: .relaxed).newValue
    let inUse = Atomic<Bool>(false)
    let census: KeyCensus?

    init(_ key: String, census: KeyCensus? = nil) {
        self.key = key
        self.census = census
        census?.born(key)
    }

    deinit { census?.died(key) }
}

/// Instances per key. When one is made, no earlier instance of its key may still be obtainable: a weak reference
/// to it must read nil. (Counting `deinit`s instead would be wrong by a moment: an instance whose last reference has
/// gone is unobtainable at once — weak references read nil — but its `deinit` runs a little later.)
final class KeyCensus: Sendable {
    final class Latest: Sendable {
        weak let item: Item?
        init(_ item: Item) { self.item = item }
    }

    private let alive = LockedValue<[String: Int]>([:])
    private let latest = LockedValue<[String: Latest]>([:])
    private let found = LockedValue<[String]>([])

    func born(_ key: String) {
        alive.withLock { $0[key, default: 0] += 1 }
    }

    /// Called by the registry's `create`, with the new instance.
    func created(_ item: Item) {
        let previous = latest.withLock { $0[item.key] }
        if let still = previous?.item, still !== item {
            found.withLock { $0.append("\(item.key): #\(still.serial) still obtainable when #\(item.serial) was made") }
        }
        latest.withLock { $0[item.key] = Latest(item) }
    }

    func died(_ key: String) { alive.withLock { $0[key, default: 0] -= 1 } }
    var violations: [String] { found.withLock { $0 } }
    var total: Int { alive.withLock { $0.values.reduce(0, +) } }
}

@Suite("Registry", .onDedicatedThread)
struct RegistryTests {
    @Test("One instance per key, also when 8 threads ask for the same keys at once")
    func oneInstancePerKeyConcurrently() {
        let registry = Registry<String, Item>()
        let created = LockedValue<[String: Int]>([:])
        let seen = LockedValue<[String: Set<Int>]>([:])
        let group = DispatchGroup()
        for worker in 0..<8 {
            group.enter()
            Thread {
                for lookup in 0..<20_000 {
                    let key = "/items/\((lookup * 7 + worker) % 64)"
                    let item = registry.instance(for: key) {
                        created.withLock { $0[key, default: 0] += 1 }
                        return Item(key)
                    }
                    if lookup % 97 == 0 { seen.withLock { _ = $0[key, default: []].insert(item.serial) } }
                }
                group.leave()
            }.start()
        }
        group.wait()
        #expect(created.withLock { $0.count } == 64)
        #expect(created.withLock { $0.values.allSatisfy { $0 == 1 } }, "each key was created exactly once")
        #expect(seen.withLock { $0.values.allSatisfy { $0.count == 1 } }, "every lookup of a key saw the same instance")
        #expect(registry.count == 64)
    }

    @Test("Instances are held strongly until a flush; an unused one is then gone")
    func heldUntilFlush() {
        let registry = Registry<String, Item>()
        let tracker = LeakTracker()
        var serial = 0
        do { serial = tracker.track(registry.instance(for: "/a") { Item("/a") }).serial }
        #expect(registry.existingInstance(for: "/a")?.serial == serial, "still held: nothing flushed it")
        #expect(registry.flushUnused() == 1)
        #expect(tracker.survivors.isEmpty, "gone after the flush")
        #expect(registry.existingInstance(for: "/a") == nil)
        #expect(registry.instance(for: "/a") { Item("/a") }.serial != serial, "a new instance")
    }

    @Test("An instance referenced from outside survives a flush, stays canonical and is held again")
    func externallyReferencedStaysCanonical() {
        let registry = Registry<String, Item>()
        let kept = registry.instance(for: "/a") { Item("/a") }
        #expect(registry.flushUnused() == 1)
        #expect(registry.strongCount == 0)
        #expect(registry.count == 1, "alive, weakly known")
        let again = registry.instance(for: "/a") { Item("/never") }
        #expect(again === kept, "the same instance: still canonical")
        #expect(registry.strongCount == 1, "held strongly again")
    }

    @Test("An instance in use is never evicted")
    func inUseNeverEvicted() {
        let registry = Registry<String, Item>(isInUse: { $0.inUse.load(ordering: .relaxed) })
        var serial = 0
        do {
            let item = registry.instance(for: "/observed") { Item("/observed") }
            item.inUse.store(true, ordering: .relaxed)
            serial = item.serial
        }
        registry.flushUnused()
        registry.flushUnused()
        #expect(registry.existingInstance(for: "/observed")?.serial == serial)
        registry.existingInstance(for: "/observed")?.inUse.store(false, ordering: .relaxed)
        registry.flushUnused()
        #expect(registry.existingInstance(for: "/observed") == nil, "evictable once no longer in use")
    }

    @Test("Exceeding the count limit flushes unused instances before inserting")
    func countLimit() {
        let registry = Registry<String, Item>(configuration: .init(countLimit: 3))
        let kept = registry.instance(for: "/kept") { Item("/kept") }
        for index in 0..<2 { _ = registry.instance(for: "/\(index)") { Item("/\(index)") } }
        #expect(registry.strongCount == 3, "at the limit, nothing flushed yet")
        _ = registry.instance(for: "/new") { Item("/new") }
        #expect(registry.count == 2, "the two unused ones went; the one referenced from outside and the new one stay")
        #expect(registry.existingInstance(for: "/kept") === kept)
    }

    @Test("A flush forgets what it let go of: the next new instance does not flush the one made just before it")
    func flushForgetsReleased() {
        let registry = Registry<String, Item>(configuration: .init(countLimit: 3))
        let kept = registry.instance(for: "/kept") { Item("/kept") }
        for index in 0..<2 { _ = registry.instance(for: "/\(index)") { Item("/\(index)") } }
        // At the limit: this insert flushes /0 and /1 (unused, gone) and demotes /kept (referenced, survives).
        let afterFlush = registry.instance(for: "/a") { Item("/a") }.serial
        #expect(registry.count == 2, "the flush left exactly what is referenced, and the new instance")
        // Nobody references /a; the next insert must not flush it: the dead entries count for nothing.
        _ = registry.instance(for: "/b") { Item("/b") }
        #expect(registry.existingInstance(for: "/a")?.serial == afterFlush, "/a is still held, the same instance")
        #expect(registry.strongCount == 2, "/a and /b held strongly; /kept weakly, referenced from outside")
        #expect(registry.existingInstance(for: "/kept") === kept)
    }

    @Test("The count limit can change at run time: lowered below the count, it flushes at once")
    func countLimitAtRunTime() {
        let registry = Registry<String, Item>(configuration: .init(countLimit: 10))
        let kept = registry.instance(for: "/kept") { Item("/kept") }
        for index in 0..<5 { _ = registry.instance(for: "/\(index)") { Item("/\(index)") } }
        registry.countLimit = 6
        #expect(registry.strongCount == 6, "at the limit, not over it: nothing flushed")
        registry.countLimit = 5
        #expect(registry.count == 1 && registry.existingInstance(for: "/kept") === kept)
        for index in 0..<4 { _ = registry.instance(for: "/\(index)") { Item("/\(index)") } }
        #expect(registry.count == 5, "the count restarted from what the flush left")
        registry.countLimit = -1
        #expect(registry.countLimit == 1)
    }

    @Test("An alias finds its key's instance while it is held strongly; otherwise the key's lookup takes over")
    func aliases() {
        let registry = Registry<String, Item>()
        #expect(registry.instance(forAlias: "https://a/x") == nil, "no alias yet")
        let item = registry.instance(for: "/x") { Item("/x") }
        registry.addAlias("https://a/x", for: "/x")
        #expect(registry.instance(forAlias: "https://a/x") === item)
        registry.flushUnused()
        #expect(registry.instance(forAlias: "https://a/x") == nil, "weakly held after the flush: look it up by key")
        #expect(registry.instance(for: "/x") { Item("/x") } === item, "referenced from outside: revived")
        #expect(registry.instance(forAlias: "https://a/x") === item, "and the alias works again")
        for index in 0..<200 { registry.addAlias("alias \(index)", for: "/gone \(index)") }
        registry.addAlias("last", for: "/x")
        #expect(registry.instance(forAlias: "last") === item, "aliases of gone keys are pruned, live ones kept")
        #expect(registry.instance(forAlias: "https://a/x") === item)
    }

    @Test("A count limit of zero or less is taken as 1, never as 'flush on every insert of nothing'")
    func nonPositiveCountLimit() {
        #expect(Registry<String, Item>.Configuration(countLimit: 0).countLimit == 1)
        #expect(Registry<String, Item>.Configuration(countLimit: -5).countLimit == 1)
        let registry = Registry<String, Item>(configuration: .init(countLimit: 0))
        let kept = registry.instance(for: "/a") { Item("/a") }
        _ = registry.instance(for: "/b") { Item("/b") }
        #expect(registry.existingInstance(for: "/a") === kept, "referenced from outside: survives the limit's flush")
    }

    @Test("Lookups alone never evict, however many")
    func lookupsNeverEvict() {
        let registry = Registry<String, Item>(configuration: .init(countLimit: 10_000))
        for index in 0..<5_000 { _ = registry.instance(for: "/\(index)") { Item("/\(index)") } }
        for index in 0..<5_000 { _ = registry.instance(for: "/\(index)") { Item("never") } }
        #expect(registry.strongCount == 5_000)
    }

    @Test("Lookups, flushes and releases from 8 threads: never two live instances for one key, nothing leaked")
    func identityUnderChurn() {
        let census = KeyCensus()
        do {
            let registry = Registry<String, Item>(configuration: .init(countLimit: 32))
            let group = DispatchGroup()
            for worker in 0..<8 {
                group.enter()
                Thread {
                    var held: [Item] = []
                    for step in 0..<20_000 {
                        let key = "/\((step * 13 + worker * 5) % 48)"
                        let item = registry.instance(for: key) {
                            let item = Item(key, census: census)
                            census.created(item)
                            return item
                        }
                        if step % 3 == 0 { held.append(item) }
                        if held.count > 8 { held.removeFirst(4) }
                        if step % 101 == 0 { registry.flushUnused() }
                    }
                    held.removeAll()  // before leaving, so the check below sees only what the registry keeps
                    group.leave()
                }.start()
            }
            group.wait()
            registry.flushUnused()
        }
        #expect(census.violations.isEmpty, "\(census.violations.prefix(3))")
        #expect(census.total == 0, "the registry and everything in it are gone")
    }
}
