import RegistryKit
import Synchronization
import Testing

/// An inspector's view of a registry: which instances are held, in use, referenced from outside — and so which the
/// next flush would release. Checked against what a flush then does.
@Suite("Registry: inspection")
struct RegistryInspectionTests {
    static func registry() -> Registry<String, Item> {
        Registry<String, Item>(isInUse: { $0.inUse.load(ordering: .relaxed) })
    }

    static func byKey(_ registry: Registry<String, Item>) -> [String: Registry<String, Item>.Inspection] {
        Dictionary(uniqueKeysWithValues: registry.inspect().map { ($0.key, $0) })
    }

    @Test("Held only by the registry, in use, referenced from outside, flushed but alive: each says so")
    func holdings() {
        let registry = Self.registry()
        _ = registry.instance(for: "unused") { Item("unused") }
        let used = registry.instance(for: "used") { Item("used") }
        used.inUse.store(true, ordering: .relaxed)
        var kept: Item? = registry.instance(for: "kept") { Item("kept") }
        let inspections = Self.byKey(registry)
        #expect(inspections.count == 3)
        #expect(inspections["unused"]?.isHeldStrongly == true)
        #expect(inspections["unused"]?.isReferencedElsewhere == false)
        #expect(inspections["unused"]?.wouldBeReleasedByFlush == true)
        #expect(inspections["used"]?.isInUse == true)
        #expect(inspections["used"]?.wouldBeReleasedByFlush == false)
        #expect(inspections["kept"]?.isReferencedElsewhere == true)
        #expect(inspections["kept"]?.wouldBeReleasedByFlush == false)

        // The flush does what the inspection said: it releases "unused" only; "kept" stays, held weakly.
        _ = consume inspections
        #expect(registry.flushUnused() == 2)
        let after = Self.byKey(registry)
        #expect(Set(after.keys) == ["used", "kept"])
        #expect(after["kept"]?.isHeldStrongly == false)
        #expect(after["kept"]?.isReferencedElsewhere == true)
        #expect(after["used"]?.isHeldStrongly == true)
        _ = consume after
        #expect(kept?.key == "kept")
        kept = nil
        #expect(Set(Self.byKey(registry).keys) == ["used"])
        withExtendedLifetime(used) {}
    }

    @Test("Inspecting changes nothing: the same instances, held the same way")
    func inspectingChangesNothing() {
        let registry = Self.registry()
        let first = ObjectIdentifier(registry.instance(for: "a") { Item("a") })
        for _ in 0..<3 { _ = registry.inspect() }
        #expect(registry.strongCount == 1)
        #expect(ObjectIdentifier(registry.instance(for: "a") { Item("a") }) == first)
        #expect(Self.byKey(registry)["a"]?.wouldBeReleasedByFlush == true)
    }
}
