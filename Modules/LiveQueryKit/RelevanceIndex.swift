import DocumentStoreKit
import TetherJSON

/// Which of a collection's observed queries a round's changed documents can reach, found without looking at every
/// query: what lets 1,000 queries of one shape with different `$args` cost a commit the few its documents reach.
///
/// A query whose predicate requires `path == literal` (or `path IN [literals]`), alone or in a top-level `and`, can
/// match a changed document only if the document's value at `path` equals one of the literals: the query is filed
/// under those values. Of several such terms, it is filed under the one fewest queries share (`type == 'order' &&
/// customer == $c` under its customer, once a second customer is observed), so that a value common to every query
/// does not bring them all to every commit. A changed document can also alter a result it was in, so each result's
/// `_id`s are filed too.
/// A query with no such equality, with an offset, failing, or with changes held back for it is reached by every
/// change to its collection. What the index finds is only a candidate, checked exactly afterwards
/// (``LiveQueryEngine/canAlter(_:ids:_:mayBeIn:)``): a query it leaves out is one the changes cannot alter. (Strings
/// are filed by Swift's equality, which holds whenever the predicates' byte-wise equality does: a value can only find
/// more candidates, never fewer.)
///
/// Kept under the engine's lock, next to the evaluations: added with a query's evaluation, told of each result, each
/// failure and each hold, removed with it.
struct RelevanceIndex: Sendable {
    private var collections: [String: Filed] = [:]

    /// One collection's queries, by a number of the index's own (cheaper to hash than a query).
    fileprivate struct Filed: Sendable {
        var numbers: [DocumentQuery: Int] = [:]
        var queries: [Int: DocumentQuery] = [:]
        var next = 0
        /// Queries filed under the values their predicate requires at a path.
        var byValue: [DocumentPath: [ScalarValue: Set<Int>]] = [:]
        /// Each filed query's equalities, and which of them it is filed under.
        var equalities: [Int: (terms: [Equality], filedUnder: Int)] = [:]
        /// How many queries require each value at each path, filed under it or not: what filing under it costs.
        var requiring: [DocumentPath: [ScalarValue: Int]] = [:]
        /// Queries reached by every change: no equality to file them under, or an offset.
        var unfiled: Set<Int> = []
        /// For each document in some result, the queries whose result holds it.
        var holding: [String: Set<Int>] = [:]
        /// Queries not yet evaluated (the round that starts their observer runs them), failing, and with changes
        /// held back.
        var pending: Set<Int> = []
        var failing: Set<Int> = []
        var held: Set<Int> = []

        /// Queries whose results a round brings up to date or leaves alone: evaluated, or failing.
        var activeCount: Int { queries.count - pending.count }
    }

    /// A newly observed query, not yet evaluated.
    mutating func add(_ query: DocumentQuery) {
        var filed = collections.removeValue(forKey: query.collection) ?? Filed()
        defer { collections[query.collection] = filed }
        guard filed.numbers[query] == nil else { return }
        let number = filed.next
        filed.next += 1
        filed.numbers[query] = number
        filed.queries[number] = query
        filed.pending.insert(number)
        let terms = query.offset == 0 ? Self.equalities(in: query.predicate) : []
        guard !terms.isEmpty else {
            filed.unfiled.insert(number)
            return
        }
        for term in terms {
            for value in term.values { filed.requiring[term.path, default: [:]][value, default: 0] += 1 }
        }
        filed.equalities[number] = (terms, filed.cheapest(of: terms))
        filed.file(number)
        // The queries filed under this query's values now share them with one more: the first few of each move to
        // another of their equalities if fewer queries require that one.
        for term in terms {
            for value in term.values {
                // Taken out first: refiling changes the set they are in.
                let others = Array((filed.byValue[term.path]?[value] ?? []).prefix(Self.refiledPerValue))
                for other in others where other != number { filed.refile(other) }
            }
        }
    }

    /// How many of the queries filed under one of a new query's values are looked at to be filed anew: enough for
    /// the queries of one shape to leave the value they all share as soon as they are two, a bounded cost for every
    /// add when many queries require that value and nothing else.
    static let refiledPerValue = 4

    /// A query no longer observed, whose last result held `ids`.
    mutating func remove(_ query: DocumentQuery, holding ids: Set<String>) {
        guard var filed = collections.removeValue(forKey: query.collection),
            let number = filed.numbers.removeValue(forKey: query)
        else { return }
        filed.queries[number] = nil
        if let (terms, _) = filed.equalities[number] {
            filed.unfile(number)
            filed.equalities[number] = nil
            for term in terms {
                for value in term.values {
                    filed.requiring[term.path]?[value]? -= 1
                    if filed.requiring[term.path]?[value] == 0 { filed.requiring[term.path]?[value] = nil }
                }
                if filed.requiring[term.path]?.isEmpty == true { filed.requiring[term.path] = nil }
            }
        }
        for id in ids { Self.remove(number, holding: id, in: &filed) }
        filed.unfiled.remove(number)
        filed.pending.remove(number)
        filed.failing.remove(number)
        filed.held.remove(number)
        if !filed.queries.isEmpty { collections[query.collection] = filed }
    }

    /// `query` has a new result, whose `_id`s are `ids` — nil: the same as its last one's, `previous`.
    mutating func published(_ query: DocumentQuery, ids: Set<String>?, previous: Set<String>) {
        modify(query) { number, filed in
            filed.pending.remove(number)
            filed.failing.remove(number)
            guard let ids else { return }
            for id in previous where !ids.contains(id) { Self.remove(number, holding: id, in: &filed) }
            for id in ids where !previous.contains(id) { filed.holding[id, default: []].insert(number) }
        }
    }

    /// `query` failed: every change to its collection runs it again.
    mutating func failed(_ query: DocumentQuery) {
        modify(query) { number, filed in
            filed.pending.remove(number)
            filed.failing.insert(number)
        }
    }

    /// Whether changes are held back for `query`: its result is then that of its `_id`s with those changes applied,
    /// so any change to its collection is checked against it.
    /// Told wherever an evaluation's held-back changes are set or taken: ``hasHeld`` answers for every query.
    mutating func setHeld(_ query: DocumentQuery, _ isHeld: Bool) {
        modify(query) { number, filed in
            if isHeld { filed.held.insert(number) } else { filed.held.remove(number) }
        }
    }

    /// Of `collections`, those with a query evaluated or failing, each with whether one of them is not failing
    /// (its changed documents are then needed).
    func observed(among collections: some Sequence<String>) -> [(collection: String, needsDocuments: Bool)] {
        collections.compactMap { collection in
            guard let filed = self.collections[collection], filed.activeCount > 0 else { return nil }
            return (collection, filed.activeCount > filed.failing.count)
        }
    }

    /// Whether changes are held back for some query.
    var hasHeld: Bool { collections.values.contains { !$0.held.isEmpty } }

    /// Every observed collection.
    var allCollections: [String] { Array(collections.keys) }

    /// How many entries `collection`'s queries have under values, one per value each is filed under.
    func filedCount(in collection: String) -> Int {
        collections[collection]?.byValue.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.count } } ?? 0
    }

    /// How many of `collection`'s queries are evaluated or failing.
    func activeCount(in collection: String) -> Int {
        collections[collection]?.activeCount ?? 0
    }

    /// The queries of `collection`, evaluated or failing, that `changed` can reach — all of them when nil (the
    /// changed documents are not known).
    func candidates(in collection: String, reachedBy changed: ChangedDocuments.Changed?) -> [DocumentQuery] {
        guard let filed = collections[collection] else { return [] }
        guard let changed else {
            return filed.queries.compactMap { number, query in filed.pending.contains(number) ? nil : query }
        }
        var found = filed.unfiled.union(filed.failing).union(filed.held)
        for (path, byValue) in filed.byValue {
            for body in changed.bodies {
                if let value = Self.key(body[path: path.components]), let queries = byValue[value] {
                    found.formUnion(queries)
                }
            }
        }
        for id in changed.ids {
            if let queries = filed.holding[id] { found.formUnion(queries) }
        }
        return found.compactMap { filed.pending.contains($0) ? nil : filed.queries[$0] }
    }

    // MARK: Helpers

    private mutating func modify(_ query: DocumentQuery, _ body: (Int, inout Filed) -> Void) {
        guard var filed = collections.removeValue(forKey: query.collection) else { return }
        if let number = filed.numbers[query] { body(number, &filed) }
        collections[query.collection] = filed
    }

    private static func remove(_ number: Int, holding id: String, in filed: inout Filed) {
        filed.holding[id]?.remove(number)
        if filed.holding[id]?.isEmpty == true { filed.holding[id] = nil }
    }

    /// A path, and the values a document must have there to match a query.
    struct Equality: Sendable {
        var path: DocumentPath
        var values: [ScalarValue]
    }

    /// The equalities a document must meet to match `predicate`: an equality or an `IN`, alone or among the terms
    /// of an `and`.
    static func equalities(in predicate: DocumentPredicate) -> [Equality] {
        switch predicate {
        case .compare(let path, .equal, let literal): [Equality(path: path, values: [literal])]
        case .isIn(let path, let literals): [Equality(path: path, values: literals)]
        case .and(let terms): terms.flatMap(Self.equalities(in:))
        default: []
        }
    }

    /// What a document's value is filed under: the scalar it equals (a missing field is null); nil for an array or
    /// an object, which equal no literal.
    static func key(_ value: JSONValue?) -> ScalarValue? {
        switch value ?? .null {
        case .null: .null
        case .bool(let value): .bool(value)
        case .number(let value): .number(value)
        case .string(let value): .string(value)
        case .array, .object: nil
        }
    }
}

extension RelevanceIndex.Filed {
    /// Which of `terms` the fewest queries require, counting each of its values (the first, of equals).
    func cheapest(of terms: [RelevanceIndex.Equality]) -> Int {
        let costs = terms.map(cost(of:))
        return costs.indices.min { costs[$0] < costs[$1] } ?? 0
    }

    /// How many queries require `term`'s values, counting a query once for each.
    func cost(of term: RelevanceIndex.Equality) -> Int {
        term.values.reduce(0) { $0 + (requiring[term.path]?[$1] ?? 0) }
    }

    /// Files `number` under the values of the equality it is to be filed under.
    mutating func file(_ number: Int) {
        guard let (terms, filedUnder) = equalities[number] else { return }
        let term = terms[filedUnder]
        for value in term.values { byValue[term.path, default: [:]][value, default: []].insert(number) }
    }

    /// Takes `number` out of the values it is filed under.
    mutating func unfile(_ number: Int) {
        guard let (terms, filedUnder) = equalities[number] else { return }
        let path = terms[filedUnder].path
        for value in terms[filedUnder].values {
            byValue[path]?[value]?.remove(number)
            if byValue[path]?[value]?.isEmpty == true { byValue[path]?[value] = nil }
        }
        if byValue[path]?.isEmpty == true { byValue[path] = nil }
    }

    /// Files `number` under another of its equalities if fewer queries now require that one.
    mutating func refile(_ number: Int) {
        guard let (terms, filedUnder) = equalities[number] else { return }
        let cheapest = cheapest(of: terms)
        guard cost(of: terms[cheapest]) < cost(of: terms[filedUnder]) else { return }
        unfile(number)
        equalities[number]?.filedUnder = cheapest
        file(number)
    }
}
