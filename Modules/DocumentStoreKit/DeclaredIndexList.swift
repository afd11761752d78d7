import TetherConcurrency

/// The indexes a store has declared, in the order first declared, and the paths they cover per collection — what a
/// store's query compiler writes out literally so that the database uses the indexes. Every store that builds
/// indexes keeps one (the SQLite and PostgreSQL adapters).
package final class DeclaredIndexList: Sendable {
    private let state = LockedValue<(list: [DocumentIndex], paths: [String: Set<DocumentPath>])>(([], [:]))

    package init() {}

    /// The indexes, in the order first declared.
    package var list: [DocumentIndex] {
        state.withLock { $0.list }
    }

    /// The paths that `collection`'s indexes cover.
    package func paths(in collection: String) -> Set<DocumentPath> {
        state.withLock { $0.paths[collection] ?? [] }
    }

    /// Adds `index`, unless it is there already.
    package func add(_ index: DocumentIndex) {
        state.withLock { state in
            guard !state.list.contains(index) else { return }
            state.list.append(index)
            state.paths[index.collection, default: []].formUnion(index.fields)
        }
    }

    /// Adds the index a store recorded as `collection` and `fields` (dotted paths separated by commas); a record that
    /// no longer reads as an index is skipped.
    package func add(recordedCollection collection: String, fields: String) {
        let paths = fields.split(separator: ",").map(String.init)
        if let index = try? DocumentIndex(collection: collection, fields: paths) { add(index) }
    }

    /// How a store records `index`'s fields: dotted paths separated by commas.
    package static func recordedFields(of index: DocumentIndex) -> String {
        index.fields.map(\.description).joined(separator: ",")
    }
}
