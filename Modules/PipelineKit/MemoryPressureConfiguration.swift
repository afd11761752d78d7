/// When services let go of unused resources (`memory_pressure:`): the source of pressure events, and how many
/// resources each service keeps before creating one flushes the unused.
///
/// ```yaml
/// memory_pressure:
///   source: { type: linux-psi, stall: 150ms, window: 2s }
///   count_limit: 2048
/// ```
package struct MemoryPressureConfiguration: Decodable, Sendable {
    /// The source; nil for the registry's default.
    package var source: PluginChoice<MemoryPressureComponent>?
    /// How many resources each service's cache holds before creating one flushes the unused ones.
    package var countLimit: Int

    /// The keys.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case source
        case countLimit = "count_limit"
    }

    /// The registry's default source and a limit of 2048.
    package init(source: PluginChoice<MemoryPressureComponent>? = nil, countLimit: Int = 2048) {
        self.source = source
        self.countLimit = countLimit
    }

    /// Decodes the settings.
    package init(from decoder: any Decoder) throws {
        self.init()
        let settings = try decoder.settings(CodingKeys.self)
        source = try settings.decode(.source, as: PluginChoice<MemoryPressureComponent>.self)
        countLimit = try settings.decode(.countLimit, default: countLimit, where: { $0 >= 1 }, "must be at least 1")
    }
}
