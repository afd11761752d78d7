import DocumentStoreKit
import EntityCacheKit

/// `type: memory` — the in-memory document store and entity cache: nothing survives the process. The default
/// when configuration has no `persistence:`.
public struct MemoryPersistencePlugin: PipelinePlugin {
    /// "memory".
    public let type = "memory"

    /// No settings.
    public struct Settings: Decodable, Sendable {
        /// The keys (none).
        public enum CodingKeys: String, CodingKey, CaseIterable {
            case none = "_"
        }

        /// No settings.
        public init() {}

        /// Checks that no keys are given.
        public init(from decoder: any Decoder) throws {
            _ = try decoder.settings(CodingKeys.self)
        }
    }

    /// Makes the plugin.
    public init() {}

    /// No settings.
    public var defaultSettings: Settings { Settings() }

    /// An in-memory store and cache.
    public func make(_ settings: Settings, context: AssemblyContext) throws -> PersistenceComponent {
        PersistenceComponent(
            documents: InMemoryDocumentStore(), entityCache: InMemoryEntityCache(),
            summary: "in memory (nothing survives the process)")
    }
}
