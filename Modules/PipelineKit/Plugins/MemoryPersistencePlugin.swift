import DocumentStoreKit
import EntityCacheKit
import MutationOutboxKit

/// `type: memory` — the in-memory document store and entity cache: nothing survives the process. The default
/// when configuration has no `persistence:`.
package struct MemoryPersistencePlugin: PipelinePlugin {
    /// "memory".
    package let type = "memory"

    /// No settings.
    package struct Settings: Decodable, Sendable {
        /// The keys (none).
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case none = "_"
        }

        /// No settings.
        package init() {}

        /// Checks that no keys are given.
        package init(from decoder: any Decoder) throws {
            _ = try decoder.settings(CodingKeys.self)
        }
    }

    /// Makes the plugin.
    package init() {}

    /// No settings.
    package var defaultSettings: Settings { Settings() }

    /// An in-memory store and cache.
    package func make(_ settings: Settings, context: AssemblyContext) throws -> PersistenceComponent {
        PersistenceComponent(
            documents: InMemoryDocumentStore(), entityCache: InMemoryEntityCache(),
            mutationOutbox: InMemoryMutationOutbox(),
            summary: "in memory (nothing survives the process)")
    }
}
