import DocumentStoreKit
import PersistenceKit
import Testing
import TetherJSON
import TetherTestingTraits

@Suite("Change sets, LIKE patterns and collection names", .leakChecked)
struct ChangeSetTests {
    typealias Key = ChangeSet.Key

    @Test("Merging follows each document from the first state to the last, and keeps every document touched")
    func merging() {
        let a = Key(collection: "c", id: "a")
        let b = Key(collection: "c", id: "b")
        let c = Key(collection: "c", id: "c")
        let d = Key(collection: "c", id: "d")
        var set = ChangeSet(commit: 1, changes: [a: .inserted, b: .updated, c: .removed, d: .updated])
        set.merge(ChangeSet(commit: 3, changes: [a: .removed, b: .updated, c: .inserted, d: .removed]))
        #expect(set.changes == [a: .removed, b: .updated, c: .updated, d: .removed])
        #expect(set.commits == 1...3)
        #expect(set.collections == ["c"])
        #expect(ChangeSet.Kind.merging(.inserted, then: .updated) == .inserted)
    }

    @Test("Carried documents: the later replace the earlier, a removal drops one, one side without them drops all")
    func carriedDocuments() throws {
        let a = Key(collection: "c", id: "a")
        let b = Key(collection: "c", id: "b")
        func document(_ id: String, _ n: Double) throws -> StoredDocument {
            try StoredDocument(["_id": .string(id), "n": .number(n)], collection: "c")
        }
        var set = ChangeSet(
            commit: 1, changes: [a: .inserted, b: .inserted],
            documents: [a: try document("a", 1), b: try document("b", 1)])
        set.merge(ChangeSet(commit: 2, changes: [a: .updated, b: .removed], documents: [a: try document("a", 2)]))
        #expect(set.documents == [a: try document("a", 2)])
        #expect(
            set
                == ChangeSet(commit: 1, changes: [a: .inserted, b: .inserted]).merging(
                    ChangeSet(commit: 2, changes: [a: .updated, b: .removed])), "equality ignores the documents")

        // A set from another process (no documents) makes the merge's unknown.
        set.merge(ChangeSet(commit: 3, changes: [b: .inserted]))
        #expect(set.documents == nil)
        set.merge(ChangeSet(commit: 4, changes: [a: .updated], documents: [a: try document("a", 4)]))
        #expect(set.documents == nil, "once unknown, a later set cannot make them known")

        // Past the limit a set carries none.
        let many = try (0...ChangeSet.documentLimit).map { try document("d\($0)", 0) }
        let changes = Dictionary(
            uniqueKeysWithValues: many.map { (Key(collection: "c", id: $0.id), ChangeSet.Kind.inserted) })
        let documents = Dictionary(uniqueKeysWithValues: many.map { (Key(collection: "c", id: $0.id), $0) })
        #expect(ChangeSet(commit: 5, changes: changes, documents: documents).documents == nil)
    }

    @Test("Unknown changes are never empty, and survive merging both ways")
    func unknownChanges() {
        let a = Key(collection: "c", id: "a")
        let unknown = ChangeSet(unknownChangesIn: 4...9)
        #expect(!unknown.isEmpty && unknown.hasUnknownChanges && unknown.commits == 4...9)
        var later = ChangeSet(commit: 10, changes: [a: .inserted])
        later.merge(unknown)
        var earlier = unknown
        earlier.merge(ChangeSet(commit: 10, changes: [a: .inserted]))
        for set in [later, earlier] {
            #expect(set.hasUnknownChanges && set.commits == 4...10 && set.changes == [a: .inserted])
        }
        #expect(!ChangeSet(commit: 1, changes: [a: .updated]).hasUnknownChanges)
    }

    @Test(
        "LIKE: % any run, _ one character, \\ escapes; case-sensitive",
        arguments: [
            ("abc", "abc", true), ("abc", "ABC", false), ("a%", "abc", true), ("a%", "a", true), ("%c", "abc", true),
            ("%b%", "abc", true), ("a_c", "abc", true), ("a_c", "ac", false), ("%", "", true), ("_", "", false),
            ("100\\%", "100%", true), ("100\\%", "1000", false), ("a\\_b", "a_b", true), ("a\\_b", "axb", false),
            ("%a%a%a%", "aaa", true), ("%a%a%a%", "aa", false), ("é_", "éx", true), ("\\", "\\", true),
        ])
    func like(pattern: String, value: String, matches: Bool) {
        #expect(LikePattern(pattern).matches(value) == matches)
    }

    @Test("Collection names: letters, digits, _ - . only, starting with a letter or _")
    func collectionNames() throws {
        for valid in ["items", "_private", "a.b-c_9", String(repeating: "x", count: 100)] {
            try CollectionName.validate(valid)
        }
        for invalid in ["", "9lives", "a b", "x'", "a;b", "ä", String(repeating: "x", count: 101)] {
            #expect(throws: PersistenceError.self) { try CollectionName.validate(invalid) }
        }
        do {
            try CollectionName.validate("items'--")
        } catch {
            #expect(error.kind == .invalidCollectionName)
            #expect(error.description.contains("''' at offset 5"))
        }
    }
}

extension ChangeSet {
    /// This set with `later` merged in.
    fileprivate func merging(_ later: ChangeSet) -> ChangeSet {
        var merged = self
        merged.merge(later)
        return merged
    }
}
