package import DocumentStoreKit
import PersistenceKit

/// An index the store builds on fields of a collection (`indexes:`), checked when the configuration is loaded: the
/// collection name and each field path (an error points at the field).
///
/// ```yaml
/// indexes:
///   - collection: items
///     fields: [store_id, name]      # equality fields first, then the one queries range or sort on
/// ```
///
/// The pipeline's service group builds them when it starts (``AssembledPipeline/createDeclaredIndexes()`` does it
/// without a group); building one that exists does nothing.
package struct IndexConfiguration: Decodable, Sendable {
    /// The collection.
    package var collection: String
    /// The fields, dotted paths, in the index's order.
    package var fields: [String]

    /// The keys.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case collection, fields
    }

    /// Decodes and checks an index.
    package init(from decoder: any Decoder) throws {
        let settings = try decoder.settings(CodingKeys.self)
        collection = try settings.collectionName(.collection)
        fields = try settings.require(.fields, as: [String].self) ?? []
        if settings.contains(.fields), fields.isEmpty {
            try settings.invalid(.fields, "an index needs at least one field")
        }
        if fields.count > DocumentIndex.maximumFields {
            try settings.invalid(
                .fields, "an index has at most \(DocumentIndex.maximumFields) fields, not \(fields.count)")
        }
        for (index, field) in fields.enumerated() {
            do {
                _ = try DocumentPath(field)
            } catch {
                try settings.invalid(at: [.key("fields"), .index(index)], error.message)
                continue
            }
            if fields[..<index].contains(field) {
                try settings.invalid(at: [.key("fields"), .index(index)], "'\(field)' is named twice in the index")
            }
        }
    }

    /// The index, if the settings make one (loading has already reported why not).
    package var index: DocumentIndex? {
        try? DocumentIndex(collection: collection, fields: fields)
    }
}
